/**
 * The main thread's Fetcher and the page workers' fetcher options, from the config: a module of its
 * own, light to load (src/fetch, the config), so that the opening's robots.txt fetches of the seeds
 * (early-robots.ts) can go out before the crawler's other modules are loaded.
 */
import { Fetcher } from '../../fetch/index.js';
import type { WireShare } from '../../fetch/wire-share.js';
import type { MemoryBudget } from '../../fetch/memory-budget.js';
import { MAX_DECODED_BYTES } from '../../budget/body-budget.js';
import type { DnsCache } from '../../dns/index.js';
import type { CrawlConfig } from '../../config/config.js';
import { headerRecord } from '../../config/request-headers.js';
import type { PageFetcherOptions } from '../../threads/page/page-worker-protocol.js';
import { withMargin } from './margin.js';

/**
 * Coded bytes the main thread's Fetcher decodes itself; a larger gzip / deflate / br body is
 * decoded on the libuv pool. The main thread is the crawl's serial part: gunzip of a 75 KB page
 * (~15 KB coded, the real manuals' typical page, every one gzip-coded by their nginx) costs it
 * 0.12–0.2 ms on the event loop, against ~0.03 ms to hand it to the pool; below ~4 KiB coded the
 * hand-off costs more than the decode. (A page worker decodes on its own thread: the default.)
 */
export const MAIN_SYNC_DECODE_BYTES = 4096;

/** The crawl's Fetcher on the main thread: its limits, the floors at the socket and the network guard, from the config. */
export function newFetcher(cfg: CrawlConfig, dns: DnsCache, share?: WireShare, budget?: MemoryBudget): Fetcher {
  return new Fetcher({ ...fetcherOptions(cfg), dns, share, budget, syncDecodeBytes: MAIN_SYNC_DECODE_BYTES });
}

/** The fetcher's options from the config (the main thread's Fetcher and each page worker's). */
export function fetcherOptions(cfg: CrawlConfig): PageFetcherOptions {
  return {
    userAgent: cfg.userAgent,
    maxBodyBytes: cfg.maxBodyBytes,
    maxDecodedBytes: MAX_DECODED_BYTES,
    // Bodies of every type are downloaded and archived as received (PDF, images, …): what is
    // parsed for links (HTML) is decided after the fetch, not by what is read off the wire.
    acceptContentTypes: null,
    totalTimeoutMs: cfg.fetchTimeoutMs,
    connectTimeoutMs: Math.min(10_000, cfg.fetchTimeoutMs),
    headersTimeoutMs: Math.min(15_000, cfg.fetchTimeoutMs),
    bodyTimeoutMs: Math.min(15_000, cfg.fetchTimeoutMs),
    // The floors where the server sees them: a request queued behind a slow one on its IP's
    // connection is written no sooner than τs0 / τh0 after the previous one (src/fetch wire gate).
    minIpIntervalMs: withMargin(cfg.minIpDelayMs, cfg),
    minHostIntervalMs: withMargin(cfg.minHostDelayMs, cfg),
    // The network guard refuses special-purpose addresses; these ranges are allowed anyway.
    allowedNetworks: cfg.allowNetworks,
    // --header / --tls-insecure (validated in config.ts / request-headers.ts).
    headers: headerRecord(cfg.headers),
    tlsRejectUnauthorized: !cfg.tlsInsecure,
  };
}
