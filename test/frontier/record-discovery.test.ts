/**
 * A frontier record carries where its URL was found (via) and its hop path, for crawl.log; records
 * written in the version 1 layout (no such fields, e.g. in a checkpoint taken before) still read.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FrontierUrl, encodeFrontierUrl, decodeFrontierUrl, extendHopPath, HOP_PATH_MAX } from '../../src/frontier/index.js';

test('via and hop path round-trip (fast-check), ASCII and not', () => {
  fc.assert(fc.property(fc.string({ maxLength: 200, unit: 'grapheme' }), fc.string({ maxLength: 200, unit: 'grapheme' }), fc.stringMatching(/^(\d+\+)?[LRP]{0,50}$/),
    (p, via, path) => {
      const u = new FrontierUrl({ url: `http://h.test/${p}`, hops: 2, hostHi: 1, hostLo: 2, pldHi: 3, pldLo: 4, budget: 5, admitted: 6, via, path, attempts: 1 });
      const d = decodeFrontierUrl(encodeFrontierUrl(u));
      assert.deepEqual([d.url, d.via, d.path, d.hops, d.attempts, d.admitted], [u.url, via, path, 2, 1, 6]);
    }), { numRuns: 300 });
});

test('a version 1 record (no via, no path) still decodes', () => {
  const u = new FrontierUrl({ url: 'http://a.test/x', hops: 3, hostHi: 1, hostLo: 2, pldHi: 3, pldLo: 4, budget: 10, admitted: 7, discoveredAt: 1234, attempts: 2 });
  const v2 = encodeFrontierUrl(u);
  assert.equal(v2[0], 2);
  // Version 1 = the same bytes without the two trailing empty texts (two zero varints).
  assert.deepEqual([...v2.subarray(v2.length - 2)], [0, 0]);
  const v1 = Uint8Array.from([1, ...v2.subarray(1, v2.length - 2)]);
  const d = decodeFrontierUrl(v1);
  assert.deepEqual([d.url, d.hops, d.admitted, d.discoveredAt, d.attempts, d.via, d.path], ['http://a.test/x', 3, 7, 1234, 2, '', '']);
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
