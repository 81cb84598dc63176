/**
 * Heritrix's crawl.log line format (`--crawl-log-format heritrix`), as Heritrix 3's
 * UriProcessingFormatter writes it: 12 fields separated by one space, some padded on the left.
 *
 *   1 log time            2026-11-25T21:00:00.123Z   (ISO 8601 UTC, ms)
 *   2 fetch status        right-aligned in 5 columns: the HTTP status, or a negative code below
 *   3 size                right-aligned in 10 columns: body bytes, `-` when nothing was received
 *   4 URI
 *   5 discovery path      hop letters from the seed (L link, R redirect, P prerequisite); `-` for a seed
 *   6 via                 the URL this one was found on; `-` for a seed
 *   7 MIME type           the Content-Type up to the first blank, `;` or `,`; `no-type` when none
 *   8 thread              `#` and 3 digits: drumcrawl fetches on one event loop, always `#000`
 *   9 fetch time+duration 17-digit start time (yyyyMMddHHmmssSSS) `+` milliseconds; `-` without a fetch
 *  10 digest              `sha1:<base32>`; `-` without a body
 *  11 source tag          `-` (drumcrawl does not tag URLs with their seed)
 *  12 annotations         comma-separated; drumcrawl writes its own outcome code here when it is
 *                         not `ok` (e.g. `CRAWL_FETCH_TIMEOUT`, `dropped:robots`); `-` when none
 *
 * Negative status codes are Heritrix's FetchStatusCodes (heritrixStatus below). Fields never
 * contain a blank, CR or LF (each is replaced by `%20`, `%0D`, `%0A`) so one line stays 12 fields.
 */
import type { CrawlLogEntry } from './crawl-log-entry.js';
import { CrawlError } from '../errors.js';

/** Heritrix FetchStatusCodes used by drumcrawl (modules/.../fetcher/FetchStatusCodes.java). */
export const HERITRIX_STATUS = {
  DOMAIN_UNRESOLVABLE: -1,
  CONNECT_FAILED: -2,
  CONNECT_LOST: -3,
  TIMEOUT: -4,
  RUNTIME_EXCEPTION: -5,
  DOMAIN_PREREQUISITE_FAILURE: -6,
  UNFETCHABLE_URI: -7,
  TOO_MANY_RETRIES: -8,
  ROBOTS_PREREQUISITE_FAILURE: -61,
  DEEMED_CHAFF: -4000,
  TOO_MANY_LINK_HOPS: -4001,
  OUT_OF_SCOPE: -5000,
  BLOCKED_BY_USER: -5001,
  PROCESSING_THREAD_KILLED: -7000,
  ROBOTS_PRECLUDED: -9998,
} as const;

const H = HERITRIX_STATUS;

/**
 * The status field for a line: the HTTP status when there was a response, else the Heritrix code
 * for drumcrawl's outcome. Dropped URLs (`dropped:<reason>`, docs/output-format.md): robots →
 * -9998, a host that did not resolve → -6, scope → -5000, trap → -4000, depth → -4001, a host or
 * URL that kept failing → -8. One table for every dropped line, whoever drops the URL.
 */
export function heritrixStatus(status: number | null, outcome: string): number {
  if (status !== null) return status;
  if (outcome.startsWith('dropped:')) {
    const reason = outcome.slice(8);
    if (reason === 'robots') return H.ROBOTS_PRECLUDED;
    if (reason.startsWith('CRAWL_DNS_') || reason === 'CRAWL_FETCH_DNS') return H.DOMAIN_PREREQUISITE_FAILURE;
    if (reason === 'scope' || reason.startsWith('scope:')) return H.OUT_OF_SCOPE;
    if (reason === 'trap' || reason.startsWith('trap:')) return H.DEEMED_CHAFF;
    if (reason === 'depth' || reason === 'max-depth') return H.TOO_MANY_LINK_HOPS;
    if (reason === 'CRAWL_FETCH_BLOCKED_ADDRESS') return H.BLOCKED_BY_USER;
    return H.TOO_MANY_RETRIES; // host-failed, host-errors, max-attempts and other give-ups
  }
  if (outcome.startsWith('CRAWL_DNS_') || outcome === 'CRAWL_FETCH_DNS') return H.DOMAIN_UNRESOLVABLE;
  if (outcome.startsWith('CRAWL_ROBOTS_')) return H.ROBOTS_PREREQUISITE_FAILURE;
  switch (outcome) {
    case 'CRAWL_FETCH_CONNECT_REFUSED':
    case 'CRAWL_FETCH_CONNECT':
    case 'CRAWL_FETCH_CONNECT_TIMEOUT':
    case 'CRAWL_FETCH_TLS':
      return H.CONNECT_FAILED;
    case 'CRAWL_FETCH_RESET':
      return H.CONNECT_LOST;
    case 'CRAWL_FETCH_HEADERS_TIMEOUT':
    case 'CRAWL_FETCH_BODY_TIMEOUT':
    case 'CRAWL_FETCH_TOTAL_TIMEOUT':
      return H.TIMEOUT;
    case 'CRAWL_FETCH_BAD_URL':
      return H.UNFETCHABLE_URI;
    case 'CRAWL_FETCH_BLOCKED_ADDRESS':
      return H.BLOCKED_BY_USER;
    case 'CRAWL_FETCH_ABORTED':
      return H.PROCESSING_THREAD_KILLED;
    default:
      return H.RUNTIME_EXCEPTION;
  }
}

/** MimetypeUtils.truncate: the type up to the first blank, `;` or `,`; `no-type` when none. */
export function heritrixMime(contentType: string | null): string {
  if (contentType === null) return 'no-type';
  const m = /^([^\s;,]+)/.exec(contentType);
  return m === null ? 'no-type' : m[1]!;
}

const pad = (s: string, n: number, c = ' '): string => (s.length >= n ? s : c.repeat(n - s.length) + s);

/** 17-digit UTC date yyyyMMddHHmmssSSS (ArchiveUtils.get17DigitDate). */
export function date17(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:T.Z]/g, '');
}

function field(s: string | null): string {
  if (s === null || s === '') return '-';
  return /[ \t\r\n]/.test(s) ? s.replace(/ /g, '%20').replace(/\t/g, '%09').replace(/\r/g, '%0D').replace(/\n/g, '%0A') : s;
}

/** One Heritrix crawl.log line (with trailing LF). */
export function formatHeritrixLine(e: CrawlLogEntry): string {
  const dropped = e.outcome.startsWith('dropped:');
  const size = e.status === null && e.bytes === 0 ? '-' : String(e.bytes);
  const start = e.time.getTime() - Math.round(e.durationMs);
  const fetched = dropped ? '-' : `${date17(start)}+${Math.round(e.durationMs)}`;
  return `${e.time.toISOString()} ${pad(String(heritrixStatus(e.status, e.outcome)), 5)} ${pad(size, 10)} ${field(e.url)} ${field(e.path ?? null)} ${field(e.via ?? null)} ` +
    `${heritrixMime(e.mime ?? null)} #000 ${fetched} ${field(e.digest)} - ${e.outcome === 'ok' ? '-' : field(e.outcome)}\n`;
}

/** A Heritrix line read back (tests, tools): the 12 fields, `-` kept as written. */
export interface HeritrixLine {
  logTime: string;
  status: number;
  size: string;
  url: string;
  path: string;
  via: string;
  mime: string;
  thread: string;
  fetchTime: string;
  digest: string;
  sourceTag: string;
  annotations: string;
}

export function parseHeritrixLine(line: string): HeritrixLine {
  const f = line.replace(/\n$/, '').trim().split(/ +/);
  if (f.length !== 12) throw new CrawlError('CRAWL_STORE_BAD_LOG_LINE', `Heritrix crawl.log line has ${f.length} fields, expected 12`);
  return {
    logTime: f[0]!, status: Number(f[1]), size: f[2]!, url: f[3]!, path: f[4]!, via: f[5]!, mime: f[6]!, thread: f[7]!,
    fetchTime: f[8]!, digest: f[9]!, sourceTag: f[10]!, annotations: f[11]!,
  };
}
