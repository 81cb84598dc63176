/**
 * Bench-only LRU cache of 64-bit keys (the "classical LRU" of thesis Table IV–V): an open-addressing
 * table (linear probing, load ≤ 1/2) from key to slot and a doubly linked recency list in typed
 * arrays; a hit moves the slot to the front, a miss on a full cache evicts the tail. Fixed RAM:
 * E·(4+4+4+4) bytes of slots + 2^⌈log2 2E⌉·4 of table. Same hashing and table as src/drum's
 * ClockCache, so the speed difference is the policy's work (list splicing vs one reference bit).
 */
export class LruCache {
  private readonly hi: Uint32Array;
  private readonly lo: Uint32Array;
  private readonly prev: Int32Array;
  private readonly next: Int32Array;
  private readonly table: Int32Array;
  private readonly mask: number;
  private size = 0;
  private headSlot = -1;
  private tailSlot = -1;
  hits = 0;
  lookups = 0;

  constructor(readonly capacity: number) {
    this.hi = new Uint32Array(capacity);
    this.lo = new Uint32Array(capacity);
    this.prev = new Int32Array(capacity);
    this.next = new Int32Array(capacity);
    let t = 2;
    while (t < capacity * 2) t *= 2;
    this.table = new Int32Array(t);
    this.mask = t - 1;
  }

  static bytesFor(capacity: number): number {
    let t = 2;
    while (t < capacity * 2) t *= 2;
    return capacity * 16 + t * 4;
  }

  private home(hi: number, lo: number): number {
    return (Math.imul(lo ^ Math.imul(hi, 0x9e3779b1), 0x85ebca6b) >>> 0) & this.mask;
  }

  private find(hi: number, lo: number): number {
    let i = this.home(hi, lo);
    for (;;) {
      const s = this.table[i]!;
      if (s === 0) return -1;
      if (this.lo[s - 1] === lo && this.hi[s - 1] === hi) return s - 1;
      i = (i + 1) & this.mask;
    }
  }

  private unlink(s: number): void {
    const p = this.prev[s]!, n = this.next[s]!;
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
    const s = this.find(hi, lo);
    if (s < 0) return false;
    this.hits++;
    if (s !== this.headSlot) {
      this.unlink(s);
      this.pushFront(s);
    }
    return true;
  }

  insert(hi: number, lo: number): void {
    const s0 = this.find(hi, lo);
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
      this.remove(slot);
    }
    this.hi[slot] = hi;
    this.lo[slot] = lo;
    this.pushFront(slot);
    let i = this.home(hi, lo);
    while (this.table[i] !== 0) i = (i + 1) & this.mask;
    this.table[i] = slot + 1;
  }

  private remove(slot: number): void {
    let i = this.home(this.hi[slot]!, this.lo[slot]!);
    while (this.table[i] !== slot + 1) i = (i + 1) & this.mask;
    let j = i;
    for (;;) {
      j = (j + 1) & this.mask;
      const s = this.table[j]!;
      if (s === 0) break;
      const h = this.home(this.hi[s - 1]!, this.lo[s - 1]!);
      if (i <= j ? h <= i || h > j : h <= i && h > j) {
        this.table[i] = s;
        i = j;
      }
    }
    this.table[i] = 0;
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
