/**
 * The pipeline's view of the frontier (STAR + BEAST + robots gate + politeness heaps, src/frontier)
 * — the few calls the scheduler makes, adapted here to the frontier's actual API so that
 * pipeline.ts reads as the thesis' Fig. 2 and a change in src/frontier touches only this file.
 */
import path from 'node:path';
import { CrawlError } from '../../errors.js';
import { Frontier, Star, TRUST_THRESHOLD, budgetPreset, emptyRecordBytes, encodeFrontierRecordBytes, encodeFrontierUrl, type CommitHooks, type FrontierUrl, type FetchOutcome as PoliteFetchOutcome,
  type BudgetContext, type IndegreeHistogram, type IpGate, type PldStore,
} from '../../frontier/index.js';
import type { UniqueUrls } from '../../threads/drum/drum-codec.js';
import type { FetchResult } from '../../fetch/index.js';
import { MAX_FETCH_ATTEMPTS, retryOutcome } from '../../fetch/retry-policy.js';
import type { DnsCache } from '../../dns/index.js';
import type { RobotsRules } from '../../robots/index.js';
import type { CrawlConfig } from '../../config/config.js';
import { PldStoreProxy, type DrumThread } from '../../threads/drum/drum-proxy.js';
import { openRobotsStage, type RobotsStage, type RobotsTotals } from './robots-stage.js';
import { ramPlan } from '../../budget/ram-budget.js';
import { withMargin } from './margin.js';
import { PortOrder } from './port-order.js';
import { robotsAuthorityOf } from '../../util/authority.js';

export { withMargin } from './margin.js';

/**
 * PLDedges flushes before admissions: at most every EDGE_FLUSH_MIN_MS, taking at most
 * 1/EDGE_FLUSH_SHARE of the time (a flush of d ms is followed by at least EDGE_FLUSH_SHARE · d ms
 * without one), and at least every EDGE_FLUSH_MAX_MS (the share holds for flushes up to
 * EDGE_FLUSH_MAX_MS / EDGE_FLUSH_SHARE = 3 s).
 */
const EDGE_FLUSH_MIN_MS = 100;
const EDGE_FLUSH_SHARE = 10;
const EDGE_FLUSH_MAX_MS = 30_000;

/**
 * The wait before the next PLDedges flush after one that took `durationMs`. A flush passes over
 * both STAR tables (DRUM merges, thesis IV.3), so its duration grows with the PLDs and PLD edges
 * seen; a wait held at ≤ 1 s made the flushes, and the in-degree merges each starts, take a share
 * of STAR's thread that grew with the crawl (10^7-host crawl at --ram 512M: PLDindegree merged ~4
 * times a second, for flushes and admissions, over an 8–9 MB table ten minutes in).
 */
export function edgeFlushWaitMs(durationMs: number): number {
  return Math.min(EDGE_FLUSH_MAX_MS, Math.max(EDGE_FLUSH_MIN_MS, EDGE_FLUSH_SHARE * durationMs));
}

/** The cluster's hooks into the frontier of one partition (src/cluster, cluster-port.ts). */
export interface FrontierCluster {
  /** STAR's PLD store as this partition's STAR sees it (votes for other partitions' PLDs go to them). */
  pldStore(own: PldStore): PldStore;
  /** The context budgets rank against, given this partition's own histogram (all partitions' PLDs). */
  rankContext(own: IndegreeHistogram): BudgetContext;
  /** The gate of IPs that other partitions and nodes contact too. */
  ipGate: IpGate;
  /** Capacity of STAR's pending votes (star.ts TrustOptions.pendingVotes) for this partition. */
  pendingVotes: number;
}

export interface FrontierStats {
  queued: number;
  readyCount: number;
  beastJ: number;
  /** BEAST queues emptied so far (queue passes − 1) */
  beastSwitches: number;
  qfSize: number;
  qrSize: number;
  hostsActive: number;
  hostsWaiting: number;
  ipsActive: number;
  ipsWaiting: number;
  robotsLookups: number;
  robotsHitRate: number;
  /** RobotsCache and RobotsRequested counters over all runs (robots-stage.ts) */
  robotsDrums: RobotsTotals;
  /** The frontier's RAM and disk depth: URLs in RAM (and their estimated bytes), the host table, BEAST's ring, QF + QH, QR. */
  depth: {
    ramUrls: number; ramUrlBytes: number; ramUrlBytesCap: number;
    hosts: number; hostBytes: number; hostBytesCap: number; hostCap: number; ips: number;
    beastQueued: number; beastQueues: number; qf: number; qh: number; qr: number; pendingRobots: number;
    /** QR's rescans (passes, records read, 1: the last pass changed nothing), robots answers awaited */
    qrRescans: number; qrRescanReads: number; qrFruitless: number; qrPassMs: number; robotsOutstanding: number;
    /** the host table by what keeps each entry (HostTable.hostStates) */
    hostsAsking: number; hostsWithUrls: number; hostsHeld: number; hostsEvictable: number; hostsOther: number;
  };
  /** Something in RAM is due now (a host and its IP both free): dispatch would release it. */
  dueNow: boolean;
}

export interface RobotsOutcome {
  rules: unknown;
  outcome: string;
  status?: number;
  expiresAt: number;
  sitemaps?: string[];
  /** how much later than its release the robots.txt request went out (FetchOutcome.lateMs) */
  lateMs?: number;
}

export interface FrontierPort {
  /**
   * One URLseen result chunk's unique URLs, from their bytes: STAR gives (B, P), BEAST places them;
   * placed, not yet durable: `commitAdmits()` makes them durable.
   */
  admitUnique(u: UniqueUrls, discoveredAt: number): Promise<void>;
  /**
   * Everything admitted so far durable (BEAST's fdatasyncs on the libuv pool); with `mark`, BEAST's
   * manifest names it (admitMark: whether this commit landed before a crash).
   */
  commitAdmits(mark?: number): Promise<void>;
  /** The last commitAdmits mark that is durable (at open) or asked for since. */
  readonly admitMark: number;
  /** URLs that were in flight at a crash/stop: back in, without a new STAR count. */
  readmit(urls: FrontierUrl[]): Promise<void>;
  /** PLD→PLD pairs of one page; `slot`: the page's vote slot for STAR's trusted in-degree (pathSlot of its URL). */
  addPldLinks(pairs: Uint32Array, count: number, slot?: number): void;
  /** The operator vouches for these PLDs (the seeds'): packed [hi, lo]*. */
  vouch(keys: Uint32Array, count: number): Promise<void>;
  /** Votes for this crawl's PLDs counted by another partition of a cluster crawl (Star.addVotes). */
  addVotes(edges: Uint32Array, count: number): Promise<void>;
  /**
   * Move URLs from disk into RAM while RAM has room. Its disk work runs in batches with a pause
   * between them (DispatchWindow): the scheduler does not wait for it, and no batch runs between a
   * dispatch and the requests' socket writes.
   */
  refill(): Promise<void>;
  /** The window right after a dispatch (open) until the requests are on the wire (closed): no refill batch runs in it. */
  dispatchWindow(open: boolean): void;
  /** Called after each batch of refill work (the scheduler wakes to dispatch what it brought). */
  onRefillBatch(cb: () => void): void;
  /** Up to `max` items due now (host and IP due, robots known): pages, or robots.txt fetches (kind 1). */
  nextReady(now: number, max: number): FrontierUrl[];
  /**
   * Hands the hosts waiting for their robots/DNS answer (QD) to the robots stage. The scheduler
   * calls it every turn, also while dispatch is held back (parse pool full, bodies awaiting their
   * ContentSeen answer): robots answers are what the next pages wait for.
   */
  pumpRobots(): void;
  /** ms timestamp when something becomes due, or null. */
  nextWakeup(): number | null;
  /** Hosts with URLs waiting in RAM (each takes one fetch slot at a time), of PLDs with B > B0 once any has been seen (Politeness.readyRanked). */
  readyCount(): number;
  /** Nothing queued anywhere (RAM, BEAST, QR) and nothing waiting for DNS/robots. */
  isEmpty(): boolean;
  /**
   * Politeness update after a page fetch (Retry-After, outcome penalties); `lateMs`: how much later
   * than its release the request went out on the wire (FetchOutcome.lateMs).
   */
  done(u: FrontierUrl, r: FetchResult, lateMs?: number): void;
  /** robots.txt arrived (or failed) for the item's host. */
  robotsDone(item: FrontierUrl, r: RobotsOutcome): void;
  setDelays(cfg: CrawlConfig): void;
  /**
   * Make admitted URLs durable and move read cursors (at-least-once): STAR's tables (unless
   * `star: false`: committed just before by checkpoint()), the robots stage, BEAST/QR and the RAM
   * snapshot. `hooks`: Frontier.commit's (snapshotTaken, beforeSwitch).
   */
  commit(opts?: { star?: boolean; hooks?: CommitHooks }): Promise<void>;
  /** STAR's tables made durable (the PLD links buffered so far, in-degrees, histogram). */
  checkpoint(): Promise<void>;
  stats(): FrontierStats;
  close(): Promise<void>;
}

/** The FetchResult fields the politeness update needs. */
type FetchLike = Pick<FetchResult, 'outcome' | 'status' | 'retryAfterMs'>;

/**
 * FetchResult → the frontier's FetchOutcome: the retry policy of src/fetch's table (docs/errors.md),
 * applied in retry-policy.ts; `scale` is config retryDelayScale.
 */
export function politenessOutcome(r: FetchLike, attempts: number, scale = 1): PoliteFetchOutcome {
  return retryOutcome(r, attempts, scale);
}

export interface FrontierPortOptions {
  /** Called for each URL the frontier gives up on (robots, host failed, max attempts…). */
  onDrop?: (u: FrontierUrl, reason: string) => void;
  /** host STAR's PLD store in this DRUM thread (shared with ContentSeen); default: its own thread */
  starThread?: DrumThread;
  /** The crawl is a partition of a cluster crawl (cluster-port.ts): STAR's store, ranks, the IP gate. */
  cluster?: FrontierCluster;
}

/**
 * Slots of the frontier's URL slab from the RAM budget (ram-budget.ts: the URLs in RAM get R/8 of
 * estimated bytes, frontierUrlRamBytes each).
 */
export function frontierRamUrls(cfg: CrawlConfig): number {
  return ramPlan(cfg.ramBytes, cfg.workers, cfg.hostTableSize).frontierUrlSlots;
}

/**
 * The pause between batches of the frontier's disk work (FrontierOptions.pause): it yields to the
 * event loop (sockets, fetch completions, the scheduler's dispatches run) and never ends inside a
 * dispatch window — between the scheduler's release of requests, stamped as started, and their
 * socket writes — so that a batch cannot make a request go out later than the heaps planned.
 */
class DispatchWindow {
  private open = false;
  private waiters: (() => void)[] = [];
  onBatch: () => void = () => undefined;

  set(open: boolean): void {
    this.open = open;
    if (open) return;
    const w = this.waiters;
    this.waiters = [];
    for (const r of w) r();
  }

  readonly pause = async (): Promise<void> => {
    this.onBatch();
    await new Promise<void>((r) => setImmediate(r));
    while (this.open) await new Promise<void>((r) => this.waiters.push(r));
  };
}

/** Records per batch of the frontier's refill work in the crawler (~5 ms of gate work at ~5 µs a record). */
const REFILL_BATCH = 1024;

/** PLD pairs that start a PLDedges batch in the background (16 B each: 1 MiB). */
const PAIR_FLUSH = 1 << 16;

class FrontierAdapter implements FrontierPort {
  /**
   * PLD→PLD pairs collected since the last flush; STAR's PLDedges DRUM takes them as one batch
   * before an admission (edgeFlushWaitMs), at commit, or in the background once
   * PAIR_FLUSH pairs are waiting. Bound: PAIR_FLUSH pairs plus those of the pages parsed while
   * one background flush runs.
   */
  private pairBuf = new Uint32Array(4096 * 4);
  /** Each pair's page slot (STAR's vote slot), parallel to pairBuf. */
  private slotBuf = new Uint8Array(4096);
  private pairCount = 0;
  private refilling = false;
  private lastEdgeFlush = -Infinity;
  private edgeFlushEveryMs = 1000;
  private edgeFlushing: Promise<void> | null = null;
  /**
   * The frontier's async operations in their order (port-order.ts): commits, readmissions and the
   * close one at a time after everything before them; admissions pass a refill under way.
   */
  private readonly order = new PortOrder();

  constructor(
    private readonly f: Frontier,
    private readonly star: Star,
    private readonly robots: RobotsStage,
    private readonly window: DispatchWindow,
    private readonly clock: () => number = Date.now,
    /** config retryDelayScale: multiplies the policy table's backoffs and host penalties */
    private readonly retryScale = 1,
  ) {}

  dispatchWindow(open: boolean): void {
    this.window.set(open);
  }

  onRefillBatch(cb: () => void): void {
    this.window.onBatch = cb;
  }

  private async flushLinks(): Promise<void> {
    if (this.edgeFlushing !== null) await this.edgeFlushing;
    if (this.pairCount === 0) return;
    const n = this.pairCount;
    this.pairCount = 0;
    await this.star.addLinks(this.pairBuf, n, this.slotBuf); // copies what it needs before its first await
    const promoted = this.star.takePromoted();
    if (promoted.length > 0) this.f.trustPromoted(promoted);
  }

  /**
   * No FrontierUrl per URL: STAR's (B, P, d) by PLD key into three arrays, then each record written
   * from the chunk's bytes (encodeFrontierRecordBytes) and placed in BEAST (appended, no fsync: the
   * commit of everything appended so far — fdatasyncs of the touched queue files and BEAST's
   * manifest, on the libuv pool — is commitAdmits(), which URLseen's DRUM awaits before it commits
   * its own merge: at-least-once). A URL that is not ASCII takes the string path; both write the
   * same record bytes.
   */
  async admitUnique(u: UniqueUrls, discoveredAt: number): Promise<void> {
    const n = u.count;
    if (n === 0) return;
    await this.flushLinksIfDue();
    const budget = new Float64Array(n);
    const admitted = new Float64Array(n);
    const indegree = new Float64Array(n);
    await this.star.assignKeys(u.plds, n, budget, admitted, indegree);
    const f = this.fields;
    await this.order.admit(() => {
      f.discoveredAt = discoveredAt;
      for (let i = 0; i < n; i++) {
        let rec: Uint8Array;
        if (u.ascii(i)) {
          u.fields(i, f);
          f.budget = budget[i]!;
          f.admitted = admitted[i]!;
          f.indegree = indegree[i]!;
          rec = encodeFrontierRecordBytes(f);
        } else {
          const url = u.url(i, discoveredAt);
          url.budget = budget[i]!;
          url.admitted = admitted[i]!;
          url.indegree = indegree[i]!;
          rec = encodeFrontierUrl(url);
        }
        this.f.admitRecord(rec, budget[i]!, admitted[i]!);
      }
    });
  }

  /**
   * One reused RecordBytes for admitUnique (its texts are ranges of the chunk being admitted, a
   * Buffer: `src` holds only Buffers, so the copy loop's element reads stay monomorphic).
   */
  private readonly fields = emptyRecordBytes();

  /**
   * PLD in-degrees before budgets, as often as every EDGE_FLUSH_MIN_MS and spending at most
   * 1/EDGE_FLUSH_SHARE of the time on them (edgeFlushWaitMs): each PLDedges batch is two DRUM
   * merge rounds (edges, then the in-degree increments), whose cost grows with the tables, and a
   * URLseen merge delivers ~k result chunks back to back. Budgets thus reflect every link seen up
   * to ten flush durations before (thesis VI.2 batches PLDedges the same way; B only needs the
   * in-degree's rank, not the last link); while the tables are small, trust reaches a newly linked
   * PLD — and its pages leave the untrusted pace (pld-pace.ts) — within a second. PAIR_FLUSH
   * pairs waiting start a flush sooner (their RAM bound).
   */
  private async flushLinksIfDue(): Promise<void> {
    const t0 = performance.now();
    if (t0 - this.lastEdgeFlush < this.edgeFlushEveryMs) return;
    this.lastEdgeFlush = t0;
    await this.flushLinks();
    this.edgeFlushEveryMs = edgeFlushWaitMs(performance.now() - t0);
  }

  commitAdmits(mark?: number): Promise<void> {
    return this.f.commitAdmits(mark);
  }

  get admitMark(): number {
    return this.f.admitMark;
  }

  async readmit(urls: FrontierUrl[]): Promise<void> {
    await this.order.exclusive(() => this.f.readmit(urls));
  }

  async vouch(keys: Uint32Array, count: number): Promise<void> {
    await this.star.vouch(keys, count);
  }

  async addVotes(edges: Uint32Array, count: number): Promise<void> {
    await this.star.addVotes(edges, count);
    const promoted = this.star.takePromoted();
    if (promoted.length > 0) this.f.trustPromoted(promoted);
  }

  addPldLinks(pairs: Uint32Array, count: number, slot = 0): void {
    const need = (this.pairCount + count) * 4;
    if (need > this.pairBuf.length) {
      const nb = new Uint32Array(Math.max(need, this.pairBuf.length * 2));
      nb.set(this.pairBuf.subarray(0, this.pairCount * 4));
      this.pairBuf = nb;
      const ns = new Uint8Array(nb.length / 4);
      ns.set(this.slotBuf.subarray(0, this.pairCount));
      this.slotBuf = ns;
    }
    this.pairBuf.set(pairs.subarray(0, count * 4), this.pairCount * 4);
    this.slotBuf.fill(slot & 0xff, this.pairCount, this.pairCount + count);
    this.pairCount += count;
    if (this.pairCount >= PAIR_FLUSH && this.edgeFlushing === null) {
      // Its error (if any) surfaces at the next admit/commit, which await it.
      this.edgeFlushing = this.flushLinks().finally(() => {
        this.edgeFlushing = null;
      });
      this.edgeFlushing.catch(() => undefined);
    }
  }

  nextReady(now: number, max: number): FrontierUrl[] {
    this.pumpRobots();
    return this.f.nextReady(now, max);
  }

  /** frontier stats, recomputed at most every 20 ms (the scheduler asks several times per turn) */
  private statsCache: ReturnType<Frontier['stats']> | null = null;
  private statsAt = 0;
  private fstats(): ReturnType<Frontier['stats']> {
    const now = performance.now();
    if (this.statsCache === null || now - this.statsAt > 20) {
      this.statsCache = this.f.stats();
      this.statsAt = now;
    }
    return this.statsCache;
  }

  async refill(): Promise<void> {
    const st = this.f.stats();
    // Only when something waits on disk and RAM has room.
    if (st.ramUrls < st.ramCap && st.beastQueued + st.qf + st.qr > 0) {
      this.refilling = true;
      try {
        await this.order.refill(() => this.f.refill());
      } finally {
        this.refilling = false;
      }
    }
  }

  /** Hosts waiting for robots go to the robots stage (RobotsCache, RobotsRequested, DNS). */
  pumpRobots(): void {
    this.robots.pump();
  }

  nextWakeup(): number | null {
    return this.f.nextWakeup();
  }

  readyCount(): number {
    return this.f.readyRanked();
  }

  isEmpty(): boolean {
    return this.f.isEmpty() && !this.refilling && !this.robots.busy;
  }

  done(u: FrontierUrl, r: FetchResult, lateMs = 0): void {
    const o = politenessOutcome(r, u.attempts + 1, this.retryScale);
    if (lateMs > 0) o.lateMs = lateMs;
    this.f.fetchDone(u, o);
  }

  robotsDone(item: FrontierUrl, r: RobotsOutcome): void {
    const rules = r.rules as RobotsRules;
    // The authority the robots.txt was asked for (item.url is `<authority>/robots.txt`): its answer
    // governs that scheme, host and port only (RFC 9309 §2.3).
    const authority = robotsAuthorityOf(item.url) ?? item.url;
    // A fetched answer goes to the robots journal and RobotsCache before robotsKnown releases the
    // host's URLs (a kill after this loses no answer a page was fetched on); a refusal by the network
    // guard is no answer of the host's.
    if (r.outcome !== 'CRAWL_FETCH_BLOCKED_ADDRESS') {
      this.robots.answered(authority, { rules, outcome: r.outcome, expiresAt: r.expiresAt, sitemaps: r.sitemaps ?? [] });
    }
    this.f.robotsKnown(item.hostHi, item.hostLo, {
      rules,
      ip: item.ip,
      crawlDelayMs: rules.crawlDelayMs,
      expiresAt: r.expiresAt,
      origin: authority,
    });
    this.f.fetchDone(item, r.lateMs !== undefined && r.lateMs > 0 ? { lateMs: r.lateMs } : undefined);
  }

  /**
   * Live delay change (POST /config): the heaps use the new τh/τs/τh0/τs0 for every due time they
   * compute from now on (waits already scheduled are kept, so a longer delay takes effect within
   * one old delay); the pipeline's last-step floor guard reads the same config object.
   */
  setDelays(cfg: CrawlConfig): void {
    try {
      this.f.setDelays(frontierDelays(cfg));
    } catch (e) {
      throw new CrawlError('CRAWL_CONFIG_INVALID', `delays rejected by the frontier: ${(e as Error).message}`, { cause: e });
    }
  }

  async commit(opts: { star?: boolean; hooks?: CommitHooks } = {}): Promise<void> {
    if (opts.star !== false) await this.checkpoint();
    const hooks = opts.hooks;
    if (hooks === undefined) {
      await this.robots.commit();
      await this.order.exclusive(() => this.f.commit());
      return;
    }
    // With hooks the caller goes on at snapshotTaken; the robots journal's fsync comes after it:
    // the answers must be durable before the frontier's manifest names the snapshot, as without
    // hooks. A QR rescan under way stops at its next batch rather than hold the scheduler for a
    // whole pass.
    this.f.wantCommit();
    await this.order.exclusive(() => this.f.commit({
      snapshotTaken: hooks.snapshotTaken,
      beforeSwitch: async () => {
        await this.robots.commit();
        await hooks.beforeSwitch?.();
      },
    }));
  }

  async checkpoint(): Promise<void> {
    await this.flushLinks();
    await this.star.commit();
  }

  stats(): FrontierStats {
    const s = this.fstats();
    return {
      queued: s.beastQueued + s.qf + s.qr + s.ramUrls,
      readyCount: s.ramUrls - s.inFlight,
      beastJ: s.j,
      beastSwitches: s.switches,
      qfSize: s.qf,
      qrSize: s.qr,
      hostsActive: s.hostHeap,
      hostsWaiting: Math.max(0, s.hosts - s.hostHeap),
      ipsActive: s.ipHeap,
      ipsWaiting: Math.max(0, s.ips - s.ipHeap),
      // A "robots lookup" per URL released; a miss when the host's robots.txt had to be fetched.
      robotsLookups: s.released + s.robotsReleased,
      robotsHitRate: s.released + s.robotsReleased === 0 ? 0 : s.released / (s.released + s.robotsReleased),
      robotsDrums: this.robots.totals(),
      depth: {
        ramUrls: s.ramUrls, ramUrlBytes: s.ramUrlBytes, ramUrlBytesCap: s.ramUrlBytesCap,
        hosts: s.hosts, hostBytes: s.hostBytes, hostBytesCap: s.hostBytesCap, hostCap: s.hostCap, ips: s.ips,
        beastQueued: s.beastQueued, beastQueues: s.j, qf: s.qf - s.qh, qh: s.qh, qr: s.qr, pendingRobots: s.pendingRobots,
        qrRescans: s.qrRescans, qrRescanReads: s.qrRescanReads, qrFruitless: s.qrFruitless ? 1 : 0, qrPassMs: s.qrPassMs, robotsOutstanding: s.robotsOutstanding,
        hostsAsking: s.hostStates.asking, hostsWithUrls: s.hostStates.withUrls, hostsHeld: s.hostStates.held,
        hostsEvictable: s.hostStates.evictable, hostsOther: s.hostStates.other,
      },
      dueNow: (this.f.nextWakeup() ?? Infinity) <= this.clock(),
    };
  }

  async close(): Promise<void> {
    await this.robots.close();
    await this.order.exclusive(() => this.f.close());
    await this.star.close();
  }
}


/**
 * The four politeness delays as the frontier's heaps take them (margin included), and the margin
 * the frontier adds to a robots.txt Crawl-delay.
 */
function frontierDelays(cfg: CrawlConfig): { hostDelayMs: number; ipDelayMs: number; minHostDelayMs: number; minIpDelayMs: number; crawlDelayMarginMs: number } {
  return {
    hostDelayMs: withMargin(cfg.hostDelayMs, cfg),
    ipDelayMs: withMargin(cfg.ipDelayMs, cfg),
    minHostDelayMs: withMargin(cfg.minHostDelayMs, cfg),
    minIpDelayMs: withMargin(cfg.minIpDelayMs, cfg),
    crawlDelayMarginMs: cfg.politenessMarginMs,
  };
}

export async function openFrontierPort(dir: string, cfg: CrawlConfig, dns: DnsCache, opts: FrontierPortOptions = {}): Promise<FrontierPort> {
  // Trusted in-degree (star.ts): a PLD is ranked only once its links count (minIndegree = threshold),
  // and the pages of a PLD below it keep the untrusted pace (pld-pace.ts).
  const cluster = opts.cluster;
  // A cluster partition's cfg.ramBytes is its share of the node's budget (opening.ts).
  const plan = ramPlan(cfg.ramBytes, cfg.workers, cfg.hostTableSize, cluster === undefined);
  const trust = cfg.reputation === 'trusted' ? { pendingVotes: cluster !== undefined ? cluster.pendingVotes : plan.pendingVotes } : undefined;
  const window = new DispatchWindow();
  const f = await Frontier.open(dir, {
    pause: window.pause,
    refillBatch: REFILL_BATCH,
    preset: 'default',
    ...frontierDelays(cfg),
    b0: cfg.budgetB0,
    // The RAM bounds of the frontier's tables (ram-budget.ts): URLs in RAM and the host table by
    // estimated bytes, whatever the number of hosts the web has; BEAST's per-pass PLD counts.
    ramUrls: plan.frontierUrlSlots,
    maxUrlBytes: plan.frontierUrlBytes,
    maxHosts: plan.hostTableEntries,
    maxHostBytes: plan.hostTableBytes,
    beast: { maxPassPlds: plan.beastPassPlds },
    // Every outcome gets the retries its policy promises (429: 5 retries = 6 attempts).
    maxAttempts: MAX_FETCH_ATTEMPTS,
    trustThreshold: trust ? TRUST_THRESHOLD : 0,
    onDrop: opts.onDrop,
    ...(cluster !== undefined ? { ipGate: cluster.ipGate } : {}),
  });
  // STAR's tables (PLDedges, PLDindegree) on DRUM, beside the frontier; the rank histogram is
  // saved at each commit, so budgets survive a resume.
  const starDir = path.join(path.dirname(dir), 'star');
  // In a worker thread (drum-proxy.ts): each STAR batch is a few DRUM merges with fsyncs. One
  // bucket: every call merges all buckets anyway (same bytes for any k), and each bucket merge
  // costs fsyncs (Z, directory, manifest); the tables are small (one entry per PLD / PLD edge).
  const pldStore = await PldStoreProxy.open(starDir, { ramBytes: plan.starBytes, drum: { buckets: 1 } }, opts.starThread);
  const budgetFn = budgetPreset(cfg.budget, cfg.budgetB0, trust ? TRUST_THRESHOLD : undefined);
  const star = await Star.open(cluster !== undefined ? cluster.pldStore(pldStore) : pldStore, budgetFn, path.join(starDir, 'histogram.bin'), trust);
  if (cluster !== undefined) star.rankContext = cluster.rankContext(star.histogram);
  // RobotsCache and RobotsRequested (thesis VII.1) in the same thread as STAR's store.
  const robots = await openRobotsStage(path.dirname(dir), cfg.ramBytes, f, dns, opts.starThread, cluster === undefined);
  return new FrontierAdapter(f, star, robots, window, Date.now, cfg.retryDelayScale);
}
