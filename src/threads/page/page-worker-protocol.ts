/**
 * What crosses the thread boundary between the crawler's main thread and its page workers
 * (page-worker.ts, page-worker-pool.ts): dispatch orders go out in batches, page answers come back
 * in batches. Only URLs, addresses, times, outcomes and the page's encoded results cross: the body
 * stays in the worker, the link table and the encoded WARC group come back in one transferred
 * buffer per page (links-codec.ts ParseOutput).
 */
import type { FetcherOptions, FetchResult } from '../../fetch/index.js';
import type { TruncatedReason } from '../../store/index.js';
import type { ParseWorkerData } from './parse-worker.js';

/** One page to fetch: what the frontier released, with the floors' reserved earliest start. */
export interface PageOrder {
  id: number;
  url: string;
  ip: string;
  /** the URL's host (the host floor's key) */
  host: string;
  /** the request's own delays (FrontierUrl.hostGapMs / ipGapMs), held against the actual sends */
  hostGapMs: number;
  ipGapMs: number;
  /** earliest start on the shared clock (page-worker-floors.ts); -Infinity: no floor */
  notBefore: number;
  /** extract links if the page is HTML (false past --max-depth) */
  follow: boolean;
  /** a sitemap: not parsed for links; its content-decoded body comes back (src/sitemap/crawl.ts) */
  sitemap: boolean;
  /** extract its page requisites (src/crawl/fetched/fetched-stage.ts requisitesOf) */
  requisites: boolean;
}

/** How the page's parse went (PARSE_*). */
export const PARSE_OK = 0;
export const PARSE_ERROR = 1; // CRAWL_PARSE_ERROR: the parser threw; archived without links
export const PARSE_LIMIT = 2; // CRAWL_PARSE_LIMIT: beyond the parser's bounds; archived without links
export const PARSE_CRASH = 3; // CRAWL_PARSE_CRASH: the worker died while parsing it; nothing archived
export const PARSE_TIMEOUT = 4; // CRAWL_PARSE_TIMEOUT: the worker was terminated for it; nothing archived
export const PARSE_ABORTED = 5; // CRAWL_PARSE_ABORTED: a stop left it unparsed; nothing archived, fetched again on resume

export const PARSE_CODES: Record<number, 'CRAWL_PARSE_ERROR' | 'CRAWL_PARSE_LIMIT' | 'CRAWL_PARSE_CRASH' | 'CRAWL_PARSE_TIMEOUT' | 'CRAWL_PARSE_ABORTED'> = {
  [PARSE_ERROR]: 'CRAWL_PARSE_ERROR',
  [PARSE_LIMIT]: 'CRAWL_PARSE_LIMIT',
  [PARSE_CRASH]: 'CRAWL_PARSE_CRASH',
  [PARSE_TIMEOUT]: 'CRAWL_PARSE_TIMEOUT',
  [PARSE_ABORTED]: 'CRAWL_PARSE_ABORTED',
};

/** One page's fetch result, without its bytes (sent as soon as the fetch ends). */
export interface PageAnswer {
  id: number;
  /** actual start on the shared clock (0: never sent) */
  at: number;
  /** when it was handed to its socket (FetchResult.wireAt), shared clock */
  wireAt?: number;
  /** fetch result fields (src/fetch FetchResult), bodies excepted */
  ip: string;
  outcome: FetchResult['outcome'];
  errorCode?: string;
  status?: number;
  contentType?: string;
  location?: string;
  retryAfterMs?: number;
  truncated: boolean;
  truncatedReason?: TruncatedReason;
  totalMs: number;
  /** payload bytes as transferred */
  payloadBytes: number;
  /** an HTTP response: its ParseNote follows (else nothing was archived or parsed) */
  parses: boolean;
}

/** One page's parse (sent after its PageAnswer, once the worker has parsed it). */
export interface ParseNote {
  id: number;
  /** PARSE_* */
  parse: number;
  /**
   * ParseOutput (parse-worker.ts): link table + WARC group; for PARSE_ERROR / LIMIT without links.
   * Its ArrayBuffer is this page's alone: the main thread hands it on to the WARC writer's thread by
   * transfer (EncodedGroupLike.owned), so the link table it reads comes apart, in `table`.
   */
  out?: Uint8Array;
  /** a copy of `out`'s link table (the main thread reads it after `out` went to the WARC writer) */
  table?: Uint8Array;
  /**
   * request head + response head, back to back (requestHeadBytes of the first): the CDXJ line and a
   * revisit record are written from them on the main thread
   */
  heads?: Uint8Array;
  requestHeadBytes?: number;
  /** the content-decoded body of a sitemap */
  decoded?: Uint8Array;
  /** the parser's message for PARSE_ERROR / LIMIT / CRASH / TIMEOUT */
  message?: string;
}

/** The fetcher's options that cross to a worker (no DNS: every order names its IP). */
export type PageFetcherOptions = Omit<FetcherOptions, 'dns' | 'isAddressAllowed'>;

export interface PageWorkerData extends ParseWorkerData {
  fetcher: PageFetcherOptions;
  /** SharedFloors' buffer (page-worker-floors.ts), for `workers` page workers */
  floors: SharedArrayBuffer;
  workers: number;
  /** this worker's thread index in SharedFloors (1 + its slot in the pool) */
  index: number;
  /**
   * This worker's parse state for the supervisor: Float64 [0] = Date.now() when the current parse
   * began, Int32 at byte 8 = the id of the page being parsed (0: none).
   */
  state: SharedArrayBuffer;
  /** endpoints the fetcher refuses (the crawler's status server), as refuseEndpoint(host, port) */
  refused: [string, number][];
  /** post a 'started' message at each send (PageWorkerPool.reportStarts) */
  reportStarts?: boolean;
  /** the body budget's shared count (src/fetch/memory-budget.ts), shared with every thread's Fetcher */
  budget?: SharedArrayBuffer;
}

/** Messages to a worker. */
export type ToWorker =
  | { t: 'orders'; orders: PageOrder[] }
  | { t: 'abort' }
  | { t: 'abandon' }
  | { t: 'intervals'; minIpIntervalMs: number; minHostIntervalMs: number }
  | { t: 'refuse'; host: string; port: number }
  | { t: 'report-starts' }
  | { t: 'close' };

/** Messages from a worker. */
export type FromWorker =
  | { t: 'ready' }
  | { t: 'started'; id: number; at: number; ip: string }
  | { t: 'pages'; fetched: PageAnswer[]; parsed: ParseNote[] };

/** Media types parsed for links. A response without Content-Type is tried as HTML. */
export const isHtml = (ct: string | undefined): boolean => ct === undefined || /^(text\/html|application\/xhtml\+xml)/i.test(ct);

/** A response record's WARC-Truncated value: false, or why the body is not all the server sent. */
export const truncation = (r: { truncated: boolean; truncatedReason?: TruncatedReason }): false | TruncatedReason =>
  (r.truncated ? r.truncatedReason ?? 'unspecified' : false);
