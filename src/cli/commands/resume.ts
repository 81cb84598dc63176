/** `drumcrawl resume <state> [runtime flags]` — continue from the last checkpoint. */
import path from 'node:path';
import type { Command } from 'commander';
import { parseCrawlArgs, RUNTIME_KEYS, CRAWL_FLAGS, ramFloorWarning, type CrawlConfigInput } from '../../config/config.js';
import { heapWarning } from '../../budget/heap-budget.js';
import { CrawlError } from '../../errors.js';
import { checkDir, checkPortFree, createDirs } from '../preflight.js';
import { announceStatusServer, runAndReport, runGuarded } from './common.js';
import { rawArgsAfter } from './raw-args.js';
import { openMark } from '../../monitor/open-trace.js';
import { CLUSTER_FLAGS, defaultNodeId, splitClusterArgs } from '../../cluster/options.js';

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
    cmd.option(f.kind === 'bool' ? `--${f.name}` : `--${f.name} ${f.value}`, resumeDescription(f.key, f.description));
  }
  for (const f of CLUSTER_FLAGS) if (f.name === 'cluster') cmd.option(`--${f.name} ${f.value}`, 'the NATS server of a cluster node\'s crawl, when it moved (default: where the node last ran)');
  cmd.addHelpText('after', '\nA flag not given keeps the value the crawl last ran with.');
  cmd.action(async (state: string) => {
    await runGuarded(async () => {
      openMark('cli-action');
      const all = rawArgsAfter(program, 'resume').filter((a) => a !== state);
      // A cluster node's state (node.json): the node resumes (src/cluster).
      const { cluster, rest: raw } = splitClusterArgs(all, defaultNodeId());
      const { readNodeFile, runClusterResume } = await import('./cluster.js');
      const nodeFile = await readNodeFile(path.resolve(state));
      if (nodeFile !== null) {
        await runClusterResume(path.resolve(state), nodeFile, cluster === null ? null : { ...cluster, node: nodeFile.node, crawl: nodeFile.crawl }, raw);
        return;
      }
      if (cluster !== null) throw new CrawlError('CRAWL_STATE_MISSING', `${state} holds no cluster node's state (node.json)`);
      const { input } = parseCrawlArgs(raw);
      for (const k of Object.keys(input)) {
        if (!RESUMABLE.has(k)) throw new CrawlError('CRAWL_CONFIG_INVALID', `${k} cannot be changed on resume`);
      }
      // Checked before anything is opened: the checkpoint, the merged config, both directories
      // (the output directory may have been moved or filled since), the status port. The paths
      // recorded in the manifest are not trusted: the state may have been moved (relocate).
      const stateDir = path.resolve(state);
      const statePlan = await checkDir('state', stateDir);
      const { checkOwnTree } = await import('../../disk/safe-fs.js');
      if (statePlan.missing.length === 0) checkOwnTree(stateDir); // before the manifest is read: it may be a link
      const { readManifest } = await import('../../state/checkpoint.js');
      const manifest = statePlan.missing.length > 0 ? null : await readManifest(stateDir);
      if (manifest === null) throw new CrawlError('CRAWL_STATE_MISSING', `${state} holds no checkpoint to resume`);
      const { relocate } = await import('../../state/recovery.js');
      const recorded = manifest.config as CrawlConfigInput;
      // (readManifest checked that both recorded paths are strings.)
      const where = await relocate(stateDir, recorded.stateDir as string, recorded.outDir as string, input.outDir as string | undefined, manifest.warc);
      const { resolveRecordedConfig } = await import('../../state/checkpoint.js');
      const cfg = resolveRecordedConfig(stateDir, manifest, { stateDir: where.stateDir, outDir: where.outDir }, input);
      const outPlan = await checkDir('output directory', cfg.outDir);
      if (cfg.statusPort !== null) await checkPortFree('statusPort', cfg.statusPort, cfg.statusHost);
      await createDirs([outPlan]);
      const { Crawler } = await import('../../crawl/pipeline.js');
      process.stderr.write(`resuming ${stateDir} from checkpoint ${manifest.epoch} (${manifest.reason}, ${manifest.counters.pages} pages)\n`);
      const t0 = performance.now();
      openMark('resume-call');
      const crawler = await Crawler.resume(state, input, { handleSignals: true });
      openMark('resumed');
      process.stderr.write(`resumed: state recovered and opened in ${(performance.now() - t0).toFixed(0)} ms\n`);
      for (const warn of [ramFloorWarning(crawler.config), heapWarning(crawler.config.ramBytes)]) if (warn !== null) process.stderr.write(`drumcrawl: warning: ${warn}\n`);
      crawler.on('status-server', (url: string, token: string) => announceStatusServer(url, token, crawler.config.stateDir));
      await runAndReport(crawler);
    });
  });
}

/**
 * A flag's help on resume: its default is the crawl's recorded value, not the crawl command's
 * default, so that part is left out; --out says where the output directory is looked for.
 */
function resumeDescription(key: string, description: string): string {
  if (key === 'outDir') return 'where the output directory is now (default: beside the state as when the crawl started, else where it was recorded)';
  return description.replace(/\s*\(default[^)]*\)/, '');
}
