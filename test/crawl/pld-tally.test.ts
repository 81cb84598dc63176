/**
 * The top-PLDs tally (Space-Saving) against exact counts over random fetch streams: exact while the
 * PLDs fit its counters; beyond, a shown count is never below the true one nor above it by more than
 * its `overcount`, and every PLD with more than N / capacity fetches is listed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { PldTally } from '../../src/monitor/pld-tally.js';

const fetchOf = (pld: number, budget = 10, admitted = 1): { url: string; pldHi: number; pldLo: number; budget: number; admitted: number } =>
  ({ url: `http://www.pld${pld}.test/x`, pldHi: pld >>> 3, pldLo: (pld * 2654435761) >>> 0, budget, admitted });
const nameOf = (url: string): string => new URL(url).hostname.replace(/^www\./, '');

test('PLD tally: bounded error, heavy hitters kept, exact when the PLDs fit', () => {
  fc.assert(fc.property(fc.integer({ min: 1, max: 16 }), fc.array(fc.integer({ min: 0, max: 40 }), { maxLength: 600 }), (capacity, stream) => {
    const tally = new PldTally(nameOf, capacity);
    const truth = new Map<string, number>();
    for (const p of stream) {
      tally.add(fetchOf(p));
      truth.set(`pld${p}.test`, (truth.get(`pld${p}.test`) ?? 0) + 1);
    }
    const rows = tally.top(capacity);
    assert.ok(rows.length <= capacity);
    // Each fetch adds one to one counter, and a counter taken over keeps the evicted count: the sum is N.
    assert.equal(rows.reduce((n, r) => n + r.pages, 0), stream.length);
    for (const r of rows) {
      const t = truth.get(r.pld) ?? 0;
      assert.ok(r.pages >= t && r.pages - r.overcount <= t, `${r.pld}: shown ${r.pages} (overcount ${r.overcount}), true ${t}`);
    }
    for (const [pld, t] of truth) if (t > stream.length / capacity) assert.ok(rows.some((r) => r.pld === pld), `heavy ${pld} (${t}) listed`);
    if (truth.size <= capacity) {
      assert.deepEqual(new Map(rows.map((r) => [r.pld, r.pages])), truth);
      assert.ok(rows.every((r) => r.overcount === 0));
    }
    for (let i = 1; i < rows.length; i++) assert.ok(rows[i - 1]!.pages >= rows[i]!.pages, 'most fetched first');
  }), { numRuns: 500 });
});

test('PLD tally: the latest budget B and the largest rank P of each PLD', () => {
  const t = new PldTally(nameOf, 4);
  t.add(fetchOf(1, 10, 3));
  t.add(fetchOf(1, 12, 2));
  t.add(fetchOf(2, 5, 1));
  assert.deepEqual(t.top(5), [
    { pld: 'pld1.test', pages: 2, overcount: 0, budget: 12, admitted: 3 },
    { pld: 'pld2.test', pages: 1, overcount: 0, budget: 5, admitted: 1 },
  ]);
  assert.throws(() => new PldTally(nameOf, 0), RangeError);
});
