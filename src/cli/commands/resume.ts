/** `drumcrawl resume <state> [runtime flags]` — continue from the last checkpoint. */
import type { Command } from 'commander';
import path from 'node:path';
import { parseCrawlArgs, RUNTIME_KEYS, CRAWL_FLAGS, ramFloorWarning, resolveCrawlConfig, type CrawlConfigInput } from '../../crawl/config.js';
import { CrawlError } from '../../errors.js';
import { checkDir, checkPortFree, createDirs } from '../preflight.js';
import { announceStatusServer, printSummary, runGuarded } from './common.js';
import { rawArgsAfter } from './crawl.js';

/** Startup options a resumed crawl may still change (they do not alter the state's shape). */
const RESUMABLE = new Set<string>([...RUNTIME_KEYS, 'statusPort', 'progress', 'progressIntervalMs', 'checkpointIntervalMs', 'workers', 'fetchConcurrency']);

export function registerResumeCommand(program: Command): void {
  const cmd = program
    .command('resume')
    .description('continue a crawl from its last checkpoint (after stop, --max-time, SIGKILL or power loss)')
    .argument('<state>', 'state directory of the crawl');
  for (const f of CRAWL_FLAGS) {
    if (!RESUMABLE.has(f.key)) continue;
    cmd.option(f.kind === 'bool' ? `--${f.name}` : `--${f.name} ${f.value}`, f.description);
  }
  cmd.action(async (state: string) => {
    await runGuarded(async () => {
      const raw = rawArgsAfter(program, 'resume').filter((a) => a !== state);
      const { input } = parseCrawlArgs(raw);
      for (const k of Object.keys(input)) {
        if (!RESUMABLE.has(k)) throw new CrawlError('CRAWL_CONFIG_INVALID', `${k} cannot be changed on resume`);
      }
      // Checked before anything is opened: the checkpoint, the merged config, both directories
      // (the output directory may have been moved or filled since), the status port.
      const stateDir = path.resolve(state);
      const statePlan = await checkDir('state', stateDir);
      const { readManifest } = await import('../../crawl/checkpoint.js');
      const manifest = statePlan.missing.length > 0 ? null : await readManifest(stateDir);
      if (manifest === null) throw new CrawlError('CRAWL_STATE_MISSING', `${state} holds no checkpoint to resume`);
      const cfg = resolveCrawlConfig({ ...(manifest.config as CrawlConfigInput), ...input });
      const outPlan = await checkDir('output directory', cfg.outDir);
      if (cfg.statusPort !== null) await checkPortFree('statusPort', cfg.statusPort, cfg.statusHost);
      await createDirs([outPlan]);
      const { Crawler } = await import('../../crawl/pipeline.js');
      const crawler = await Crawler.resume(state, input, { handleSignals: true });
      const warn = ramFloorWarning(crawler.config);
      if (warn !== null) process.stderr.write(`drumcrawl: warning: ${warn}\n`);
      crawler.on('status-server', (url: string, token: string) => announceStatusServer(url, token, crawler.config.stateDir));
      printSummary(await crawler.run());
    });
  });
}
