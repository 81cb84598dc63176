/**
 * Thread roles for CPU accounting (bench:e2e's CPU per page per thread role, docs/performance.md).
 * All of a Node process's threads are named "node" in /proc, so a bench cannot tell a parse worker
 * from a DRUM thread by name. With `DRUMCRAWL_THREAD_ROLES` set in the environment, each worker
 * thread announces its Linux thread id and its role once, when it starts (and a DRUM thread once
 * per instance it hosts), on a BroadcastChannel that the bench listens to; the bench then reads
 * each thread's CPU time from /proc/<pid>/task/<tid>/stat itself.
 *
 * Off by default: without the variable this is one environment lookup per thread start, nothing
 * per page. Linux only (the thread id comes from /proc/thread-self); elsewhere it does nothing.
 */
import { readlinkSync } from 'node:fs';
import { BroadcastChannel } from 'node:worker_threads';

/** The BroadcastChannel name the announcements go to. */
export const THREAD_ROLE_CHANNEL = 'drumcrawl:thread-roles';

/** What a thread announces: its Linux thread id and its role ('parse', 'drum:urlseen', …). */
export interface ThreadRoleAnnouncement {
  tid: number;
  role: string;
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
}
