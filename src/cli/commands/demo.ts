/**
 * `drumcrawl demo` — start simweb's demo web and its DNS server in this process, crawl it with live
 * progress, print a summary and where the WARC files are. Needs no network: everything is on
 * 127.0.0.0/8. Output goes to ./crawl-out/demo (replaced on each run) unless --out says otherwise.
 *
 * "Replaced" is limited to what a demo made: the directory is removed only when it is empty or
 * carries the marker file DEMO_MARKER that a demo run writes into it, so `--out ~` or `--out /`
 * is refused, never deleted.
 */
import type { Command } from 'commander';
import { readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseCrawlArgs, resolveCrawlConfig, type CrawlConfigInput } from '../../config/config.js';
import { CrawlError } from '../../errors.js';
import { checkDir, checkPortFree, createDirs, CRAWL_DIR_UNUSABLE } from '../preflight.js';
import { announceStatusServer, printSummary, runGuarded } from './common.js';

/** Written into the demo's --out directory; only a directory holding it is ever replaced. */
export const DEMO_MARKER = '.drumcrawl-demo';

interface DemoFlags { out: string; statusPort?: string; progress: string; maxTime: string }

/** The demo's crawl options (seeds and DNS come from the simulated web once it runs). */
function demoInput(opts: DemoFlags, base: string): CrawlConfigInput {
  // The flags go through the crawl command's own parser: same rules, same messages.
  const args = ['--progress', opts.progress, '--max-time', opts.maxTime];
  if (opts.statusPort !== undefined) args.push('--status-port', opts.statusPort);
  const { input } = parseCrawlArgs(args);
  return {
    ...input,
    stateDir: path.join(base, 'state'),
    outDir: path.join(base, 'warc'),
    userAgent: 'drumcrawl-demo/0.1 (+https://github.com/drumcrawl/drumcrawl)',
    // A small web on 8 simulated servers: short delays so it finishes in about a minute;
    // still polite per host (250 ms) and per IP (25 ms), start to start.
    hostDelayMs: 250,
    ipDelayMs: 25,
    minHostDelayMs: 100,
    minIpDelayMs: 10,
    fetchConcurrency: 64,
    ramBytes: 512 * 2 ** 20,
    checkpointIntervalMs: 10_000,
    progressIntervalMs: 2000,
  };
}

/** Refuse an --out that holds anything but a previous demo's output. */
async function checkReplaceable(base: string): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(base);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new CrawlError(CRAWL_DIR_UNUSABLE, `--out ${base} cannot be read: ${(e as Error).message}`);
  }
  if (entries.length > 0 && !entries.includes(DEMO_MARKER)) {
    throw new CrawlError(CRAWL_DIR_UNUSABLE, `--out ${base} is not empty and is not a demo's output (no ${DEMO_MARKER} in it): refusing to replace it; give an empty or new directory`);
  }
}

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('crawl a built-in synthetic web (simweb demo preset) on loopback and show the result')
    .option('--out <dir>', 'where state and WARC files go (replaced when it holds a previous demo)', './crawl-out/demo')
    .option('--status-port <port>', 'also serve /metrics and /status on 127.0.0.1:port')
    .option('--progress <mode>', 'auto | tty | plain | none', 'auto')
    .option('--max-time <s>', 'stop after s seconds', '150')
    .action(async (opts: DemoFlags) => {
      await runGuarded(async () => {
        const base = path.resolve(opts.out);
        const input = demoInput(opts, base);
        const probe = resolveCrawlConfig(input); // every option checked before anything is touched
        await checkDir('--out', base);
        await checkReplaceable(base);
        if (probe.statusPort !== null) await checkPortFree('--status-port', probe.statusPort, probe.statusHost);
        await rm(base, { recursive: true, force: true });
        await createDirs([await checkDir('--out', base)]);
        await writeFile(path.join(base, DEMO_MARKER), 'output of `drumcrawl demo`; replaced by the next demo run\n');
        const { startSimweb } = await import('../../simweb/index.js');
        const { Crawler } = await import('../../crawl/pipeline.js');
        const web = await startSimweb({ preset: 'demo', log: false });
        try {
          process.stderr.write(`simweb demo web: ${web.seeds.length} seeds, DNS ${web.dnsServer}, HTTP port ${web.httpPort}\n`);
          // simweb's servers are on loopback, which the network guard refuses unless allowed.
          // The demo web spans many PLDs and the demo shows all of it: scope 'any' (the default, 'pld',
          // would keep to the seeds' PLDs).
          const cfg = resolveCrawlConfig({ ...input, scope: 'any', seeds: web.seeds, dnsServers: [web.dnsServer], allowNetworks: ['127.0.0.0/8'] });
          const crawler = await Crawler.open(cfg, { handleSignals: true });
          crawler.on('status-server', (url: string, token: string) => announceStatusServer(url, token, crawler.config.stateDir));
          const summary = await crawler.run();
          printSummary(summary);
          process.stdout.write(`Read the WARC files with any WARC tool, e.g.: npx warcio index ${summary.warcFiles[0] ?? summary.warcDir}\n`);
        } finally {
          await web.close();
        }
      });
    });
}
