/** `drumcrawl resume <state> [runtime flags]` — continue from the last checkpoint. */
import path from 'node:path';
import type { Command } from 'commander';
import { readManifest } from '../../crawl/checkpoint.js';
import { parseCrawlArgs, RUNTIME_KEYS, CRAWL_FLAGS, ramFloorWarning } from '../../crawl/config.js';
import { Crawler } from '../../crawl/pipeline.js';
import { CrawlError } from '../../errors.js';
import { printSummary, runGuarded } from './common.js';
import { rawArgsAfter } from './crawl.js';

/** Startup options a resumed crawl may still change (they do not alter the state's shape; --out
 * names where the output directory now is, when it was moved apart from the state). */
const RESUMABLE = new Set<string>([...RUNTIME_KEYS, 'outDir', 'statusPort', 'progress', 'progressIntervalMs', 'checkpointIntervalMs', 'workers', 'fetchConcurrency']);

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
      const m = await readManifest(path.resolve(state));
      if (m !== null) process.stderr.write(`resuming ${path.resolve(state)} from checkpoint ${m.epoch} (${m.reason}, ${m.counters.pages} pages)\n`);
      const t0 = performance.now();
      const crawler = await Crawler.resume(state, input, { handleSignals: true });
      process.stderr.write(`resumed: state recovered and opened in ${(performance.now() - t0).toFixed(0)} ms\n`);
      const warn = ramFloorWarning(crawler.config);
      if (warn !== null) process.stderr.write(`drumcrawl: warning: ${warn}\n`);
      crawler.on('status-server', (url: string) => process.stderr.write(`status server: ${url}/status  ${url}/metrics\n`));
      printSummary(await crawler.run());
    });
  });
}
