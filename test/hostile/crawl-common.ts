/** Helpers of the crawl-level hostile-site tests (floods.test.ts, crawl.test.ts). */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { WARCParser } from 'warcio';
import type { HostileServers } from '../../src/simweb/hostile-server.js';
import { cli, UA } from '../e2e/harness.js';
import { mainHeapFlags } from '../../src/budget/heap-budget.js';

export const MiB = 1024 * 1024;

export interface LogLine { status: string; url: string; hops: string; outcome: string; via: string }

export function crawlLog(out: string): LogLine[] {
  return readFileSync(path.join(out, 'crawl.log'), 'utf8').split('\n').filter((l) => l.length > 0).map((l) => {
    const f = l.split('\t');
    return { status: f[1]!, url: f[4]!, hops: f[5]!, outcome: f[7]!, via: f[9] ?? '-' };
  });
}

/** Every WARC response record: target URI → its HTTP block (head and payload). */
export async function responses(out: string): Promise<Map<string, Buffer>> {
  const m = new Map<string, Buffer>();
  for (const f of readdirSync(out).filter((x) => /\.warc\.gz$/.test(x))) {
    const data = readFileSync(path.join(out, f));
    const parser = new WARCParser((async function* () { yield data; })(), { parseHttp: false });
    for await (const rec of parser) {
      const block = Buffer.from(await rec.readFully(false));
      if (rec.warcType === 'response' || rec.warcType === 'metadata') m.set(`${rec.warcType} ${rec.warcTargetURI ?? ''}`, block);
    }
  }
  return m;
}

/** Server IPs of one run: 127.89.<run>.<i>. */
export function ipsOf(run: number, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `127.89.${run}.${i + 1}`);
}


export interface BudgetSample { capacityBytes: number; usedBytes: number; peakBytes: number }

/**
 * `drumcrawl crawl` (the CLI through tsx, the main thread's heap limited as bin/drumcrawl limits
 * it) of `seeds` on the hostile servers, at --ram 512M for
 * --max-time `maxTimeS`, delays 100 ms, the body budget read from GET /status every second while
 * it runs. Resolves with its exit code, its output and the budget samples.
 */
export async function hostileRun(o: { seeds: string[]; dir: string; pageWorkers: 'on' | 'off'; maxTimeS: number; extra?: string[] }): Promise<{ code: number | null; log: string; budgets: BudgetSample[] }> {
  const c = cli([
    'crawl', ...o.seeds, '--allow-network', '127.0.0.0/8', '--scope', 'any', '--user-agent', UA, '--progress', 'none',
    '--state', path.join(o.dir, 'state'), '--out', path.join(o.dir, 'out'), '--ram', '512M', '--max-time', String(o.maxTimeS),
    '--page-workers', o.pageWorkers, '--host-delay', '100', '--min-host-delay', '100', '--ip-delay', '100', '--min-ip-delay', '100',
    // a hostile host's penalty (10 min for a flood) comes down to ~1 s: the floods go on all run
    '--retry-delay-scale', '0.002', '--status-port', '0',
    // every host here is its own PLD, a seed's or linked from one: the low-PLD pace of the default
    // trusted reputation would hold each to a page per 32 τh beside the others (docs/frontier.md,
    // "Spam resistance"); these tests are about what the servers do to the fetches
    '--reputation', 'indegree',
    ...(o.extra ?? []),
  ], {
    // the main thread's heap as bin/drumcrawl sets it for --ram 512M (src/budget/heap-budget.ts)
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --max-old-space-size=${mainHeapFlags(512 * MiB).oldSpaceMb} --max-semi-space-size=${mainHeapFlags(512 * MiB).semiSpaceMb}`.trim(),
  });
  const budgets: BudgetSample[] = [];
  await c.waitFor(/status server: http:\/\/\S+\/status/, 180_000);
  const url = /status server: (http:\/\/\S+)\/status/.exec(c.out())![1]!;
  while (c.child.exitCode === null && c.child.signalCode === null) {
    try {
      const st = (await (await fetch(`${url}/status`, { signal: AbortSignal.timeout(5000) })).json()) as { bodyBudget?: BudgetSample };
      if (st.bodyBudget !== undefined) budgets.push(st.bodyBudget);
    } catch { /* the server is gone: the crawl is ending */ }
    await new Promise((r) => setTimeout(r, 1000));
  }
  return { code: await c.done, log: c.out(), budgets };
}

/** Pages a server was asked for (robots.txt aside) that have no crawl.log line. */
export function unlogged(srv: HostileServers, lines: readonly LogLine[]): string[] {
  const logged = new Set(lines.map((l) => l.url));
  return [...new Set(srv.log.filter((e) => !e.path.startsWith('/robots')).map((e) => srv.url(e.ip, e.path)))].filter((u) => !logged.has(u));
}
