import { test } from 'node:test';
import assert from 'node:assert/strict';
import { POS_MASK, TAG_SHIFT, radixSortKeys } from '../../src/drum/radix-sort.js';

/**
 * Large batches (≥ 2^18 keys, more than 19 varying hi bits) take the MSD-first path; the small
 * property tests in formats.test.ts never reach it. Checked here against BigUint64Array.sort with
 * bucket-like key sets: a shared top, 20–32 varying bits, repeats of the same key (stability),
 * distinct keys sharing hi (the lo pass), and op tags carried in pos.
 */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

for (const bits of [20, 28, 32]) {
  test(`radix sort, MSD-first path: ${bits} varying hi bits, 300,000 keys with repeats and shared hi, stable, tags carried`, () => {
    const n = 300_000;
    const rnd = mulberry32(bits);
    const low = bits === 32 ? 0xffffffff : (1 << bits) - 1;
    const top = bits === 32 ? 0 : (0xa5a5a5a5 & ~low) >>> 0;
    const hi = new Uint32Array(n);
    const lo = new Uint32Array(n);
    const tags = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const u = rnd();
      if (i > 0 && u < 0.4) {
        // A repeat of an earlier key (URLseen's duplicates) or a new lo under an earlier hi.
        const j = Math.floor(rnd() * i);
        hi[i] = hi[j]!;
        lo[i] = u < 0.3 ? lo[j]! : Math.floor(rnd() * 4294967296) >>> 0;
      } else {
        hi[i] = (top | (Math.floor(rnd() * 4294967296) & low)) >>> 0;
        lo[i] = Math.floor(rnd() * 4294967296) >>> 0;
      }
      tags[i] = i % 7;
    }
    const s = radixSortKeys(hi, lo, n, undefined, tags);
    const ref = BigUint64Array.from({ length: n }, (_, i) => (BigInt(hi[i]!) << 32n) | BigInt(lo[i]!)).sort();
    let prevPos = -1;
    for (let j = 0; j < n; j++) {
      const pt = s.pos[j]!;
      const p = pt & POS_MASK;
      assert.equal(pt >>> TAG_SHIFT, tags[p], 'tag travels with its key');
      assert.equal(s.hi[j], hi[p]);
      assert.equal(s.lo[j], lo[p]);
      if ((BigInt(s.hi[j]!) << 32n | BigInt(s.lo[j]!)) !== ref[j]) assert.fail(`position ${j}: not in key order`);
      if (j > 0 && s.hi[j] === s.hi[j - 1] && s.lo[j] === s.lo[j - 1]) assert.ok(p > prevPos, `position ${j}: equal keys out of arrival order`);
      prevPos = p;
    }
  });
}
