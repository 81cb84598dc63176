/**
 * One `drumcrawl crawl` as a user runs it (`<tree>/bin/drumcrawl`: the launcher, the built dist/),
 * measured from outside its process: its CPU (utime + stime of all its threads, /proc/<pid>/stat)
 * sampled every SAMPLE_MS from the moment it is spawned, each thread's CPU every THREAD_SAMPLE_MS
 * (/proc/<pid>/task/<tid>/stat; the roles come from the file the crawler's threads announce
 * themselves to, src/threads/thread-role.ts), the moment of its first request (a callback the
 * caller polls, e.g. the web server's access log growing) with every thread's CPU read at once,
 * and the completion time of every fetch (its crawl.log). bench/realweb/run.ts turns these into
 * the figures of docs/performance.md "Start-up and real pages".
 *
 * The clock: Date.now() (the web server's log and crawl.log carry wall-clock times). /proc counts
 * in clock ticks (CLK_TCK = 100 here: 10 ms), so a figure over a window is good to ±10 ms per end.
 */
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { statCpu } from '../lib/thread-cpu.js';
import { parseCrawlLogLine } from '../../src/store/index.js';

const SAMPLE_MS = 5;
/** bin/drumcrawl's heap flags for `crawl` without --ram (1.5G: src/budget/heap-budget.ts) */
const LAUNCHER_1_5G = ['--max-old-space-size=672', '--max-semi-space-size=16'];
const THREAD_SAMPLE_MS = 100;

export interface ThreadCpu {
  tid: number;
  role: string;
  cpuMs: number;
}

export interface MeasuredCrawl {
  exitCode: number | null;
  /** Date.now() just before the spawn */
  launchedAt: number;
  exitedAt: number;
  /** the process' CPU ms at Date.now() times, from the spawn to its exit */
  samples: { at: number; cpuMs: number }[];
  /** every thread's CPU ms at those times (coarser) */
  threadSamples: { at: number; threads: Map<number, number> }[];
  /** tid → role ('main' for the pid; announced roles; 'runtime' for the rest) */
  roles: Map<number, string>;
  /** when the caller's probe first said a request had arrived (Date.now()) and every thread's CPU then */
  firstSeen: { at: number; threads: ThreadCpu[] } | null;
  /** completion time (ms since the epoch) of every fetch with a response, in log order */
  fetches: number[];
  /** the crawler's last words (stderr + stdout tail) */
  tail: string;
}

/** The process `perf record` started (its only child), once it exists. */
async function perfTarget(perfPid: number): Promise<number> {
  for (let i = 0; i < 5000; i++) {
    try {
      const kids = readFileSync(`/proc/${perfPid}/task/${perfPid}/children`, 'latin1').trim();
      if (kids !== '') return Number(kids.split(' ')[0]);
    } catch {
      /* perf exited */
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  throw new Error(`perf record (pid ${perfPid}) started no crawler`);
}

function procCpuMs(pid: number): number | null {
  try {
    const c = statCpu(readFileSync(`/proc/${pid}/stat`, 'latin1'));
    return c.user + c.sys;
  } catch {
    return null;
  }
}

function threadCpuMs(pid: number): Map<number, number> {
  const m = new Map<number, number>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return m;
  }
  for (const t of tids) {
    try {
      const c = statCpu(readFileSync(`/proc/${pid}/task/${t}/stat`, 'latin1'));
      m.set(Number(t), c.user + c.sys);
    } catch {
      /* exited between readdir and read */
    }
  }
  return m;
}

/**
 * Spawns `<root>/bin/drumcrawl crawl <args>` with `--out <out>` among them (its crawl.log is read
 * at the end) and measures it until it exits. `firstRequest()` is polled every SAMPLE_MS until it
 * returns true once.
 */
export async function measureCrawl(opts: {
  root: string;
  args: string[];
  out: string;
  rolesFile: string;
  firstRequest?: () => boolean;
  env?: NodeJS.ProcessEnv;
  /** `node --cpu-prof`'s directory: the bundle run by node with the launcher's settings for the default --ram (1.5G), profiled */
  cpuProf?: string;
  /**
   * `perf record -g` of the crawler's process, every thread (V8's compiler and GC threads and
   * libuv's pool included, which --cpu-prof does not see), into this file: perf starts the crawler
   * (`perf record -- bin/drumcrawl crawl …`; attached with -p after the spawn it missed V8's
   * threads) and the figures are the crawler's, perf's own process not included.
   */
  perf?: string;
}): Promise<MeasuredCrawl> {
  const launchedAt = Date.now();
  const env = { ...process.env, ...opts.env, DRUMCRAWL_THREAD_ROLES: opts.rolesFile };
  const child = opts.perf !== undefined
    ? spawn('perf', ['record', '-F', '499', '-g', '-q', '-o', opts.perf, '--', path.join(opts.root, 'bin/drumcrawl'), 'crawl', ...opts.args], { stdio: ['ignore', 'pipe', 'pipe'], env })
    : opts.cpuProf === undefined
    ? spawn(path.join(opts.root, 'bin/drumcrawl'), ['crawl', ...opts.args], { stdio: ['ignore', 'pipe', 'pipe'], env })
    : spawn(process.execPath, ['--cpu-prof', '--cpu-prof-dir', opts.cpuProf, ...LAUNCHER_1_5G, path.join(opts.root, 'dist/bundle/main.js'), 'crawl', ...opts.args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072', ...env },
    });
  const pid = opts.perf === undefined ? child.pid! : await perfTarget(child.pid!);
  let tail = '';
  const keep = (d: Buffer): void => void (tail = (tail + d.toString()).slice(-4000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const samples: MeasuredCrawl['samples'] = [];
  const threadSamples: MeasuredCrawl['threadSamples'] = [];
  let firstSeen: { at: number; threads: Map<number, number> } | null = null;
  let lastThreads = 0;
  const tick = (): void => {
    const at = Date.now();
    const c = procCpuMs(pid);
    if (c !== null) samples.push({ at, cpuMs: c });
    if (firstSeen === null && opts.firstRequest?.() === true) firstSeen = { at: Date.now(), threads: threadCpuMs(pid) };
    if (at - lastThreads >= THREAD_SAMPLE_MS) {
      lastThreads = at;
      threadSamples.push({ at, threads: threadCpuMs(pid) });
    }
  };
  tick();
  const timer = setInterval(tick, SAMPLE_MS);
  const exitCode = await new Promise<number | null>((resolve) => {
    child.once('error', (e) => { keep(Buffer.from(`spawn: ${e.message}\n`)); resolve(null); });
    child.once('exit', (code, signal) => { if (signal !== null) keep(Buffer.from(`killed by ${signal}\n`)); resolve(code); });
  });
  const exitedAt = Date.now();
  clearInterval(timer);

  const roles = new Map<number, string>([[pid, 'main']]);
  try {
    for (const line of readFileSync(opts.rolesFile, 'utf8').split('\n')) {
      const [tid, role] = line.split('\t');
      if (tid === undefined || role === undefined) continue;
      const prev = roles.get(Number(tid));
      roles.set(Number(tid), prev !== undefined && prev.startsWith('drum:') && role.startsWith('drum:') ? `${prev}+${role.slice(5)}` : role);
    }
  } catch {
    /* no thread announced itself */
  }
  const fetches: number[] = [];
  for (const line of readFileSync(path.join(opts.out, 'crawl.log'), 'utf8').split('\n')) {
    if (line === '') continue;
    const e = parseCrawlLogLine(line);
    if (e.status !== null && e.status > 0) fetches.push(e.time.getTime());
  }
  const fs = firstSeen as { at: number; threads: Map<number, number> } | null;
  return {
    exitCode, launchedAt, exitedAt, samples, threadSamples, roles, fetches, tail,
    firstSeen: fs === null ? null : { at: fs.at, threads: [...fs.threads].map(([tid, cpuMs]) => ({ tid, role: roles.get(tid) ?? 'runtime', cpuMs })) },
  };
}

/** The process' CPU ms at time `at` (linear between the samples around it; the last one after the end). */
export function cpuAt(m: MeasuredCrawl, at: number): number {
  const s = m.samples;
  if (s.length === 0) return 0;
  if (at <= s[0]!.at) return s[0]!.cpuMs;
  for (let i = 1; i < s.length; i++) {
    if (s[i]!.at >= at) {
      const a = s[i - 1]!;
      const b = s[i]!;
      return b.at === a.at ? b.cpuMs : a.cpuMs + ((b.cpuMs - a.cpuMs) * (at - a.at)) / (b.at - a.at);
    }
  }
  return s.at(-1)!.cpuMs;
}

/** Fetches completed in [from, to). */
export function fetchesIn(m: MeasuredCrawl, from: number, to: number): number {
  let n = 0;
  for (const t of m.fetches) if (t >= from && t < to) n++;
  return n;
}

/** CPU ms per fetch in [from, to) (null when none completed in it). */
export function cpuPerFetch(m: MeasuredCrawl, from: number, to: number): { pages: number; cpuMs: number; msPerPage: number | null } {
  const pages = fetchesIn(m, from, to);
  const cpuMs = cpuAt(m, to) - cpuAt(m, from);
  return { pages, cpuMs, msPerPage: pages > 0 ? cpuMs / pages : null };
}

/**
 * CPU ms per fetch of each thread role between the thread samples nearest `from` and `to`
 * (threads that started or exited inside the window count from 0 / up to their last sample).
 */
export function roleCpuPerFetch(m: MeasuredCrawl, from: number, to: number): Record<string, number> {
  const ts = m.threadSamples;
  if (ts.length === 0) return {};
  const near = (at: number): (typeof ts)[number] => ts.reduce((b, x) => (Math.abs(x.at - at) < Math.abs(b.at - at) ? x : b));
  const a = near(from);
  const b = near(to);
  const pages = fetchesIn(m, a.at, b.at);
  const out: Record<string, number> = {};
  const tids = new Set([...a.threads.keys(), ...b.threads.keys()]);
  for (const tid of tids) {
    const d = (b.threads.get(tid) ?? a.threads.get(tid) ?? 0) - (a.threads.get(tid) ?? 0);
    const role = m.roles.get(tid) ?? 'runtime';
    out[role] = (out[role] ?? 0) + d;
  }
  for (const k of Object.keys(out)) out[k] = pages > 0 ? Math.round((out[k]! / pages) * 1000) / 1000 : NaN;
  return out;
}

/** CPU ms of each thread role in a list of threads. */
export function byRole(threads: ThreadCpu[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of threads) out[t.role] = (out[t.role] ?? 0) + t.cpuMs;
  return out;
}
