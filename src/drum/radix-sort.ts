/**
 * Radix sort of 64-bit keys given as (hi, lo) uint32 arrays, carrying original positions. DRUM
 * sorts each bucket by key (thesis IV.3, step 1) and later restores the arrival order from the
 * carried positions (step 4). The sort is stable, which DRUM relies on: among equal keys the
 * earliest arrival comes first, so the first check+update of a key in a batch is the unique one.
 *
 * DRUM's keys are hashes, so the high 32 bits almost always decide the order: among n = 5 M keys
 * of one bucket only ~10^4 pairs of DIFFERENT keys share hi, while repeats of the same key (most
 * of URLseen's tuples are duplicates) share all 64 bits. So, rather than LSD passes over all 64
 * bits:
 *   1. LSD radix sort by hi only, over the bits of hi that vary among the keys, in passes of ≤ 11
 *      bits (not 16: see below), a pass skipped when its digit is the
 *      same for every key;
 *   2. one sequential scan finds runs of equal hi and orders each by lo: insertion sort for runs of
 *      ≤ 64 (linear for runs of one repeated key: strict comparisons move nothing), an 8-bit LSD
 *      radix sort of the run for longer ones (skewed keys: a shared hi costs O(run), never
 *      quadratic).
 * Counting scatters and strict-comparison insertion are stable, so the whole sort is.
 * Cost for hash keys: three cache-friendly passes moving 3 arrays plus one scan; RAM: the inputs
 * plus two copies of each.
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

/** Runs of equal hi up to this length are finished by insertion sort on lo. */
const INSERTION_MAX = 64;
const count11 = new Uint32Array(2048);
const count8 = new Uint32Array(256);

/** With tags, positions carry a tag in their top TAG_BITS bits (so n must be < 2^(32 − TAG_BITS)). */
export const TAG_BITS = 3;
export const TAG_SHIFT = 32 - TAG_BITS;
export const POS_MASK = (1 << TAG_SHIFT) - 1;

/**
 * Sorts the first n keys; the inputs are left untouched. With `work`, the result arrays are views
 * into it (valid until the next call with the same scratch). With `tags` (values < 2^TAG_BITS),
 * pos[j] is (tags[i] << TAG_SHIFT | i): a per-tuple tag travels with its key for free, which
 * spares the caller a random read of tags[pos[j]] per key afterwards (DRUM's op codes).
 */
export function radixSortKeys(hiIn: Uint32Array, loIn: Uint32Array, n: number, work?: RadixScratch, tags?: Uint8Array): SortedKeys {
  if (tags !== undefined && n > POS_MASK + 1) throw new RangeError(`radixSortKeys: ${n} keys is too many to carry tags`);
  const w = work ?? { a: new Uint32Array(n), b: new Uint32Array(n), c: new Uint32Array(n), d: new Uint32Array(n), e: new Uint32Array(n), f: new Uint32Array(n) };
  let hi = w.a.subarray(0, n);
  let lo = w.b.subarray(0, n);
  let pos = w.c.subarray(0, n);
  hi.set(hiIn.subarray(0, n));
  lo.set(loIn.subarray(0, n));
  if (tags === undefined) for (let i = 0; i < n; i++) pos[i] = i;
  else for (let i = 0; i < n; i++) pos[i] = ((tags[i]! << TAG_SHIFT) | i) >>> 0;
  if (n < 2) return { hi, lo, pos };
  let hi2 = w.d.subarray(0, n);
  let lo2 = w.e.subarray(0, n);
  let pos2 = w.f.subarray(0, n);
  // 1. By hi: LSD passes over the bits that vary at all (a bucket's keys share their top log2(k)
  //    bits), in as few passes of ≤ 11 bits as cover them — 28 bits at k = 16: 10 + 10 + 8.
  //    Three such passes take ~25 % less CPU than two 16-bit passes (measured on
  //    4.9 M keys, a bucket at R = 256 MiB): a 16-bit digit scatters each pass to 65,536 places
  //    in 3 arrays, far more than the caches hold; 2^10 places stay cached.
  let vary = 0;
  const h0 = hi[0]!;
  for (let i = 1; i < n; i++) vary |= hi[i]! ^ h0;
  const bits = 32 - Math.clz32(vary);
  if (n >= MSD_MIN && bits > MSD_BITS + 11) {
    // Large batches: one MSD pass first, then LSD inside each part (see msdThenLsd).
    msdThenLsd(hi, lo, pos, hi2, lo2, pos2, n, bits);
    finishRuns(hi2, lo2, pos2, hi, lo, pos, n);
    return { hi: hi2, lo: lo2, pos: pos2 };
  }
  const passes = Math.ceil(bits / 11);
  const digit = passes === 0 ? 0 : Math.ceil(bits / passes);
  const sorted = lsdByHi([hi, lo, pos], [hi2, lo2, pos2], 0, n, bits, digit, true);
  if (sorted[0] !== hi) {
    [hi2, lo2, pos2] = [hi, lo, pos];
    [hi, lo, pos] = sorted;
  }
  // 2. Runs of equal hi, by lo.
  finishRuns(hi, lo, pos, hi2, lo2, pos2, n);
  return { hi, lo, pos };
}

/** Step 2: orders each run of equal hi by lo (lo2/pos2: scratch for long runs). */
function finishRuns(hi: Uint32Array, lo: Uint32Array, pos: Uint32Array, _hi2: Uint32Array, lo2: Uint32Array, pos2: Uint32Array, n: number): void {
  let i = 0;
  while (i < n) {
    const h = hi[i]!;
    let j = i + 1;
    while (j < n && hi[j] === h) j++;
    if (j - i > INSERTION_MAX) sortRunByLo(lo, pos, lo2, pos2, i, j);
    else if (j - i > 1) {
      for (let x = i + 1; x < j; x++) {
        const l = lo[x]!;
        if (lo[x - 1]! <= l) continue; // in order already (the common case: one repeated key)
        const q = pos[x]!;
        let y = x - 1;
        while (y >= i && lo[y]! > l) {
          lo[y + 1] = lo[y]!;
          pos[y + 1] = pos[y]!;
          y--;
        }
        lo[y + 1] = l;
        pos[y + 1] = q;
      }
    }
    i = j;
  }
}

/**
 * One stable counting scatter of keys [a, b) by the digit (hi >>> shift) & mask from (sh, sl, sp)
 * to the same positions of (dh, dl, dp). Afterwards count[d] is where digit d's keys end. With
 * skipUniform, a pass whose keys all share one digit moves nothing and returns false.
 */
function scatterByHi(sh: Uint32Array, sl: Uint32Array, sp: Uint32Array, dh: Uint32Array, dl: Uint32Array, dp: Uint32Array, a: number, b: number, shift: number, mask: number, count: Uint32Array, skipUniform: boolean): boolean {
  count.fill(0, 0, mask + 1);
  for (let i = a; i < b; i++) count[(sh[i]! >>> shift) & mask]++;
  if (skipUniform && count[(sh[a]! >>> shift) & mask] === b - a) return false;
  let sum = a;
  for (let d = 0; d <= mask; d++) {
    const c = count[d]!;
    count[d] = sum;
    sum += c;
  }
  for (let i = a; i < b; i++) {
    const h = sh[i]!;
    const j = count[(h >>> shift) & mask]++;
    dh[j] = h;
    dl[j] = sl[i]!;
    dp[j] = sp[i]!;
  }
  return true;
}

/** Batches of at least this many keys take the MSD-first path. */
const MSD_MIN = 1 << 18;
/** Bits of the MSD digit: 256 parts, each ~n/256 keys (19 K at n = 4.9 M: 230 KB, cached). */
const MSD_BITS = 8;
const countMsd = new Uint32Array(1 << MSD_BITS);

/**
 * Step 1 for large batches: one stable scatter by the top MSD_BITS of the varying
 * bits into hi2/lo2/pos2, then an LSD sort of each part by its remaining bits in ≤ 11-bit passes
 * (each part ends in hi2/lo2/pos2). Why: an LSD pass over all n keys scatters to
 * 2^digit places in each of 3 arrays — ~3,000 write streams at 10-bit digits, more than the TLB
 * and L1 hold, ~35 ns per key per pass here — while a part of n/256 keys sorts inside L2. Stable
 * (counting scatters only), so equal keys keep their arrival order.
 */
function msdThenLsd(hi: Uint32Array, lo: Uint32Array, pos: Uint32Array, hi2: Uint32Array, lo2: Uint32Array, pos2: Uint32Array, n: number, bits: number): void {
  const top = bits - MSD_BITS;
  // After the scatter countMsd[d] is where part d ends.
  scatterByHi(hi, lo, pos, hi2, lo2, pos2, 0, n, top, 0xff, countMsd, false);
  // LSD over bits [0, top) of each part, ping-ponging between the two sets; a part that ends in
  // the other set (odd number of passes) is copied back, so every part ends in hi2/lo2/pos2.
  const digit = Math.ceil(top / Math.ceil(top / 11));
  const main: Cols = [hi2, lo2, pos2];
  const other: Cols = [hi, lo, pos];
  let a = 0;
  for (let d = 0; d < 256; d++) {
    const b = countMsd[d]!;
    if (b - a > 1 && lsdByHi(main, other, a, b, top, digit, false) !== main) {
      hi2.set(hi.subarray(a, b), a);
      lo2.set(lo.subarray(a, b), a);
      pos2.set(pos.subarray(a, b), a);
    }
    a = b;
  }
}

type Cols = readonly [Uint32Array, Uint32Array, Uint32Array];

/**
 * LSD passes of `digit` bits over hi bits [0, bits) of keys [a, b), ping-ponging between the
 * column sets x (which holds the keys) and y; returns the set that holds the result.
 */
function lsdByHi(x: Cols, y: Cols, a: number, b: number, bits: number, digit: number, skipUniform: boolean): Cols {
  const mask = (1 << digit) - 1;
  let s = x;
  let d = y;
  for (let shift = 0; shift < bits; shift += digit) {
    if (!scatterByHi(s[0], s[1], s[2], d[0], d[1], d[2], a, b, shift, mask, count11, skipUniform)) continue;
    const t = s;
    s = d;
    d = t;
  }
  return s;
}

/** Stable LSD sort of lo[a, b) (carrying pos) in four 8-bit passes, using lo2/pos2[a, b) as scratch. */
function sortRunByLo(lo: Uint32Array, pos: Uint32Array, lo2: Uint32Array, pos2: Uint32Array, a: number, b: number): void {
  let sl = lo;
  let sp = pos;
  let dl = lo2;
  let dp = pos2;
  const count = count8;
  for (let shift = 0; shift < 32; shift += 8) {
    count.fill(0);
    for (let i = a; i < b; i++) count[(sl[i]! >>> shift) & 0xff]++;
    if (count[(sl[a]! >>> shift) & 0xff] === b - a) continue;
    let sum = a;
    for (let d = 0; d < 256; d++) {
      const c = count[d]!;
      count[d] = sum;
      sum += c;
    }
    for (let i = a; i < b; i++) {
      const l = sl[i]!;
      const j = count[(l >>> shift) & 0xff]++;
      dl[j] = l;
      dp[j] = sp[i]!;
    }
    let t = sl;
    sl = dl;
    dl = t;
    t = sp;
    sp = dp;
    dp = t;
  }
  if (sl !== lo) {
    lo.set(sl.subarray(a, b), a);
    pos.set(sp.subarray(a, b), a);
  }
}
