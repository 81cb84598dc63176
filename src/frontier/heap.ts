/**
 * An indexed binary min-heap of small integer ids keyed by a float64 time, on typed arrays.
 *
 * Used twice by the politeness scheduler (thesis VII.1): the host heap (key = the time a host may be
 * fetched again, τh) and the IP heap (key = the time a server may be contacted again, τs). Ids come
 * from bounded tables (host ids, IP ids), so `pos[id]` gives O(1) membership and O(log n) update /
 * removal without any per-operation allocation — the release path must run at ≥ 1 M/s per core.
 *
 * Ties are broken by id (smaller first) so that every simulation is deterministic.
 */
export class IdHeap {
  private ids: Int32Array;
  private keys: Float64Array;
  /** pos[id] = index of id in the heap arrays, or -1 when absent. Grows with the id space. */
  private pos: Int32Array;
  private n = 0;

  constructor(initialCapacity = 1024) {
    const c = Math.max(16, initialCapacity);
    this.ids = new Int32Array(c);
    this.keys = new Float64Array(c);
    this.pos = new Int32Array(c).fill(-1);
  }

  get size(): number {
    return this.n;
  }

  has(id: number): boolean {
    return id < this.pos.length && this.pos[id]! >= 0;
  }

  /** Smallest key, or +Infinity when empty. */
  minKey(): number {
    return this.n === 0 ? Infinity : this.keys[0]!;
  }

  /** Id with the smallest key, or -1 when empty. */
  peek(): number {
    return this.n === 0 ? -1 : this.ids[0]!;
  }

  keyOf(id: number): number {
    const p = this.pos[id]!;
    return p >= 0 ? this.keys[p]! : NaN;
  }

  /** Inserts id with key, or changes its key when already present. */
  set(id: number, key: number): void {
    if (id >= this.pos.length) this.growPos(id + 1);
    const p = this.pos[id]!;
    if (p >= 0) {
      const old = this.keys[p]!;
      this.keys[p] = key;
      if (key < old) this.up(p);
      else if (key > old) this.down(p);
      return;
    }
    if (this.n === this.ids.length) this.growHeap();
    const i = this.n++;
    this.ids[i] = id;
    this.keys[i] = key;
    this.pos[id] = i;
    this.up(i);
  }

  /** Removes and returns the id with the smallest key (-1 when empty). */
  pop(): number {
    if (this.n === 0) return -1;
    const top = this.ids[0]!;
    this.pos[top] = -1;
    const last = --this.n;
    if (last > 0) {
      this.ids[0] = this.ids[last]!;
      this.keys[0] = this.keys[last]!;
      this.pos[this.ids[0]!] = 0;
      this.down(0);
    }
    return top;
  }

  remove(id: number): boolean {
    if (id >= this.pos.length) return false;
    const p = this.pos[id]!;
    if (p < 0) return false;
    this.pos[id] = -1;
    const last = --this.n;
    if (p !== last) {
      const moved = this.ids[last]!;
      this.ids[p] = moved;
      this.keys[p] = this.keys[last]!;
      this.pos[moved] = p;
      this.up(p);
      this.down(this.pos[moved]!);
    }
    return true;
  }

  clear(): void {
    for (let i = 0; i < this.n; i++) this.pos[this.ids[i]!] = -1;
    this.n = 0;
  }

  private less(i: number, j: number): boolean {
    const a = this.keys[i]!;
    const b = this.keys[j]!;
    return a < b || (a === b && this.ids[i]! < this.ids[j]!);
  }

  private swap(i: number, j: number): void {
    const ids = this.ids;
    const keys = this.keys;
    const ti = ids[i]!;
    const tk = keys[i]!;
    ids[i] = ids[j]!;
    keys[i] = keys[j]!;
    ids[j] = ti;
    keys[j] = tk;
    this.pos[ids[i]!] = i;
    this.pos[ti] = j;
  }

  private up(i: number): void {
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(i, p)) break;
      this.swap(i, p);
      i = p;
    }
  }

  private down(i: number): void {
    const n = this.n;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const m = r < n && this.less(r, l) ? r : l;
      if (!this.less(m, i)) break;
      this.swap(i, m);
      i = m;
    }
  }

  private growHeap(): void {
    const c = this.ids.length * 2;
    const ids = new Int32Array(c);
    ids.set(this.ids);
    const keys = new Float64Array(c);
    keys.set(this.keys);
    this.ids = ids;
    this.keys = keys;
  }

  private growPos(min: number): void {
    let c = this.pos.length;
    while (c < min) c *= 2;
    const pos = new Int32Array(c).fill(-1);
    pos.set(this.pos);
    this.pos = pos;
  }
}
