/**
 * What one fetch returns (fetcher.ts, built by exchange.ts at the exchange's end; outcome.ts maps
 * errors and statuses onto its outcome): the WARC's request and response heads, the payload as
 * transferred and as decoded, and the outcome code the error policy acts on.
 */
import type { FetchOutcomeCode } from './error-policy.js';
import type { Hold } from './memory-budget.js';

export interface FetchResult {
  url: string;
  ip: string;
  /** 'ok' or a stable CRAWL_FETCH_* code (error-policy.ts, docs/errors.md). */
  outcome: FetchOutcomeCode;
  /** Underlying error code when the outcome came from an exception (UND_ERR_*, ECONNRESET, CRAWL_DNS_* …). */
  errorCode?: string;
  status?: number;
  statusText?: string;
  /** Always '1.1' (undici speaks HTTP/1.1 and does not report the server's minor version). */
  httpVersion?: string;
  /** Request head as sent (for the WARC request record). */
  requestHead: Uint8Array;
  /** Response head reconstructed from the raw header list (for the WARC response record). */
  responseHead?: Uint8Array;
  /** Response headers as received: [name, value, name, value, …] (case and order kept). */
  rawHeaders?: string[];
  /** Payload as transferred (chunking removed, content-encoding intact), capped — what WARC stores. */
  body: Uint8Array;
  /** Content-decoded payload (capped) — what the parser reads. Empty when decoding failed. */
  decoded: Uint8Array;
  /** The raw body hit maxBodyBytes (or the exchange was cut by a timeout/reset mid-body). */
  truncated: boolean;
  /** why, when truncated: the size cap ('length'), a time limit ('time'), a cut connection ('disconnect') */
  truncatedReason?: 'length' | 'time' | 'disconnect';
  contentType?: string;
  charset?: string;
  contentEncoding?: string;
  /** Absolute redirect target of a 3xx (never followed inline). */
  location?: string;
  /** Retry-After of a 429/503, ms. */
  retryAfterMs?: number;
  /** The bytes of `body` and `decoded` counted in the Fetcher's budget, until `Fetcher.release`. */
  hold?: Hold;
  /** Date.now() at start. */
  startedAt: number;
  /**
   * When the request was handed to its socket (undici's onConnect, right before the write), ms since
   * the epoch on the shared clock (performance.timeOrigin + performance.now()); absent when it was
   * never sent.
   */
  wireAt?: number;
  timings: { connectMs?: number; firstByteMs?: number; totalMs: number };
}
