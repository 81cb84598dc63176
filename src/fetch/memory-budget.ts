/**
 * The body budget: one count of the bytes that fetched bodies hold, shared by every thread that
 * fetches (the crawler's main thread and its page workers: the count lives in a SharedArrayBuffer),
 * so that what hostile servers send cannot grow the process past `--ram` (issue #30; the crawler
 * sizes it from `ramBytes`, docs/configuration.md "RAM").
 *
 * What holds budget (a `Hold`, counted in KiB): a body's accumulation buffer as it grows (its
 * capacity, not its length: body-buffer.ts), the content- or transfer-decoded copy while it is
 * made and kept, and — in the crawler — both until the page's parse has answered; the parse
 * pool's batch copies have a part of their own (parse-pool.ts). A Hold is given back whole when
 * its page is done.
 *
 * Small bodies first. The bytes a Hold takes beyond SMALL_BYTES are "large" bytes, and all Holds'
 * large bytes together stay within half of what ordinary takes may use: a few slow 8 MiB bodies
 * cannot take the room the ordinary pages of other hosts need (a body with a Content-Length takes
 * all of it up front, or waits holding nothing: body-buffer.ts).
 *
 * Deadlock. Bodies grow a piece at a time, so bodies in flight could share out the whole budget
 * among themselves and all wait for more, none able to finish. A `reserve` (at least one body's
 * largest need: the body cap plus the decoded cap) is kept out of reach of ordinary takes; one
 * Hold at a time may claim it (the token, a CAS on a shared slot) and then takes up to the whole
 * budget. The holder never waits, so it finishes (within the fetch's time limit), and its memory
 * comes back when its page is done; the next waiter claims the token then. Every other waiter
 * waits (its socket paused: TCP stops the server) and is retried as budget comes back; a fetch
 * still waiting when its time limit runs out ends with its outcome as any slow fetch does. So
 * memory stays within the budget and some fetch always makes progress.
 *
 * The count is in KiB (Int32: up to 2 TiB) so that it never wraps.
 */

/** slots of the shared Int32Array */
const USED = 0; // KiB held
const CAP = 1; // KiB in all
const RESERVE = 2; // KiB ordinary takes leave alone
const TOKEN = 3; // id of the Hold that owns the reserve, 0: none
const NEXT_ID = 4; // id source for the token
const PEAK = 5; // largest USED seen
const WAITS = 6; // takes refused (a statistic)
const LARGE = 7; // KiB held beyond SMALL_KIB per Hold, summed
const LARGE_CAP = 8; // what LARGE may reach by ordinary takes
const SLOTS = 10;

const KiB = 1024;
/** What a Hold takes before its bytes count as large. */
export const SMALL_BYTES = 256 * 1024;
const SMALL_KIB = SMALL_BYTES / KiB;

/** Large KiB of a Hold of `kib`. */
const largeOf = (kib: number): number => (kib > SMALL_KIB ? kib - SMALL_KIB : 0);

/** Bytes held by one body (and what was made from it), in KiB. */
export interface Hold {
  kib: number;
  /** this Hold owns the reserve (MemoryBudget.take): freeing it gives the reserve back */
  token: number;
}

export function newHold(): Hold {
  return { kib: 0, token: 0 };
}

export class MemoryBudget {
  private readonly a: Int32Array;

  private constructor(readonly buffer: SharedArrayBuffer) {
    this.a = new Int32Array(buffer);
  }

  /** A new budget of `capacityBytes`, of which `reserveBytes` only one Hold at a time may use. */
  static create(capacityBytes: number, reserveBytes: number): MemoryBudget {
    const b = new MemoryBudget(new SharedArrayBuffer(SLOTS * 4));
    const cap = Math.max(1, Math.floor(capacityBytes / KiB));
    b.a[CAP] = cap;
    b.a[RESERVE] = Math.min(cap, Math.ceil(reserveBytes / KiB));
    b.a[LARGE_CAP] = Math.floor((cap - b.a[RESERVE]!) / 2);
    b.a[NEXT_ID] = 1;
    return b;
  }

  /** The same budget in another thread (its `buffer` crossed in workerData). */
  static attach(buffer: SharedArrayBuffer): MemoryBudget {
    return new MemoryBudget(buffer);
  }

  get capacityBytes(): number {
    return this.a[CAP]! * KiB;
  }

  get reserveBytes(): number {
    return this.a[RESERVE]! * KiB;
  }

  get usedBytes(): number {
    return Atomics.load(this.a, USED) * KiB;
  }

  get peakBytes(): number {
    return Atomics.load(this.a, PEAK) * KiB;
  }

  /** takes refused so far */
  get waits(): number {
    return Atomics.load(this.a, WAITS);
  }

  /**
   * Small bodies are about to be refused: new fetches should wait (the crawler's dispatch
   * back-pressure). True when less than an eighth of what ordinary takes may use is left. Large
   * bytes alone never get there (they stay within half of it), so a few slow large bodies, or the
   * reserve in use, do not hold back the pages of other hosts: a large body that finds no room
   * waits at its head, holding nothing.
   */
  get tight(): boolean {
    const limit = this.a[CAP]! - this.a[RESERVE]!;
    return Atomics.load(this.a, USED) * 8 >= limit * 7;
  }

  /**
   * Take `bytes` more for `h`, or nothing and false. An ordinary take stays below capacity minus
   * the reserve; when it would not, `h` claims the reserve if no other Hold has it (and then may
   * take up to the capacity). `mayClaim` false: never claim (a take that can wait for no one).
   */
  take(h: Hold, bytes: number, mayClaim = true): boolean {
    if (bytes <= 0) return true;
    const n = Math.ceil(bytes / KiB);
    const cap = this.a[CAP]!;
    const dLarge = largeOf(h.kib + n) - largeOf(h.kib);
    for (;;) {
      const used = Atomics.load(this.a, USED);
      let ok = h.token !== 0
        ? used + n <= cap
        : used + n <= cap - this.a[RESERVE]! && Atomics.load(this.a, LARGE) + dLarge <= this.a[LARGE_CAP]!;
      if (!ok && h.token === 0 && mayClaim && used + n <= cap) {
        const id = Atomics.add(this.a, NEXT_ID, 1);
        if (Atomics.compareExchange(this.a, TOKEN, 0, id) === 0) {
          h.token = id;
          ok = true;
        }
      }
      if (!ok) {
        Atomics.add(this.a, WAITS, 1);
        return false;
      }
      if (Atomics.compareExchange(this.a, USED, used, used + n) === used) {
        if (dLarge > 0) Atomics.add(this.a, LARGE, dLarge);
        h.kib += n;
        const peak = Atomics.load(this.a, PEAK);
        if (used + n > peak) Atomics.compareExchange(this.a, PEAK, peak, used + n);
        return true;
      }
    }
  }

  /**
   * Take `bytes` whatever the count says: only for bytes already received that must be kept (a
   * socket read larger than the room left, body-buffer.ts) — bounded by one read per body.
   */
  force(h: Hold, bytes: number): void {
    if (bytes <= 0) return;
    const n = Math.ceil(bytes / KiB);
    const dLarge = largeOf(h.kib + n) - largeOf(h.kib);
    const used = Atomics.add(this.a, USED, n) + n;
    if (dLarge > 0) Atomics.add(this.a, LARGE, dLarge);
    h.kib += n;
    const peak = Atomics.load(this.a, PEAK);
    if (used > peak) Atomics.compareExchange(this.a, PEAK, peak, used);
  }

  /** `n` KiB of `h` back. */
  private back(h: Hold, n: number): void {
    if (n <= 0) return;
    const dLarge = largeOf(h.kib) - largeOf(h.kib - n);
    Atomics.sub(this.a, USED, n);
    if (dLarge > 0) Atomics.sub(this.a, LARGE, dLarge);
    h.kib -= n;
  }

  /** Give back `bytes` of what `h` holds (rounded down: a KiB or so stays counted until `free`). */
  give(h: Hold, bytes: number): void {
    this.back(h, Math.min(h.kib, Math.floor(Math.max(0, bytes) / KiB)));
  }

  /** Give back what `h` holds beyond `keepBytes` (its buffer shrank, or was copied smaller). */
  trim(h: Hold, keepBytes: number): void {
    const keep = Math.ceil(Math.max(0, keepBytes) / KiB);
    if (h.kib > keep) this.back(h, h.kib - keep);
  }

  /** Give back all `h` holds, and the reserve if it owns it. */
  free(h: Hold): void {
    this.back(h, h.kib);
    if (h.token !== 0) {
      Atomics.compareExchange(this.a, TOKEN, h.token, 0);
      h.token = 0;
    }
  }
}
