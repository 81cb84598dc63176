/**
 * Bench-only LRU cache of 64-bit keys (the "classical LRU" of thesis Table IV–V): src/drum's
 * KeySlotTable (the same key → slot table as its ClockCache) plus a doubly linked recency list in
 * typed arrays; a hit moves the slot to the front, a miss on a full cache evicts the tail. Fixed
 * RAM: E·(4+4+4+4) bytes of slots + 2^⌈log2 2E⌉·4 of table. Only the policy differs from CLOCK,
 * so the speed difference is the policy's work (list splicing vs one reference bit).
 */
import { KeySlotTable } from '../../src/util/index.js';

export class LruCache {
  private readonly keys: KeySlotTable;
  private readonly prev: Int32Array;
  private readonly next: Int32Array;
  private size = 0;
  private headSlot = -1;
  private tailSlot = -1;
  hits = 0;
  lookups = 0;

  constructor(readonly capacity: number) {
    this.keys = new KeySlotTable(capacity);
    this.prev = new Int32Array(capacity);
    this.next = new Int32Array(capacity);
  }

  static bytesFor(capacity: number): number {
    return KeySlotTable.bytesFor(capacity) + capacity * 8;
  }

  private unlink(s: number): void {
    const p = this.prev[s]!,
      n = this.next[s]!;
    if (p >= 0) this.next[p] = n;
    else this.headSlot = n;
    if (n >= 0) this.prev[n] = p;
    else this.tailSlot = p;
  }

  private pushFront(s: number): void {
    this.prev[s] = -1;
    this.next[s] = this.headSlot;
    if (this.headSlot >= 0) this.prev[this.headSlot] = s;
    this.headSlot = s;
    if (this.tailSlot < 0) this.tailSlot = s;
  }

  lookup(hi: number, lo: number): boolean {
    this.lookups++;
    const s = this.keys.find(hi, lo);
    if (s < 0) return false;
    this.hits++;
    if (s !== this.headSlot) {
      this.unlink(s);
      this.pushFront(s);
    }
    return true;
  }

  insert(hi: number, lo: number): void {
    const s0 = this.keys.find(hi, lo);
    if (s0 >= 0) {
      if (s0 !== this.headSlot) {
        this.unlink(s0);
        this.pushFront(s0);
      }
      return;
    }
    let slot: number;
    if (this.size < this.capacity) slot = this.size++;
    else {
      slot = this.tailSlot;
      this.unlink(slot);
      this.keys.remove(slot);
    }
    this.pushFront(slot);
    this.keys.add(slot, hi, lo);
  }

  get hitRate(): number {
    return this.lookups === 0 ? 0 : this.hits / this.lookups;
  }
}

/**
 * "Classical" LRU the way most code writes it: a JS Map in recency order (delete + set on a hit,
 * evict the first key). Keys are the 64-bit fingerprints as 16-hex-digit strings. Shown for speed
 * only (same hit rates as LruCache by construction).
 */
export class MapLru {
  private readonly map = new Map<string, true>();
  hits = 0;
  lookups = 0;
  constructor(readonly capacity: number) {}
  private static key(hi: number, lo: number): string {
    return hi.toString(16) + ':' + lo.toString(16);
  }
  lookup(hi: number, lo: number): boolean {
    this.lookups++;
    const k = MapLru.key(hi, lo);
    if (!this.map.has(k)) return false;
    this.map.delete(k);
    this.map.set(k, true);
    this.hits++;
    return true;
  }
  insert(hi: number, lo: number): void {
    const k = MapLru.key(hi, lo);
    if (this.map.has(k)) this.map.delete(k);
    else if (this.map.size >= this.capacity) this.map.delete(this.map.keys().next().value!);
    this.map.set(k, true);
  }
}
