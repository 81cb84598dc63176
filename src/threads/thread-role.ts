/**
 * Thread roles for CPU accounting (bench:e2e's CPU per page per thread role, docs/performance.md).
 * All of a Node process's threads are named "node" in /proc, so a bench cannot tell a parse worker
 * from a DRUM thread by name. With `DRUMCRAWL_THREAD_ROLES` set in the environment, each worker
 * thread announces its Linux thread id and its role once, when it starts (and a DRUM thread once
 * per instance it hosts), on a BroadcastChannel that the bench listens to; the bench then reads
 * each thread's CPU time from /proc/<pid>/task/<tid>/stat itself.
 *
 * GC time: an announcing thread also watches its own isolate's garbage collections
 * (PerformanceObserver 'gc' entries: the pause each one cost this thread, whatever the kind) and
 * posts its running total on the same channel every GC_REPORT_MS (an unref'd timer), so the bench
 * can say how much of each role's CPU is GC pauses (`watchGc`; the main thread calls it itself).
 * The bench's windows are seconds long, so a total up to GC_REPORT_MS old at either end changes a
 * per-page figure by a few percent of itself at most.
 *
 * A bench that runs the crawler as a child process (bench:realweb runs `bin/drumcrawl`) cannot
 * listen on the channel: when the variable's value is an absolute path, each announcement is also
 * appended to that file as a line `<tid>\t<role>`.
 *
 * Off by default: without the variable this is one environment lookup per thread start, nothing
 * per page. Linux only (the thread id comes from /proc/thread-self); elsewhere it does nothing.
 */
import { appendFileSync, readlinkSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';
import { BroadcastChannel } from 'node:worker_threads';

/** The BroadcastChannel name the announcements go to. */
export const THREAD_ROLE_CHANNEL = 'drumcrawl:thread-roles';

/**
 * What a thread announces: its Linux thread id and its role ('parse', 'drum:urlseen', …); or, with
 * `gcMs`, its isolate's GC pauses so far (ms) and their count.
 */
export interface ThreadRoleAnnouncement {
  tid: number;
  role?: string;
  gcMs?: number;
  gcCount?: number;
}

/** How often a watched thread posts its GC total. */
export const GC_REPORT_MS = 200;
let watching = false;

/**
 * Sum this thread's GC pauses and post the total every GC_REPORT_MS for thread `tid` (once per
 * thread; later calls do nothing).
 */
export function watchGc(tid: number): void {
  if (watching) return;
  watching = true;
  let gcMs = 0;
  let gcCount = 0;
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gcMs += e.duration;
      gcCount++;
    }
  });
  obs.observe({ entryTypes: ['gc'] });
  const ch = new BroadcastChannel(THREAD_ROLE_CHANNEL);
  ch.unref();
  let last = 0;
  const t = setInterval(() => {
    if (gcCount === last) return;
    last = gcCount;
    ch.postMessage({ tid, gcMs, gcCount } satisfies ThreadRoleAnnouncement);
  }, GC_REPORT_MS);
  t.unref();
}

/** Announce this thread's role when `DRUMCRAWL_THREAD_ROLES` is set; otherwise do nothing. */
export function announceThreadRole(role: string): void {
  if (process.env.DRUMCRAWL_THREAD_ROLES === undefined) return;
  let tid: number;
  try {
    // "/proc/thread-self" links to "<pid>/task/<tid>" of the calling thread
    tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
  } catch {
    return;
  }
  if (!Number.isInteger(tid) || tid <= 0) return;
  const ch = new BroadcastChannel(THREAD_ROLE_CHANNEL);
  ch.postMessage({ tid, role } satisfies ThreadRoleAnnouncement);
  ch.close();
  const file = process.env.DRUMCRAWL_THREAD_ROLES ?? '';
  if (file.startsWith('/')) {
    try {
      appendFileSync(file, `${tid}\t${role}\n`);
    } catch {
      /* a bench's file; the crawl does not depend on it */
    }
  }
  watchGc(tid);
}
