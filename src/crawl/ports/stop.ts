/**
 * How a stop ends the fetches in flight. A stop (signal, --max-time, --max-pages, POST /stop) lets
 * the fetches already on the wire finish for STOP_GRACE_MS — on an ordinary web nearly all of them
 * do, and their pages are kept — then aborts the rest (src/fetch abortInFlight). An aborted fetch
 * is not a page: it is written to the crawl log with its outcome (CRAWL_FETCH_ABORTED), nothing goes
 * into the WARC, and its URL is not reported done to the frontier, which still holds it as in
 * flight; the stop's checkpoint snapshots the frontier's RAM with it (Frontier.commit), so the
 * resume fetches it again. A robots.txt fetch aborted this way is not reported either: the resumed
 * run asks for that host's robots.txt anew. Pages fetched but not yet parsed then are not waited
 * for either (PARSE_ABORTED_CODE), beyond the parses already under way. So a stop takes at most
 * STOP_GRACE_MS plus those parses plus the checkpoint, whatever the servers do (a byte a second, a
 * stalled response, bodies that take seconds each to parse).
 */

/**
 * A page fetched and not yet parsed when the grace period ran out: its parse is not waited for
 * (bodies of hostile size could keep a stop busy for minutes), it is logged with this outcome and
 * not archived, and it stays pending, so the resume fetches it again.
 */
export const PARSE_ABORTED_CODE = 'CRAWL_PARSE_ABORTED';

/** How long a stop waits for fetches in flight before it aborts them. */
export const STOP_GRACE_MS = 2000;

/** The outcome of a fetch the stop aborted (src/fetch's code for a closed exchange). */
export const ABORTED_OUTCOME = 'CRAWL_FETCH_ABORTED';

/** Has the stop's grace period for fetches in flight run out? */
export function graceOver(stopStartedAt: number, now: number = Date.now()): boolean {
  return now - stopStartedAt >= STOP_GRACE_MS;
}
