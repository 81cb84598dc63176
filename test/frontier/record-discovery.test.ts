/**
 * A frontier record carries where its URL was found (via) and its hop path, for crawl.log, and its
 * PLD's in-degree as STAR gave it (the low-PLD pace's trust class); records written in the version 1
 * and 2 layouts (without those fields, e.g. in a checkpoint taken before) still read.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FrontierUrl, encodeFrontierUrl, decodeFrontierUrl, peekFrontierUrl, extendHopPath, HOP_PATH_MAX } from '../../src/frontier/index.js';

test('via and hop path round-trip (fast-check), ASCII and not', () => {
  fc.assert(fc.property(fc.string({ maxLength: 200, unit: 'grapheme' }), fc.string({ maxLength: 200, unit: 'grapheme' }), fc.stringMatching(/^(\d+\+)?[LRP]{0,50}$/),
    (p, via, path) => {
      const u = new FrontierUrl({ url: `http://h.test/${p}`, hops: 2, hostHi: 1, hostLo: 2, pldHi: 3, pldLo: 4, budget: 5, admitted: 6, via, path, attempts: 1 });
      const d = decodeFrontierUrl(encodeFrontierUrl(u));
      assert.deepEqual([d.url, d.via, d.path, d.hops, d.attempts, d.admitted], [u.url, via, path, 2, 1, 6]);
    }), { numRuns: 300 });
});

test('the PLD in-degree round-trips, -1 (not known) included, and peek reads it (fast-check)', () => {
  const pk = new Float64Array(7);
  fc.assert(fc.property(fc.integer({ min: -1, max: 2 ** 40 }), fc.nat(), (d, b) => {
    const u = new FrontierUrl({ url: 'http://h.test/', hostHi: 1, hostLo: 2, pldHi: 3, pldLo: 4, budget: b, admitted: 6, indegree: d });
    const rec = encodeFrontierUrl(u);
    peekFrontierUrl(rec, pk);
    assert.deepEqual([decodeFrontierUrl(rec).indegree, pk[6], pk[4], pk[5]], [d, d, b, 6]);
  }), { numRuns: 300 });
  assert.equal(new FrontierUrl({ url: 'http://h.test/', hostHi: 1, hostLo: 2, pldHi: 3, pldLo: 4, budget: 1, admitted: 1 }).indegree, -1);
});

test('version 2 (no in-degree) and version 1 (nor via, path) records still decode, with the in-degree not known', () => {
  const u = new FrontierUrl({ url: 'http://a.test/x', hops: 3, hostHi: 1, hostLo: 2, pldHi: 3, pldLo: 4, budget: 10, admitted: 7, indegree: 5, discoveredAt: 1234, attempts: 2 });
  const v3 = encodeFrontierUrl(u);
  assert.equal(v3[0], 3);
  // Version 2 = the same bytes without the in-degree (one byte, 5 + 1, after B and P: one byte each here).
  const at = 1 + 1 + u.url.length + 1 + 16 + 1 + 1;
  assert.equal(v3[at], 6);
  const v2 = Uint8Array.from([2, ...v3.subarray(1, at), ...v3.subarray(at + 1)]);
  // Version 1 = version 2 without the two trailing empty texts (two zero varints).
  assert.deepEqual([...v2.subarray(v2.length - 2)], [0, 0]);
  const v1 = Uint8Array.from([1, ...v2.subarray(1, v2.length - 2)]);
  const pk = new Float64Array(7);
  for (const [rec, via] of [[v2, ''], [v1, '']] as const) {
    const d = decodeFrontierUrl(rec);
    assert.deepEqual([d.url, d.hops, d.budget, d.admitted, d.indegree, d.discoveredAt, d.attempts, d.via, d.path], ['http://a.test/x', 3, 10, 7, -1, 1234, 2, via, '']);
    peekFrontierUrl(rec, pk);
    assert.deepEqual([...pk], [1, 2, 3, 4, 10, 7, -1]);
  }
});

test('hop paths stay bounded as Heritrix keeps them: the last 50 letters after a count', () => {
  let p = '';
  for (let i = 0; i < 49; i++) p = extendHopPath(p, 'L');
  assert.equal(p, 'L'.repeat(49));
  p = extendHopPath(p, 'R');
  assert.equal(p, 'L'.repeat(49) + 'R');
  p = extendHopPath(p, 'L');
  assert.equal(p, `1+${'L'.repeat(48)}RL`);
  for (let i = 0; i < 1000; i++) p = extendHopPath(p, 'L');
  assert.equal(p, `1001+${'L'.repeat(HOP_PATH_MAX)}`);
});
