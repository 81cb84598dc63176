/**
 * Open-addressing hash map from a 64-bit key, given as two uint32 halves (hi, lo), to an int32 value.
 *
 * Keys here are already xxhash64 fingerprints (host, PLD), so the slot is taken from the low bits
 * after one multiply. Linear probing with backward-shift deletion (no tombstones), load ≤ 1/2.
 * No BigInt, no per-operation allocation: used on the frontier's hot paths (host table) and by the
 * in-memory PLD store and BEAST's per-pass counters. Its size is bounded by whoever owns it.
 */
export class U64Map {
  private his: Uint32Array;
  private los: Uint32Array;
  private vals: Int32Array;
  /** 1 when the slot is used (a key may legitimately be 0:0). */
  private used: Uint8Array;
  private mask: number;
  private count = 0;

  constructor(initialCapacity = 1024) {
    let c = 16;
    while (c < initialCapacity * 2) c *= 2;
    this.his = new Uint32Array(c);
    this.los = new Uint32Array(c);
    this.vals = new Int32Array(c);
    this.used = new Uint8Array(c);
    this.mask = c - 1;
  }

  get size(): number {
    return this.count;
  }

  private slot(hi: number, lo: number): number {
    return (Math.imul(lo ^ Math.imul(hi, 0x85ebca6b), 0x9e3779b1) >>> 7) & this.mask;
  }

  /** The value stored for (hi, lo), or -1 when absent (store only values ≥ 0 to use this). */
  get(hi: number, lo: number): number {
    hi >>>= 0;
    lo >>>= 0;
    let i = this.slot(hi, lo);
    const used = this.used;
    for (;;) {
      if (used[i] === 0) return -1;
      if (this.los[i] === lo && this.his[i] === hi) return this.vals[i]!;
      i = (i + 1) & this.mask;
    }
  }

  set(hi: number, lo: number, value: number): void {
    hi >>>= 0;
    lo >>>= 0;
    if ((this.count + 1) * 2 > this.mask + 1) this.grow();
    let i = this.slot(hi, lo);
    for (;;) {
      if (this.used[i] === 0) {
        this.used[i] = 1;
        this.his[i] = hi;
        this.los[i] = lo;
        this.vals[i] = value;
        this.count++;
        return;
      }
      if (this.los[i] === lo && this.his[i] === hi) {
        this.vals[i] = value;
        return;
      }
      i = (i + 1) & this.mask;
    }
  }

  delete(hi: number, lo: number): boolean {
    hi >>>= 0;
    lo >>>= 0;
    const mask = this.mask;
    let i = this.slot(hi, lo);
    for (;;) {
      if (this.used[i] === 0) return false;
      if (this.los[i] === lo && this.his[i] === hi) break;
      i = (i + 1) & mask;
    }
    // Backward-shift deletion keeps every probe chain contiguous.
    let j = i;
    for (;;) {
      j = (j + 1) & mask;
      if (this.used[j] === 0) break;
      const k = this.slot(this.his[j]!, this.los[j]!);
      // Move j into the hole at i unless its home k lies cyclically in (i, j].
      const inRange = i <= j ? i < k && k <= j : i < k || k <= j;
      if (inRange) continue;
      this.his[i] = this.his[j]!;
      this.los[i] = this.los[j]!;
      this.vals[i] = this.vals[j]!;
      i = j;
    }
    this.used[i] = 0;
    this.count--;
    return true;
  }

  clear(): void {
    this.used.fill(0);
    this.count = 0;
  }

  /** Calls fn for every entry (order unspecified). */
  forEach(fn: (hi: number, lo: number, value: number) => void): void {
    for (let i = 0; i <= this.mask; i++) if (this.used[i] === 1) fn(this.his[i]!, this.los[i]!, this.vals[i]!);
  }

  private grow(): void {
    const oh = this.his;
    const ol = this.los;
    const ov = this.vals;
    const ou = this.used;
    const c = (this.mask + 1) * 2;
    this.his = new Uint32Array(c);
    this.los = new Uint32Array(c);
    this.vals = new Int32Array(c);
    this.used = new Uint8Array(c);
    this.mask = c - 1;
    this.count = 0;
    for (let i = 0; i < ou.length; i++) if (ou[i] === 1) this.set(oh[i]!, ol[i]!, ov[i]!);
  }
}
