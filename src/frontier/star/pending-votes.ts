/**
 * Votes for STAR's trusted in-degree (star.ts) whose source PLD was not trusted yet when its links
 * were seen. A real site is usually crawled for a while before enough trusted sites link to it;
 * the links its pages gave meanwhile are kept here and counted as soon as it is promoted, so trust
 * spreads through the real web as fast as its links are crawled (a farm's sources are never
 * promoted: their votes wait here until they are evicted).
 *
 * Bound: at most `capacity` votes (default 2^18: 6 words each plus two hash maps, ~12 MB), each
 * distinct (a vote key is held once); the key index holds exactly the live votes' keys, so its
 * map stays within 2 × capacity slots however many votes pass through. When full, the oldest vote
 * is evicted: a source promoted after its votes were evicted loses them, as if its links had been
 * seen before it was trusted — the trusted in-degree is then an undercount, never an overcount.
 */
import { U64Map } from '../../util/u64-map.js';
import { edgeKey } from './edge-key.js';

export class PendingVotes {
  /** Per entry: real source (hi, lo) and the vote's edge words as the store takes them. */
  private readonly words: Uint32Array;
  private readonly live: Uint8Array;
  private head = 0;
  /** vote key → entry index */
  private readonly byKey = new U64Map(1024);
  /** source key → live entries of that source */
  private readonly perSource = new U64Map(1024);
  private readonly ek = new Uint32Array(2);
  private count = 0;
  evicted = 0;

  constructor(readonly capacity = 1 << 18) {
    if (!(capacity >= 1)) throw new RangeError('capacity must be at least 1');
    this.words = new Uint32Array(capacity * 6);
    this.live = new Uint8Array(capacity);
  }

  get size(): number {
    return this.count;
  }

  /** Keeps one vote (edge words e = [sHi, sLo ⊕ slot, tHi, tLo]) of source (srcHi, srcLo). */
  add(srcHi: number, srcLo: number, e: Uint32Array, o: number): void {
    edgeKey(e[o]!, e[o + 1]!, e[o + 2]!, e[o + 3]!, this.ek, 0);
    // The key in locals: drop() below computes the evicted vote's key in this.ek.
    const kh = this.ek[0]!;
    const kl = this.ek[1]!;
    if (this.byKey.get(kh, kl) >= 0) return;
    const i = this.head;
    this.head = (i + 1) % this.capacity;
    if (this.live[i] === 1) {
      this.drop(i);
      this.evicted++;
    }
    const w = this.words;
    w[i * 6] = srcHi;
    w[i * 6 + 1] = srcLo;
    w.set(e.subarray(o, o + 4), i * 6 + 2);
    this.live[i] = 1;
    this.count++;
    this.byKey.set(kh, kl, i);
    const n = this.perSource.get(srcHi, srcLo);
    this.perSource.set(srcHi, srcLo, n < 0 ? 1 : n + 1);
  }

  /** The distinct sources with votes waiting, packed [hi, lo]*. */
  sources(): Uint32Array {
    const out = new Uint32Array(this.perSource.size * 2);
    let k = 0;
    this.perSource.forEach((hi, lo) => {
      out[k++] = hi;
      out[k++] = lo;
    });
    return out;
  }

  /**
   * Removes the votes of the sources in `trusted` (source key → anything ≥ 0) and returns their
   * edge words, packed [sHi, sLo ⊕ slot, tHi, tLo]*.
   */
  take(trusted: U64Map): Uint32Array {
    let n = 0;
    trusted.forEach((hi, lo) => {
      const c = this.perSource.get(hi, lo);
      if (c > 0) n += c;
    });
    const out = new Uint32Array(n * 4);
    if (n === 0) return out;
    let k = 0;
    const w = this.words;
    for (let i = 0; i < this.capacity && k < n; i++) {
      if (this.live[i] !== 1 || trusted.get(w[i * 6]!, w[i * 6 + 1]!) < 0) continue;
      out.set(w.subarray(i * 6 + 2, i * 6 + 6), k * 4);
      k++;
      this.drop(i);
    }
    return out;
  }

  private drop(i: number): void {
    const w = this.words;
    edgeKey(w[i * 6 + 2]!, w[i * 6 + 3]!, w[i * 6 + 4]!, w[i * 6 + 5]!, this.ek, 0);
    this.byKey.delete(this.ek[0]!, this.ek[1]!);
    const n = this.perSource.get(w[i * 6]!, w[i * 6 + 1]!);
    if (n <= 1) this.perSource.delete(w[i * 6]!, w[i * 6 + 1]!);
    else this.perSource.set(w[i * 6]!, w[i * 6 + 1]!, n - 1);
    this.live[i] = 0;
    this.count--;
  }
}
