/**
 * Partitioning and placement against simple models (src/cluster/partition.ts): a PLD's partition
 * depends on its key only and spreads keys evenly; rendezvous placement is the model's argmax,
 * moves only the partitions a joining node takes or a leaving node had, and balances.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { partitionOf, ownerOf, placement, hashString, fmix32 } from '../../src/cluster/partition.js';
import { fingerprintInto } from '../../src/url/index.js';

const ids = fc.uniqueArray(fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/), { minLength: 1, maxLength: 12 });

test('partitionOf: a function of the PLD key, in range, even over real PLD fingerprints', () => {
  const P = 64;
  const counts = new Array<number>(P).fill(0);
  const fp = new Uint32Array(2);
  const n = 64_000;
  for (let i = 0; i < n; i++) {
    fingerprintInto(`pld${i}.test`, fp, 0);
    const p = partitionOf(fp[0]!, fp[1]!, P);
    assert.ok(p >= 0 && p < P && Number.isInteger(p));
    assert.equal(partitionOf(fp[0]!, fp[1]!, P), p);
    counts[p]!++;
  }
  // chi-square with 63 degrees of freedom: p < 0.001 beyond ~103.4
  const e = n / P;
  const chi = counts.reduce((a, c) => a + (c - e) ** 2 / e, 0);
  assert.ok(chi < 103.4, `chi-square ${chi.toFixed(1)} over ${P} partitions`);
});

test('ownerOf / placement: the argmax of the rendezvous weight (model), whatever the order of the members', () => {
  fc.assert(fc.property(ids, fc.integer({ min: 1, max: 200 }), (members, P) => {
    const model = (p: number): string => {
      let best = '';
      let bw = -1;
      for (const m of [...members].sort()) {
        const w = fmix32((hashString(m) ^ Math.imul(p + 1, 0x9e3779b1)) >>> 0);
        if (w > bw) { best = m; bw = w; }
      }
      return best;
    };
    const placed = placement(P, members);
    const shuffled = placement(P, [...members].reverse());
    for (let p = 0; p < P; p++) {
      assert.equal(placed[p], model(p));
      assert.equal(ownerOf(p, members), placed[p]);
      assert.equal(shuffled[p], placed[p]);
    }
  }));
  assert.deepEqual(placement(3, []), [null, null, null]);
});

test('placement: a join moves partitions only to the new node; a leave only those the node had', () => {
  fc.assert(fc.property(ids, fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/), fc.integer({ min: 1, max: 256 }), (members, extra, P) => {
    fc.pre(!members.includes(extra));
    const before = placement(P, members);
    const after = placement(P, [...members, extra]);
    for (let p = 0; p < P; p++) if (after[p] !== before[p]) assert.equal(after[p], extra, `partition ${p} moved between staying nodes`);
    const back = placement(P, members);
    assert.deepEqual(back, before, 'the leave restores the placement');
  }));
});

test('placement: 64 partitions over 2..10 nodes, every node within 2.5x of the mean', () => {
  for (let n = 2; n <= 10; n++) {
    const members = Array.from({ length: n }, (_, i) => `node-${i}`);
    const per = new Map<string, number>();
    for (const o of placement(64, members)) per.set(o!, (per.get(o!) ?? 0) + 1);
    const mean = 64 / n;
    for (const m of members) assert.ok((per.get(m) ?? 0) <= 2.5 * mean, `${m}: ${per.get(m)} of 64 with ${n} nodes`);
  }
});
