/**
 * A cluster node's options (docs/cluster.md, "Running it"): the flags `crawl` and `resume` take on
 * top of the crawl's own (src/config/config.ts CRAWL_FLAGS), and which of the crawl's settings are
 * the crawl's — fixed when the first node creates it, the same on every node — and which are each
 * node's own (directories, RAM, threads, concurrency, status port, limits of this process).
 */
import os from 'node:os';
import { CrawlError } from '../errors.js';
import { CRAWL_NAME, DEFAULT_PARTITIONS, MAX_PARTITIONS, NODE_ID } from './partition.js';
import type { CrawlConfig } from '../config/config.js';

export interface ClusterArgs {
  /** nats://host:port of the engine */
  url: string;
  node: string;
  crawl: string;
  /** P at creation (null: the default, or the crawl's when it exists) */
  partitions: number | null;
  /** members to wait for before the first placement (creation only) */
  expect: number | null;
  /** clock-skew allowance of the per-IP slot rule, ms (creation only) */
  skewMs: number | null;
}

/** The flags, for --help (name, value, description). */
export const CLUSTER_FLAGS: readonly { name: string; value: string; description: string }[] = [
  { name: 'cluster', value: '<nats-url>', description: 'run as a node of a cluster crawl on this NATS JetStream server (docs/cluster.md)' },
  { name: 'node', value: '<id>', description: 'this node\'s id in the cluster (letters, digits, _ and -; default: the host name)' },
  { name: 'crawl-name', value: '<name>', description: 'the cluster crawl\'s name (default: crawl)' },
  { name: 'partitions', value: '<n>', description: `partitions of a new cluster crawl, fixed at creation (default ${DEFAULT_PARTITIONS})` },
  { name: 'expect-nodes', value: '<n>', description: 'nodes a new cluster crawl waits for before placing its partitions (default 1)' },
  { name: 'clock-skew', value: '<ms>', description: 'clock-skew allowance between nodes of a new cluster crawl (default 50)' },
];

const invalid = (msg: string): CrawlError => new CrawlError('CRAWL_CONFIG_INVALID', msg);

function int(name: string, v: string, min: number, max: number): number {
  if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw invalid(`--${name} must be an integer from ${min} to ${max} (got ${v})`);
  return Number(v);
}

/**
 * Takes the cluster flags out of a command's arguments: `null` when --cluster is absent (and
 * none of the others is given), else the flags and the remaining arguments.
 */
export function splitClusterArgs(raw: readonly string[], defaultNode: string): { cluster: ClusterArgs | null; rest: string[] } {
  const vals = new Map<string, string>();
  const rest: string[] = [];
  for (let i = 0; i < raw.length; i++) {
    const a = raw[i]!;
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(a);
    const f = m === null ? undefined : CLUSTER_FLAGS.find((x) => x.name === m[1]);
    if (f === undefined) {
      rest.push(a);
      continue;
    }
    let v = m![2];
    if (v === undefined) {
      v = raw[++i];
      if (v === undefined) throw invalid(`--${f.name} needs a value ${f.value}`);
    }
    vals.set(f.name, v);
  }
  if (!vals.has('cluster')) {
    const stray = [...vals.keys()];
    if (stray.length > 0) throw invalid(`--${stray[0]} belongs to a cluster node: give --cluster <nats-url> too`);
    return { cluster: null, rest };
  }
  const url = vals.get('cluster')!;
  if (!/^(nats|tls):\/\/[^\s/]+$/.test(url) && !/^[^\s/:]+:\d+$/.test(url)) throw invalid(`--cluster must be nats://host:port (got ${url})`);
  const node = vals.get('node') ?? defaultNode;
  if (!NODE_ID.test(node)) throw invalid(`--node must be 1 to 64 letters, digits, _ or - (got ${node})`);
  const crawl = vals.get('crawl-name') ?? 'crawl';
  if (!CRAWL_NAME.test(crawl)) throw invalid(`--crawl-name must be 1 to 32 of a-z, 0-9, _ and - (got ${crawl})`);
  return {
    cluster: {
      url, node, crawl,
      partitions: vals.has('partitions') ? int('partitions', vals.get('partitions')!, 1, MAX_PARTITIONS) : null,
      expect: vals.has('expect-nodes') ? int('expect-nodes', vals.get('expect-nodes')!, 1, MAX_PARTITIONS) : null,
      skewMs: vals.has('clock-skew') ? int('clock-skew', vals.get('clock-skew')!, 0, 10_000) : null,
    },
    rest,
  };
}

/**
 * Settings each node chooses for itself (config.ts keys): everything else is the crawl's, taken
 * from the crawl's meta by every node after the first.
 */
export const NODE_LOCAL_KEYS: ReadonlySet<string> = new Set([
  'stateDir', 'outDir', 'dnsServers', 'allowNetworks', 'ramBytes', 'workers', 'fetchConcurrency', 'hostTableSize',
  'warcCompression', 'warcMaxFileBytes', 'warcDns', 'warcZstdLevel', 'warcZstdDictionary', 'statusPort', 'statusHost', 'checkpointIntervalMs', 'progress',
  'progressIntervalMs', 'tlsInsecure', 'crawlLogFormat', 'pageWorkers', 'maxPages', 'maxTimeMs', 'paused', 'seedsFile',
]);

/** The crawl's own settings out of a node's config (what the crawl's meta keeps). */
export function crawlWide(cfg: CrawlConfig): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(cfg)) if (!NODE_LOCAL_KEYS.has(k)) out[k] = v;
  return out;
}

/**
 * The keys whose value this node's config gives differently from the crawl's (`given`: the keys the
 * node's command line set; seeds may be left out by a node joining a crawl).
 */
export function conflicts(crawl: Record<string, unknown>, cfg: CrawlConfig, given: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(crawl)) {
    if (!given.has(k)) continue;
    if (k === 'seeds' && Array.isArray((cfg as unknown as Record<string, unknown>)[k]) && ((cfg as unknown as Record<string, unknown>)[k] as unknown[]).length === 0) continue;
    if (JSON.stringify((cfg as unknown as Record<string, unknown>)[k]) !== JSON.stringify(v)) out.push(k);
  }
  return out;
}

/** The host name as a node id (letters, digits, _ and - kept). */
export function defaultNodeId(): string {
  return os.hostname().replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 64) || 'node';
}
