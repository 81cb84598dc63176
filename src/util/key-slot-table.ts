/**
 * Fixed-capacity map from 64-bit keys (hi, lo uint32 pairs) to slot numbers 0..capacity−1: the
 * lookup structure under DRUM's CLOCK cache (thesis V.2) and the benchmark's LRU, which differ only
 * in their replacement policy. Open addressing with linear probing at load ≤ 1/2 (the table has
 * 2^⌈log2 2E⌉ entries), removal by backward shift (no tombstones, so probe chains never degrade
 * however long the cache churns). The slots' keys live here too (hi[slot], lo[slot]).
 *
 * RAM: E·8 bytes of keys + 2^⌈log2 2E⌉·4 bytes of table, fixed at construction.
 */
export class KeySlotTable {
  readonly hi: Uint32Array;
  readonly lo: Uint32Array;
  private readonly table: Int32Array; // slot + 1, 0 = empty
  private readonly mask: number;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('capacity must be a positive integer');
    this.hi = new Uint32Array(capacity);
    this.lo = new Uint32Array(capacity);
    const t = KeySlotTable.tableSize(capacity);
    this.table = new Int32Array(t);
    this.mask = t - 1;
  }

  private static tableSize(capacity: number): number {
    let t = 2;
    while (t < capacity * 2) t *= 2;
    return t;
  }

  /** RAM a table of `capacity` slots holds, bytes. */
  static bytesFor(capacity: number): number {
    return capacity * 8 + KeySlotTable.tableSize(capacity) * 4;
  }

  private home(hi: number, lo: number): number {
    return (Math.imul(lo ^ Math.imul(hi, 0x9e3779b1), 0x85ebca6b) >>> 0) & this.mask;
  }

  /** The slot holding the key, or −1. */
  find(hi: number, lo: number): number {
    const t = this.table;
    let i = this.home(hi, lo);
    for (;;) {
      const s = t[i]!;
      if (s === 0) return -1;
      if (this.lo[s - 1] === lo && this.hi[s - 1] === hi) return s - 1;
      i = (i + 1) & this.mask;
    }
  }

  /** Puts a key that is not in the table into a free slot (one not in the table). */
  add(slot: number, hi: number, lo: number): void {
    this.hi[slot] = hi;
    this.lo[slot] = lo;
    let i = this.home(hi, lo);
    while (this.table[i] !== 0) i = (i + 1) & this.mask;
    this.table[i] = slot + 1;
  }

  /** Takes slot's key out of the table (backward-shift deletion keeps probe chains intact). */
  remove(slot: number): void {
    const t = this.table;
    let i = this.home(this.hi[slot]!, this.lo[slot]!);
    while (t[i] !== slot + 1) i = (i + 1) & this.mask;
    let j = i;
    for (;;) {
      j = (j + 1) & this.mask;
      const s = t[j]!;
      if (s === 0) break;
      const h = this.home(this.hi[s - 1]!, this.lo[s - 1]!);
      // Move s back to i if its home is not cyclically within (i, j].
      if (i <= j ? h <= i || h > j : h <= i && h > j) {
        t[i] = s;
        i = j;
      }
    }
    t[i] = 0;
  }
}
