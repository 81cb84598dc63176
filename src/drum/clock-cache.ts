/**
 * CLOCK cache of 64-bit keys (thesis V.2, Table V: CLOCK reaches ~2 M inserts/s with 8-byte keys
 * where tree-based LRU manages 185 K/s). A fixed ring of E slots with one reference bit each; a
 * clock hand evicts the first slot whose bit is clear, clearing bits as it passes. Lookup is a
 * KeySlotTable (open addressing, load ≤ 1/2) from key to slot.
 *
 * DRUM puts it in front of check+update for key-only repositories (URLseen): a hit is a key known
 * to be in the disk cache Z already, i.e. a duplicate, answered without touching disk. Only keys
 * that DRUM has committed to Z are ever inserted, and Z never forgets a key, so a hit is never
 * wrong.
 *
 * RAM: E·(4+4+1) bytes of slots + 2^⌈log2 2E⌉·4 bytes of table ≈ 17–25 bytes per entry, fixed.
 */
import { KeySlotTable } from '../util/index.js';

export class ClockCache {
  private readonly keys: KeySlotTable;
  private readonly ref: Uint8Array;
  private size = 0;
  private hand = 0;
  hits = 0;
  lookups = 0;

  constructor(readonly capacity: number) {
    this.keys = new KeySlotTable(capacity);
    this.ref = new Uint8Array(capacity);
  }

  /** RAM a cache of `capacity` entries holds, bytes. */
  static bytesFor(capacity: number): number {
    return KeySlotTable.bytesFor(capacity) + capacity;
  }

  /** RAM held, bytes. */
  get bytes(): number {
    return ClockCache.bytesFor(this.capacity);
  }

  /** True (and marks the entry referenced) when the key is cached. Counts hits and lookups. */
  lookup(hi: number, lo: number): boolean {
    this.lookups++;
    const s = this.keys.find(hi, lo);
    if (s < 0) return false;
    this.ref[s] = 1;
    this.hits++;
    return true;
  }

  /** Inserts a key (or refreshes it), evicting by CLOCK when full. */
  insert(hi: number, lo: number): void {
    const s0 = this.keys.find(hi, lo);
    if (s0 >= 0) {
      this.ref[s0] = 1;
      return;
    }
    let slot: number;
    if (this.size < this.capacity) {
      slot = this.size++;
    } else {
      while (this.ref[this.hand] === 1) {
        this.ref[this.hand] = 0;
        this.hand = this.hand + 1 === this.capacity ? 0 : this.hand + 1;
      }
      slot = this.hand;
      this.hand = this.hand + 1 === this.capacity ? 0 : this.hand + 1;
      this.keys.remove(slot);
    }
    this.ref[slot] = 0;
    this.keys.add(slot, hi, lo);
  }

  get hitRate(): number {
    return this.lookups === 0 ? 0 : this.hits / this.lookups;
  }
}
