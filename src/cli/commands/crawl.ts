/**
 * `drumcrawl crawl [urls...] [flags]` — flags come from the one table in src/config/config.ts
 * (CRAWL_FLAGS), so `--help`, the parser and docs/configuration.md cannot drift apart.
 */
import type { Command } from 'commander';
import { CRAWL_FLAGS, loadCrawlConfig, ramFloorWarning } from '../../config/config.js';
import { heapWarning } from '../../budget/heap-budget.js';
import { CrawlError } from '../../errors.js';
import { checkDir, checkPortFree, createDirs } from '../preflight.js';
import { announceStatusServer, runAndReport, runGuarded } from './common.js';
import { CLUSTER_FLAGS, defaultNodeId, splitClusterArgs } from '../../cluster/options.js';
import { rawArgsAfter } from './raw-args.js';

export function registerCrawlCommand(program: Command): void {
  const cmd = program
    .command('crawl')
    .description('start a crawl from seed URLs (state and WARC output on disk; resumable)')
    .argument('[urls...]', 'seed URLs')
    .allowUnknownOption(false)
    .helpOption('-h, --help', 'show the flags');
  for (const f of CRAWL_FLAGS) {
    const flag = f.kind === 'bool' ? `--${f.name}` : `--${f.name} ${f.value}`;
    if (f.repeat) cmd.option(flag, f.description, (v: string, prev: string[] = []) => [...prev, v]);
    else cmd.option(flag, f.description);
  }
  for (const f of CLUSTER_FLAGS) cmd.option(`--${f.name} ${f.value}`, f.description);
  cmd.action(async () => {
    // Re-parse the raw arguments with the pure parser (commander only renders help and rejects
    // unknown flags), so the CLI and the library agree by construction.
    const all = rawArgsAfter(program, 'crawl');
    await runGuarded(async () => {
      // --cluster: this process is a node of a cluster crawl (src/cluster, docs/cluster.md).
      const { cluster, rest: raw } = splitClusterArgs(all, defaultNodeId());
      if (cluster !== null) {
        const { runClusterCrawl } = await import('./cluster.js');
        await runClusterCrawl(cluster, raw);
        return;
      }
      const cfg = await loadCrawlConfig(raw);
      if (cfg.seeds.length === 0) {
        throw Object.assign(new Error('no seed URLs: give URLs as arguments or --seeds <file>'), { code: 'CRAWL_CONFIG_INVALID' });
      }
      // Every check before anything is created: directories, an existing crawl, the status port.
      // The crawler's modules are loaded only once the flags passed: refusing bad input stays quick.
      const plans = [await checkDir('--state', cfg.stateDir), await checkDir('--out', cfg.outDir)];
      const { readManifest } = await import('../../state/checkpoint.js');
      if (plans[0]!.missing.length === 0 && (await readManifest(cfg.stateDir)) !== null) {
        throw new CrawlError('CRAWL_STATE_EXISTS', `${cfg.stateDir} already holds a crawl; use \`drumcrawl resume ${cfg.stateDir}\``);
      }
      if (cfg.statusPort !== null) await checkPortFree('statusPort', cfg.statusPort, cfg.statusHost);
      for (const warn of [ramFloorWarning(cfg), heapWarning(cfg.ramBytes)]) if (warn !== null) process.stderr.write(`drumcrawl: warning: ${warn}\n`);
      await createDirs(plans);
      // The seeds' robots.txt go out first, while the crawler's modules load and its threads start
      // (src/crawl/ports/early-robots.ts; docs/performance.md "Start-up and real pages").
      const { startEarly } = await import('../../crawl/ports/early-robots.js');
      const early = startEarly(cfg);
      const { Crawler } = await import('../../crawl/pipeline.js');
      const crawler = await Crawler.open(cfg, { handleSignals: true, early });
      crawler.on('status-server', (url: string, token: string) => announceStatusServer(url, token, crawler.config.stateDir));
      await runAndReport(crawler);
    });
  });
}
