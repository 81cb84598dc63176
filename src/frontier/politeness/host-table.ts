/**
 * The tables under the politeness layer (thesis VII.1): hosts, IPs and the URL slab as typed arrays
 * indexed by small ids, and the two heaps politeness.ts releases from.
 *
 *   host table  hosts with URLs in RAM, robots pending, or politeness state still needed; ids come
 *               from a free list, arrays grow by doubling up to maxHosts; idle hosts whose due time
 *               has passed are evicted when the table is full.
 *   IP table    the server addresses known hosts resolved to; an IP is freed when it has no host,
 *               nothing in flight and its τs window has passed.
 *   URL slab    per-host FIFOs of slot indexes; a slot stays taken while its URL is in flight.
 *
 * RAM bounds: the URL slab holds ≤ ramUrls URLs (in flight included) whose estimated heap bytes
 * (frontierUrlRamBytes) stay ≤ maxUrlBytes; the host table ≤ maxHosts entries (hosts with URLs in
 * RAM ≤ ramUrls, plus robots-pending hosts and recently used hosts kept for their politeness state
 * and robots rules) whose estimated bytes (HOST_ENTRY_BYTES + origin + address + rules) stay
 * ≤ maxHostBytes, except that the rules of a host answered while the table is at its bound are
 * kept (its URLs need them) until idle hosts can be evicted; the IP table ≤ the host table. Hot path: typed
 * arrays only, no allocation per release. A table change updates the delay and dispatch-potential
 * accounting through the hooks declared at the end (implemented in pacing.ts).
 */
import { PldPace } from './pld-pace.js';
import type { DropReason, PolitenessOptions } from './politeness-options.js';
import { IdHeap } from './heap.js';
import { IDLE_FREE, IDLE_GONE, IDLE_LATER, IdleRing } from './idle-ring.js';
import { frontierUrlRamBytes, type FrontierUrl } from '../record.js';
import { U64Map } from '../../util/u64-map.js';
import { ipQueueKey } from './ip-key.js';
import type { HostAuthorities } from './authorities.js';
import type { RamSnapshot } from './ram-snapshot.js';

export type { RobotsRulesLike } from './authorities.js';
export type { DropReason, PolitenessOptions } from './politeness-options.js';

/**
 * Estimated heap bytes of one host-table entry besides its strings and rules: its slots in the
 * typed arrays (~114 B), the five JS arrays, the U64Map index at load ≤ 1/2, the free list, the
 * idle ring, QD and the heaps' position arrays. test/frontier/ram-estimates.test.ts measures the
 * real cost (gc'd heap per entry) and holds this estimate above it.
 */
export const HOST_ENTRY_BYTES = 320;
/** Slots the URL slab starts with (it doubles as URLs come, up to ramUrls: growSlab). */
const SLAB_MIN = 4096;

/** Estimated heap bytes of a one-byte string (V8 without pointer compression: 16-byte header, 8-byte aligned); '' is shared. */
export function stringRamBytes(s: string): number {
  return s.length === 0 ? 0 : 16 + ((s.length + 7) & ~7);
}


/** Host states: the robots gate (robots-gate.ts) moves a host through them. */
export const H_FREE = 0;
export const H_PENDING = 1; // robots/DNS requested, not yet taken by the pipeline
export const H_TAKEN = 2; // handed out by takeRobotsRequests, answer awaited
export const H_ROBOTS = 3; // robots fetch scheduled on the IP lane or in flight
export const H_READY = 4;
export const H_FAILED = 5;

/** Where a host is in the release path (politeness.ts): at most one of these at a time. */
export const W_NONE = 0;
export const W_HEAP = 1;
export const W_DUE = 2;
export const W_FLIGHT = 3;

export abstract class HostTable {
  protected readonly o: PolitenessOptions;
  /** o.trustThreshold, 0 when not given (read per URL taken in). */
  protected readonly trustThreshold: number;
  private readonly onDrop: (u: FrontierUrl, reason: DropReason) => void;

  // Host table (ids from a free list; arrays grow by doubling up to maxHosts).
  protected readonly hostIndex = new U64Map(1024);
  protected hCap = 0;
  protected hUsed = 0;
  private hFreeList: number[] = [];
  protected hHi = new Uint32Array(0);
  protected hLo = new Uint32Array(0);
  protected hState = new Uint8Array(0);
  protected hWhere = new Uint8Array(0);
  protected hIp = new Int32Array(0);
  protected hHead = new Int32Array(0);
  protected hTail = new Int32Array(0);
  protected hCount = new Int32Array(0);
  protected hHigh = new Int32Array(0); // of hCount, URLs whose own budget is > B0 (pacing.ts hostsQueuedHigh)
  protected hQ = new Uint8Array(0); // how the host is counted in hostsQueued (bit 0), hostsQueuedHigh (bit 1)
  protected hNextDue = new Float64Array(0);
  protected hLastStart = new Float64Array(0);
  protected hCrawlDelay = new Float64Array(0);
  protected hErrors = new Int32Array(0);
  protected hBudget = new Float64Array(0);
  /** Slot of the host's PLD in the low-PLD pace (pld-pace.ts), -1 unknown. */
  protected hPldSlot = new Int32Array(0);
  /** The host's PLD key (set with hPldSlot), for the pace's ranked-PLD table. */
  protected hPldHi = new Uint32Array(0);
  protected hPldLo = new Uint32Array(0);
  /** 1: the last URL offered for this host had B ≤ B0. */
  protected hLow = new Uint8Array(0);
  /** 1: the last URL offered for this host had a trusted in-degree below the threshold (pld-pace.ts). */
  protected hUntrusted = new Uint8Array(0);
  /** 1: this host's part of the dispatch potential is counted as B ≤ B0's (pld-pace.ts). */
  protected hPotLow = new Uint8Array(0);
  /** The low-PLD pace (pld-pace.ts): fixed RAM, τh read from the options as they stand. */
  protected readonly pace = new PldPace(() => Math.max(this.o.hostDelayMs, this.o.minHostDelayMs));
  protected hExpires = new Float64Array(0);
  /** Retry-After deadline (kept apart from hNextDue so that a delay change can recompute it). */
  protected hRetryUntil = new Float64Array(0);
  /** Fetches the host can make within the horizon W: W / its current delay (Infinity at 0). */
  protected hRate = new Float64Array(0);
  /** Its share of `potential` on its own: min(URLs queued, hRate). */
  protected hPot = new Float64Array(0);
  protected hDueNext = new Int32Array(0);
  /** qrVisited's count by which the URLs the host had in QR at its answer have been read (answeredNow). */
  protected hQrMark = new Float64Array(0);
  /**
   * QR's rotation, kept by the frontier's refill: records its rescans have read so far, and (qrMark)
   * that count plus QR's length — when every record now in QR will have been read once (QR is a FIFO).
   */
  qrVisited = 0;
  qrMark: () => number = () => 0;
  /** The host's robots answers, one per authority (authorities.ts); null until its first URL. */
  protected hAuth: (HostAuthorities | null)[] = [];
  protected hOrigin: string[] = [];
  /** The host's server address (its DNS answer); the IP queue it is in may cover a whole IPv6 /64. */
  protected hAddr: string[] = [];
  protected hFailReason: string[] = [];
  protected hRobotsItem: (FrontierUrl | null)[] = [];
  /** What each entry is charged in hostBytes (chargeHost). */
  private hCharge = new Int32Array(0);
  /** Estimated heap bytes of the host table's entries (≤ maxHostBytes, see the header). */
  hostBytes = 0;
  protected readonly maxHostBytes: number;

  // IP table.
  protected readonly ipIndex = new Map<string, number>();
  protected iName: string[] = [];
  protected iCap = 0;
  private iFreeList: number[] = [];
  protected iNextDue = new Float64Array(0);
  protected iLastStart = new Float64Array(0);
  /** Sum of hPot of the IP's hosts, and what the IP itself allows within W (W·conns / τs). */
  protected iPot = new Float64Array(0);
  protected iRate = new Float64Array(0);
  /** Hosts of the IP with URLs queued in RAM (hPot > 0); an IP with ≥ 1 counts in ipsWithWork. */
  protected iWork = new Int32Array(0);
  /** 1 when the IP's work exceeds what its connections can do within W (iPot ≥ iRate). */
  protected iSat = new Uint8Array(0);
  protected iInFlight = new Int32Array(0);
  protected iDueHead = new Int32Array(0);
  protected iDueTail = new Int32Array(0);
  protected iDueCount = new Int32Array(0);
  /** 1: the IP is keyed in the IP heap for a robots.txt the low-PLD pace holds (Politeness.nextReady). */
  protected iRobotsWait = new Uint8Array(0);
  /** 1: the IP's last release was a robots.txt (its lanes alternate: Politeness.nextReady). */
  protected iLastRobots = new Uint8Array(0);
  protected iSumB = new Float64Array(0);
  protected iHosts = new Int32Array(0);
  protected iRobots: FrontierUrl[][] = [];
  protected iLive = new Uint8Array(0);

  // URL slab: per-host FIFOs of slot indexes; a slot stays taken while its URL is in flight.
  protected sUrl: (FrontierUrl | null)[] = [];
  /** The RAM snapshot being written, if any (ram-snapshot.ts): told of every slot taken and freed. */
  protected ramSnap: RamSnapshot | null = null;
  protected sNext = new Int32Array(0);
  /** frontierUrlRamBytes of each slot's URL, and their sum (≤ maxUrlBytes). */
  private sCharge = new Int32Array(0);
  /**
   * Slots made so far (≤ ramUrls): the slab grows by doubling as URLs come (growSlab), so a crawl
   * that never holds many URLs never pays for the whole slab (at --ram 1.5G, 1 M slots: ~60 ms of
   * CPU at open and an 8 MB array every full GC walks).
   */
  private sCap = 0;
  urlBytes = 0;
  protected readonly maxUrlBytes: number;
  protected sFree = -1;
  protected sUsed = 0;

  readonly hostHeap = new IdHeap(1024);
  readonly ipHeap = new IdHeap(1024);

  /** Robots/DNS requests not yet handed out (QD). Bounded by the host table. */
  protected requests: number[] = [];
  protected requestsHead = 0;
  /** Hosts that may be evictable, re-checked when the table is full (idle-ring.ts). */
  private readonly idle = new IdleRing();
  /** `now` of the eviction under way, for the ring's callbacks (lookIdle, freeIdle). */
  private evictNow = 0;
  private ipIdle: number[] = [];

  protected inFlightPages = 0;
  protected inFlightRobots = 0;
  readonly drops = new Map<string, number>();
  released = 0;
  robotsReleased = 0;

  constructor(o: PolitenessOptions, onDrop: (u: FrontierUrl, reason: DropReason) => void) {
    this.o = o;
    this.trustThreshold = o.trustThreshold ?? 0;
    this.onDrop = onDrop;
    this.maxHostBytes = o.maxHostBytes ?? Infinity;
    this.maxUrlBytes = o.maxUrlBytes ?? Infinity;
    this.growSlab();
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
    this.hHigh = g(this.hHigh, Int32Array);
    this.hQ = g(this.hQ, Uint8Array);
    this.hNextDue = g(this.hNextDue, Float64Array);
    this.hLastStart = g(this.hLastStart, Float64Array);
    this.hCrawlDelay = g(this.hCrawlDelay, Float64Array);
    this.hErrors = g(this.hErrors, Int32Array);
    this.hBudget = g(this.hBudget, Float64Array);
    this.hPldSlot = g(this.hPldSlot, Int32Array);
    this.hPldHi = g(this.hPldHi, Uint32Array);
    this.hPldLo = g(this.hPldLo, Uint32Array);
    this.hLow = g(this.hLow, Uint8Array);
    this.hUntrusted = g(this.hUntrusted, Uint8Array);
    this.hPotLow = g(this.hPotLow, Uint8Array);
    this.hExpires = g(this.hExpires, Float64Array);
    this.hQrMark = g(this.hQrMark, Float64Array);
    this.hRetryUntil = g(this.hRetryUntil, Float64Array);
    this.hRate = g(this.hRate, Float64Array);
    this.hPot = g(this.hPot, Float64Array);
    this.hDueNext = g(this.hDueNext, Int32Array);
    this.hCharge = g(this.hCharge, Int32Array);
    for (let i = cap - 1; i >= old; i--) {
      this.hFreeList.push(i);
      this.hAuth.push(null);
      this.hOrigin.push('');
      this.hAddr.push('');
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
    this.iRobotsWait = g(this.iRobotsWait, Uint8Array);
    this.iLastRobots = g(this.iLastRobots, Uint8Array);
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
  protected hostFor(hi: number, lo: number, now: number, create: boolean): number {
    let h = this.hostIndex.get(hi, lo);
    if (h >= 0 || !create) return h;
    const overBytes = (): boolean => this.hostBytes + HOST_ENTRY_BYTES > this.maxHostBytes;
    if (this.hFreeList.length === 0 || overBytes()) {
      if (this.hFreeList.length === 0 && this.hCap < this.o.maxHosts) this.growHosts(Math.min(this.o.maxHosts, this.hCap * 2));
      else this.evictIdle(now, 64);
      if (this.hFreeList.length === 0 || overBytes()) return -1;
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
    this.hHigh[h] = 0;
    this.hNextDue[h] = 0;
    this.hLastStart[h] = -Infinity;
    this.hCrawlDelay[h] = 0;
    this.hErrors[h] = 0;
    this.hBudget[h] = this.o.b0;
    this.hPldSlot[h] = -1;
    this.hLow[h] = 1;
    this.hUntrusted[h] = 0;
    this.hPotLow[h] = 0;
    this.hExpires[h] = 0;
    this.hQrMark[h] = 0;
    this.hRetryUntil[h] = 0;
    this.hPot[h] = 0;
    this.hRate[h] = this.rateOf(this.hostDelay(h));
    this.hDueNext[h] = -1;
    this.hAuth[h] = null;
    this.hOrigin[h] = '';
    this.hFailReason[h] = '';
    this.hRobotsItem[h] = null;
    this.hAddr[h] = '';
    this.chargeHost(h);
    return h;
  }

  /**
   * Would a host not in the table find an entry now (evicting idle hosts if need be)? False: its URLs
   * wait in QR unread (refill.ts), without the decode a full table would refuse them after.
   */
  hostRoom(hi: number, lo: number, now: number): boolean {
    return this.hostIndex.get(hi, lo) >= 0 || this.tableRoom(now);
  }

  /** Could a new host get an entry now (evicting idle hosts if need be)? */
  tableRoom(now: number): boolean {
    const fits = (): boolean => this.hFreeList.length > 0 && this.hostBytes + HOST_ENTRY_BYTES <= this.maxHostBytes;
    if (fits()) return true;
    // (Growing the arrays gives an entry only while the entries' bytes are under their bound.)
    if (this.hFreeList.length === 0 && this.hCap < this.o.maxHosts && this.hostBytes + HOST_ENTRY_BYTES <= this.maxHostBytes) return true;
    this.evictIdle(now, 64);
    return fits();
  }

  /** Re-estimates entry h's bytes after its origin, address or rules changed (hostBytes). */
  protected chargeHost(h: number): void {
    const c = HOST_ENTRY_BYTES + stringRamBytes(this.hOrigin[h]!) + stringRamBytes(this.hAddr[h]!) + (this.hAuth[h]?.ramBytes ?? 0);
    this.hostBytes += c - this.hCharge[h]!;
    this.hCharge[h] = c;
  }

  /** Over maxHostBytes (a host's rules arrived while the table was at its bound): frees idle hosts. */
  protected trimHostBytes(now: number): void {
    if (this.hostBytes > this.maxHostBytes) this.evictIdle(now, 64);
  }

  protected isIdle(h: number, now: number): boolean {
    const s = this.hState[h]!;
    return (
      (s === H_READY || s === H_FAILED) &&
      this.hCount[h] === 0 &&
      this.hWhere[h] === W_NONE &&
      this.hRobotsItem[h] === null &&
      this.hNextDue[h]! <= now &&
      this.hQrMark[h]! <= this.qrVisited // not held (answeredNow)
    );
  }

  /**
   * The host was just answered (robots known or failed): even idle, it stays until a QR rescan has
   * read the URLs it had waiting there. Evicted before that by a full table, its URLs find it gone
   * and ask again: after a resume over 10^7 hosts, 5,000–7,000 RobotsCache checks/s with RAM empty.
   */
  protected answeredNow(h: number): void {
    this.hQrMark[h] = this.qrMark();
  }

  /** Host h turned idle, or changed state while idle: a candidate for eviction (idle-ring.ts). */
  protected markIdle(h: number): void {
    this.idle.changed(h);
  }

  /** Idle-ring entries evictions have looked at (tests, profiles). */
  get evictLooks(): number {
    return this.idle.looks;
  }

  /**
   * Frees up to `want` idle hosts whose politeness window has passed (forgetting a host whose next
   * due time is ≤ now cannot make a later request come early). Their robots rules leave RAM too:
   * the next URL of such a host is asked for through QD, and the robots stage answers it from the
   * RobotsCache DRUM (src/crawl/ports/robots-stage.ts) without a new robots.txt request.
   */
  private evictIdle(now: number, want: number): void {
    this.evictNow = now;
    this.idle.evict(now, want, this.qrVisited, this.lookIdle, this.dueOf, this.freeIdle);
  }

  private readonly lookIdle = (h: number): number => {
    const s = this.hState[h]!;
    if (s === H_FREE) return IDLE_GONE;
    if (this.isIdle(h, this.evictNow)) return IDLE_FREE;
    // not due yet, or held: look again later
    return this.hCount[h] === 0 && this.hWhere[h] === W_NONE && s !== H_PENDING && s !== H_TAKEN ? IDLE_LATER : IDLE_GONE;
  };

  private readonly dueOf = (h: number): number => this.hNextDue[h]!;

  private readonly freeIdle = (h: number): void => this.freeHost(h, this.evictNow);

  private freeHost(h: number, now: number): void {
    this.detachIp(h, now);
    this.hostIndex.delete(this.hHi[h]!, this.hLo[h]!);
    this.hState[h] = H_FREE;
    this.hAuth[h] = null;
    this.hOrigin[h] = '';
    this.hAddr[h] = '';
    this.hostBytes -= this.hCharge[h]!;
    this.hCharge[h] = 0;
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
    this.iRobotsWait[i] = 0;
    this.iLastRobots[i] = 0;
    this.iSumB[i] = 0;
    this.iHosts[i] = 0;
    this.iLive[i] = 1;
    return i;
  }

  protected attachIp(h: number, ip: string, now: number): void {
    if (this.hAddr[h] !== ip) {
      this.hAddr[h] = ip; // the address to connect to; the queue is per ipQueueKey (an IPv6 /64)
      this.chargeHost(h);
    }
    const i = this.ipFor(ipQueueKey(ip));
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

  // ---------------------------------------------------------------- URL slab and IP heap membership

  /**
   * Adds slots to the free list: the slab doubles (from SLAB_MIN), never past ramUrls. False when
   * it holds ramUrls slots already.
   */
  protected growSlab(): boolean {
    const cap = Math.min(this.o.ramUrls, Math.max(SLAB_MIN, this.sCap * 2));
    if (cap <= this.sCap) return false;
    const next = new Int32Array(cap);
    next.set(this.sNext);
    this.sNext = next;
    const charge = new Int32Array(cap);
    charge.set(this.sCharge);
    this.sCharge = charge;
    for (let i = this.sCap; i < cap; i++) this.sUrl.push(null);
    for (let i = cap - 1; i >= this.sCap; i--) {
      this.sNext[i] = this.sFree;
      this.sFree = i;
    }
    this.sCap = cap;
    return true;
  }

  /** Takes a slot for `u` at the tail of host h's FIFO (the caller saw a free slot, or growSlab made one). */
  protected enqueue(h: number, u: FrontierUrl): void {
    if (this.sFree < 0) this.growSlab();
    const s = this.sFree;
    this.sFree = this.sNext[s]!;
    this.sUsed++;
    this.ramSnap?.born(s);
    const b = frontierUrlRamBytes(u);
    this.sCharge[s] = b;
    this.urlBytes += b;
    this.sUrl[s] = u;
    this.sNext[s] = -1;
    u._slot = s;
    u._host = h;
    if (this.hTail[h]! < 0) this.hHead[h] = s;
    else this.sNext[this.hTail[h]!] = s;
    this.hTail[h] = s;
    this.hCount[h]!++;
    if (u.budget > this.o.b0) this.hHigh[h]!++;
    this.touch(h);
  }

  protected freeSlot(s: number): void {
    const u = this.sUrl[s]!;
    this.ramSnap?.leaving(s, u);
    // A URL in RAM has its host (set by enqueue), whose PLD slot add() set before.
    if (u.budget <= this.o.b0 && this.pace.ranked) this.pace.left(this.hPldSlot[u._host]!);
    this.urlBytes -= this.sCharge[s]!;
    this.sCharge[s] = 0;
    this.sUrl[s] = null;
    this.sNext[s] = this.sFree;
    this.sFree = s;
    this.sUsed--;
  }

  protected drop(u: FrontierUrl, reason: string): void {
    this.drops.set(reason, (this.drops.get(reason) ?? 0) + 1);
    this.onDrop(u, reason);
  }

  /** Puts the IP on the IP heap when it has a due host or a robots fetch and a free connection. */
  protected wakeIp(i: number): void {
    if (this.iInFlight[i]! >= this.o.maxConnectionsPerIp) return;
    if (this.iDueCount[i] === 0 && this.iRobots[i]!.length === 0) return;
    if (!this.ipHeap.has(i)) this.ipHeap.set(i, this.iNextDue[i]!);
    // Keyed later for a robots.txt the low-PLD pace holds (Politeness.nextReady): a due host
    // brings the IP back to its own next due time.
    else if (this.iRobotsWait[i] === 1 && this.iDueCount[i]! > 0) {
      this.iRobotsWait[i] = 0;
      if (this.ipHeap.keyOf(i) > this.iNextDue[i]!) this.ipHeap.set(i, this.iNextDue[i]!);
    }
  }

  protected releaseSlot(u: FrontierUrl, s: number): void {
    this.freeSlot(s);
    u._slot = -1;
    u._host = -1;
  }

  // ---------------------------------------------------------------- accounting hooks (pacing.ts)

  abstract potential: number;
  protected abstract rateOf(delayMs: number): number;
  protected abstract touch(h: number): void;
  protected abstract setPot(h: number, v: number): void;
  protected abstract ipRateChanged(i: number): void;
  protected abstract hostDelay(h: number): number;
}
