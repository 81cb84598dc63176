/**
 * The politeness floors enforced once more at the last step before a request is sent (defence in
 * depth behind the frontier's heaps, thesis VII.1): a request to a host (pages) or an IP (pages and
 * robots.txt) starts no sooner than τh0 / τs0 (+ margin) after the previous one actually started.
 * The crawler asks `guard` when a fetch is about to go, `start` again right before the send (in the
 * same synchronous run), and records the actual start with `started`. The floors are read from the
 * live config at each call, so a runtime change (POST /config) applies at once.
 *
 * With page workers (page-worker.ts) the page requests are sent from worker threads: the guard then
 * only reserves each page's earliest start (`reserve`, sent with the dispatch order; the worker waits
 * for it and for the actual starts in the shared table), and the actual starts of every request, from
 * any thread, are kept in the shared table (page-worker-floors.ts) instead of this thread's maps.
 * Times are on the shared clock (`clock()`: ms since the epoch).
 */
import type { CrawlConfig } from './config.js';
import { withMargin } from './frontier-port.js';
import { clock, type SharedFloors } from './page-worker-floors.js';

export class FloorGuard {
  private readonly lastHostStart = new Map<string, number>();
  private readonly lastIpStart = new Map<string, number>();
  /** actual start of the last request per host / IP (the reservations above may be earlier) */
  private readonly hostStarted = new Map<string, number>();
  private readonly ipStarted = new Map<string, number>();
  private lastGuardPrune = 0;
  /** requests the floor guard had to hold (the heaps released them early) */
  holds = 0;

  /** `shared`: the actual starts live in the table the page workers write too. */
  constructor(private readonly config: () => CrawlConfig, private readonly shared: SharedFloors | null = null) {}

  private get cfg(): CrawlConfig {
    return this.config();
  }

  /**
   * Records the actual start of a request (fetch-stage.ts traceDispatch): what the floors count from.
   * `host` null: robots.txt (IP floor only).
   */
  started(host: string | null, ip: string, now: number): void {
    if (this.shared !== null) {
      this.shared.started(host, ip, now);
      return;
    }
    if (host !== null && withMargin(this.cfg.minHostDelayMs, this.cfg) > 0) this.hostStarted.set(host, now);
    if (withMargin(this.cfg.minIpDelayMs, this.cfg) > 0) this.ipStarted.set(ip, now);
  }

  /**
   * The floors, enforced once more at the last step (defence in depth): whatever the heaps'
   * bookkeeping says, a request to a host (pages) or an IP (pages and robots.txt) starts no sooner
   * than τh0 / τs0 (+ margin) after the previous one actually started. A request released early is
   * held (its slot in the heaps stays taken) and the next start time is reserved at once, so held
   * requests are spaced too. A held request whose timer fired late (a busy event loop) re-checks
   * against the actual start of the previous request before it goes, so lateness never shortens
   * a gap. RAM: two entries per host / IP started within the last floor period (pruned), i.e.
   * bounded by the fetch rate × the floor.
   */
  guard(host: string | null, ip: string): Promise<void> | undefined {
    const now = clock();
    const start = this.reserve(host, ip, now);
    if (start === -Infinity) return undefined;
    if (start <= now) return this.start(host, ip);
    return new Promise((r) => setTimeout(r, Math.ceil(start - now)));
  }

  /**
   * The first half of `guard`: reserves the request's start (the earliest the floors allow after the
   * previous requests' reserved and actual starts) and returns it (-Infinity: no floor), counting a
   * hold when it is later than `now`. A page worker waits until it before the send, then checks the
   * actual starts again (page-worker.ts).
   */
  reserve(host: string | null, ip: string, now = clock()): number {
    const hostFloor = withMargin(this.cfg.minHostDelayMs, this.cfg);
    const ipFloor = withMargin(this.cfg.minIpDelayMs, this.cfg);
    if (hostFloor === 0 && ipFloor === 0) return -Infinity;
    const start = Math.max(now, this.due(host, ip, hostFloor, ipFloor, true));
    if (host !== null && hostFloor > 0) this.lastHostStart.set(host, start);
    if (ipFloor > 0) this.lastIpStart.set(ip, start);
    if (now - this.lastGuardPrune > 10_000) {
      this.lastGuardPrune = now;
      const prune = (m: Map<string, number>, floor: number): void => {
        for (const [k, t] of m) if (t < now - floor) m.delete(k);
      };
      prune(this.lastHostStart, hostFloor);
      prune(this.lastIpStart, ipFloor);
      prune(this.hostStarted, hostFloor);
      prune(this.ipStarted, ipFloor);
    }
    if (start > now) this.holds++;
    return start;
  }

  /**
   * The second half of the guard, run right before the request is sent, in the same synchronous
   * run as the send: undefined = go now (the caller's traceDispatch records the start), else wait
   * and ask again. It checks the actual starts of the previous requests, because a held request may be sent late (a busy
   * event loop, a long microtask queue before the caller's continuation) and lateness must never
   * shorten the gap to the next one. Floors re-read: a live change (POST /config) applies too.
   */
  start(host: string | null, ip: string): Promise<void> | undefined {
    const now = clock();
    const due = this.due(host, ip, withMargin(this.cfg.minHostDelayMs, this.cfg), withMargin(this.cfg.minIpDelayMs, this.cfg), false);
    if (due > now) return new Promise((r) => setTimeout(r, Math.ceil(due - now)));
    return undefined;
  }

  /** Earliest start allowed by the previous requests' reserved (`reserved`) and actual starts. */
  private due(host: string | null, ip: string, hostFloor: number, ipFloor: number, reserved: boolean): number {
    let due = -Infinity;
    const sh = this.shared;
    if (host !== null && hostFloor > 0) {
      due = Math.max(due, (sh !== null ? sh.hostStarted(host) : this.hostStarted.get(host) ?? -Infinity) + hostFloor);
      if (reserved) due = Math.max(due, (this.lastHostStart.get(host) ?? -Infinity) + hostFloor);
    }
    if (ipFloor > 0) {
      due = Math.max(due, (sh !== null ? sh.ipStarted(ip) : this.ipStarted.get(ip) ?? -Infinity) + ipFloor);
      if (reserved) due = Math.max(due, (this.lastIpStart.get(ip) ?? -Infinity) + ipFloor);
    }
    return due;
  }
}
