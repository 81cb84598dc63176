/**
 * src/threads/page — the page workers (thesis Fig. 2: the crawling threads and the parser): the
 * parse pool (piscina, parse-pool.ts, parse-worker.ts) that turns a fetched body into its link
 * table and WARC group, and the page workers (--page-workers on: page-worker*.ts) that fetch,
 * parse and encode a page on a worker, holding the per-host and per-IP floors in a table shared
 * with the main thread (page-worker-floors.ts). Only compact buffers come back (src/threads).
 */
export { SharedFloors, clock } from './page-worker-floors.js';
export { PageWorkerPool, pageWorkerInitialOldMb, pageWorkerYoungMb } from './page-worker-pool.js';
export { PARSE_CODES, PARSE_CRASH, PARSE_OK, PARSE_TIMEOUT, isHtml, truncation, type PageAnswer, type PageFetcherOptions, type PageWorkerData, type ParseNote } from './page-worker-protocol.js';
export { serve } from './page-worker-serve.js';
export { ParsePool, type ParseOutcome } from './parse-pool.js';
export { parse, parsePage, parseToTable, type ParseTask } from './parse-worker.js';
export { PageLane, ParseLane, type PageSinks } from './lanes.js';
