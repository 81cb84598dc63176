/**
 * The politeness floors shared between the main thread and the page workers (page-worker.ts): the
 * floors are judged on the wire (thesis VII.1: τh0 per host, τs0 per IP), and with page workers the
 * requests leave from several threads — pages from the workers, robots.txt from the main thread —
 * so each thread must see the others' requests. Two layers, as on one thread:
 *
 * - dispatch: the last-step guard (floor-guard.ts) — the actual start of the last request per host
 *   and per IP as the crawler dispatched it (what its 'dispatch' event carries); a request is
 *   dispatched no sooner than the floor after it;
 * - wire: the fetchers' wire gates (src/fetch/wire-share.ts) — when the last request per host / IP
 *   was handed to undici for writing, and how many exchanges each IP has on the wire, all threads
 *   together (one connection per IP: src/fetch connectionsPerPool).
 *
 * One SharedArrayBuffer:
 *   Float64 [0] host floor, [1] IP floor (ms, margin included; set by the main thread, also live),
 *           then 4 × SLOTS stamps: dispatch per host, dispatch per IP, wire per host, wire per IP;
 *   Int32   SLOTS exchanges on the wire per IP slot (all threads), then (threads + 1) × SLOTS: each
 *           thread's own share of them (thread 0: main, i: page worker i − 1), so that the slots a
 *           worker held when it died can be given back (releaseThread).
 * Times are on the shared clock `clock()` (ms since the epoch, sub-ms resolution): each thread has
 * its own `performance.timeOrigin`, and origin + now is the one value all threads agree on.
 *
 * A host or IP is hashed to a slot (FNV-1a). Two keys in one slot only make a request wait for the
 * other's floor or connection too (never a shorter gap): at 1,000 pages/s and a 160 ms floor about
 * 160 stamps are live, so a request meets a live foreign stamp with probability ~0.25 %. Bound:
 * fixed, (32 + 4 × (threads + 2)) × SLOTS bytes (3.5 MiB with 2 workers).
 *
 * Stamps are plain stores: each is checked and written in one synchronous run of the sending
 * thread, and the frontier releases one request per IP at a time with pages routed to a worker by
 * IP (page-worker-pool.ts). The connection counts use Atomics (compare-and-exchange), so two
 * threads never both take an IP's last slot.
 */
import type { WireShare } from '../../fetch/wire-share.js';

/** Slots per kind (host, IP). */
export const FLOOR_SLOTS = 1 << 16;
const MASK = FLOOR_SLOTS - 1;
const HOST_DISPATCH = 2;
const IP_DISPATCH = HOST_DISPATCH + FLOOR_SLOTS;
const HOST_WIRE = IP_DISPATCH + FLOOR_SLOTS;
const IP_WIRE = HOST_WIRE + FLOOR_SLOTS;
const FLOATS = IP_WIRE + FLOOR_SLOTS;

/** The clock the shared stamps are on (the same in every thread): ms since the epoch. */
export function clock(): number {
  return performance.timeOrigin + performance.now();
}

/** FNV-1a of a string's UTF-16 units, as a slot number. */
export function slotOf(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return (h >>> 0) & MASK;
}

export class SharedFloors {
  readonly buffer: SharedArrayBuffer;
  private readonly f: Float64Array;
  /** exchanges on the wire per IP slot, all threads */
  private readonly wire: Int32Array;
  private readonly threads: number;

  /** A new table for the main thread and `workers` page workers, or a worker's view of it. */
  constructor(workers: number, buffer?: SharedArrayBuffer) {
    this.threads = workers + 1;
    this.buffer = buffer ?? new SharedArrayBuffer(FLOATS * 8 + (1 + this.threads) * FLOOR_SLOTS * 4);
    this.f = new Float64Array(this.buffer, 0, FLOATS);
    this.wire = new Int32Array(this.buffer, FLOATS * 8, FLOOR_SLOTS);
    if (buffer === undefined) this.f.fill(-Infinity, HOST_DISPATCH);
  }

  /** Set the floors (ms, margin included): at start and on a live change (POST /config). */
  setFloors(hostMs: number, ipMs: number): void {
    this.f[0] = hostMs;
    this.f[1] = ipMs;
  }

  get hostFloor(): number {
    return this.f[0]!;
  }

  get ipFloor(): number {
    return this.f[1]!;
  }

  /** Dispatch layer: the last request dispatched to this host's slot (-Infinity: none). */
  hostStarted(host: string): number {
    return this.f[HOST_DISPATCH + slotOf(host)]!;
  }

  /** Dispatch layer: the same per IP slot. */
  ipStarted(ip: string): number {
    return this.f[IP_DISPATCH + slotOf(ip)]!;
  }

  /** Dispatch layer: a request to `host` (robots.txt included: it is a start on its host) is dispatched now (`at` on `clock()`). */
  started(host: string, ip: string, at: number): void {
    this.f[HOST_DISPATCH + slotOf(host)] = at;
    this.f[IP_DISPATCH + slotOf(ip)] = at;
  }

  /**
   * Dispatch layer: earliest dispatch the previous requests allow (-Infinity: now), under the floors
   * or the request's own gaps when longer (FrontierUrl.hostGapMs / ipGapMs). `host` null: robots.txt
   * (IP only). A slot shared with another key only makes the request wait longer.
   */
  due(host: string | null, ip: string, hostGap = 0, ipGap = 0): number {
    return this.dueAt(HOST_DISPATCH, IP_DISPATCH, host, ip, hostGap, ipGap);
  }

  private dueAt(hostBase: number, ipBase: number, host: string | null, ip: string, hostGap: number, ipGap: number): number {
    let due = -Infinity;
    const hf = Math.max(this.f[0]!, hostGap);
    const ipf = Math.max(this.f[1]!, ipGap);
    if (host !== null && hf > 0) due = this.f[hostBase + slotOf(host)]! + hf;
    if (ipf > 0) due = Math.max(due, this.f[ipBase + slotOf(ip)]! + ipf);
    return due;
  }

  /** The wire layer as thread `index` sees it (0: the main thread; i: page worker i − 1). */
  forThread(index: number): WireShare {
    const own = new Int32Array(this.buffer, FLOATS * 8 + (1 + index) * FLOOR_SLOTS * 4, FLOOR_SLOTS);
    const wire = this.wire;
    const f = this.f;
    return {
      due: (hostKey, ip, hostGap = 0, ipGap = 0) => this.dueAt(HOST_WIRE, IP_WIRE, hostKey, ip, hostGap, ipGap),
      started: (hostKey, ip, at) => {
        if (hostKey !== null) f[HOST_WIRE + slotOf(hostKey)] = at;
        f[IP_WIRE + slotOf(ip)] = at;
      },
      tryAcquire: (ip, max) => {
        const s = slotOf(ip);
        for (;;) {
          const n = Atomics.load(wire, s);
          if (n >= max) return false;
          if (Atomics.compareExchange(wire, s, n, n + 1) === n) break;
        }
        own[s] = own[s]! + 1;
        return true;
      },
      release: (ip) => {
        const s = slotOf(ip);
        if (own[s]! <= 0) return;
        own[s] = own[s]! - 1;
        Atomics.sub(wire, s, 1);
      },
    };
  }

  /** Give back every connection slot thread `index` held (it died with exchanges on the wire). */
  releaseThread(index: number): void {
    const own = new Int32Array(this.buffer, FLOATS * 8 + (1 + index) * FLOOR_SLOTS * 4, FLOOR_SLOTS);
    for (let s = 0; s < FLOOR_SLOTS; s++) {
      const n = own[s]!;
      if (n === 0) continue;
      own[s] = 0;
      Atomics.sub(this.wire, s, n);
    }
  }
}
