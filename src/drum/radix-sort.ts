/**
 * LSD radix sort of 64-bit keys given as (hi, lo) uint32 arrays, carrying original positions.
 * DRUM sorts each bucket by key (thesis IV.3, step 1) and later restores the arrival order from
 * the carried positions (step 4). LSD radix sort is stable, which DRUM relies on: among equal keys
 * the earliest arrival comes first, so the first check+update of a key in a batch is the unique one.
 *
 * Four passes of 16-bit digits (lo low, lo high, hi low, hi high); a pass whose digit is the same
 * for every key (typical for the high digit inside one bucket, whose keys share a prefix) is
 * skipped. Cost: O(n) per pass, 3 arrays moved per pass; RAM: the inputs plus one copy of each.
 */

export interface SortedKeys {
  hi: Uint32Array;
  lo: Uint32Array;
  /** pos[j] = original index of the j-th smallest key. */
  pos: Uint32Array;
}

/** Six scratch arrays of at least n entries each (reused across calls to avoid allocation churn). */
export interface RadixScratch {
  a: Uint32Array;
  b: Uint32Array;
  c: Uint32Array;
  d: Uint32Array;
  e: Uint32Array;
  f: Uint32Array;
}

/**
 * Sorts the first n keys; the inputs are left untouched. With `work`, the result arrays are views
 * into it (valid until the next call with the same scratch).
 */
export function radixSortKeys(hiIn: Uint32Array, loIn: Uint32Array, n: number, work?: RadixScratch): SortedKeys {
  const w = work ?? { a: new Uint32Array(n), b: new Uint32Array(n), c: new Uint32Array(n), d: new Uint32Array(n), e: new Uint32Array(n), f: new Uint32Array(n) };
  let hi = w.a.subarray(0, n);
  let lo = w.b.subarray(0, n);
  let pos = w.c.subarray(0, n);
  hi.set(hiIn.subarray(0, n));
  lo.set(loIn.subarray(0, n));
  for (let i = 0; i < n; i++) pos[i] = i;
  if (n < 2) return { hi, lo, pos };
  let hi2 = w.d.subarray(0, n);
  let lo2 = w.e.subarray(0, n);
  let pos2 = w.f.subarray(0, n);
  const count = new Uint32Array(65536);
  for (let pass = 0; pass < 4; pass++) {
    const src = pass < 2 ? lo : hi;
    const shift = (pass & 1) === 0 ? 0 : 16;
    count.fill(0);
    for (let i = 0; i < n; i++) count[(src[i]! >>> shift) & 0xffff]++;
    // Skip a pass where every key has the same digit: it would not move anything.
    if (count[(src[0]! >>> shift) & 0xffff] === n) continue;
    let sum = 0;
    for (let d = 0; d < 65536; d++) {
      const c = count[d]!;
      count[d] = sum;
      sum += c;
    }
    for (let i = 0; i < n; i++) {
      const d = (src[i]! >>> shift) & 0xffff;
      const j = count[d]++;
      hi2[j] = hi[i]!;
      lo2[j] = lo[i]!;
      pos2[j] = pos[i]!;
    }
    let t = hi;
    hi = hi2;
    hi2 = t;
    t = lo;
    lo = lo2;
    lo2 = t;
    t = pos;
    pos = pos2;
    pos2 = t;
  }
  return { hi, lo, pos };
}
