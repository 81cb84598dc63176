/**
 * The batch stages' pace on dispatch (src/crawl/ports/backlog-pace.ts) against a model of merges:
 * a dispatcher that always wants more takes what the pace allows every 5 ms (the scheduler's
 * turn); merges run back to back, each covering the backlog present when it starts and releasing
 * it when it ends. Merge durations drift and jitter, each within 1.25 × the longest of the four
 * before it (the pace's prediction). Properties, after the first four releases:
 *   - the backlog never reaches its bound (dispatch never has to stop for it);
 *   - every second has a dispatch (no stalled second);
 *   - the pages dispatched are at least 0.85 × what a hard bound alone lets through on the same
 *     merges (the pace spreads the stop-and-go; it does not cost the crawl its rate).
 * A hard bound alone (the pace's room replaced by the free part) fails the first two.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { BacklogPace } from '../../src/crawl/ports/backlog-pace.js';

const STEP_MS = 5;
const WARMUP_RELEASES = 4;

interface Run {
  dispatched: number;
  /** the largest backlog after the warm-up */
  peak: number;
  /** the longest time (ms) without a dispatch after the warm-up */
  longestGap: number;
}

/** One crawl of `durations` back-to-back merges; `paced` false: the hard bound alone. */
function simulate(bound: number, durations: readonly number[], paced: boolean): Run {
  const pace = new BacklogPace(bound, 0);
  let backlog = 0;
  let covered = 0;
  let mergeEnd = durations[0]!;
  let k = 0;
  let now = 0;
  let dispatched = 0;
  let peak = 0;
  let lastDispatch = 0;
  let longestGap = 0;
  let warm = false;
  const end = durations.reduce((a, b) => a + b, 0);
  while (now < end) {
    now += STEP_MS;
    if (now >= mergeEnd) {
      backlog -= covered;
      pace.released(now);
      k++;
      if (k >= WARMUP_RELEASES && !warm) {
        warm = true;
        lastDispatch = now;
      }
      if (k >= durations.length) break;
      covered = backlog; // the next merge covers what waits now
      mergeEnd = now + durations[k]!;
    }
    const room = paced ? pace.room(now, backlog) : bound - backlog;
    if (room > 0) {
      backlog += room;
      pace.took(room);
      dispatched += room;
      if (warm) longestGap = Math.max(longestGap, now - lastDispatch);
      lastDispatch = now;
    }
    if (warm) peak = Math.max(peak, backlog);
  }
  if (warm) longestGap = Math.max(longestGap, now - lastDispatch);
  return { dispatched, peak, longestGap };
}

/** Merge durations (ms): a base that drifts up to `growth`× over the run, each jittered down by up to 15 %. */
const mergesArb = fc.record({
  base: fc.integer({ min: 300, max: 20_000 }),
  growth: fc.double({ min: 1, max: 1.5, noNaN: true }),
  jitter: fc.array(fc.double({ min: 0.85, max: 1, noNaN: true }), { minLength: 8, maxLength: 40 }),
}).map(({ base, growth, jitter }) => jitter.map((j, i) => Math.round(base * (1 + ((growth - 1) * i) / jitter.length) * j)));

test('paced: under its bound, a dispatch every second, and the hard bound’s rate (model of merges)', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1_000, max: 100_000 }), mergesArb, (bound, durations) => {
      const paced = simulate(bound, durations, true);
      const hard = simulate(bound, durations, false);
      assert.ok(paced.peak < bound, `backlog reached ${paced.peak} of ${bound}`);
      assert.ok(paced.longestGap <= 1000, `${paced.longestGap} ms without a dispatch`);
      assert.ok(paced.dispatched >= 0.85 * hard.dispatched, `paced ${paced.dispatched} < 0.85 × hard ${hard.dispatched}`);
    }),
    { numRuns: 200 },
  );
});

test('the hard bound alone stops dispatch for whole seconds on the same merges (what the pace replaces)', () => {
  const hard = simulate(16_384, Array.from({ length: 12 }, () => 8_000), false);
  assert.equal(hard.peak, 16_384);
  assert.ok(hard.longestGap > 1000, `${hard.longestGap} ms`);
});

test('a merge that overruns its prediction: the rate falls, and stays above zero while there is room', () => {
  const pace = new BacklogPace(10_000, 0);
  for (let t = 1000; t <= 4000; t += 1000) pace.released(t);
  let backlog = 5_000;
  let last = 4000;
  // The next release was predicted by 5,250 ms; it has not come by 14,000 (8 × its interval).
  for (let now = 4000; now <= 14_000; now += STEP_MS) {
    const room = pace.room(now, backlog);
    backlog += room;
    pace.took(room);
    if (room > 0) last = now;
    assert.ok(backlog < 10_000);
    assert.ok(now - last <= 1000, `no dispatch from ${last} to ${now} ms with ${10_000 - backlog} free`);
  }
  assert.equal(pace.horizon(14_000), 10_000 - 625, 'past 3/4 of the prediction P, s − P/2 is left');
});

test('up to half its bound at once, paced above; at the bound nothing', () => {
  const pace = new BacklogPace(1000, 0);
  assert.equal(pace.room(0, 100), 400);
  pace.took(400);
  assert.equal(pace.room(0, 500), 0, 'no time has passed: nothing accrued');
  assert.ok(pace.room(100, 500) > 0, 'accrued over 100 ms');
  assert.equal(pace.room(200, 1000), 0);
  assert.equal(pace.room(300, 1200), 0);
});

test('a unit larger than the accrual per burst still gets through (bytes paced in pages)', () => {
  const pace = new BacklogPace(1_000_000, 0);
  pace.released(10_000);
  let bytes = 990_000; // 10 KB free, a page is 32 KB: never admitted
  let got = 0;
  for (let now = 10_000; now < 12_000; now += STEP_MS) {
    const room = pace.room(now, bytes, 4_000);
    if (room >= 4_000) {
      bytes += 4_000;
      pace.took(4_000);
      got++;
    }
  }
  assert.ok(got >= 1, 'a 4,000-byte unit was never allowed with 10,000 bytes free');
});
