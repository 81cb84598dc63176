/**
 * CPU time per thread role of this process, for benches that run the crawler in-process
 * (bench/e2e). Linux only: every thread's utime + stime is read from /proc/self/task/<tid>/stat
 * (clock ticks, `getconf CLK_TCK`); the process total from /proc/self/stat (which also counts
 * threads that have exited).
 *
 * Roles. The main thread is the one whose tid is the pid. Worker threads are all named "node" in
 * /proc, so the crawler announces them when the environment has DRUMCRAWL_THREAD_ROLES
 * (src/threads/thread-role.ts): each parse worker says 'parse' when it starts, each DRUM thread
 * 'drum:<dir>' for every DRUM it hosts. Everything else is "runtime" = process total − the named
 * threads: V8's platform threads (concurrent GC, TurboFan), the libuv pool (async fs, fsync,
 * zlib off-thread), and threads that exited inside the window. The kernel rounds each thread's and
 * the process' times to ticks separately, so runtime carries a few ticks of rounding (negligible
 * over a bench window of seconds and thousands of pages; visible only in a window of milliseconds).
 *
 *   process.env.DRUMCRAWL_THREAD_ROLES = '1';   // before the crawler starts its workers
 *   const s = new ThreadCpuSampler();
 *   const a = s.sample(pages0); … const b = s.sample(pages1);
 *   const costs = s.roleCosts(a, b);            // ms per page per role
 *
 * The sampler runs on the main thread (a stat read per thread); `sampleCostMs` is the wall time of
 * its own samples, so its share of the main thread's figure can be judged.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { BroadcastChannel } from 'node:worker_threads';
import { THREAD_ROLE_CHANNEL, watchGc, type ThreadRoleAnnouncement } from '../../src/threads/thread-role.js';

/** Clock ticks per second of /proc's utime and stime. */
export const CLK_TCK = ((): number => {
  try {
    const n = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isFinite(n) && n > 0 ? n : 100;
  } catch {
    return 100;
  }
})();

/** utime and stime in ms of one /proc stat line (fields 14 and 15; the name may hold spaces). */
export function statCpu(text: string): { user: number; sys: number } {
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { user: (Number(f[11]) * 1000) / CLK_TCK, sys: (Number(f[12]) * 1000) / CLK_TCK };
}

export interface CpuSample {
  /** performance.now() when taken */
  t: number;
  /** the monotonic clock in µs (process.hrtime; the clock of V8's --cpu-prof timestamps) */
  monoUs: number;
  /** pages crawled at that moment (the caller's count) */
  pages: number;
  /** the whole process: user and sys ms */
  proc: { user: number; sys: number };
  /** per live thread id: user and sys ms */
  threads: Map<number, { user: number; sys: number }>;
  /** per thread id: its isolate's GC pauses so far, ms (as last posted: src/threads/thread-role.ts) */
  gc: Map<number, number>;
}

export interface RoleCost {
  role: string;
  /** threads in the role (the runtime role: the unnamed threads alive at the window's end) */
  threads: number;
  msPerPage: number;
  userMsPerPage: number;
  sysMsPerPage: number;
  /** share of the process' CPU in the window */
  share: number;
  /**
   * GC pauses of the role's isolates per page (PerformanceObserver 'gc' durations: wall time the
   * thread spent in GC, most of it CPU on that thread); null for runtime (V8's helper threads do
   * concurrent marking and sweeping: their CPU is runtime's own)
   */
  gcMsPerPage: number | null;
}

export class ThreadCpuSampler {
  /** tid → role ('main', 'parse', 'drum:urlseen+…') */
  readonly roles = new Map<number, string>([[process.pid, 'main']]);
  /** tid → GC pause ms so far, as last posted */
  private readonly gcTotals = new Map<number, number>();
  private readonly channel: BroadcastChannel;
  /** wall ms spent in sample() (main thread) */
  sampleCostMs = 0;
  samples = 0;

  constructor() {
    this.channel = new BroadcastChannel(THREAD_ROLE_CHANNEL);
    this.channel.onmessage = (e: unknown) => {
      const m = (e as { data: ThreadRoleAnnouncement }).data;
      if (m.gcMs !== undefined) {
        this.gcTotals.set(m.tid, m.gcMs);
        return;
      }
      if (m.role === undefined) return;
      // a DRUM thread announces once per instance it hosts: join them into one role name
      const prev = this.roles.get(m.tid);
      if (prev === undefined) this.roles.set(m.tid, m.role);
      else if (prev.startsWith('drum:') && m.role.startsWith('drum:')) this.roles.set(m.tid, `${prev}+${m.role.slice(5)}`);
    };
    this.channel.unref();
    // the main thread's own GC, posted on the same channel
    watchGc(process.pid);
  }

  sample(pages: number): CpuSample {
    const t0 = performance.now();
    const threads = new Map<number, { user: number; sys: number }>();
    for (const t of readdirSync('/proc/self/task')) {
      try {
        threads.set(Number(t), statCpu(readFileSync(`/proc/self/task/${t}/stat`, 'latin1')));
      } catch {
        /* the thread exited between readdir and read */
      }
    }
    const proc = statCpu(readFileSync('/proc/self/stat', 'latin1'));
    const t = performance.now();
    this.sampleCostMs += t - t0;
    this.samples++;
    return { t, monoUs: Number(process.hrtime.bigint() / 1000n), pages, proc, threads, gc: new Map(this.gcTotals) };
  }

  /**
   * CPU per page of each role between two samples: 'main', 'parse' (all parse workers), each DRUM
   * thread by what it hosts, and 'runtime' (the rest). Named roles count only threads alive in
   * both samples; a named thread that exited in between falls into runtime.
   */
  roleCosts(a: CpuSample, b: CpuSample): RoleCost[] {
    const pages = Math.max(1, b.pages - a.pages);
    const total = b.proc.user + b.proc.sys - a.proc.user - a.proc.sys;
    const sums = new Map<string, { threads: number; user: number; sys: number; gc: number }>();
    let unnamed = 0;
    for (const [tid, cb] of b.threads) {
      const role = this.roles.get(tid);
      const ca = a.threads.get(tid);
      if (role === undefined || ca === undefined) {
        unnamed++;
        continue;
      }
      const s = sums.get(role) ?? { threads: 0, user: 0, sys: 0, gc: 0 };
      s.threads++;
      s.user += cb.user - ca.user;
      s.sys += cb.sys - ca.sys;
      s.gc += (b.gc.get(tid) ?? 0) - (a.gc.get(tid) ?? 0);
      sums.set(role, s);
    }
    const named = [...sums.values()].reduce((x, s) => ({ user: x.user + s.user, sys: x.sys + s.sys }), { user: 0, sys: 0 });
    sums.set('runtime', {
      threads: unnamed,
      user: b.proc.user - a.proc.user - named.user,
      sys: b.proc.sys - a.proc.sys - named.sys,
      gc: NaN,
    });
    const order = (r: string): number => (r === 'main' ? 0 : r === 'parse' ? 1 : r.startsWith('drum:') ? 2 : 3);
    return [...sums]
      .sort((x, y) => order(x[0]) - order(y[0]) || x[0].localeCompare(y[0]))
      .map(([role, s]) => ({
        role, threads: s.threads,
        msPerPage: (s.user + s.sys) / pages, userMsPerPage: s.user / pages, sysMsPerPage: s.sys / pages,
        share: total > 0 ? (s.user + s.sys) / total : 0,
        gcMsPerPage: Number.isNaN(s.gc) ? null : s.gc / pages,
      }));
  }

  close(): void {
    this.channel.close();
  }
}
