/**
 * What a long crawl must show to be judged flat (bench:soak, the status page's 24-hour view): how
 * long each DRUM merge and each checkpoint took, the event loop's delay, the main thread's heap, and
 * which thread does what (for CPU per thread role). All in fixed memory: each duration log keeps
 * totals and its last RECENT entries, the loop-delay monitor one histogram and a ring of 16
 * one-second maxima.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import v8 from 'node:v8';
import { BroadcastChannel, isMainThread } from 'node:worker_threads';
import { THREAD_ROLE_CHANNEL, type ThreadRoleAnnouncement } from '../threads/thread-role.js';

/** Entries a duration log keeps (the bench samples /status every second; merges come a few per second at most). */
const RECENT = 32;

export interface DurationSummary {
  count: number;
  totalMs: number;
  lastMs: number;
  maxMs: number;
  /** the last RECENT entries: when each ended (Unix ms) and how long it took */
  recent: { at: number; ms: number }[];
}

/** Durations of one kind of pause (a URLseen merge, a checkpoint): totals and the last few. */
export class DurationLog {
  private count = 0;
  private totalMs = 0;
  private lastMs = 0;
  private maxMs = 0;
  private readonly at = new Float64Array(RECENT);
  private readonly ms = new Float64Array(RECENT);
  private next = 0;

  record(ms: number, at = Date.now()): void {
    this.count++;
    this.totalMs += ms;
    this.lastMs = ms;
    if (ms > this.maxMs) this.maxMs = ms;
    this.at[this.next] = at;
    this.ms[this.next] = ms;
    this.next = (this.next + 1) % RECENT;
  }

  /** Times `p` (its duration is recorded when it settles, either way) and returns it. */
  time<T>(p: Promise<T>): Promise<T> {
    const t0 = performance.now();
    return p.finally(() => this.record(performance.now() - t0));
  }

  summary(): DurationSummary {
    const recent: { at: number; ms: number }[] = [];
    const n = Math.min(this.count, RECENT);
    for (let k = n; k >= 1; k--) {
      const i = (this.next - k + RECENT) % RECENT;
      recent.push({ at: this.at[i]!, ms: Math.round(this.ms[i]! * 10) / 10 });
    }
    return { count: this.count, totalMs: Math.round(this.totalMs), lastMs: Math.round(this.lastMs * 10) / 10, maxMs: Math.round(this.maxMs * 10) / 10, recent };
  }

  /** The longest entry that ended after `since` (Unix ms), 0 if none: the history's per-sample pause. */
  maxSince(since: number): number {
    let m = 0;
    for (let i = 0; i < RECENT; i++) if (this.at[i]! > since && this.ms[i]! > m) m = this.ms[i]!;
    return m;
  }
}

export interface LoopDelaySummary {
  /** the longest delay in the last whole second, and over the last 16 s */
  lastSecMaxMs: number;
  maxMs: number;
  /** the 99th percentile over the current second so far */
  p99Ms: number;
}

/**
 * Event-loop delay of the main thread (perf_hooks' histogram, 10 ms resolution): every second
 * the histogram's max goes into a ring of 16 and the histogram restarts.
 */
export class LoopDelay {
  private readonly h: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });
  private readonly ring = new Float64Array(16);
  private next = 0;
  private timer: NodeJS.Timeout | null = null;

  start(): void {
    if (this.timer !== null) return;
    this.h.enable();
    this.timer = setInterval(() => {
      this.ring[this.next] = this.h.max / 1e6;
      this.next = (this.next + 1) % this.ring.length;
      this.h.reset();
    }, 1000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.h.disable();
  }

  summary(): LoopDelaySummary {
    const r = (x: number): number => Math.round(x * 10) / 10;
    let max = 0;
    for (const v of this.ring) if (v > max) max = v;
    const last = this.ring[(this.next - 1 + this.ring.length) % this.ring.length]!;
    const p99 = this.h.count > 0 ? this.h.percentile(99) / 1e6 : 0;
    return { lastSecMaxMs: r(last), maxMs: r(Math.max(max, this.h.count > 0 ? this.h.max / 1e6 : 0)), p99Ms: r(p99) };
  }
}

/** The main thread's V8 heap: bytes in use, committed, and its limit (bin/drumcrawl sets it from --ram). */
export function heapSummary(): { usedBytes: number; totalBytes: number; limitBytes: number } {
  const h = v8.getHeapStatistics();
  return { usedBytes: h.used_heap_size, totalBytes: h.total_heap_size, limitBytes: h.heap_size_limit };
}

/**
 * Linux thread id → role of this process' threads ('main', 'parse', 'drum:urlseen', …), learnt from
 * the announcements thread-role.ts makes when DRUMCRAWL_THREAD_ROLES is set (otherwise only the
 * main thread is known). Bounded by the threads the crawler starts (a replaced worker's id stays:
 * at most a few dozen).
 */
export class ThreadRoles {
  readonly roles: Record<string, string> = { [String(process.pid)]: 'main' };
  private channel: BroadcastChannel | null = null;

  /** Listens from now on (once; a BroadcastChannel keeps nothing for a listener that comes later). */
  start(): void {
    if (process.env.DRUMCRAWL_THREAD_ROLES === undefined || this.channel !== null) return;
    this.channel = new BroadcastChannel(THREAD_ROLE_CHANNEL);
    this.channel.onmessage = (e: unknown) => {
      const m = (e as { data: ThreadRoleAnnouncement }).data;
      if (m.role === undefined) return; // a GC total (thread-role.ts), not an announcement
      const prev = this.roles[String(m.tid)];
      // a DRUM thread announces once per instance it hosts: one role name for all of them
      this.roles[String(m.tid)] = prev !== undefined && prev.startsWith('drum:') && m.role.startsWith('drum:') ? `${prev}+${m.role.slice(5)}` : m.role;
    };
    this.channel.unref();
  }
}

/**
 * The process's thread roles, listening from the moment this module loads. A thread announces
 * itself once, as it starts, and the opening starts the DRUM and archive threads (and a page worker
 * may boot) before a run begins: a listener opened by the run heard none of them, and the roles
 * in /status were the main thread's alone.
 */
export const processThreadRoles = new ThreadRoles();
if (isMainThread) processThreadRoles.start();

/** The crawl's pause and load instruments, one per run. */
export class RunMetrics {
  readonly urlSeenMerges = new DurationLog();
  readonly contentMerges = new DurationLog();
  readonly checkpoints = new DurationLog();
  /** How long each checkpoint held the scheduler (a periodic one: until the frontier's snapshot). */
  readonly checkpointHolds = new DurationLog();
  readonly loopDelay = new LoopDelay();
  /** the process's (processThreadRoles): threads outlive a run's instruments */
  readonly threads = processThreadRoles;

  start(): void {
    this.loopDelay.start();
    this.threads.start(); // DRUMCRAWL_THREAD_ROLES set after this module loaded (a test)
  }

  stop(): void {
    this.loopDelay.stop();
  }
}

/** What /status carries of the above (StatusSnapshot.run). */
export interface RunStatus {
  /** page fetches started in this run (a second with none while `dueNow` is a stall) */
  pagesStarted: number;
  dueNow: boolean;
  heap: { usedBytes: number; totalBytes: number; limitBytes: number };
  loopDelay: LoopDelaySummary;
  merges: { urlSeen: DurationSummary; contentSeen: DurationSummary };
  checkpoints: DurationSummary;
  /** how long each checkpoint held the scheduler (no release meanwhile): its pause for the crawl */
  checkpointHolds: DurationSummary;
  /** the frontier's depth (frontier-port.ts FrontierStats.depth) */
  frontier: Record<string, number>;
  dns: { entries: number; waiting: number };
  /** Linux thread id → role (ThreadRoles) */
  threads: Record<string, string>;
  /** the RAM budget (--ram) */
  ramBytes: number;
}

export function runStatus(m: RunMetrics, x: { pagesStarted: number; dueNow: boolean; frontier: Record<string, number>; dns: { entries: number; waiting: number }; ramBytes: number }): RunStatus {
  return {
    ramBytes: x.ramBytes,
    pagesStarted: x.pagesStarted,
    dueNow: x.dueNow,
    heap: heapSummary(),
    loopDelay: m.loopDelay.summary(),
    merges: { urlSeen: m.urlSeenMerges.summary(), contentSeen: m.contentMerges.summary() },
    checkpoints: m.checkpoints.summary(),
    checkpointHolds: m.checkpointHolds.summary(),
    frontier: x.frontier,
    dns: x.dns,
    threads: { ...m.threads.roles },
  };
}
