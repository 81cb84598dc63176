/**
 * The politeness delays enforced once more at the last step before a request is sent (defence in
 * depth behind the frontier's heaps, thesis VII.1): a request to a host (pages) or an IP (pages and
 * robots.txt) starts no sooner than its delay after the previous one to that host / IP actually
 * started — the configured floors τh0 / τs0 (+ margin), or the request's own delays when longer
 * (FrontierUrl.hostGapMs / ipGapMs: a robots.txt Crawl-delay, τh and τs, a backoff, each with the
 * margin). A robots.txt request is held per IP only but counts as a start on its host, so the
 * host's first page waits its delay after it. The crawler asks `guard` when a fetch is about to
 * go, `start` again right before the send (in the same synchronous run), and records the actual
 * start with `started`. The floors are read from the live config at each call, so a runtime change
 * (POST /config) applies at once.
 *
 * With page workers (page-worker.ts) the page requests are sent from worker threads: the guard then
 * only reserves each page's earliest start (`reserve`, sent with the dispatch order; the worker waits
 * for it and for the actual starts in the shared table), and the actual starts of every request, from
 * any thread, are kept in the shared table (page-worker-floors.ts) instead of this thread's maps.
 * Times are on the shared clock (`clock()`: ms since the epoch).
 */
import type { CrawlConfig } from '../../config/config.js';
import { withMargin } from './margin.js';
import { clock, type SharedFloors } from '../../threads/page/page-worker-floors.js';

/** One request as the guard sees it. */
export interface GuardRequest {
  /** the URL's host (a robots.txt request's too) */
  host: string;
  ip: string;
  /** robots.txt: held per IP only */
  robots: boolean;
  /** the request's own delays (FrontierUrl.hostGapMs / ipGapMs), ms; 0: the floors alone */
  hostGapMs: number;
  ipGapMs: number;
}

/** A start per host / IP, and the delay it was held to (it is kept until both it and the floor passed). */
interface Stamp { t: number; gap: number }

export class FloorGuard {
  private readonly lastHostStart = new Map<string, Stamp>();
  private readonly lastIpStart = new Map<string, Stamp>();
  /** actual start of the last request per host / IP (the reservations above may be earlier) */
  private readonly hostStarted = new Map<string, Stamp>();
  private readonly ipStarted = new Map<string, Stamp>();
  private lastGuardPrune = 0;
  /** requests the floor guard had to hold (the heaps released them early) */
  holds = 0;

  /**
   * `shared`: the actual starts live in the table the page workers write too. `window`: the
   * earliest start ≥ t a request to `ip` may have besides the floors (a cluster node's per-IP slot
   * rule: src/cluster/engine/ip-slots.ts); absent, the floors alone decide.
   */
  constructor(
    private readonly config: () => CrawlConfig,
    private readonly shared: SharedFloors | null = null,
    private readonly window: ((ip: string, t: number) => number) | null = null,
  ) {}

  private get cfg(): CrawlConfig {
    return this.config();
  }

  /** The host and IP delays `q` is held to: the floors, or its own when longer (0: none). */
  private gaps(q: GuardRequest): [number, number] {
    return [Math.max(withMargin(this.cfg.minHostDelayMs, this.cfg), q.hostGapMs), Math.max(withMargin(this.cfg.minIpDelayMs, this.cfg), q.ipGapMs)];
  }

  /**
   * Records the actual start of a request (fetch-stage.ts traceDispatch): what the delays count from.
   * `hostGap` / `ipGap`: the delays it was held to (how long its stamp must be kept).
   */
  started(host: string, ip: string, now: number, hostGap = 0, ipGap = 0): void {
    if (this.shared !== null) {
      this.shared.started(host, ip, now);
      return;
    }
    if (Math.max(withMargin(this.cfg.minHostDelayMs, this.cfg), hostGap) > 0) stamp(this.hostStarted, host, now, hostGap);
    if (Math.max(withMargin(this.cfg.minIpDelayMs, this.cfg), ipGap) > 0) stamp(this.ipStarted, ip, now, ipGap);
  }

  /**
   * The delays, enforced once more at the last step (defence in depth): whatever the heaps'
   * bookkeeping says, a request starts no sooner than its host's (pages) and its IP's delay after
   * the previous one actually started. A request released early is held (its slot in the heaps
   * stays taken) and the next start time is reserved at once, so held requests are spaced too. A
   * held request whose timer fired late (a busy event loop) re-checks against the actual start of
   * the previous request before it goes, so lateness never shortens a gap. RAM: two entries per
   * host / IP started within the last delay it was held to (pruned), i.e. bounded by the fetch
   * rate × the longest delay in force.
   */
  guard(q: GuardRequest): Promise<void> | undefined {
    const now = clock();
    const start = this.reserve(q, now);
    if (start === -Infinity) return undefined;
    if (start <= now) return this.start(q);
    return new Promise((r) => setTimeout(r, Math.ceil(start - now)));
  }

  /**
   * The first half of `guard`: reserves the request's start (the earliest the delays allow after the
   * previous requests' reserved and actual starts) and returns it (-Infinity: no delay), counting a
   * hold when it is later than `now`. A page worker waits until it before the send, then checks the
   * actual starts again (page-worker.ts).
   */
  reserve(q: GuardRequest, now = clock()): number {
    const [hostGap, ipGap] = this.gaps(q);
    if (hostGap === 0 && ipGap === 0 && this.window === null) return -Infinity;
    let start = Math.max(now, this.due(q, hostGap, ipGap, true));
    if (this.window !== null) start = this.window(q.ip, start);
    if (hostGap > 0) stamp(this.lastHostStart, q.host, start, q.hostGapMs);
    if (ipGap > 0) stamp(this.lastIpStart, q.ip, start, q.ipGapMs);
    if (now - this.lastGuardPrune > 10_000) {
      this.lastGuardPrune = now;
      const hostFloor = withMargin(this.cfg.minHostDelayMs, this.cfg);
      const ipFloor = withMargin(this.cfg.minIpDelayMs, this.cfg);
      prune(this.lastHostStart, hostFloor, now);
      prune(this.lastIpStart, ipFloor, now);
      prune(this.hostStarted, hostFloor, now);
      prune(this.ipStarted, ipFloor, now);
    }
    if (start > now) this.holds++;
    return start;
  }

  /**
   * The second half of the guard, run right before the request is sent, in the same synchronous
   * run as the send: undefined = go now (the caller's traceDispatch records the start), else wait
   * and ask again. It checks the actual starts of the previous requests, because a held request may
   * be sent late (a busy event loop, a long microtask queue before the caller's continuation) and
   * lateness must never shorten the gap to the next one. Floors re-read: a live change (POST
   * /config) applies too.
   */
  start(q: GuardRequest): Promise<void> | undefined {
    const now = clock();
    const [hostGap, ipGap] = this.gaps(q);
    let due = this.due(q, hostGap, ipGap, false);
    if (this.window !== null) due = this.window(q.ip, Math.max(due, now));
    if (due > now) return new Promise((r) => setTimeout(r, Math.ceil(due - now)));
    return undefined;
  }

  /** Earliest start allowed by the previous requests' reserved (`reserved`) and actual starts. */
  private due(q: GuardRequest, hostGap: number, ipGap: number, reserved: boolean): number {
    let due = -Infinity;
    const sh = this.shared;
    if (!q.robots && hostGap > 0) {
      due = Math.max(due, (sh !== null ? sh.due(q.host, q.ip, hostGap, 0) : (this.hostStarted.get(q.host)?.t ?? -Infinity) + hostGap));
      if (reserved) due = Math.max(due, (this.lastHostStart.get(q.host)?.t ?? -Infinity) + hostGap);
    }
    if (ipGap > 0) {
      due = Math.max(due, (sh !== null ? sh.due(null, q.ip, 0, ipGap) : (this.ipStarted.get(q.ip)?.t ?? -Infinity) + ipGap));
      if (reserved) due = Math.max(due, (this.lastIpStart.get(q.ip)?.t ?? -Infinity) + ipGap);
    }
    return due;
  }
}

function stamp(m: Map<string, Stamp>, key: string, t: number, gap: number): void {
  const s = m.get(key);
  if (s === undefined) m.set(key, { t, gap });
  else if (t >= s.t) {
    s.t = t;
    s.gap = gap;
  }
}

/** Drops the stamps whose delay (or the floor, when longer) has passed. */
function prune(m: Map<string, Stamp>, floor: number, now: number): void {
  for (const [k, s] of m) if (s.t + Math.max(floor, s.gap) < now) m.delete(k);
}
