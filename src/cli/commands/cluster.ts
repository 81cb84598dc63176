/**
 * The cluster on the command line (docs/cluster.md): `crawl … --cluster <nats-url> --node <id>`
 * and `resume <node-state>` run a node (crawl.ts and resume.ts hand over here), and
 * `drumcrawl cluster status|leave|forget` look at and steer a running cluster crawl.
 */
import path from 'node:path';
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { CrawlError } from '../../errors.js';
import { loadCrawlConfig, parseCrawlArgs, resolveCrawlConfig, type CrawlConfig } from '../../config/config.js';
import { checkDir, checkPortFree, createDirs } from '../preflight.js';
import { announceStatusServer, printSummary, runGuarded, selfCommand } from './common.js';
import type { ClusterArgs } from '../../cluster/options.js';
import type { Engine } from '../../cluster/index.js';

/** `crawl --cluster …`: start (or join) a cluster crawl as this node. */
export async function runClusterCrawl(cluster: ClusterArgs, rest: string[]): Promise<void> {
  const cfg = await loadCrawlConfig(rest);
  const { input } = parseCrawlArgs(rest);
  const given = new Set(Object.keys(input));
  if ((input.seeds as unknown[] | undefined)?.length) given.add('seeds');
  const plans = [await checkDir('--state', cfg.stateDir), await checkDir('--out', cfg.outDir)];
  if (plans[0]!.missing.length === 0) {
    const file = await readNodeFile(cfg.stateDir);
    if (file !== null) throw new CrawlError('CRAWL_STATE_EXISTS', `${cfg.stateDir} already holds node ${file.node} of crawl ${file.crawl}; use \`drumcrawl resume ${cfg.stateDir}\``);
  }
  if (cfg.statusPort !== null) await checkPortFree('statusPort', cfg.statusPort, cfg.statusHost);
  await runNode(cluster, cfg, given, () => createDirs(plans));
}

/** `resume <node-state>`: the node continues (its partitions resume from their checkpoints). */
export async function runClusterResume(stateDir: string, file: NodeFileLike, cluster: ClusterArgs | null, rest: string[]): Promise<void> {
  const { input } = parseCrawlArgs(rest);
  const args: ClusterArgs = cluster ?? { url: file.url, node: file.node, crawl: file.crawl, partitions: null, expect: null, skewMs: null };
  if (args.node !== file.node || args.crawl !== file.crawl) throw new CrawlError('CRAWL_CLUSTER_CONFIG', `${stateDir} is node ${file.node} of crawl ${file.crawl}`);
  const stored = (file.config ?? {}) as Record<string, unknown>;
  const cfg = resolveCrawlConfig({ ...stored, ...input, stateDir, outDir: (input.outDir as string | undefined) ?? (stored.outDir as string | undefined) ?? path.join(stateDir, '..', 'out') });
  if (cfg.statusPort !== null) await checkPortFree('statusPort', cfg.statusPort, cfg.statusHost);
  const outPlan = await checkDir('output directory', cfg.outDir);
  process.stderr.write(`resuming node ${file.node} of cluster crawl ${file.crawl} (${args.url})\n`);
  await runNode(args, cfg, new Set(Object.keys(input)), () => createDirs([outPlan]));
}

export interface NodeFileLike {
  crawl: string;
  node: string;
  url: string;
  config?: unknown;
}

/** The node file of a node's state directory, or null when it is not one. */
export async function readNodeFile(stateDir: string): Promise<NodeFileLike | null> {
  try {
    return JSON.parse(await readFile(path.join(stateDir, 'node.json'), 'utf8')) as NodeFileLike;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
    throw e;
  }
}

async function runNode(args: ClusterArgs, cfg: CrawlConfig, given: ReadonlySet<string>, prepare: () => Promise<void>): Promise<void> {
  const { ClusterNode } = await import('../../cluster/node.js');
  const node = await ClusterNode.start({ args, cfg, given, prepare });
  node.on('status-server', (url: string, token: string) => announceStatusServer(url, token, cfg.stateDir));
  process.stderr.write(`node ${args.node} of cluster crawl ${args.crawl}: ${node.partitions} partitions, state ${cfg.stateDir}\n`);
  let s;
  try {
    s = await node.run({ handleSignals: true });
  } catch (e) {
    if (e instanceof Error) e.message += ` (once that is fixed the node goes on from its partitions' checkpoints: ${selfCommand()} resume ${cfg.stateDir})`;
    throw e;
  }
  process.stdout.write(`node ${args.node}: crawl ${s.finished ? 'finished' : 'stopped'} (${s.stopReason}); partitions ${s.partitions.join(' ') || '-'}\n`);
  for (const x of s.summaries) printSummary(x);
}

export function registerClusterCommand(program: Command): void {
  const cmd = program.command('cluster').description('look at and steer a cluster crawl (docs/cluster.md)');
  cmd
    .command('status')
    .description('every node\'s progress, each partition\'s holder, backlog, in-flight batches and redeliveries')
    .requiredOption('--cluster <nats-url>', 'the NATS JetStream server of the crawl')
    .option('--crawl-name <name>', 'the crawl\'s name', 'crawl')
    .option('--json', 'print the table as JSON')
    .action(async (o: { cluster: string; crawlName: string; json?: boolean }) => {
      await runGuarded(async () => {
        const { readClusterTable, formatClusterTable } = await import('../../cluster/index.js');
        const { fromJson } = await import('../../cluster/engine/engine.js');
        await withEngine(o, 'status', async (e) => {
          const t = await readClusterTable(e, fromJson(await clusterMeta(e, o)));
          process.stdout.write(o.json ? JSON.stringify(t) + '\n' : formatClusterTable(t));
        });
      });
    });
  cmd
    .command('leave')
    .description('ask a node to leave: it hands each of its partitions to the node the placement then names, and stops')
    .argument('<node>', 'the node\'s id')
    .requiredOption('--cluster <nats-url>', 'the NATS JetStream server of the crawl')
    .option('--crawl-name <name>', 'the crawl\'s name', 'crawl')
    .action(async (id: string, o: { cluster: string; crawlName: string }) => {
      await runGuarded(async () => {
        const { jsonBytes } = await import('../../cluster/engine/engine.js');
        await withEngine(o, 'leave', async (e) => {
          const m = await e.kv.get(`node.${id}`);
          if (m === null || m.operation !== 'PUT') throw new CrawlError('CRAWL_CLUSTER_CONFIG', `no node ${id} in crawl ${o.crawlName} at ${o.cluster}`);
          await e.kv.put(`leave.${id}`, jsonBytes({ at: new Date().toISOString() }));
          process.stdout.write(`node ${id} asked to leave crawl ${o.crawlName}\n`);
        });
      });
    });
  cmd
    .command('forget')
    .description('give up a node lost for good (machine and disk): its partitions restart empty on the other nodes (docs/cluster.md)')
    .argument('<node>', 'the node\'s id')
    .requiredOption('--cluster <nats-url>', 'the NATS JetStream server of the crawl')
    .option('--crawl-name <name>', 'the crawl\'s name', 'crawl')
    .action(async (id: string, o: { cluster: string; crawlName: string }) => {
      await runGuarded(async () => {
        const { fromJson } = await import('../../cluster/engine/engine.js');
        const { forgetNode } = await import('../../cluster/forget.js');
        await withEngine(o, 'forget', async (e) => {
          const r = await forgetNode(e, fromJson(await clusterMeta(e, o)), id);
          process.stdout.write(`node ${id} forgotten: partitions ${r.released.join(' ') || '-'} released (their state was on its disk: they restart empty), ${r.redirected.join(' ') || '-'} free to any node with their snapshot; ${r.ips} IP registrations ended\n`);
        });
      });
    });
}

/** Runs `fn` on a connection to the crawl's engine as `<role>-<pid>`, closed whatever happens. */
async function withEngine(o: { cluster: string; crawlName: string }, role: string, fn: (e: Engine) => Promise<void>): Promise<void> {
  const { openEngine } = await import('../../cluster/index.js');
  const e = await openEngine(o.cluster, o.crawlName, `${role}-${process.pid}`);
  try {
    await fn(e);
  } finally {
    await e.close();
  }
}

/** The crawl's settings record (the key-value bucket's `meta`); CRAWL_CLUSTER_CONFIG when there is none. */
async function clusterMeta(e: Engine, o: { cluster: string; crawlName: string }): Promise<Uint8Array> {
  const m = await e.kv.get('meta');
  if (m === null || m.operation !== 'PUT') throw new CrawlError('CRAWL_CLUSTER_CONFIG', `no cluster crawl named ${o.crawlName} at ${o.cluster}`);
  return m.value;
}
