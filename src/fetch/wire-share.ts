/**
 * A wire gate shared between threads (fetcher.ts, "The wire gate"): when several threads each run a
 * Fetcher (the crawler's page workers and its main thread, which fetches robots.txt), each gate sees
 * only its own requests. A WireShare lets every gate also see the others': the IP's connection slots
 * taken across threads, and the time the last request to an IP / host was written by any thread.
 * The Fetcher consults it right before it hands an exchange to undici, in the same synchronous run
 * as the hand-over, so the floors and the one-exchange-per-IP rule hold on the wire whichever
 * thread sends. Times are on the shared clock: ms since the epoch (`performance.timeOrigin +
 * performance.now()`, the same value in every thread).
 */
export interface WireShare {
  /**
   * Earliest write the other threads' last writes allow under the floors, or under `hostGap` /
   * `ipGap` when longer (the request's own delays, FetchRequest.hostGapMs / ipGapMs), ms since the
   * epoch. `hostKey` null: a robots.txt request (IP only).
   */
  due(hostKey: string | null, ip: string, hostGap?: number, ipGap?: number): number;
  /** A request to `ip` (host `hostKey`, robots.txt included) is written at `at`. */
  started(hostKey: string | null, ip: string, at: number): void;
  /** Take one of the IP's connection slots if fewer than `max` are taken by all threads together. */
  tryAcquire(ip: string, max: number): boolean;
  /** Give back a slot taken by tryAcquire (the exchange settled). */
  release(ip: string): void;
}
