/**
 * Failure policy as data (BUbiNG's ParsingThread tables, undici's stable error codes): every
 * outcome a fetch, a DNS lookup or a robots.txt fetch can report, with what the crawler does next.
 * docs/errors.md renders this table; `test/fetch/error-policy.test.ts` checks the two agree.
 *
 *   retry        — fetch the URL again later?
 *   maxRetries   — how many times at most (after the first attempt)
 *   backoffMs    — delay before retry n (1-based) is backoffMs · backoffFactor^(n-1); a larger
 *                  Retry-After from the server wins (429/503)
 *   hostPenaltyMs — least wait before the host is contacted again after this outcome, retried or
 *                  not (the IP heap is unaffected); hostile behaviour costs the host, not us
 * src/fetch/retry-policy.ts applies the table in the crawler (both delays as host waits).
 */

export interface OutcomePolicy {
  retry: boolean;
  maxRetries: number;
  backoffMs: number;
  backoffFactor: number;
  hostPenaltyMs: number;
  /** One line for docs/errors.md. */
  description: string;
}

const MIN = 60_000;

function p(retry: boolean, maxRetries: number, backoffMs: number, hostPenaltyMs: number, description: string, backoffFactor = 2): OutcomePolicy {
  return Object.freeze({ retry, maxRetries, backoffMs, backoffFactor, hostPenaltyMs, description });
}

/** Outcome codes of `Fetcher.fetch` (FetchResult.outcome). */
export const FETCH_OUTCOMES = {
  OK: 'ok',
  DNS: 'CRAWL_FETCH_DNS',
  BAD_URL: 'CRAWL_FETCH_BAD_URL',
  BLOCKED_ADDRESS: 'CRAWL_FETCH_BLOCKED_ADDRESS',
  CONNECT_REFUSED: 'CRAWL_FETCH_CONNECT_REFUSED',
  CONNECT_TIMEOUT: 'CRAWL_FETCH_CONNECT_TIMEOUT',
  CONNECT: 'CRAWL_FETCH_CONNECT',
  HEADERS_TIMEOUT: 'CRAWL_FETCH_HEADERS_TIMEOUT',
  BODY_TIMEOUT: 'CRAWL_FETCH_BODY_TIMEOUT',
  TOTAL_TIMEOUT: 'CRAWL_FETCH_TOTAL_TIMEOUT',
  RESET: 'CRAWL_FETCH_RESET',
  TLS: 'CRAWL_FETCH_TLS',
  TOO_LARGE: 'CRAWL_FETCH_TOO_LARGE',
  DECODE: 'CRAWL_FETCH_DECODE',
  BOMB: 'CRAWL_FETCH_BOMB',
  CONTENT_TYPE: 'CRAWL_FETCH_CONTENT_TYPE',
  REDIRECT: 'CRAWL_FETCH_REDIRECT',
  HTTP_3XX: 'CRAWL_FETCH_HTTP_3XX',
  HTTP_4XX: 'CRAWL_FETCH_HTTP_4XX',
  HTTP_429: 'CRAWL_FETCH_HTTP_429',
  HTTP_5XX: 'CRAWL_FETCH_HTTP_5XX',
  BAD_RESPONSE: 'CRAWL_FETCH_BAD_RESPONSE',
  CHUNK_FLOOD: 'CRAWL_FETCH_CHUNK_FLOOD',
  INTERIM_LIMIT: 'CRAWL_FETCH_INTERIM_LIMIT',
  TRANSFER_CODING: 'CRAWL_FETCH_TRANSFER_CODING',
  ABORTED: 'CRAWL_FETCH_ABORTED',
  ERROR: 'CRAWL_FETCH_ERROR',
} as const;
export type FetchOutcomeCode = (typeof FETCH_OUTCOMES)[keyof typeof FETCH_OUTCOMES];

/** Outcome codes of `fetchRobots`. */
export const ROBOTS_OUTCOMES = {
  OK: 'ok',
  UNAVAILABLE: 'CRAWL_ROBOTS_UNAVAILABLE',
  UNREACHABLE: 'CRAWL_ROBOTS_UNREACHABLE',
  REDIRECT_LIMIT: 'CRAWL_ROBOTS_REDIRECT_LIMIT',
} as const;

/**
 * The one policy table. Keys: 'ok', CRAWL_FETCH_*, CRAWL_DNS_*, CRAWL_ROBOTS_*.
 * Frozen; the politeness layer and the pipeline read it, nobody writes it.
 */
export const OUTCOME_POLICY: Readonly<Record<string, OutcomePolicy>> = Object.freeze({
  ok: p(false, 0, 0, 0, '2xx response; body stored (truncated: true if it hit maxBodyBytes — recorded, not an error).'),
  CRAWL_FETCH_REDIRECT: p(false, 0, 0, 0, '301/302/303/307/308 with a Location: the target is returned as a new link, never followed inline.'),
  CRAWL_FETCH_HTTP_3XX: p(false, 0, 0, 0, 'Other 3xx, or a redirect without a usable Location (missing, empty, unparseable, not http(s), or back to the URL itself).'),
  CRAWL_FETCH_HTTP_4XX: p(false, 0, 0, 0, '4xx other than 429: the page is gone or forbidden.'),
  CRAWL_FETCH_HTTP_429: p(true, 5, 2 * MIN, 2 * MIN, '429 Too Many Requests: slow the host down; Retry-After (retryAfterMs) wins when longer.'),
  CRAWL_FETCH_HTTP_5XX: p(true, 3, 5 * MIN, 30_000, '5xx (503 carries Retry-After in retryAfterMs when sent).'),
  CRAWL_FETCH_DNS: p(true, 2, 30 * MIN, 0, 'The host did not resolve (details in the DNS code); the DNS cache holds the negative answer.'),
  CRAWL_FETCH_BAD_URL: p(false, 0, 0, 0, 'The URL is not an absolute http(s) URL the fetcher can request.'),
  CRAWL_FETCH_BLOCKED_ADDRESS: p(false, 0, 0, 0, 'The address to connect to is special-purpose (loopback, private, link-local …) and outside allowNetworks, or is the crawler\'s own status port (errorCode says which); nothing was sent.'),
  CRAWL_FETCH_CONNECT_REFUSED: p(true, 2, 10 * MIN, 5 * MIN, 'TCP connection refused (RST on SYN).'),
  CRAWL_FETCH_CONNECT_TIMEOUT: p(true, 2, 10 * MIN, 5 * MIN, 'No TCP/TLS connection within connectTimeoutMs.'),
  CRAWL_FETCH_CONNECT: p(true, 2, 10 * MIN, 5 * MIN, 'Other connect failure (unreachable network/host).'),
  CRAWL_FETCH_HEADERS_TIMEOUT: p(true, 2, 5 * MIN, MIN, 'Connected, but no complete response head within headersTimeoutMs (first byte).'),
  CRAWL_FETCH_BODY_TIMEOUT: p(true, 1, 5 * MIN, MIN, 'The body stalled: no data for bodyTimeoutMs (idle timeout).'),
  CRAWL_FETCH_TOTAL_TIMEOUT: p(true, 1, 10 * MIN, MIN, 'The whole exchange took longer than totalTimeoutMs (slow trickle); partial body kept.'),
  CRAWL_FETCH_RESET: p(true, 2, 2 * MIN, 30_000, 'The server closed or reset the connection before the response was complete.'),
  CRAWL_FETCH_TLS: p(false, 0, 0, 0, 'TLS handshake or certificate failure.'),
  CRAWL_FETCH_TOO_LARGE: p(false, 0, 0, MIN, 'The response head is larger than maxHeaderBytes.'),
  CRAWL_FETCH_DECODE: p(false, 0, 0, 0, 'Content-Encoding could not be decoded: corrupt, unsupported (zstd, compress), or the body is not one complete stream of it; raw body kept.'),
  CRAWL_FETCH_BOMB: p(false, 0, 0, 10 * MIN, 'Decoded body exceeded maxDecodedBytes (decompression bomb); decoding stopped, raw body kept.'),
  CRAWL_FETCH_CONTENT_TYPE: p(false, 0, 0, 0, 'Content-Type not in acceptContentTypes; the body was not downloaded.'),
  CRAWL_FETCH_BAD_RESPONSE: p(true, 1, 10 * MIN, MIN, 'Malformed HTTP (parser error: bad status line, invalid header syntax).'),
  CRAWL_FETCH_CHUNK_FLOOD: p(false, 0, 0, 10 * MIN, 'The body came in more than 16,384 pieces averaging under 64 bytes (one-byte chunks without end, or one-byte writes): cut there, nothing archived.'),
  CRAWL_FETCH_INTERIM_LIMIT: p(false, 0, 0, 10 * MIN, 'More than 32 interim (1xx) responses before the final one (a flood of 103 Early Hints): cut there, nothing archived.'),
  CRAWL_FETCH_TRANSFER_CODING: p(false, 0, 0, MIN, 'A Transfer-Encoding other than chunked, gzip and deflate (or one that does not decode): the payload cannot be read, nothing archived (a still-coded body is never stored as the payload).'),
  CRAWL_FETCH_ABORTED: p(true, 1, 0, 0, 'The request was cut short: the fetcher was closed, or a stop aborted it after its grace period (the URL stays in the frontier and the resume asks for it again).', 1),
  CRAWL_FETCH_ERROR: p(true, 1, 10 * MIN, 0, 'Any other failure (the cause code is in FetchResult.errorCode).'),

  CRAWL_DNS_NXDOMAIN: p(false, 0, 0, 0, 'The name does not exist; cached negatively for negativeTtlMs.'),
  CRAWL_DNS_NODATA: p(false, 0, 0, 0, 'The name exists but has no A (or AAAA) record; cached for negativeTtlMs.'),
  CRAWL_DNS_BAD_NAME: p(false, 0, 0, 0, 'Not a syntactically valid host name; nothing is asked.'),
  CRAWL_DNS_SERVFAIL: p(true, 2, 30 * MIN, 0, 'The server failed; cached for failureTtlMs.'),
  CRAWL_DNS_TIMEOUT: p(true, 2, 30 * MIN, 0, 'No answer within timeoutMs × tries; cached for failureTtlMs.'),
  CRAWL_DNS_REFUSED: p(true, 2, 30 * MIN, 0, 'The server refused the query; cached for failureTtlMs.'),
  CRAWL_DNS_UNREACHABLE: p(true, 2, 30 * MIN, 0, 'The DNS server could not be reached.'),
  CRAWL_DNS_CLOSED: p(true, 1, 0, 0, 'The DNS cache was closed during the lookup.', 1),
  CRAWL_DNS_ERROR: p(true, 1, 30 * MIN, 0, 'Any other resolver error.'),

  CRAWL_ROBOTS_UNAVAILABLE: p(false, 0, 0, 0, 'robots.txt answered 4xx: everything is allowed (RFC 9309 §2.3.1.3); cached up to 24 h.'),
  CRAWL_ROBOTS_UNREACHABLE: p(true, 1_000_000, 30 * MIN, 0, 'robots.txt 5xx, timeout or network error: complete disallow (§2.3.1.4), or the cached copy; retried every backoffMs.', 1),
  CRAWL_ROBOTS_REDIRECT_LIMIT: p(false, 0, 0, 0, 'More than 5 consecutive robots.txt redirects, or a redirect back to a URL of the chain (a loop, itself included): RFC 9309 §2.3.1.2 lets us treat it as unavailable → allow all; cached up to 24 h.'),
});

/** Policy for `code` (unknown codes get CRAWL_FETCH_ERROR's). */
export function outcomePolicy(code: string): OutcomePolicy {
  return OUTCOME_POLICY[code] ?? OUTCOME_POLICY.CRAWL_FETCH_ERROR!;
}

/**
 * Delay before retry number `attempt` (1-based) of an outcome, or null when it must not be retried
 * (not retryable, or retries exhausted). A server's Retry-After wins when it asks for longer.
 */
export function retryDelayMs(code: string, attempt: number, retryAfterMs?: number): number | null {
  const pol = outcomePolicy(code);
  if (!pol.retry || attempt > pol.maxRetries) return null;
  const d = pol.backoffMs * Math.pow(pol.backoffFactor, Math.max(0, attempt - 1));
  return retryAfterMs !== undefined && retryAfterMs > d ? retryAfterMs : d;
}

function dur(ms: number): string {
  if (ms === 0) return '0';
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${ms / 1000} s`;
}

/** The policy table as Markdown (docs/errors.md embeds exactly this; a test keeps them equal). */
export function renderOutcomePolicyTable(): string {
  const rows = ['| code | retry | max retries | backoff (first, factor) | host penalty | meaning |', '| --- | --- | --- | --- | --- | --- |'];
  for (const [code, p] of Object.entries(OUTCOME_POLICY)) {
    const backoff = p.retry ? `${dur(p.backoffMs)}${p.backoffFactor !== 1 ? `, ×${p.backoffFactor}` : ', fixed'}` : '—';
    const max = p.retry ? (p.maxRetries >= 1_000_000 ? 'until it answers' : String(p.maxRetries)) : '—';
    rows.push(`| \`${code}\` | ${p.retry ? 'yes' : 'no'} | ${max} | ${backoff} | ${dur(p.hostPenaltyMs)} | ${p.description} |`);
  }
  return rows.join('\n') + '\n';
}
