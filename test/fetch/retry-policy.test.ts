/**
 * retryOutcome (src/fetch/retry-policy.ts): the table of docs/errors.md turned into the frontier's
 * update — retry count, backoff per attempt, host penalty, Retry-After, scale — for every code.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { OUTCOME_POLICY, FETCH_OUTCOMES as O } from '../../src/fetch/index.js';
import { retryOutcome, MAX_FETCH_ATTEMPTS } from '../../src/fetch/retry-policy.js';

test('every fetch code: retried exactly maxRetries times, waits max(backoff(n), penalty, Retry-After)', () => {
  for (const code of Object.values(O)) {
    const pol = OUTCOME_POLICY[code]!;
    for (let attempts = 1; attempts <= 8; attempts++) {
      const out = retryOutcome({ outcome: code }, attempts);
      if (code === O.OK) { assert.deepEqual(out, {}); continue; }
      const retried = pol.retry && attempts <= pol.maxRetries;
      assert.equal(out.retry === true, retried, `${code} after attempt ${attempts}`);
      const backoff = retried ? pol.backoffMs * pol.backoffFactor ** (attempts - 1) : 0;
      const wait = Math.max(backoff, pol.hostPenaltyMs);
      assert.equal(out.retryAfterMs ?? 0, wait, `${code} wait after attempt ${attempts}`);
      assert.equal(out.hostError === true, pol.hostPenaltyMs > 0, `${code} host error`);
    }
  }
  assert.equal(MAX_FETCH_ATTEMPTS, 1 + OUTCOME_POLICY[O.HTTP_429]!.maxRetries, '429 has the most retries');
});

test('the documented figures: reset 2 min then 4 min, twice; 429 2 min ×2 five times; Retry-After wins when longer', () => {
  assert.equal(retryOutcome({ outcome: O.RESET }, 1).retryAfterMs, 120_000);
  assert.equal(retryOutcome({ outcome: O.RESET }, 2).retryAfterMs, 240_000);
  assert.equal(retryOutcome({ outcome: O.RESET }, 3).retry, undefined);
  assert.equal(retryOutcome({ outcome: O.RESET }, 3).retryAfterMs, 30_000, 'no retry left: the host penalty alone');
  assert.equal(retryOutcome({ outcome: O.HTTP_429 }, 5).retryAfterMs, 120_000 * 16);
  assert.equal(retryOutcome({ outcome: O.HTTP_429 }, 6).retry, undefined);
  assert.equal(retryOutcome({ outcome: O.HTTP_429, retryAfterMs: 3_000_000 }, 1).retryAfterMs, 3_000_000);
  assert.equal(retryOutcome({ outcome: O.HTTP_429, retryAfterMs: 1000 }, 1).retryAfterMs, 120_000);
  assert.equal(retryOutcome({ outcome: O.HTTP_4XX }, 1).retryAfterMs, undefined, 'no penalty, no wait');
});

test('property: scale multiplies the table, never the server\'s Retry-After', () => {
  const codes = Object.values(O).filter((c) => c !== O.OK);
  fc.assert(fc.property(fc.constantFrom(...codes), fc.integer({ min: 1, max: 7 }), fc.double({ min: 1e-4, max: 1, noNaN: true }),
    fc.option(fc.integer({ min: 0, max: 3_600_000 }), { nil: undefined }), (code, n, scale, ra) => {
      const base = retryOutcome({ outcome: code }, n);
      const scaled = retryOutcome({ outcome: code, retryAfterMs: ra }, n, scale);
      const expect = Math.ceil(Math.max((base.retryAfterMs ?? 0) * scale, ra ?? 0));
      return (scaled.retryAfterMs ?? 0) === expect && scaled.retry === base.retry;
    }), { seed: Number(process.env.FC_SEED ?? 0x7e7), numRuns: 500 });
});
