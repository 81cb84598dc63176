/**
 * The cadence of STAR's PLDedges flushes (src/crawl/ports/frontier-port.ts edgeFlushWaitMs): a
 * flush passes over both STAR tables, so its duration grows with the crawl; the wait after it must
 * grow with it, so that the flushes take at most a tenth of the time at any table size (up to
 * flushes of 3 s), never run more often than every 100 ms, and run at least every 30 s.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { edgeFlushWaitMs } from '../../src/crawl/ports/index.js';

test('edge flushes: each wait is ten durations, between 100 ms and 30 s', () => {
  fc.assert(fc.property(fc.double({ min: 0, max: 10_000, noNaN: true }), (d) => {
    const w = edgeFlushWaitMs(d);
    assert.ok(w >= 100 && w <= 30_000, `wait ${w} ms after a ${d} ms flush`);
    if (d <= 3_000) assert.ok(w >= 10 * d, `wait ${w} ms after a ${d} ms flush: under ten durations`);
  }));
});

test('edge flushes: over flushes whose duration grows with the tables, they take at most a tenth of the time', () => {
  fc.assert(fc.property(fc.array(fc.double({ min: 0, max: 3_000, noNaN: true }), { minLength: 1, maxLength: 200 }), (ds) => {
    // A flush as soon as it is due, of each duration in turn; the time until the next one is due.
    let busy = 0;
    let elapsed = 0;
    for (const d of [...ds].sort((a, b) => a - b)) {
      busy += d;
      elapsed += d + edgeFlushWaitMs(d);
    }
    assert.ok(busy <= elapsed / 11 + 1e-6, `flushes ${busy.toFixed(0)} ms of ${elapsed.toFixed(0)} ms`);
  }));
});
