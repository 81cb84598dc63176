/**
 * The capacity gate: a PLD's budget as a share of the crawl's capacity (thesis VI.2: B_x is what
 * PLD x may pass to crawling "per unit of time"; VII.1 and VII.2 decide *when* a URL may go, per
 * host, per IP and per BEAST queue, but not *whose* URL goes when fetch slots are the scarce
 * resource). Per-host politeness gives a PLD capacity in proportion to its hosts: a farm that mints
 * host names on IPs of its own has a due host for every free fetch slot, and every page it fetches
 * brings parse, URLseen, STAR and archive work behind it, while the real web waits on τh.
 *
 * Classes. A PLD is HIGH when the highest STAR budget B carried by any of its URLs seen since it
 * entered the host table is above B0, LOW otherwise (unproven: B ≤ B0). The class is read at
 * dispatch, so a PLD whose B rises is promoted at its next URL, including the hosts and URLs it
 * already holds in RAM.
 *
 * INVARIANT (release share). While the high class has work — a high item was released or
 * finished, or a high URL was parked in QR for its robots answer, within the last `graceMs`, or
 * the high hosts' dispatch potential (Politeness.potential counted over high hosts only) is at
 * least one fetch within the horizon W — counted over releases
 * (pages and robots.txt fetches alike):
 *
 *     low releases  ≤  share/(1 − share) × high releases  +  burst
 *
 * so the low class takes at most `share` of the fetch slots, and of the parse, DRUM and archive
 * work behind them. When the high class has no work the low class is not gated at all
 * (work-conserving: "never held back for nothing"), and within a class the gate adds no limit:
 * PLDs of one class are spaced only by their own hosts' τh and their IPs' τs.
 *
 * Fairness inside the low class is per PLD, not per host: a low host that may not go now is
 * PARKED on its PLD's FIFO (its URLs stay in RAM — nothing is dropped, BEAST's never-discard
 * property holds) and the low class's credit is handed out round-robin over the PLDs with parked
 * hosts, one release per turn. A farm minting 10^4 hosts gets one PLD's turn, and the DNS lookup +
 * robots.txt fetch of each minted host counts against its PLD like a page. Parked hosts count no
 * dispatch potential, so the refill keeps reading BEAST for the work the gate will release.
 *
 * RAM share. While the high class has work, the low class may hold at most `lowRamShare` of
 * `ramUrls` (URLs queued in RAM plus URLs parked in QR for robots); the refill sends further
 * low URLs back to BEAST (QH, re-spread at the ring's next wrap; never discarded).
 *
 * Cost: O(1) per release, park and unpark; RAM: a few typed arrays per host-table entry and per
 * PLD with a host in the table (≤ maxHosts PLDs; a PLD entry is freed with its last host).
 */
import { U64Map } from './u64-map.js';

export interface CapacityOptions {
  /** B0: budgets at or below it are the low class. */
  b0: number;
  /** Share of releases the low class may take while the high class has work; 1 = gate off. */
  share: number;
  /** The high class has work for this long after its last release or completion (ms). */
  graceMs: number;
  /** Low releases that may go back to back before the share applies (credit cap). */
  burst: number;
  /** Share of ramUrls the low class may hold (RAM + QR) while the high class has work. */
  lowRamShare: number;
}

/** Defaults (Frontier options capacityShare, capacityGraceMs, capacityLowRamShare). */
export const CAPACITY_DEFAULTS = { share: 0.125, graceMs: 2000, burst: 4, lowRamShare: 0.125 } as const;

/** hParked values: not parked, or in its PLD's FIFO. */
const NOT_PARKED = 0;
const PARKED = 1;

export class CapacityGate {
  readonly o: CapacityOptions;
  /** Credit per high release: share / (1 − share). */
  private readonly ratio: number;
  /** Low releases allowed now while the gate is closed (≤ burst). */
  credit: number;
  /** The high class counts as having work until this time (ms). */
  private activeUntil = -Infinity;

  // Per host (indexed like the host table).
  /**
   * Per host, 4 numbers side by side (one cache line per host on the hot path): its PLD id (-1 =
   * none yet), and as of its last sync its queued URLs, its dispatch potential and the class they
   * were counted in (1 = high).
   */
  private hRec = new Float64Array(0);
  /** 1: the host was given a low-class turn (credit taken); its next release passes. */
  private hPass = new Uint8Array(0);
  private hParked = new Uint8Array(0);
  private hParkNext = new Int32Array(0);
  /** 1: the host's robots/DNS ask was handed out while it was high; its answer is awaited. */
  private hAsked = new Uint8Array(0);

  // PLD table: PLDs with a host in the host table.
  private readonly pldIndex = new U64Map(1024);
  private pCap = 0;
  private pFree: number[] = [];
  private pHi = new Uint32Array(0);
  private pLo = new Uint32Array(0);
  private pMaxB = new Float64Array(0);
  private pHosts = new Int32Array(0);
  private pParkHead = new Int32Array(0);
  private pParkTail = new Int32Array(0);
  private pInRing = new Uint8Array(0);
  /** Round-robin ring of PLDs with parked hosts. */
  private ring: number[] = [];
  private ringHead = 0;
  /** PLDs promoted while they had parked hosts (Politeness unparks those at once). */
  private promoted: number[] = [];

  /** URLs queued in RAM of the low class; dispatch potential of the high and low classes. */
  lowRam = 0;
  highPot = 0;
  lowPot = 0;
  /** Hosts parked now. */
  parked = 0;
  highReleased = 0;
  lowReleased = 0;
  /** Low releases while the gate was closed (the ones the invariant bounds). */
  lowGated = 0;
  parks = 0;

  constructor(o: CapacityOptions) {
    this.o = o;
    this.ratio = o.share >= 1 ? Infinity : o.share / (1 - o.share);
    this.credit = o.burst;
    this.growPlds(256);
  }

  /** Grows the per-host arrays with the host table (new entries: no PLD, not parked). */
  growHosts(cap: number): void {
    const old = this.hPass.length;
    const g = <T extends Uint8Array | Int32Array | Float64Array>(a: T, C: new (n: number) => T, n = cap): T => {
      const b = new C(n);
      b.set(a);
      return b;
    };
    this.hRec = g(this.hRec, Float64Array, 4 * cap);
    this.hPass = g(this.hPass, Uint8Array);
    this.hParked = g(this.hParked, Uint8Array);
    this.hParkNext = g(this.hParkNext, Int32Array);
    this.hAsked = g(this.hAsked, Uint8Array);
    for (let h = old; h < cap; h++) this.hRec[4 * h] = -1;
  }

  private growPlds(cap: number): void {
    const old = this.pCap;
    const g = <T extends Uint8Array | Uint32Array | Int32Array | Float64Array>(a: T, C: new (n: number) => T): T => {
      const b = new C(cap);
      b.set(a);
      return b;
    };
    this.pHi = g(this.pHi, Uint32Array);
    this.pLo = g(this.pLo, Uint32Array);
    this.pMaxB = g(this.pMaxB, Float64Array);
    this.pHosts = g(this.pHosts, Int32Array);
    this.pParkHead = g(this.pParkHead, Int32Array);
    this.pParkTail = g(this.pParkTail, Int32Array);
    this.pInRing = g(this.pInRing, Uint8Array);
    for (let p = cap - 1; p >= old; p--) this.pFree.push(p);
    this.pCap = cap;
  }

  // ---------------------------------------------------------------- classes

  private high(p: number): boolean {
    return this.pMaxB[p]! > this.o.b0;
  }

  /** The class of host h now: true = high. A host whose PLD is not known yet counts as high. */
  isHigh(h: number): boolean {
    const p = this.hRec[4 * h]!;
    return p < 0 || this.pMaxB[p]! > this.o.b0;
  }

  /** The class of a URL read from disk: its PLD's class when the PLD is in the table, else its own B. */
  isHighRecord(pldHi: number, pldLo: number, budget: number): boolean {
    if (budget > this.o.b0) return true;
    const p = this.pldIndex.get(pldHi, pldLo);
    return p >= 0 && this.pMaxB[p]! > this.o.b0;
  }

  /** A host entered the host table (fresh entry). */
  hostReset(h: number): void {
    this.hRec[4 * h] = -1;
    this.hPass[h] = 0;
    this.hParked[h] = NOT_PARKED;
    this.hParkNext[h] = -1;
    this.hAsked[h] = 0;
    this.hRec[4 * h + 1] = 0;
    this.hRec[4 * h + 2] = 0;
    this.hRec[4 * h + 3] = 0;
  }

  /**
   * Robots/DNS asks of high hosts handed out and not answered, and high answers since the last QR
   * rescan: the frontier re-reads QR once every high ask is answered, so the good web's URLs
   * parked for robots do not wait on the low class's asks, which the gate holds back.
   */
  highAsked = 0;
  highAnswers = 0;

  /** Host h's robots/DNS ask was handed out. */
  asked(h: number): void {
    if (this.hAsked[h] === 0 && this.isHigh(h)) {
      this.hAsked[h] = 1;
      this.highAsked++;
    }
  }

  /** Host h's robots/DNS answer came (known or failed). */
  answered(h: number): void {
    if (this.hAsked[h] === 1) {
      this.hAsked[h] = 0;
      this.highAsked--;
      this.highAnswers++;
    }
  }

  /**
   * A URL of host h (PLD pldHi/pldLo, budget b) is offered to RAM: the host joins its PLD on its
   * first URL, and the PLD's reputation is the highest B seen — crossing B0 promotes the whole PLD
   * at once. One call per admission, on the hot path.
   */
  see(h: number, pldHi: number, pldLo: number, b: number): void {
    const p = this.hRec[4 * h]!;
    if (p >= 0) {
      if (b > this.pMaxB[p]!) this.raise(p, b);
      return;
    }
    this.attach(h, pldHi, pldLo);
    this.raise(this.hRec[4 * h]!, b);
  }

  /** Host h belongs to PLD (pldHi, pldLo). */
  private attach(h: number, pldHi: number, pldLo: number): void {
    let p = this.pldIndex.get(pldHi, pldLo);
    if (p < 0) {
      if (this.pFree.length === 0) this.growPlds(this.pCap * 2);
      p = this.pFree.pop()!;
      this.pldIndex.set(pldHi, pldLo, p);
      this.pHi[p] = pldHi;
      this.pLo[p] = pldLo;
      this.pMaxB[p] = 0;
      this.pHosts[p] = 0;
      this.pParkHead[p] = -1;
      this.pParkTail[p] = -1;
      this.pInRing[p] = 0;
    }
    this.pHosts[p]!++;
    this.hRec[4 * h] = p;
  }

  /** Host h leaves the host table (it holds no URL and is not parked). */
  detach(h: number): void {
    const p = this.hRec[4 * h]!;
    this.hRec[4 * h] = -1;
    if (p < 0) return;
    if (--this.pHosts[p]! === 0 && this.pInRing[p] === 0) {
      this.pldIndex.delete(this.pHi[p]!, this.pLo[p]!);
      this.pFree.push(p);
    }
  }

  private raise(p: number, b: number): void {
    if (!(b > this.pMaxB[p]!)) return;
    const was = this.high(p);
    this.pMaxB[p] = b;
    if (!was && this.high(p)) {
      if (this.pInRing[p] === 1) this.promoted.push(p);
    }
  }

  /**
   * A URL of PLD (pldHi, pldLo) was admitted with budget b: a PLD in the table whose B rose above
   * B0 is promoted now, before that URL is read from BEAST (its hosts in RAM go at once).
   */
  notePldBudget(pldHi: number, pldLo: number, b: number): void {
    if (!(b > this.o.b0)) return;
    const p = this.pldIndex.get(pldHi, pldLo);
    if (p >= 0) this.raise(p, b);
  }

  /**
   * Host h now has `count` URLs queued in RAM and dispatch potential `pot` (called by every
   * change of either, Pacing.touch): its class's sums (lowRam, lowPot, highPot) follow. A host of
   * a promoted PLD moves its contribution to the high class at its next change (a parked one at
   * once: promotion unparks it); the release decision itself reads the class at every release.
   */
  sync(h: number, count: number, pot: number): void {
    const r = 4 * h;
    const rec = this.hRec;
    const p = rec[r]!;
    if (p < 0) return;
    const cls = this.pMaxB[p]! > this.o.b0 ? 1 : 0;
    if (count === rec[r + 1] && pot === rec[r + 2] && cls === rec[r + 3]) return;
    // Take the host's last contribution out of the class it was counted in, add the new one.
    if (rec[r + 3] === 1) this.highPot -= rec[r + 2]!;
    else {
      this.lowRam -= rec[r + 1]!;
      this.lowPot -= rec[r + 2]!;
    }
    if (cls === 1) this.highPot += pot;
    else {
      this.lowRam += count;
      this.lowPot += pot;
    }
    if (this.highPot < 1e-9) this.highPot = 0;
    if (this.lowPot < 1e-9) this.lowPot = 0;
    rec[r + 1] = count;
    rec[r + 2] = pot;
    rec[r + 3] = cls;
  }

  // ---------------------------------------------------------------- the gate

  /** True while the high class has work (the gate is closed to the low class beyond its share). */
  active(now: number): boolean {
    return now < this.activeUntil || this.highPot >= 1;
  }

  /**
   * Host h's item is about to be released at `now`: returns false when the gate holds it back
   * (the caller parks the host), else records the release. High hosts always go; a low host when
   * the gate is open, when it holds a turn (pass), or when credit is left and no other low PLD
   * waits for a turn. One call per release, on the hot path.
   */
  take(h: number, now: number): boolean {
    const p = this.hRec[4 * h]!;
    if (p < 0 || this.pMaxB[p]! > this.o.b0) {
      this.highReleased++;
      this.hPass[h] = 0;
      this.activeUntil = now + this.o.graceMs;
      if (this.credit < this.o.burst) this.credit = Math.min(this.o.burst, this.credit + this.ratio);
      return true;
    }
    if (now >= this.activeUntil && this.highPot < 1) {
      this.lowReleased++; // the gate is open
      return true;
    }
    if (this.hPass[h] === 1) this.hPass[h] = 0; // its credit was taken when the turn was given
    else if (this.credit >= 1 && this.ringHead === this.ring.length) this.credit -= 1;
    else return false;
    this.lowReleased++;
    this.lowGated++;
    return true;
  }

  /**
   * A URL of the high class was parked in QR for its robots/DNS answer at `now`: its robots.txt
   * fetch follows, so the high class has work for graceMs.
   */
  highWaiting(now: number): void {
    if (now + this.o.graceMs > this.activeUntil) this.activeUntil = now + this.o.graceMs;
  }

  /** A high item finished: the class keeps having work for graceMs (its links are on the way). */
  done(h: number, now: number): void {
    const p = this.hRec[4 * h]!;
    if ((p < 0 || this.pMaxB[p]! > this.o.b0) && now + this.o.graceMs > this.activeUntil) this.activeUntil = now + this.o.graceMs;
  }

  /** Parks host h on its PLD's FIFO (no-op when already parked). */
  park(h: number): void {
    if (this.hParked[h] !== NOT_PARKED) return;
    const p = this.hRec[4 * h]!;
    this.hParked[h] = PARKED;
    this.hParkNext[h] = -1;
    if (this.pParkTail[p]! < 0) this.pParkHead[p] = h;
    else this.hParkNext[this.pParkTail[p]!] = h;
    this.pParkTail[p] = h;
    if (this.pInRing[p] === 0) {
      this.pInRing[p] = 1;
      this.ring.push(p);
    }
    this.parked++;
    this.parks++;
  }

  /** Is host h in a PLD FIFO? */
  isParked(h: number): boolean {
    return this.hParked[h] !== NOT_PARKED;
  }

  /**
   * The next parked host to try, or -1: with `all` (gate open) any parked host; otherwise one per
   * credit, round-robin over PLDs, and the host gets a pass (the credit is taken now).
   */
  nextTurn(all: boolean): number {
    if (!all && this.credit < 1) return -1;
    while (this.ringHead < this.ring.length) {
      const p = this.ring[this.ringHead++]!;
      const h = this.popParked(p);
      if (h < 0) continue; // emptied by a promotion
      if (this.pParkHead[p]! >= 0) this.ring.push(p);
      this.compactRing();
      if (!all) {
        this.credit -= 1;
        this.hPass[h] = 1;
      }
      return h;
    }
    this.compactRing();
    return -1;
  }

  /**
   * The next parked host of a PLD promoted to the high class while it had parked hosts, or -1:
   * they go back to the release path at once, without a turn.
   */
  nextPromoted(): number {
    while (this.promoted.length > 0) {
      const p = this.promoted[this.promoted.length - 1]!;
      const h = this.popParked(p);
      if (h >= 0) return h;
      this.promoted.pop();
    }
    return -1;
  }

  /** Takes the first parked host off PLD p's FIFO (-1 when empty); an emptied PLD leaves the ring. */
  private popParked(p: number): number {
    const h = this.pParkHead[p]!;
    if (h < 0) return -1;
    this.pParkHead[p] = this.hParkNext[h]!;
    if (this.pParkHead[p]! < 0) {
      this.pParkTail[p] = -1;
      this.pInRing[p] = 0;
      if (this.pHosts[p] === 0) {
        this.pldIndex.delete(this.pHi[p]!, this.pLo[p]!);
        this.pFree.push(p);
      }
    }
    this.hParked[h] = NOT_PARKED;
    this.hParkNext[h] = -1;
    this.parked--;
    return h;
  }

  /** A turn given to h found nothing to release (host failed meanwhile): the credit comes back. */
  refund(h: number): void {
    if (this.hPass[h] === 1) {
      this.hPass[h] = 0;
      this.credit += 1;
    }
  }

  private compactRing(): void {
    if (this.ringHead === this.ring.length) {
      this.ring.length = 0;
      this.ringHead = 0;
    } else if (this.ringHead > 4096 && this.ringHead * 2 > this.ring.length) {
      this.ring = this.ring.slice(this.ringHead);
      this.ringHead = 0;
    }
  }

  /**
   * The refill's work estimate (fetches within the horizon W): the dispatch potential plus the
   * URLs in QR (`qrLow` of them low), counted as the gate will release them. While the high class
   * has work, the low class's share is at most share/(1 − share) × the high class's (+ burst),
   * whatever the low class holds — so parked farm hosts, always-due minted hosts and their URLs
   * waiting in QR for robots cannot hold BEAST at its current queue while the good web's URLs
   * wait on disk. With the gate open: potential + QR.
   */
  work(potential: number, qr: number, qrLow: number, now: number): number {
    if (!this.active(now)) return potential + qr;
    const qrHigh = qr - qrLow;
    const allowLow = this.ratio * (this.highPot + qrHigh) + this.o.burst;
    const lowPot = Math.min(this.lowPot, potential);
    return potential - lowPot + qrHigh + Math.min(lowPot + qrLow, allowLow);
  }

  /** When the gate opens by itself if no high event comes (for nextWakeup), or Infinity. */
  opensAt(): number {
    return this.highPot >= 1 ? Infinity : this.activeUntil;
  }

  /** Low PLDs waiting for a turn. */
  get waitingPlds(): number {
    return this.ring.length - this.ringHead;
  }
}
