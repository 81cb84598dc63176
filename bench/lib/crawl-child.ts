/**
 * Run `drumcrawl crawl` as a child process — the built product through its launcher, or the source
 * tree via tsx (no build) — for benches that need the crawler's own process: its RSS
 * and CPU are then the crawler's alone, not the harness' or simweb's (bench/star, bench/rss).
 *
 *   const c = startCrawlChild(['http://…', '--dns-server', sw.dnsServer, ...SIMWEB_ALLOW_FLAGS, '--max-pages', '1000', …]);
 *   const url = await c.statusUrl;          // when '--status-port 0' is passed: 'http://127.0.0.1:P'
 *   const st = await c.status();             // GET /status (null if not answering)
 *   const code = await c.exited;             // exit code (null after a signal)
 *
 * Memory: keeps the last 8 KB of stderr only.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT } from './report.js';
import { statCpu } from './thread-cpu.js';

export interface CrawlChild {
  child: ChildProcess;
  pid: number;
  /** Resolves with the status server's base URL once the child prints it (only with --status-port). */
  statusUrl: Promise<string>;
  /** GET <statusUrl>/status as JSON, or null when the server does not answer (yet, or any more). */
  status(): Promise<Record<string, unknown> | null>;
  /** Exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  isRunning(): boolean;
  stderrTail(): string;
  /** SIGTERM, then SIGKILL after `graceMs` if it has not exited. */
  stop(graceMs?: number): Promise<number | null>;
}

/**
 * `opts.root`: the tree whose CLI runs (default the checkout; see snapshot.ts). `opts.product`: run
 * `<root>/bin/drumcrawl` (the launcher users run: built dist/, glibc malloc settings; the tree must
 * have been built, see buildTree) instead of `src/cli/main.ts` through tsx. The launcher `exec`s
 * node, so the child's pid is the crawler's own (its RSS and CPU).
 */
export function startCrawlChild(crawlArgs: string[], opts: { root?: string; cwd?: string; env?: Record<string, string>; echo?: boolean; nodeArgs?: string[]; product?: boolean } = {}): CrawlChild {
  const root = opts.root ?? REPO_ROOT;
  const [cmd, argv] = opts.product
    ? [path.join(root, 'bin/drumcrawl'), ['crawl', ...crawlArgs]]
    : [process.execPath, [...(opts.nodeArgs ?? []), '--import', 'tsx', path.join(root, 'src/cli/main.ts'), 'crawl', ...crawlArgs]];
  if (opts.product && (opts.nodeArgs ?? []).length > 0) throw new Error('startCrawlChild: nodeArgs need the tsx mode (the launcher takes NODE_OPTIONS)');
  const child = spawn(cmd, argv, {
    cwd: opts.cwd ?? REPO_ROOT, env: { ...process.env, ...(opts.env ?? {}) }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  let running = true;
  let resolveUrl!: (u: string) => void;
  const statusUrl = new Promise<string>((r) => (resolveUrl = r));
  const onData = (d: Buffer): void => {
    const s = d.toString();
    if (opts.echo) process.stderr.write(s);
    tail = (tail + s).slice(-8192);
    const m = /status server: (http:\/\/[^\s/]+)\/status/.exec(tail);
    if (m) resolveUrl(m[1]!);
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => {
    running = false;
    r(code);
  }));
  let base: string | null = null;
  void statusUrl.then((u) => (base = u));
  return {
    child, pid: child.pid!, statusUrl, exited,
    isRunning: () => running,
    stderrTail: () => tail,
    async status() {
      if (base === null) return null;
      try {
        const r = await fetch(`${base}/status`, { signal: AbortSignal.timeout(5000) });
        return (await r.json()) as Record<string, unknown>;
      } catch {
        return null;
      }
    },
    async stop(graceMs = 30_000) {
      if (!running) return exited;
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const c = await exited;
      clearTimeout(t);
      return c;
    },
  };
}

/** Resident set size of one process in bytes (VmRSS from /proc; 0 if it is gone). Threads share it. */
export function rssBytes(pid: number): number {
  try {
    const s = fs.readFileSync(`/proc/${pid}/status`, 'latin1');
    const m = /^VmRSS:\s+(\d+) kB/m.exec(s);
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** utime + stime of one process (all its threads) in seconds, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
  try {
    const c = statCpu(fs.readFileSync(`/proc/${pid}/stat`, 'latin1'));
    return (c.user + c.sys) / 1000;
  } catch {
    return 0;
  }
}

