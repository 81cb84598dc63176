/**
 * The retry policy of docs/errors.md applied to one finished fetch: whether the URL is fetched
 * again, and how long its host must wait first.
 *
 * The data is src/fetch's OUTCOME_POLICY (one table: code → retry, max retries, first backoff,
 * factor, host penalty). After the n-th failed attempt of a URL (n = 1 for the first fetch):
 *
 *   retry       when the outcome is retryable and n ≤ maxRetries (retry number n follows);
 *   wait        backoff(n) = backoffMs · factor^(n−1) for a retry, the host penalty in any case,
 *               and the server's Retry-After (429, 503; already capped at MAX_RETRY_AFTER_MS by
 *               the fetcher) — the largest of the three. Table values are multiplied by
 *               `scale` (config `retryDelayScale`, 1 in production; tests shrink minutes to ms);
 *               Retry-After is the server's own figure and is never scaled.
 *
 * The wait is a HOST wait (the frontier's Retry-After deadline): a retried URL goes back to its
 * host's queue, and neither it nor any other URL of that host is fetched before the wait is over
 * (the thesis' politeness is per host and IP, VII.1; a host that resets, throttles or fails is
 * backed off as a whole, as Heritrix snoozes a queue). Nothing grows per URL: the URL keeps its RAM
 * slot in the host queue, the host one deadline. Other hosts on the same IP are not held.
 */
import { OUTCOME_POLICY, outcomePolicy, retryDelayMs, FETCH_OUTCOMES, type FetchResult } from './index.js';
import type { FetchOutcome as PoliteFetchOutcome } from '../frontier/index.js';

/** The FetchResult fields the decision needs. */
export type RetryInput = Pick<FetchResult, 'outcome' | 'retryAfterMs'>;

/**
 * Outcomes that say the host misbehaved (politeness also lengthens its τh: 2^errors, and fails the
 * host after maxHostErrors in a row; a success resets the count): those with a host penalty.
 */
const HOST_ERRORS = new Set(Object.entries(OUTCOME_POLICY).filter(([, pol]) => pol.hostPenaltyMs > 0).map(([code]) => code));

/** Attempts per URL the frontier must allow so that every fetch outcome gets all its retries. */
export const MAX_FETCH_ATTEMPTS = 1 + Math.max(
  ...Object.values(FETCH_OUTCOMES).map((code) => { const p = outcomePolicy(code); return p.retry ? p.maxRetries : 0; }),
);

/**
 * The frontier's politeness update for a fetch that ended with `r` after `attempts` attempts of the
 * URL (this one included). `scale` multiplies the table's delays (config retryDelayScale).
 */
export function retryOutcome(r: RetryInput, attempts: number, scale = 1): PoliteFetchOutcome {
  if (r.outcome === 'ok') return {};
  const pol = outcomePolicy(r.outcome);
  const out: PoliteFetchOutcome = {};
  if (HOST_ERRORS.has(r.outcome)) out.hostError = true;
  let wait = pol.hostPenaltyMs * scale;
  const backoff = retryDelayMs(r.outcome, attempts);
  if (backoff !== null) {
    out.retry = true;
    wait = Math.max(wait, backoff * scale);
  }
  if (r.retryAfterMs !== undefined) wait = Math.max(wait, r.retryAfterMs);
  if (wait > 0) out.retryAfterMs = Math.ceil(wait);
  return out;
}
