/**
 * A response body as it arrives: one buffer that grows by doubling, each piece copied in as it
 * comes. undici hands the body over as views into its socket reads, one per chunk of the chunked
 * framing, so a server that sends `1\r\na\r\n` without end would make a million small objects per
 * MiB (each keeping its 64 KiB socket read alive) if they were kept; copied into one buffer, a
 * body costs its bytes whatever its framing (issue #30: such a body killed the process by heap
 * exhaustion long before the 8 MiB body cap).
 *
 * Memory: the buffer's capacity is taken from the body budget (memory-budget.ts) before it is
 * allocated. `room()` says whether the next piece fits; when it may not and the budget refuses a
 * larger buffer, the exchange pauses its socket (exchange.ts) until budget comes back. A piece
 * that arrives larger than the room (one socket read, ≤ ~128 KiB) is kept all the same and
 * counted (MemoryBudget.force). Growth stops at `limit` (the body cap, or a smaller
 * Content-Length). A body with a Content-Length takes all of it before its first byte is read
 * (`reserve(limit)`): one that does not fit waits holding nothing, so that large bodies are read
 * a few at a time, whole, rather than all at once, each a part (and all stuck, waiting for more).
 */
import { newHold, type Hold, type MemoryBudget } from './memory-budget.js';

const EMPTY = new Uint8Array(0);
/** Capacity of a new body buffer (or its Content-Length, if smaller). */
const FIRST = 16 * 1024;
/** Room kept ahead of the data (a larger socket read is kept all the same: see push). */
export const HEADROOM = 16 * 1024;

export class BodyBuffer {
  private buf: Uint8Array = EMPTY;
  length = 0;
  /** body pieces received (onData calls) */
  pieces = 0;
  readonly hold: Hold = newHold();

  constructor(
    private readonly budget: MemoryBudget | null,
    /** largest capacity ever needed (the body cap, or a smaller declared Content-Length) */
    private readonly limit: number,
  ) {}

  /** The capacity a buffer grows to next. */
  private nextCapacity(need: number): number {
    const want = Math.max(need, this.buf.byteLength === 0 ? FIRST : this.buf.byteLength * 2);
    return Math.min(Math.max(need, this.limit), want);
  }

  /**
   * Make room for `bytes` more (and HEADROOM beyond, up to the limit), taking the budget for it;
   * false when the budget refuses (nothing changed).
   */
  reserve(bytes: number): boolean {
    const need = this.length + bytes;
    const target = Math.min(Math.max(need, this.limit), need + HEADROOM);
    if (this.buf.byteLength >= target) return true;
    const cap = this.nextCapacity(target);
    if (this.budget !== null && !this.budget.take(this.hold, cap - this.buf.byteLength)) return false;
    this.regrow(cap);
    return true;
  }

  private regrow(cap: number): void {
    const next = Buffer.allocUnsafe(cap);
    if (this.length > 0) next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }

  /** Copy `chunk` in (growing past the budget only by what did not fit: see the module comment). */
  push(chunk: Uint8Array): void {
    this.pieces++;
    const need = this.length + chunk.byteLength;
    if (need > this.buf.byteLength && !this.reserve(chunk.byteLength)) {
      const cap = Math.max(need, this.nextCapacity(need));
      this.budget?.force(this.hold, cap - this.buf.byteLength);
      this.regrow(cap);
    }
    this.buf.set(chunk, this.length);
    this.length = need;
  }

  /** bytes allocated (what the budget counts for this buffer) */
  get capacity(): number {
    return this.buf.byteLength;
  }

  /** The bytes received (a view: the buffer is not copied; its capacity stays held). */
  bytes(): Uint8Array {
    return this.length === 0 ? EMPTY : this.buf.subarray(0, this.length);
  }
}
