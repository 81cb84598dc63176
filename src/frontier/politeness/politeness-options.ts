/**
 * The politeness layer's options (thesis VII.1): the delays τh and τs with their floors (STAR's
 * DelayOptions), the RAM caps of the URL slab and the host table, connections per IP, and the error
 * policy; and the reasons a URL leaves the frontier without a fetch.
 */
import type { DelayOptions } from '../star/index.js';

export interface PolitenessOptions extends DelayOptions {
  /** Cap on URLs in RAM (queued per host + in flight). */
  ramUrls: number;
  /** Cap on one host's URLs in RAM (the rest waits on disk). */
  maxUrlsPerHost: number;
  /** Cap on the host table. */
  maxHosts: number;
  /**
   * Cap on the host table's estimated heap bytes (HOST_ENTRY_BYTES per entry plus its origin,
   * address and compiled robots rules): past it, idle hosts are evicted and no new host is taken
   * in until there is room (its URLs wait in QR). @default Infinity (only maxHosts bounds it)
   */
  maxHostBytes?: number;
  /**
   * Cap on the estimated heap bytes of the URLs in RAM (frontierUrlRamBytes each: the object, its
   * URL, via and hop path): a URL that would go over waits on disk, as when ramUrls is reached.
   * @default Infinity (only ramUrls bounds it)
   */
  maxUrlBytes?: number;
  maxConnectionsPerIp: number;
  maxCrawlDelayMs: number;
  /**
   * Added to a robots.txt Crawl-delay (when non-zero), as the crawler adds its politeness margin to
   * the configured delays before they reach these options (src/crawl/ports/frontier-port.ts withMargin):
   * a Crawl-delay is a delay like any other, judged on the wire. @default 0
   */
  crawlDelayMarginMs?: number;
  maxBackoffMs: number;
  /** Consecutive errors after which a host's URLs are dropped ('host-errors'). */
  maxHostErrors: number;
  /** Fetch attempts per URL before it is dropped ('max-attempts'). */
  maxAttempts: number;
  /** How long a failed / dead host stays failed before it is tried again. */
  failedHostTtlMs: number;
  /**
   * STAR's trust threshold when it ranks by trusted in-degree, else 0: a URL whose PLD's in-degree
   * is below it is untrusted, and its pages keep the untrusted pace (pld-pace.ts).
   */
  trustThreshold?: number;
}

export type DropReason = 'robots' | 'host-failed' | 'host-errors' | 'max-attempts' | (string & {});
