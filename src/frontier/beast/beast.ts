/**
 * BEAST — Budget Enforcement with Anti-Spam Tactics (thesis VII.2, Fig. 5, Theorem 7).
 *
 * BEAST never discards a URL; it delays it. Queues Q1..Qj (a ring; `current` is being read) and QF
 * live on disk. A URL admitted while Q_c is current with STAR's (B, P) goes k = ceil(P/B) queues
 * ahead: the first B URLs of a PLD to Q_{c+1}, the next B to Q_{c+2} …, wrapping around; those with
 * k ≥ j do not fit before the current queue comes round again and go to QF. When the last queue of
 * the ring is emptied, QF is re-read and spread over j NEW queues appended to the ring — B URLs of a
 * PLD per queue, counted per pass — with what does not fit going to a new QF, and j doubles
 * (up to `maxQueues`; at the cap QF is spread over the existing j queues instead). Reading then
 * continues at Q1. Disk I/O per crawled URL stays bounded as the crawl grows (Theorem 7), unlike
 * re-scanning QF every time Q empties (Theorem 6): see bench/beast.
 *
 * QH (deferred): URLs the frontier read but could not take into RAM because their host already
 * holds its share there (VII.1's per-host RAM queue is bounded) are NOT over budget, so they do not
 * go to QF: in VII.2 j doubles because QF holds URLs "that do not fit into Q_j" — over-budget URLs
 * that must be pushed further back as the crawl grows (eq. 31: j ≈ ½(N / E[B]V + 1)). Counting a
 * full RAM queue as a budget overflow made j double on every wrap of a fast ring (256 within 30 s
 * in the e2e profile, docs/performance.md) and cycled those URLs through QF. So QH is re-spread at
 * each wrap together with QF (same per-pass B-per-PLD counting, so the spam bound holds), over the
 * j new queues when QF is non-empty and j doubles, otherwise over the existing j queues; what does
 * not fit stays in QH, which never doubles j.
 *
 * Invariants
 *   - Nothing is appended to the current queue, so reading it is a plain drain (k ≥ 1).
 *   - Per queue read, a PLD contributes at most B URLs from admissions and at most B from a
 *     re-spread (B taken at placement time), so a spam PLD's share is bounded by its budget.
 *   - Durability (storage in log-queue.ts): ONE combined manifest names every queue with its
 *     committed byte end and its checkpointed read cursor. `commitAppends()` writes the buffered
 *     tails, fdatasyncs each touched queue file and then the manifest, all off the main thread,
 *     chained so that manifests are written in order and each one names only synced bytes.
 *   - Crash safety (at-least-once): a queue's read cursor moves only at `checkpoint` (after the
 *     frontier made what it holds in RAM durable). Moving past an emptied ring queue keeps it in
 *     its slot: later admissions are appended after the records already read, and after a crash
 *     reading restarts at the checkpointed cursor, so what was read since comes back once more.
 *     At a checkpoint a drained ring queue is swapped for a fresh file (the old one is deleted once
 *     the manifest naming its successor is durable), and one whose read prefix dwarfs its unread
 *     part is copied into a fresh file, so disk use stays bounded. (Replacing the queue at every
 *     step instead, and keeping the old one until the checkpoint, would create thousands of files
 *     and a manifest that grows with every step between checkpoints.)
 *   - During a re-spread the old QF/QH stay named (`drain`) until the targets are synced; at open,
 *     leftovers in them are moved back into QF/QH. Queue names are never reused; unreferenced queue
 *     files are removed at open.
 *   - A deferral is durable no earlier than the read cursor of the queue it was read from
 *     (`commitDeferred`, `checkpoint`). A deferred URL was read past a cursor that moves only at a
 *     checkpoint, so after a crash it comes back from there; had its deferred copy been made
 *     durable before (by the commitAppends of the next URLseen bucket), BEAST would hold it twice
 *     and the resumed crawl would fetch it twice within one run. So deferrals wait in QN, a queue
 *     no manifest names (its file is removed at open): at each wrap the URLs of QN whose host has
 *     room go to QV — again a queue no manifest names — at most B per PLD (the re-spread's bound),
 *     and QV is read ahead of the current queue; at a checkpoint what QN and QV still hold moves
 *     to QH, durably with the cursors. QH thus only ever holds URLs whose source cursor has moved
 *     past them, and the deferred URLs still come back at every wrap, as through QH's re-spread.
 *
 * Re-reading the deferrals (QN's release, QH's re-spread without QF) costs one read of each
 * deferral, and moves only those whose host has room: one big host (a page of 490,000 links to its
 * own site, a farm host) keeps a long QN whose URLs mostly go back where they were. Done at every
 * wrap, that cost grows with the deferrals while the crawl's progress does not (a simulation of
 * 25,000 URLs re-read 185 M records in 22,000 releases to move 448,000). So a wrap re-reads them
 * only when the URLs BEAST handed out since the last re-read pay for it (DEFERRAL_READS_PER_URL
 * each), or when DEFERRAL_INTERVAL_MS (and 20× the last re-read's own duration) have passed, or
 * while they are few (DEFERRALS_CHEAP); at most once per read call. The interval bounds the delay:
 * a full host holds maxUrlsPerHost URLs in RAM (1,000 by default, 10,000 s of work at the default
 * τh of 10 s), far more than it crawls in a second, so pacing the re-reads delays no host's work.
 *
 * RAM: the ring of j queue handles (a write block each, allocated on first push), the per-pass
 * PLD counter table of a re-spread (≤ maxPassPlds entries; a PLD that does not fit waits for the
 * next pass). The manifest has j + 2 entries (+ 2 during a re-spread).
 */
import { decodeFrontierUrl, encodeFrontierUrlView, type FrontierUrl } from '../record.js';
import type { BeastStore } from './log-queue.js';
import type { BeastOptions } from './beast-options.js';
import { BeastCheckpoint } from './beast-checkpoint.js';
import type { QRef } from './beast-queues.js';

export type { BeastOptions } from './beast-options.js';

/** Deferrals (QN + QH) this few are re-read at every wrap: the re-read costs little. */
const DEFERRALS_CHEAP = 4096;
/** Records of the deferrals a wrap may re-read per URL handed out since the last re-read. */
const DEFERRAL_READS_PER_URL = 4;
/** Longest wait between re-reads of the deferrals (ms of the frontier's clock). */
const DEFERRAL_INTERVAL_MS = 1000;

export interface BeastStats {
  j: number;
  current: number;
  /** Number of queues emptied so far (the "pass" index). */
  switches: number;
  doublings: number;
  respreads: number;
  queued: number;
  qf: number;
  /** URLs waiting in QH (deferred because their host was full in RAM). */
  qh: number;
  admitted: number;
  toQf: number;
  deferred: number;
}

/**
 * BEAST as the frontier uses it: admissions (place), deferrals (defer) and reads (next), with the
 * queues and their manifest (beast-queues.ts), the re-spread (respread.ts) and the checkpoint
 * (beast-checkpoint.ts) beneath.
 */
export class Beast extends BeastCheckpoint {
  /** URLs handed out by reads since the deferrals were last re-read. */
  private outSinceReread = 0;
  /** When the deferrals were last re-read (opts.now's clock) and how long that took. */
  private lastReread = -Infinity;
  private lastRereadCost = 0;
  /** A read call has re-read the deferrals once already. */
  private rereadInCall = false;

  static async open(store: BeastStore, opts: BeastOptions = {}): Promise<Beast> {
    const b = new Beast(store, opts);
    await b.load();
    return b;
  }

  /** Fresh admission of a URL carrying STAR's (B, P): queue ceil(P/B) ahead, or QF. */
  place(u: FrontierUrl, record?: Uint8Array): void {
    this.placeRecord(record ?? encodeFrontierUrlView(u), u.budget, u.admitted);
  }

  /** place() of an encoded record carrying STAR's (B, P); push copies it. */
  placeRecord(rec: Uint8Array, B: number, P: number): void {
    this.admittedCount++;
    const k = B > 0 ? Math.ceil(Math.max(1, P) / B) : Infinity;
    let r: QRef;
    if (k < this.j) r = this.ring[(this.c + k) % this.j]!;
    else {
      r = this.qf;
      this.toQf++;
    }
    r.q!.push(rec);
    this.unsynced.add(r);
  }

  /**
   * Puts back a URL the frontier had no room for in RAM (its host already holds its share there).
   * It waits in QH until the ring wraps, then comes back through the re-spread (B per PLD per
   * queue) — re-reading it sooner would only spin on a host that is still busy. QH does not make
   * j double (see the module comment).
   */
  defer(u: FrontierUrl, record?: Uint8Array): void {
    this.deferRecord(record ?? encodeFrontierUrlView(u)); // push copies it
  }

  /** defer() of an encoded record (no decode/encode round trip). */
  deferRecord(record: Uint8Array): void {
    this.deferredCount++;
    this.qn.q!.push(record); // not durable until the checkpoint (see the invariants)
  }

  /** QF re-spreads so far (cheap; stats() walks the ring). */
  get respreadCount(): number {
    return this.respreads;
  }

  /** Total URLs waiting in BEAST (ring + QF + QH). */
  get length(): number {
    let n = this.qf.q!.length + this.qh.q!.length + this.qn.q!.length + this.qv.q!.length;
    for (const r of this.ring) n += r.q!.length;
    return n;
  }

  /**
   * Up to `max` URLs from the current queue, moving on (and re-spreading QF/QH) as queues empty.
   * Returns [] when BEAST holds no URL, or holds only deferrals not re-read at this call (their
   * hosts are full, or the re-read waits for its pacing: see the module comment).
   */
  async next(max: number): Promise<FrontierUrl[]> {
    return (await this.nextRecords(max)).map(decodeFrontierUrl);
  }

  /**
   * next() without decoding: encoded records (views; valid until the next BEAST call that reads).
   * `maxSteps` bounds the moves to a next queue (refill pacing: 0 = read only the current queue,
   * whose successor waits until what was read of it is mostly crawled).
   */
  nextRecords(max: number, maxSteps = Infinity): Promise<Uint8Array[]> {
    return this.withLock(() => this.nextLocked(max, maxSteps));
  }

  private async nextLocked(max: number, maxSteps = Infinity): Promise<Uint8Array[]> {
    const out: Uint8Array[] = [];
    this.rereadInCall = false;
    try {
      await this.readInto(out, max, maxSteps);
    } finally {
      this.outSinceReread += out.length;
    }
    return out;
  }

  private async readInto(out: Uint8Array[], max: number, maxSteps: number): Promise<void> {
    let idle = 0;
    // A step = starting to read a non-empty queue after moving on; empty queues are passed freely
    // (they hold nothing to pace), except with maxSteps 0 (paced: stay put, no re-spread either).
    let steps = 0;
    let moved = false;
    while (out.length < max) {
      // QV (deferrals released at the last wrap) is read as the head of the current queue.
      const r = this.qv.q!.length > 0 ? this.qv : this.ring[this.c]!;
      if (r.q!.length > 0) {
        if (moved) {
          if (++steps > maxSteps) break;
          moved = false;
        }
        const recs = r.q!.shiftSync(max - out.length);
        if (recs.length === 0) break;
        for (const rec of recs) out.push(rec);
        idle = 0;
        continue;
      }
      if (maxSteps === 0 || this.length === 0) break;
      if (++idle > 2 * this.j + 2) break;
      await this.advance();
      moved = true;
    }
  }

  /** The frontier's clock (opts.now), else Date.now. */
  private clock(): number {
    return this.opts.now !== undefined ? this.opts.now() : Date.now();
  }

  /** Whether this wrap re-reads the deferrals (QN's release, QH's re-spread): see the module comment. */
  private rereadDue(): boolean {
    const n = this.qh.q!.length + this.qn.q!.length;
    if (n === 0 || this.rereadInCall) return false;
    if (n <= DEFERRALS_CHEAP || this.outSinceReread * DEFERRAL_READS_PER_URL >= n) return true;
    return this.clock() - this.lastReread >= Math.max(DEFERRAL_INTERVAL_MS, 20 * this.lastRereadCost);
  }

  /**
   * The current queue is empty: move to the next one (re-spreading after Qj). The emptied queue
   * stays in its slot with its read cursor uncommitted (see the invariants): no disk work here.
   */
  private async advance(): Promise<void> {
    this.switches++;
    if (this.c === this.j - 1) {
      const reread = this.rereadDue();
      const t0 = reread ? this.clock() : 0;
      const spread = this.qf.q!.length > 0 || (reread && this.qh.q!.length > 0);
      if (spread) await this.respread();
      if (reread && this.qn.q!.length > 0) {
        if (!spread) {
          this.respreads++;
          this.lastRespreadMoved = 0;
        }
        this.lastRespreadMoved += await this.releaseDeferred();
      }
      if (reread) {
        this.rereadInCall = true;
        this.outSinceReread = 0;
        this.lastReread = this.clock();
        this.lastRereadCost = this.lastReread - t0;
      }
      this.c = 0;
    } else this.c++;
  }

  /** Queue of the ring that a URL with this (B, P) would go to now (-1 = QF); for tests. */
  targetOf(budget: number, admitted: number): number {
    const k = budget > 0 ? Math.ceil(Math.max(1, admitted) / budget) : Infinity;
    return k < this.j ? (this.c + k) % this.j : -1;
  }

  stats(): BeastStats {
    let queued = 0;
    for (const r of this.ring) queued += r.q!.length;
    return {
      j: this.j,
      current: this.c,
      switches: this.switches,
      doublings: this.doublings,
      respreads: this.respreads,
      queued,
      qf: this.qf.q!.length,
      qh: this.qh.q!.length + this.qn.q!.length + this.qv.q!.length,
      admitted: this.admittedCount,
      toQf: this.toQf,
      deferred: this.deferredCount,
    };
  }

  /** Waits for commits in flight, then drops every handle (commits nothing: call checkpoint first). */
  async close(): Promise<void> {
    await this.withLock(async () => {
      await this.chain;
      for (const r of [...this.ring, this.qf, this.qh, this.qn, this.qv]) {
        r.q?.release();
        r.q = null;
      }
      this.store.releaseAll();
    });
  }
}
