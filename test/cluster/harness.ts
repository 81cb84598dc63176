/**
 * Cluster crawls for tests: N node processes of the CLI (`drumcrawl crawl … --cluster`), each with
 * its own state and output directory, against one nats-server and one simweb, on loopback.
 */
import path from 'node:path';
import { readFile, readdir } from 'node:fs/promises';
import { cli, crawlFlags, crawlSettings, type CliRun } from '../e2e/harness.js';
import type { CrawlConfigInput } from '../../src/config/config.js';

export interface NodeRun {
  id: string;
  dir: string;
  run: CliRun;
}

export interface ClusterCrawl {
  url: string;
  crawl?: string;
  partitions: number;
  expect: number;
  /** --clock-skew (ms) */
  skewMs?: number;
}

/** Flags of one node: the web's settings, its directories, the cluster's. */
export function nodeArgs(web: { seeds: string[]; dnsServer: string }, c: ClusterCrawl, id: string, dir: string, over: CrawlConfigInput = {}): string[] {
  const input = crawlSettings(web, { stateDir: path.join(dir, id, 'state'), outDir: path.join(dir, id, 'out'), ...over });
  return [
    'crawl', ...web.seeds, ...crawlFlags(input),
    '--cluster', c.url, '--node', id, '--crawl-name', c.crawl ?? 'crawl', '--partitions', String(c.partitions), '--expect-nodes', String(c.expect),
    ...(c.skewMs !== undefined ? ['--clock-skew', String(c.skewMs)] : []),
  ];
}

export function startNode(web: { seeds: string[]; dnsServer: string }, c: ClusterCrawl, id: string, dir: string, over: CrawlConfigInput = {}, env: NodeJS.ProcessEnv = {}): NodeRun {
  return { id, dir: path.join(dir, id), run: cli(nodeArgs(web, c, id, dir, over), env) };
}

/** `drumcrawl resume <node state>` of a node started with startNode. */
export function resumeNode(n: NodeRun, extra: string[] = [], env: NodeJS.ProcessEnv = {}): NodeRun {
  return { ...n, run: cli(['resume', path.join(n.dir, 'state'), ...extra], env) };
}

/** Waits for every node's exit (each within ms); returns their exit codes. */
export async function waitAll(nodes: readonly NodeRun[], ms: number): Promise<(number | null)[]> {
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`cluster crawl not done within ${ms} ms:\n${nodes.map((n) => `--- ${n.id}\n${n.run.out().slice(-3000)}`).join('\n')}`)), ms).unref());
  return Promise.race([Promise.all(nodes.map((n) => n.run.done)), timeout]);
}

/** crawl.log lines of a node (its WARC writer's pages: every partition it ran). */
export async function crawlLogUrls(nodeDir: string): Promise<string[]> {
  const out: string[] = [];
  const text = await readFile(path.join(nodeDir, 'out', 'crawl.log'), 'utf8').catch(() => '');
  for (const line of text.split('\n')) if (line !== '') out.push(line);
  return out;
}

export async function partitionsOf(nodeDir: string): Promise<number[]> {
  return (await readdir(path.join(nodeDir, 'state', 'p')).catch(() => [] as string[])).map(Number).sort((a, b) => a - b);
}

export interface Trace {
  at: number;
  ip: string;
  url: string;
  robots: boolean;
  /** the node whose output held the line (named in a gap's message) */
  node?: string;
}

/** A node's DRUMCRAWL_TRACE_FETCH lines: each request's actual start (fetch-stage.ts traceDispatch). */
export function traceLines(out: string, node?: string): Trace[] {
  const t: Trace[] = [];
  for (const m of out.matchAll(/^TRACE (\d+(?:\.\d+)?) (\S+) (\S+)$/gm)) {
    const url = m[3]!;
    t.push({ at: Number(m[1]), ip: m[2]!, url, robots: /\/robots(-for\/[^/]+)?\.txt$/.test(url), ...(node !== undefined ? { node } : {}) });
  }
  return t;
}

/** Pairs of consecutive starts with one key (IP, host) closer than ms, over every node's trace. */
export function crawlerGaps(trace: readonly Trace[], key: (t: Trace) => string | null, ms: number): string[] {
  const last = new Map<string, Trace>();
  const out: string[] = [];
  for (const t of [...trace].sort((a, b) => a.at - b.at)) {
    const k = key(t);
    if (k === null) continue;
    const p = last.get(k);
    if (p !== undefined && t.at - p.at < ms) {
      const by = (x: Trace): string => (x.node !== undefined ? ` (${x.node} at ${x.at.toFixed(1)})` : '');
      out.push(`${k}: ${p.url}${by(p)} then ${t.url}${by(t)} ${(t.at - p.at).toFixed(1)} ms apart`);
    }
    last.set(k, t);
  }
  return out;
}
