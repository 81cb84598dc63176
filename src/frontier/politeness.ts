/**
 * Politeness (thesis VII.1): the URLs the frontier holds in RAM, a host heap enforcing τh and an
 * IP heap enforcing τs. A URL is released only when both its host and its server are due.
 *
 *   host heap  hosts with URLs in RAM, robots known, nothing in flight; key = next time the host may
 *              be contacted = start of its previous request + τh (start to start).
 *   due list   per IP, a FIFO of hosts whose time has come (moved there from the host heap).
 *   IP heap    IPs with a due host or a robots fetch waiting and a free connection slot;
 *              key = start of the IP's previous request + τs.
 *
 * τh = τh_default · B0/B clamped to [τh0, τh_default] (low-ranked PLDs get the full delay); τs the
 * same with the average budget of the hosts known on that IP. Crawl-delay (capped at
 * maxCrawlDelayMs) and Retry-After can only lengthen a wait; consecutive host errors multiply the
 * delay (2^errors, capped at maxBackoffMs) and after maxHostErrors the host's URLs are dropped. The
 * floors τh0 and τs0 are applied last, so nothing can undercut them. Robots.txt fetches go through
 * the IP heap only (the host has no URL in RAM while its robots is unknown).
 *
 * Invariants: a host is in at most one of {host heap, an IP's due list, in flight}; ≤ 1 request in
 * flight per host and ≤ maxConnectionsPerIp per IP; a host is contacted at start times ≥ previous
 * start + τh0, an IP at ≥ previous start + τs0 (asserted by test/frontier simulations).
 *
 * RAM bounds: the URL slab holds ≤ ramUrls URLs (in flight included); the host table ≤ maxHosts
 * entries (hosts with URLs in RAM ≤ ramUrls, plus robots-pending hosts and recently used hosts kept
 * for their politeness state and robots rules); the IP table ≤ the host table. Hot path: typed
 * arrays only, no allocation per release.
 */
import { hostDelayFor, ipDelayFor, type DelayOptions } from './budget.js';
import { IdHeap } from './heap.js';
import type { PldPacer } from './capacity.js';
import { FrontierUrl, UrlKind, hostNameOf, originOf, pathAndQueryOf } from './record.js';
import { U64Map } from './u64-map.js';

/** The part of src/robots' RobotsRules the frontier uses. */
export interface RobotsRulesLike {
  isAllowed(pathAndQuery: string): boolean;
}

export interface RobotsInfo {
  /** Rules for our user agent; null = allow everything. */
  rules: RobotsRulesLike | null;
  /** Server address the host resolved to. */
  ip: string;
  /** Crawl-delay for our agent, ms (lengthens τh, capped at maxCrawlDelayMs). */
  crawlDelayMs?: number | undefined;
  /** When this entry must be refreshed (ms, same clock as the frontier). */
  expiresAt: number;
}

export interface PolitenessOptions extends DelayOptions {
  /** Cap on URLs in RAM (queued per host + in flight). */
  ramUrls: number;
  /** Cap on one host's URLs in RAM (the rest waits on disk). */
  maxUrlsPerHost: number;
  /** Cap on the host table. */
  maxHosts: number;
  maxConnectionsPerIp: number;
  maxCrawlDelayMs: number;
  maxBackoffMs: number;
  /** Consecutive errors after which a host's URLs are dropped ('host-errors'). */
  maxHostErrors: number;
  /** Fetch attempts per URL before it is dropped ('max-attempts'). */
  maxAttempts: number;
  /** How long a failed / dead host stays failed before it is tried again. */
  failedHostTtlMs: number;
}

export type DropReason = 'robots' | 'host-failed' | 'host-errors' | 'max-attempts' | (string & {});

/** What `fetchDone` needs to know about a fetch (all optional: {} = a normal success). */
export interface FetchOutcome {
  /** The host misbehaved (timeout, reset, 5xx, 429): back it off; a success resets the count. */
  hostError?: boolean;
  /** Fetch this URL again later (it goes back to its host's queue, attempts + 1). */
  retry?: boolean;
  /** Retry-After (429/503), ms: the host is not contacted again before now + this. */
  retryAfterMs?: number;
  /** Crawl-delay learned now, ms. */
  crawlDelayMs?: number;
  /** Drop the URL with this reason code instead (e.g. a permanent error); counted in stats. */
  drop?: string;
}

export enum AddResult {
  Added = 0,
  /** Robots/DNS unknown (or expired): park the URL in QR. */
  NeedRobots = 1,
  /** Disallowed by robots.txt: dropped ('robots'). */
  Disallowed = 2,
  /** Host failed (DNS / robots unavailable / too many errors): dropped. */
  HostFailed = 3,
  /** The host already has maxUrlsPerHost URLs in RAM: put the URL back on disk. */
  HostFull = 4,
  /** RAM cap reached. */
  RamFull = 5,
}

export interface RobotsRequest {
  hostHi: number;
  hostLo: number;
  /** Host name, lower case. */
  host: string;
  /** scheme://authority of a URL of the host (for the robots.txt URL and its port). */
  origin: string;
}

const H_FREE = 0;
const H_PENDING = 1; // robots/DNS requested, not yet taken by the pipeline
const H_TAKEN = 2; // handed out by takeRobotsRequests, answer awaited
const H_ROBOTS = 3; // robots fetch scheduled on the IP lane or in flight
const H_READY = 4;
const H_FAILED = 5;

const W_NONE = 0;
const W_HEAP = 1;
const W_DUE = 2;
const W_FLIGHT = 3;
/** Refused by the per-PLD pacer (capacity.ts): waits on its PLD, not in a heap. */
const W_PARKED = 4;

export class Politeness {
  private readonly o: PolitenessOptions;
  private readonly onDrop: (u: FrontierUrl, reason: DropReason) => void;

  // Host table (ids from a free list; arrays grow by doubling up to maxHosts).
  private readonly hostIndex = new U64Map(1024);
  private hCap = 0;
  private hUsed = 0;
  private hFreeList: number[] = [];
  private hHi = new Uint32Array(0);
  private hLo = new Uint32Array(0);
  private hState = new Uint8Array(0);
  private hWhere = new Uint8Array(0);
  private hIp = new Int32Array(0);
  private hHead = new Int32Array(0);
  private hTail = new Int32Array(0);
  private hCount = new Int32Array(0);
  private hNextDue = new Float64Array(0);
  private hLastStart = new Float64Array(0);
  private hCrawlDelay = new Float64Array(0);
  private hErrors = new Int32Array(0);
  private hBudget = new Float64Array(0);
  private hExpires = new Float64Array(0);
  /** Retry-After deadline (kept apart from hNextDue so that a delay change can recompute it). */
  private hRetryUntil = new Float64Array(0);
  /** Fetches the host can make within the horizon W: W / its current delay (Infinity at 0). */
  private hRate = new Float64Array(0);
  /** Its share of `potential` on its own: min(URLs queued, hRate). */
  private hPot = new Float64Array(0);
  private hDueNext = new Int32Array(0);
  private hIdle = new Uint8Array(0);
  private hRules: (RobotsRulesLike | null)[] = [];
  private hOrigin: string[] = [];
  private hFailReason: string[] = [];
  private hRobotsItem: (FrontierUrl | null)[] = [];
  /** The host's PLD key (for the per-PLD pacer). */
  private hPHi = new Uint32Array(0);
  private hPLo = new Uint32Array(0);
  /** 1 while the host's robots/DNS request is parked by the pacer (it left QD). */
  private hReqParked = new Uint8Array(0);
  /** Per-PLD pacing (capacity.ts); null = hosts are paced only by τh/τs. */
  private pacer: PldPacer | null = null;

  // IP table.
  private readonly ipIndex = new Map<string, number>();
  private iName: string[] = [];
  private iCap = 0;
  private iFreeList: number[] = [];
  private iNextDue = new Float64Array(0);
  private iLastStart = new Float64Array(0);
  /** Sum of hPot of the IP's hosts, and what the IP itself allows within W (W·conns / τs). */
  private iPot = new Float64Array(0);
  private iRate = new Float64Array(0);
  /** Hosts of the IP with URLs queued in RAM (hPot > 0); an IP with ≥ 1 counts in ipsWithWork. */
  private iWork = new Int32Array(0);
  /** 1 when the IP's work exceeds what its connections can do within W (iPot ≥ iRate). */
  private iSat = new Uint8Array(0);
  private iInFlight = new Int32Array(0);
  private iDueHead = new Int32Array(0);
  private iDueTail = new Int32Array(0);
  private iDueCount = new Int32Array(0);
  private iSumB = new Float64Array(0);
  private iHosts = new Int32Array(0);
  private iRobots: FrontierUrl[][] = [];
  private iLive = new Uint8Array(0);

  // URL slab: per-host FIFOs of slot indexes; a slot stays taken while its URL is in flight.
  private readonly sUrl: (FrontierUrl | null)[];
  private readonly sNext: Int32Array;
  private sFree = -1;
  private sUsed = 0;

  readonly hostHeap = new IdHeap(1024);
  readonly ipHeap = new IdHeap(1024);

  /** Robots/DNS requests not yet handed out (QD). Bounded by the host table. */
  private requests: number[] = [];
  private requestsHead = 0;
  /** Hosts that may be evictable; re-checked when the table is full. */
  private idleRing: number[] = [];
  private idleHead = 0;
  private ipIdle: number[] = [];

  private inFlightPages = 0;
  private inFlightRobots = 0;
  readonly drops = new Map<string, number>();
  released = 0;
  robotsReleased = 0;

  constructor(o: PolitenessOptions, onDrop: (u: FrontierUrl, reason: DropReason) => void) {
    this.o = o;
    this.onDrop = onDrop;
    this.sUrl = new Array<FrontierUrl | null>(o.ramUrls).fill(null);
    this.sNext = new Int32Array(o.ramUrls);
    for (let i = o.ramUrls - 1; i >= 0; i--) {
      this.sNext[i] = this.sFree;
      this.sFree = i;
    }
    this.growHosts(Math.min(o.maxHosts, 1024));
    this.growIps(256);
  }

  // ---------------------------------------------------------------- tables

  private growHosts(cap: number): void {
    const old = this.hCap;
    const g = <T extends Uint8Array | Uint32Array | Int32Array | Float64Array>(a: T, C: new (n: number) => T): T => {
      const b = new C(cap);
      b.set(a);
      return b;
    };
    this.hHi = g(this.hHi, Uint32Array);
    this.hLo = g(this.hLo, Uint32Array);
    this.hState = g(this.hState, Uint8Array);
    this.hWhere = g(this.hWhere, Uint8Array);
    this.hIp = g(this.hIp, Int32Array);
    this.hHead = g(this.hHead, Int32Array);
    this.hTail = g(this.hTail, Int32Array);
    this.hCount = g(this.hCount, Int32Array);
    this.hNextDue = g(this.hNextDue, Float64Array);
    this.hLastStart = g(this.hLastStart, Float64Array);
    this.hCrawlDelay = g(this.hCrawlDelay, Float64Array);
    this.hErrors = g(this.hErrors, Int32Array);
    this.hBudget = g(this.hBudget, Float64Array);
    this.hExpires = g(this.hExpires, Float64Array);
    this.hRetryUntil = g(this.hRetryUntil, Float64Array);
    this.hRate = g(this.hRate, Float64Array);
    this.hPot = g(this.hPot, Float64Array);
    this.hDueNext = g(this.hDueNext, Int32Array);
    this.hIdle = g(this.hIdle, Uint8Array);
    this.hPHi = g(this.hPHi, Uint32Array);
    this.hPLo = g(this.hPLo, Uint32Array);
    this.hReqParked = g(this.hReqParked, Uint8Array);
    this.pacer?.ensureHosts(cap);
    for (let i = cap - 1; i >= old; i--) {
      this.hFreeList.push(i);
      this.hRules.push(null);
      this.hOrigin.push('');
      this.hFailReason.push('');
      this.hRobotsItem.push(null);
    }
    this.hCap = cap;
  }

  private growIps(cap: number): void {
    const old = this.iCap;
    const g = <T extends Uint8Array | Int32Array | Float64Array>(a: T, C: new (n: number) => T): T => {
      const b = new C(cap);
      b.set(a);
      return b;
    };
    this.iNextDue = g(this.iNextDue, Float64Array);
    this.iLastStart = g(this.iLastStart, Float64Array);
    this.iPot = g(this.iPot, Float64Array);
    this.iRate = g(this.iRate, Float64Array);
    this.iWork = g(this.iWork, Int32Array);
    this.iSat = g(this.iSat, Uint8Array);
    this.iInFlight = g(this.iInFlight, Int32Array);
    this.iDueHead = g(this.iDueHead, Int32Array);
    this.iDueTail = g(this.iDueTail, Int32Array);
    this.iDueCount = g(this.iDueCount, Int32Array);
    this.iSumB = g(this.iSumB, Float64Array);
    this.iHosts = g(this.iHosts, Int32Array);
    this.iLive = g(this.iLive, Uint8Array);
    for (let i = cap - 1; i >= old; i--) {
      this.iFreeList.push(i);
      this.iName.push('');
      this.iRobots.push([]);
    }
    this.iCap = cap;
  }

  /** Host id for a key, creating the entry (state PENDING) when there is room; -1 when full. */
  private hostFor(hi: number, lo: number, now: number, create: boolean): number {
    let h = this.hostIndex.get(hi, lo);
    if (h >= 0 || !create) return h;
    if (this.hFreeList.length === 0) {
      if (this.hCap < this.o.maxHosts) this.growHosts(Math.min(this.o.maxHosts, this.hCap * 2));
      else this.evictIdle(now, 64);
      if (this.hFreeList.length === 0) return -1;
    }
    h = this.hFreeList.pop()!;
    this.hUsed++;
    this.hostIndex.set(hi, lo, h);
    this.hHi[h] = hi;
    this.hLo[h] = lo;
    this.hState[h] = H_PENDING;
    this.hWhere[h] = W_NONE;
    this.hIp[h] = -1;
    this.hHead[h] = -1;
    this.hTail[h] = -1;
    this.hCount[h] = 0;
    this.hNextDue[h] = 0;
    this.hLastStart[h] = -Infinity;
    this.hCrawlDelay[h] = 0;
    this.hErrors[h] = 0;
    this.hBudget[h] = this.o.b0;
    this.hExpires[h] = 0;
    this.hRetryUntil[h] = 0;
    this.hPot[h] = 0;
    this.hRate[h] = this.rateOf(this.hostDelay(h));
    this.hDueNext[h] = -1;
    this.hIdle[h] = 0;
    this.hRules[h] = null;
    this.hOrigin[h] = '';
    this.hFailReason[h] = '';
    this.hRobotsItem[h] = null;
    this.hReqParked[h] = 0;
    return h;
  }

  private isIdle(h: number, now: number): boolean {
    const s = this.hState[h]!;
    return (
      (s === H_READY || s === H_FAILED) &&
      this.hCount[h] === 0 &&
      this.hWhere[h] === W_NONE &&
      this.hRobotsItem[h] === null &&
      this.hNextDue[h]! <= now
    );
  }

  private markIdle(h: number): void {
    if (this.hIdle[h] === 1) return;
    this.hIdle[h] = 1;
    this.idleRing.push(h);
  }

  /**
   * Frees up to `want` idle hosts whose politeness window has passed (forgetting a host whose next
   * due time is ≤ now cannot make a later request come early). Their robots rules are forgotten
   * too: the next URL of such a host asks for robots.txt again (no RobotsCache DRUM holds them).
   */
  private evictIdle(now: number, want: number): void {
    let freed = 0;
    let budget = this.idleRing.length - this.idleHead;
    while (freed < want && budget-- > 0 && this.idleHead < this.idleRing.length) {
      const h = this.idleRing[this.idleHead++]!;
      this.hIdle[h] = 0;
      if (this.hState[h] === H_FREE) continue;
      if (this.isIdle(h, now)) {
        this.freeHost(h, now);
        freed++;
      } else if (this.hCount[h] === 0 && this.hWhere[h] === W_NONE && this.hState[h] !== H_PENDING && this.hState[h] !== H_TAKEN) {
        this.markIdle(h); // not due yet: look again later
      }
    }
    if (this.idleHead > 4096 && this.idleHead * 2 > this.idleRing.length) {
      this.idleRing = this.idleRing.slice(this.idleHead);
      this.idleHead = 0;
    }
  }

  private freeHost(h: number, now: number): void {
    this.detachIp(h, now);
    this.hostIndex.delete(this.hHi[h]!, this.hLo[h]!);
    this.hState[h] = H_FREE;
    this.hRules[h] = null;
    this.hOrigin[h] = '';
    this.hFreeList.push(h);
    this.hUsed--;
  }

  private ipFor(ip: string): number {
    let i = this.ipIndex.get(ip);
    if (i !== undefined) return i;
    if (this.iFreeList.length === 0) this.growIps(this.iCap * 2);
    i = this.iFreeList.pop()!;
    this.ipIndex.set(ip, i);
    this.iName[i] = ip;
    this.iNextDue[i] = 0;
    this.iLastStart[i] = -Infinity;
    this.iPot[i] = 0;
    this.iRate[i] = this.rateOf(this.o.minIpDelayMs) * this.o.maxConnectionsPerIp;
    this.iWork[i] = 0;
    this.iSat[i] = 0;
    this.iInFlight[i] = 0;
    this.iDueHead[i] = -1;
    this.iDueTail[i] = -1;
    this.iDueCount[i] = 0;
    this.iSumB[i] = 0;
    this.iHosts[i] = 0;
    this.iLive[i] = 1;
    return i;
  }

  private attachIp(h: number, ip: string, now: number): void {
    const i = this.ipFor(ip);
    if (this.hIp[h] === i) return;
    this.detachIp(h, now);
    const v = this.hPot[h]!;
    this.hPot[h] = 0;
    this.potential -= v; // re-added below under its IP
    this.hIp[h] = i;
    this.iHosts[i]!++;
    this.iSumB[i] = this.iSumB[i]! + this.hBudget[h]!;
    this.ipRateChanged(i);
    this.setPot(h, v);
  }

  private detachIp(h: number, now: number): void {
    const i = this.hIp[h]!;
    if (i < 0) return;
    const v = this.hPot[h]!;
    this.setPot(h, 0);
    this.hIp[h] = -1;
    this.setPot(h, v);
    this.iHosts[i]!--;
    this.iSumB[i] = this.iSumB[i]! - this.hBudget[h]!;
    this.ipRateChanged(i);
    if (this.iHosts[i] === 0) {
      this.iSumB[i] = 0;
      this.ipIdle.push(i);
    }
    this.sweepIps(now);
  }

  /** Frees IPs with no host, nothing in flight and a passed τs window. */
  private sweepIps(now: number): void {
    if (this.ipIdle.length < 64) return;
    const keep: number[] = [];
    for (const i of this.ipIdle) {
      if (this.iLive[i] === 0) continue;
      if (this.iHosts[i] === 0 && this.iInFlight[i] === 0 && this.iNextDue[i]! <= now && this.iDueCount[i] === 0 && this.iRobots[i]!.length === 0) {
        this.ipIndex.delete(this.iName[i]!);
        this.iLive[i] = 0;
        this.iName[i] = '';
        this.ipHeap.remove(i);
        this.iFreeList.push(i);
      } else if (this.iHosts[i] === 0) keep.push(i);
    }
    this.ipIdle = keep;
  }

  // ---------------------------------------------------------------- delays

  // ---------------------------------------------------------------- dispatch potential

  /**
   * What the URLs in RAM can keep the fetchers busy with over the next `horizonMs` (W), in
   * fetches: Σ over IPs of min(Σ over its hosts of min(queued URLs, W/τh), W·conns/τs), plus the
   * hosts with no IP yet. The frontier reads BEAST only while this is below the recent dispatch
   * rate × W (thesis VII.2: the current queue is read as fast as it is crawled, so that a PLD's
   * URLs in Q_k really wait k passes; filling RAM to its cap instead let spam farms with many
   * hosts win by host count, docs/frontier.md). Maintained incrementally (O(1) per change).
   */
  potential = 0;
  /**
   * IPs with URLs queued in RAM (the refill's breadth term: with one or two connections per IP,
   * only that many IPs' worth of fetches can be in flight, whatever the potential says).
   */
  ipsWithWork = 0;
  /**
   * Of those, IPs whose queued work exceeds what their connections can do within W: the crawl is
   * bound by connections there, not by politeness delays (delays ≈ 0, deep hosts).
   */
  ipsSaturated = 0;
  private horizonMs = 5000;
  /**
   * Mean fetch duration (release → fetchDone, EWMA): with one request per host and `conns` per
   * IP in flight, a host can do at most W / max(τh, fetch) fetches in W and an IP W·conns /
   * max(τs, fetch) — without it, zero delays would make every queued URL count as due at once.
   */
  private fetchMs = 0;

  /** Mean fetch duration so far (ms, 0 before the first fetch). */
  get meanFetchMs(): number {
    return this.fetchMs;
  }

  setHorizon(ms: number): void {
    this.horizonMs = ms;
    this.delaysChanged();
  }

  private rateOf(delayMs: number): number {
    return delayMs > 0 ? this.horizonMs / delayMs : Infinity;
  }

  private touch(h: number): void {
    const c = this.hWhere[h] === W_PARKED ? 0 : this.hCount[h]!; // parked: not dispatchable now
    const r = this.hRate[h]!;
    this.setPot(h, c < r ? c : r);
  }

  private setPot(h: number, v: number): void {
    const old = this.hPot[h]!;
    if (old === v) return;
    this.hPot[h] = v;
    const i = this.hIp[h]!;
    if (i < 0) {
      this.potential += v - old;
      return;
    }
    // hPot > 0 exactly when the host has URLs queued (its rate is > 0): count the IP's such hosts.
    if (old > 0 !== v > 0) {
      if (v > 0) {
        if (this.iWork[i]!++ === 0) this.ipsWithWork++;
      } else if (--this.iWork[i]! === 0) this.ipsWithWork--;
    }
    const r = this.iRate[i]!;
    const before = Math.min(this.iPot[i]!, r);
    this.iPot[i] = Math.max(0, this.iPot[i]! + v - old);
    this.potential += Math.min(this.iPot[i]!, r) - before;
    if (this.potential < 1e-9) this.potential = 0;
    this.satCheck(i);
  }

  private satCheck(i: number): void {
    const s = this.iWork[i]! > 0 && this.iPot[i]! >= this.iRate[i]! ? 1 : 0;
    if (s !== this.iSat[i]) {
      this.iSat[i] = s;
      this.ipsSaturated += s === 1 ? 1 : -1;
    }
  }

  private ipRateChanged(i: number): void {
    const before = Math.min(this.iPot[i]!, this.iRate[i]!);
    this.iRate[i] = this.rateOf(Math.max(this.ipDelay(i), this.fetchMs)) * this.o.maxConnectionsPerIp;
    this.potential += Math.min(this.iPot[i]!, this.iRate[i]!) - before;
    if (this.potential < 1e-9) this.potential = 0;
    this.satCheck(i);
  }

  /** τh for host h, before Retry-After: budget scaling, Crawl-delay, error backoff, floor. */
  private hostDelay(h: number): number {
    const o = this.o;
    let d = hostDelayFor(this.hBudget[h]!, o);
    const cd = Math.min(this.hCrawlDelay[h]!, o.maxCrawlDelayMs);
    if (cd > d) d = cd;
    const e = this.hErrors[h]!;
    if (e > 0) d = Math.max(d, Math.min(o.maxBackoffMs, d * 2 ** Math.min(e, 30)));
    return Math.max(d, o.minHostDelayMs);
  }

  private ipDelay(i: number): number {
    const n = this.iHosts[i]!;
    const avg = n > 0 ? this.iSumB[i]! / n : this.o.b0;
    return Math.max(ipDelayFor(avg, this.o), this.o.minIpDelayMs);
  }

  // ---------------------------------------------------------------- admission

  get ramCount(): number {
    return this.sUsed;
  }

  get ramFree(): number {
    return this.o.ramUrls - this.sUsed;
  }

  /**
   * Offers one URL (from BEAST or QR) to RAM. See AddResult; Disallowed / HostFailed have already
   * been reported through onDrop.
   */
  add(u: FrontierUrl, now: number): AddResult {
    if (this.sFree < 0) return AddResult.RamFull;
    const h = this.hostFor(u.hostHi, u.hostLo, now, true);
    if (h < 0) return AddResult.NeedRobots; // host table full: wait in QR, asked for later
    this.hPHi[h] = u.pldHi;
    this.hPLo[h] = u.pldLo;
    this.pacer?.noteBudget(u.pldHi, u.pldLo, u.budget, now);
    const st = this.hState[h]!;
    if (st === H_READY || st === H_FAILED) {
      if (this.hExpires[h]! <= now) {
        // Entry expired: ask again; URLs already in RAM wait (the host leaves the heap lazily).
        this.hState[h] = H_PENDING;
        if (this.hOrigin[h] === '') this.hOrigin[h] = originOf(u.url);
        this.requests.push(h);
        return AddResult.NeedRobots;
      }
    }
    if (st === H_PENDING || st === H_TAKEN || st === H_ROBOTS) {
      if (this.hOrigin[h] === '') {
        this.hOrigin[h] = originOf(u.url);
        if (st === H_PENDING) this.requests.push(h);
      }
      return AddResult.NeedRobots;
    }
    if (st === H_FAILED) {
      this.drop(u, this.hFailReason[h] || 'host-failed');
      return AddResult.HostFailed;
    }
    // H_READY
    const rules = this.hRules[h];
    if (rules !== null && rules !== undefined && !rules.isAllowed(pathAndQueryOf(u.url))) {
      this.drop(u, 'robots');
      return AddResult.Disallowed;
    }
    if (this.hCount[h]! >= this.o.maxUrlsPerHost) return AddResult.HostFull;
    if (u.budget !== this.hBudget[h]) {
      const i = this.hIp[h]!;
      if (i >= 0) this.iSumB[i] = this.iSumB[i]! + u.budget - this.hBudget[h]!;
      this.hBudget[h] = u.budget;
      this.hRate[h] = this.rateOf(this.hostDelay(h));
      if (i >= 0) this.ipRateChanged(i);
    }
    this.enqueue(h, u);
    if (this.hWhere[h] === W_NONE) this.hostHeap.set(h, this.hNextDue[h]!), (this.hWhere[h] = W_HEAP);
    return AddResult.Added;
  }

  private enqueue(h: number, u: FrontierUrl): void {
    const s = this.sFree;
    this.sFree = this.sNext[s]!;
    this.sUsed++;
    this.sUrl[s] = u;
    this.sNext[s] = -1;
    u._slot = s;
    u._host = h;
    if (this.hTail[h]! < 0) this.hHead[h] = s;
    else this.sNext[this.hTail[h]!] = s;
    this.hTail[h] = s;
    this.hCount[h]!++;
    this.touch(h);
  }

  private freeSlot(s: number): void {
    this.sUrl[s] = null;
    this.sNext[s] = this.sFree;
    this.sFree = s;
    this.sUsed--;
  }

  private drop(u: FrontierUrl, reason: string): void {
    this.drops.set(reason, (this.drops.get(reason) ?? 0) + 1);
    this.onDrop(u, reason);
  }

  // ---------------------------------------------------------------- robots gate

  /**
   * True when the host holds its full share of URLs in RAM (robots known, entry not expired): a URL
   * of it read from disk goes straight back to BEAST without being decoded (refill fast path).
   */
  hostFull(hi: number, lo: number, now: number): boolean {
    const h = this.hostIndex.get(hi, lo);
    return h >= 0 && this.hState[h] === H_READY && this.hCount[h]! >= this.o.maxUrlsPerHost && this.hExpires[h]! > now;
  }

  /**
   * The delay options changed (Frontier.setDelays): hosts and IPs already waiting get their due
   * time recomputed from their last start with the new delays (Retry-After deadlines and the
   * floors still hold), so a shorter delay takes effect at once and a longer one holds back hosts
   * that were not due yet. O(hosts + IPs); an operator action, not a hot path.
   */
  delaysChanged(): void {
    for (let h = 0; h < this.hCap; h++) {
      if (this.hState[h] === H_FREE) continue;
      const last = this.hLastStart[h]!;
      if (last === -Infinity) continue;
      const due = Math.max(last + this.hostDelay(h), this.hRetryUntil[h]!);
      this.hNextDue[h] = due;
      if (this.hWhere[h] === W_HEAP) this.hostHeap.set(h, due);
    }
    for (let i = 0; i < this.iCap; i++) if (this.iLive[i] === 1) this.ipRateChanged(i);
    for (let h = 0; h < this.hCap; h++) {
      if (this.hState[h] === H_FREE) continue;
      this.hRate[h] = this.rateOf(this.hostDelay(h));
      this.touch(h);
    }
    for (let i = 0; i < this.iCap; i++) {
      if (this.iLive[i] !== 1) continue;
      const last = this.iLastStart[i]!;
      if (last !== -Infinity) {
        this.iNextDue[i] = last + this.ipDelay(i);
        if (this.ipHeap.has(i)) this.ipHeap.set(i, this.iNextDue[i]!);
      }
      this.wakeIp(i); // maxConnectionsPerIp may have grown
    }
  }

  /** True when the host is known and still waiting for its robots/DNS answer (QR re-scan fast path). */
  hostWaiting(hi: number, lo: number): boolean {
    const h = this.hostIndex.get(hi, lo);
    if (h < 0) return false;
    const st = this.hState[h]!;
    return (st === H_PENDING && this.hOrigin[h] !== '') || st === H_TAKEN || st === H_ROBOTS;
  }

  /** Hosts whose robots.txt / DNS the pipeline must provide (QD), each handed out once. */
  takeRobotsRequests(max: number, now = 0): RobotsRequest[] {
    const out: RobotsRequest[] = [];
    while (out.length < max && this.requestsHead < this.requests.length) {
      const h = this.requests[this.requestsHead++]!;
      if (this.hState[h] !== H_PENDING) continue;
      // A new host's DNS lookup and robots.txt fetch count against its PLD's pace (capacity.ts);
      // a refused request is parked on its PLD and comes back to QD when the PLD may go again.
      // A known host asking again after its entry expired (hExpires set) is not a new host.
      if (this.pacer !== null && this.hExpires[h] === 0 && !this.pacer.tryRelease(this.hPHi[h]!, this.hPLo[h]!, now)) {
        this.hReqParked[h] = 1;
        this.pacer.park(this.hPHi[h]!, this.hPLo[h]!, h, now);
        continue;
      }
      this.hState[h] = H_TAKEN;
      const origin = this.hOrigin[h]!;
      out.push({ hostHi: this.hHi[h]!, hostLo: this.hLo[h]!, host: hostNameOf(origin), origin });
    }
    if (this.requestsHead > 4096 && this.requestsHead * 2 > this.requests.length) {
      this.requests = this.requests.slice(this.requestsHead);
      this.requestsHead = 0;
    }
    return out;
  }

  get pendingRobots(): number {
    return this.requests.length - this.requestsHead;
  }

  /**
   * Schedules the robots.txt fetch of a host (after its DNS answer) on its IP: it is released by
   * nextReady as a UrlKind.Robots item, obeying τs (not τh: the host has nothing in RAM).
   */
  scheduleRobotsFetch(hi: number, lo: number, ip: string, now: number): boolean {
    const h = this.hostFor(hi, lo, now, true);
    if (h < 0) return false;
    if (this.hOrigin[h] === '') return false; // we never asked for this host
    this.attachIp(h, ip, now);
    this.hState[h] = H_ROBOTS;
    const item = new FrontierUrl({ url: `${this.hOrigin[h]}/robots.txt`, hostHi: hi, hostLo: lo, pldHi: 0, pldLo: 0, budget: 0, admitted: 0 });
    item.kind = UrlKind.Robots;
    item.host = hostNameOf(this.hOrigin[h]!);
    item._host = h;
    this.hRobotsItem[h] = item;
    if (this.hWhere[h] !== W_FLIGHT) this.pushRobotsItem(h);
    return true;
  }

  private pushRobotsItem(h: number): void {
    const i = this.hIp[h]!;
    const item = this.hRobotsItem[h]!;
    this.iRobots[i]!.push(item);
    this.wakeIp(i);
  }

  /** The robots/DNS answer for a host: its URLs may now enter RAM (QR is re-checked). */
  robotsKnown(hi: number, lo: number, info: RobotsInfo, now: number): void {
    const h = this.hostFor(hi, lo, now, true);
    if (h < 0) return;
    this.hState[h] = H_READY;
    this.hRobotsItem[h] = null; // a scheduled robots fetch, if any, is no longer needed
    this.hRules[h] = info.rules;
    this.hExpires[h] = info.expiresAt;
    this.hCrawlDelay[h] = info.crawlDelayMs ?? 0;
    this.hFailReason[h] = '';
    this.hRate[h] = this.rateOf(this.hostDelay(h));
    this.attachIp(h, info.ip, now);
    this.touch(h);
    if (this.hCount[h]! > 0 && this.hWhere[h] === W_NONE) {
      this.hostHeap.set(h, this.hNextDue[h]!);
      this.hWhere[h] = W_HEAP;
    } else if (this.hCount[h] === 0 && this.hWhere[h] === W_NONE) this.markIdle(h);
  }

  /** The host cannot be crawled until `now + failedHostTtlMs` (DNS failure, robots unavailable). */
  robotsFailed(hi: number, lo: number, reason: string, now: number): void {
    const h = this.hostFor(hi, lo, now, true);
    if (h < 0) return;
    this.failHost(h, reason, now);
  }

  private failHost(h: number, reason: string, now: number): void {
    this.hState[h] = H_FAILED;
    this.hFailReason[h] = reason;
    this.hExpires[h] = now + this.o.failedHostTtlMs;
    this.hRobotsItem[h] = null;
    if (this.hWhere[h] === W_HEAP) {
      this.hostHeap.remove(h);
      this.hWhere[h] = W_NONE;
    }
    // URLs waiting in RAM are dropped now; one in flight is dropped at its fetchDone.
    this.dropQueued(h, reason);
    if (this.hWhere[h] === W_NONE) this.markIdle(h);
  }

  private dropQueued(h: number, reason: string): void {
    let s = this.hHead[h]!;
    while (s >= 0) {
      const next = this.sNext[s]!;
      const u = this.sUrl[s]!;
      this.freeSlot(s);
      u._slot = -1;
      u._host = -1;
      this.drop(u, reason);
      s = next;
    }
    this.hHead[h] = -1;
    this.hTail[h] = -1;
    this.hCount[h] = 0;
    this.touch(h);
  }

  // ---------------------------------------------------------------- release

  private wakeIp(i: number): void {
    if (this.iInFlight[i]! >= this.o.maxConnectionsPerIp) return;
    if (this.iDueCount[i] === 0 && this.iRobots[i]!.length === 0) return;
    if (!this.ipHeap.has(i)) this.ipHeap.set(i, this.iNextDue[i]!);
  }

  /** Turns per-PLD pacing on (capacity.ts). */
  setPacer(p: PldPacer): void {
    this.pacer = p;
    p.ensureHosts(this.hCap);
  }

  get pldPacer(): PldPacer | null {
    return this.pacer;
  }

  /** A parked host handed back by the pacer: into the host heap again (or idle if emptied meanwhile). */
  private readonly unparkFn = (h: number): void => {
    if (this.hReqParked[h] === 1) {
      this.hReqParked[h] = 0;
      if (this.hState[h] === H_PENDING) this.requests.push(h);
      return;
    }
    if (this.hWhere[h] !== W_PARKED) return;
    this.hWhere[h] = W_NONE;
    this.touch(h);
    if (this.hState[h] === H_READY && this.hCount[h]! > 0) {
      this.hostHeap.set(h, this.hNextDue[h]!);
      this.hWhere[h] = W_HEAP;
    } else if (this.hCount[h] === 0) this.markIdle(h);
  };

  /**
   * Fills `out` with up to `max` URLs whose host and IP are both due at `now`; returns the count.
   * Each released URL has `ip` set; its host and IP slots stay taken until fetchDone.
   */
  nextReady(now: number, max: number, out: FrontierUrl[]): number {
    const hostHeap = this.hostHeap;
    const ipHeap = this.ipHeap;
    if (this.pacer !== null) this.pacer.unpark(now, this.unparkFn);
    // Hosts whose τh has passed join their IP's due list.
    while (hostHeap.size > 0 && hostHeap.minKey() <= now) {
      const h = hostHeap.pop();
      if (this.hState[h] !== H_READY || this.hCount[h] === 0) {
        this.hWhere[h] = W_NONE;
        continue;
      }
      if (this.pacer !== null && !this.pacer.tryRelease(this.hPHi[h]!, this.hPLo[h]!, now)) {
        this.hWhere[h] = W_PARKED;
        this.touch(h);
        this.pacer.park(this.hPHi[h]!, this.hPLo[h]!, h, now);
        continue;
      }
      const i = this.hIp[h]!;
      this.hWhere[h] = W_DUE;
      this.hDueNext[h] = -1;
      if (this.iDueTail[i]! < 0) this.iDueHead[i] = h;
      else this.hDueNext[this.iDueTail[i]!] = h;
      this.iDueTail[i] = h;
      this.iDueCount[i]!++;
      this.wakeIp(i);
    }
    let n = 0;
    while (n < max && ipHeap.size > 0 && ipHeap.minKey() <= now) {
      const i = ipHeap.pop();
      let item: FrontierUrl | null = null;
      const lane = this.iRobots[i]!;
      if (lane.length > 0) {
        item = lane.shift()!;
        const h = item._host;
        if (this.hRobotsItem[h] !== item) item = null; // superseded / host failed meanwhile
        else {
          this.hRobotsItem[h] = null;
          this.hWhere[h] = W_FLIGHT;
          this.hLastStart[h] = now;
          this.hNextDue[h] = now + this.hostDelay(h);
          this.inFlightRobots++;
          this.robotsReleased++;
        }
      } else {
        while (this.iDueCount[i]! > 0) {
          const h = this.iDueHead[i]!;
          this.iDueHead[i] = this.hDueNext[h]!;
          if (this.iDueHead[i]! < 0) this.iDueTail[i] = -1;
          this.iDueCount[i]!--;
          if (this.hState[h] !== H_READY || this.hCount[h] === 0 || this.hIp[h] !== i) {
            this.hWhere[h] = W_NONE;
            if (this.hState[h] === H_READY && this.hCount[h]! > 0) {
              this.hostHeap.set(h, this.hNextDue[h]!); // moved to another IP
              this.hWhere[h] = W_HEAP;
            }
            continue;
          }
          const s = this.hHead[h]!;
          const u = this.sUrl[s]!;
          this.hHead[h] = this.sNext[s]!;
          if (this.hHead[h]! < 0) this.hTail[h] = -1;
          this.hCount[h]!--;
          this.touch(h);
          this.hWhere[h] = W_FLIGHT;
          this.hLastStart[h] = now;
          this.hNextDue[h] = now + this.hostDelay(h); // start to start
          this.inFlightPages++;
          this.released++;
          item = u;
          break;
        }
      }
      if (item === null) {
        this.wakeIp(i);
        continue;
      }
      item.ip = this.iName[i]!;
      this.iInFlight[i]!++;
      this.iLastStart[i] = now;
      this.iNextDue[i] = now + this.ipDelay(i);
      this.wakeIp(i);
      out[n++] = item;
    }
    return n;
  }

  /** A released item's fetch finished: frees its host/IP slots and sets the next due times. */
  fetchDone(u: FrontierUrl, outcome: FetchOutcome | undefined, now: number): void {
    const h = u._host;
    if (h < 0 || this.hWhere[h] !== W_FLIGHT) return; // unknown or already done
    const i = this.hIp[h]!;
    this.hWhere[h] = W_NONE;
    if (i >= 0) this.iInFlight[i]!--;
    if (u.kind === UrlKind.Robots) {
      this.inFlightRobots--;
      u._host = -1;
    } else {
      this.inFlightPages--;
      const s = u._slot;
      if (outcome !== undefined) {
        if (outcome.crawlDelayMs !== undefined) this.hCrawlDelay[h] = outcome.crawlDelayMs;
        if (outcome.hostError) this.hErrors[h]!++;
        else this.hErrors[h] = 0;
        // Start to start with the delay as it stands now (errors / Crawl-delay only lengthen it).
        this.hNextDue[h] = Math.max(this.hNextDue[h]!, this.hLastStart[h]! + this.hostDelay(h));
        if (outcome.retryAfterMs !== undefined && outcome.retryAfterMs > 0) {
          this.hRetryUntil[h] = Math.max(this.hRetryUntil[h]!, now + Math.min(outcome.retryAfterMs, this.o.maxBackoffMs));
          this.hNextDue[h] = Math.max(this.hNextDue[h]!, this.hRetryUntil[h]!);
        }
      } else this.hErrors[h] = 0;
      const failed = this.hState[h] === H_FAILED;
      if (outcome?.drop !== undefined || failed) {
        this.releaseSlot(u, s);
        this.drop(u, outcome?.drop ?? (this.hFailReason[h] || 'host-failed'));
      } else if (outcome?.retry) {
        u.attempts++;
        if (u.attempts >= this.o.maxAttempts) {
          this.releaseSlot(u, s);
          this.drop(u, 'max-attempts');
        } else {
          // Back into the host's FIFO, same slot: the RAM count does not change.
          this.sNext[s] = -1;
          if (this.hTail[h]! < 0) this.hHead[h] = s;
          else this.sNext[this.hTail[h]!] = s;
          this.hTail[h] = s;
          this.hCount[h]!++;
          this.touch(h);
        }
      } else this.releaseSlot(u, s);
      if (this.hErrors[h]! >= this.o.maxHostErrors && this.hState[h] !== H_FAILED) this.failHost(h, 'host-errors', now);
      const took = now - this.hLastStart[h]!;
      if (took >= 0 && took < 600_000) this.fetchMs = this.fetchMs === 0 ? took : this.fetchMs + 0.05 * (took - this.fetchMs);
      // Delay as it stands now, Retry-After included: what this host can do within the horizon.
      const r = this.rateOf(Math.max(this.hNextDue[h]! - now, this.fetchMs, this.o.minHostDelayMs));
      if (r !== this.hRate[h]) {
        this.hRate[h] = r;
        this.touch(h);
      }
      // The IP's bound moves only with fetchMs (slowly): refresh it now and then, not per fetch.
      if (i >= 0 && (this.released & 15) === 0) this.ipRateChanged(i);
    }
    if (this.hState[h] === H_ROBOTS && this.hRobotsItem[h] !== null) this.pushRobotsItem(h);
    else if (this.hState[h] === H_READY && this.hCount[h]! > 0) {
      this.hostHeap.set(h, this.hNextDue[h]!);
      this.hWhere[h] = W_HEAP;
    } else if (this.hCount[h] === 0) this.markIdle(h);
    if (i >= 0) this.wakeIp(i);
  }

  private releaseSlot(u: FrontierUrl, s: number): void {
    this.freeSlot(s);
    u._slot = -1;
    u._host = -1;
  }

  /** Earliest time something may become releasable (null when nothing waits in RAM). */
  nextWakeup(): number | null {
    const t = Math.min(this.hostHeap.minKey(), this.ipHeap.minKey(), this.pacer?.nextWakeup() ?? Infinity);
    return t === Infinity ? null : t;
  }

  /** Every URL in RAM (queued or in flight), for the frontier's checkpoint snapshot. */
  forEachInRam(fn: (u: FrontierUrl) => void): void {
    for (let s = 0; s < this.sUrl.length; s++) {
      const u = this.sUrl[s];
      if (u !== null && u !== undefined) fn(u);
    }
  }

  /** IPs in the table (hosts known on them, or their τs window not yet passed). */
  get ipsKnown(): number {
    return this.ipIndex.size;
  }

  stats(): {
    ramUrls: number;
    inFlight: number;
    inFlightRobots: number;
    hosts: number;
    ips: number;
    hostHeap: number;
    ipHeap: number;
    pendingRobots: number;
    released: number;
    robotsReleased: number;
  } {
    return {
      ramUrls: this.sUsed,
      inFlight: this.inFlightPages,
      inFlightRobots: this.inFlightRobots,
      hosts: this.hUsed,
      ips: this.ipIndex.size,
      hostHeap: this.hostHeap.size,
      ipHeap: this.ipHeap.size,
      pendingRobots: this.pendingRobots,
      released: this.released,
      robotsReleased: this.robotsReleased,
    };
  }
}
