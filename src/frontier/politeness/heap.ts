/**
 * An indexed 4-ary min-heap of small integer ids keyed by a float64 time, on typed arrays.
 *
 * Used twice by the politeness scheduler (thesis VII.1): the host heap (key = the time a host may be
 * fetched again, τh) and the IP heap (key = the time a server may be contacted again, τs). Ids come
 * from bounded tables (host ids, IP ids), so `pos[id]` gives O(1) membership and O(log n) update /
 * removal without any per-operation allocation — the release path must run at ≥ 1 M/s per core.
 *
 * Ties are broken by id (smaller first) so that every simulation is deterministic. 4-ary rather than
 * binary: half the levels, and the four children of a node sit in one cache line of `keys`, which
 * matters with 10^6 hosts in the heap (bench/frontier).
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

  /** Moves the entry at i up, shifting parents down into the hole (one write per level). */
  private up(i: number): void {
    const ids = this.ids;
    const keys = this.keys;
    const pos = this.pos;
    const id = ids[i]!;
    const key = keys[i]!;
    while (i > 0) {
      const p = (i - 1) >> 2;
      const pk = keys[p]!;
      if (pk < key || (pk === key && ids[p]! < id)) break;
      ids[i] = ids[p]!;
      keys[i] = pk;
      pos[ids[i]!] = i;
      i = p;
    }
    ids[i] = id;
    keys[i] = key;
    pos[id] = i;
  }

  /** Moves the entry at i down to its place among the (up to four) children. */
  private down(i: number): void {
    const ids = this.ids;
    const keys = this.keys;
    const pos = this.pos;
    const n = this.n;
    const id = ids[i]!;
    const key = keys[i]!;
    for (;;) {
      const c = 4 * i + 1;
      if (c >= n) break;
      let m = c;
      let mk = keys[c]!;
      const end = c + 4 < n ? c + 4 : n;
      for (let k = c + 1; k < end; k++) {
        const kk = keys[k]!;
        if (kk < mk || (kk === mk && ids[k]! < ids[m]!)) {
          m = k;
          mk = kk;
        }
      }
      if (key < mk || (key === mk && id < ids[m]!)) break;
      ids[i] = ids[m]!;
      keys[i] = mk;
      pos[ids[i]!] = i;
      i = m;
    }
    ids[i] = id;
    keys[i] = key;
    pos[id] = i;
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
