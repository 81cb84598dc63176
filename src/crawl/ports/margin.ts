/**
 * The politeness margin (config.ts politenessMarginMs) added to a configured delay: one rule for the
 * frontier's heaps (frontier-port.ts), the last-step guard (floor-guard.ts) and the fetchers' wire
 * gates (fetch/fetcher-options.ts). A file of its own: the fetcher's options load without the frontier.
 */
import type { CrawlConfig } from '../../config/config.js';

/** A configured delay as the heaps get it: + politenessMarginMs when non-zero (see config.ts). */
export function withMargin(ms: number, cfg: CrawlConfig): number {
  return ms > 0 ? ms + cfg.politenessMarginMs : 0;
}
