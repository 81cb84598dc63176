/**
 * The sizes of the crawl's memory bounds for fetched bodies, from `--ram` (docs/configuration.md,
 * "RAM"; issue #30: what hostile servers send must not grow the process past `--ram`):
 *
 *   body budget   the RAM plan's share of bodies, U/16 (ram-budget.ts; at least the reserve +
 *                 16 MiB): every body's buffer, its decoded copy, held from the first byte until
 *                 the page's parse has answered, across the main thread's and the page workers'
 *                 fetches (src/fetch/memory-budget.ts);
 *   its reserve   the body cap + the decoded cap (8 + 16 MiB by default): what one body may need
 *                 at most, so that the one body allowed into it always finishes;
 *   parse copies  ramBytes/32, at least two of the largest pages (48 MiB by default): the parse
 *                 pool's batch copies (parse-pool.ts; --page-workers off only: page workers parse
 *                 the body where it was fetched).
 */
import { MemoryBudget } from '../fetch/memory-budget.js';
import { shareableRam } from './ram-budget.js';
import type { CrawlConfig } from '../config/config.js';

const MiB = 1024 * 1024;

/** The content-decoded payload cap of the crawl's fetches (a bigger decoded body is CRAWL_FETCH_BOMB). */
export const MAX_DECODED_BYTES = 16 * MiB;

export function bodyBudgetBytes(cfg: Pick<CrawlConfig, 'ramBytes' | 'maxBodyBytes'>): { capacity: number; reserve: number } {
  const reserve = cfg.maxBodyBytes + MAX_DECODED_BYTES;
  return { capacity: Math.max(Math.floor(shareableRam(cfg.ramBytes) / 16), reserve + 16 * MiB), reserve };
}

export type BodyBudget = MemoryBudget;

/** What GET /status and /metrics show of the budget (stats.ts StatusSnapshot.bodyBudget). */
export function budgetStatus(b: MemoryBudget | null): { capacityBytes: number; usedBytes: number; peakBytes: number; waits: number } | undefined {
  return b === null ? undefined : { capacityBytes: b.capacityBytes, usedBytes: b.usedBytes, peakBytes: b.peakBytes, waits: b.waits };
}

export function newBodyBudget(cfg: Pick<CrawlConfig, 'ramBytes' | 'maxBodyBytes'>): MemoryBudget {
  const { capacity, reserve } = bodyBudgetBytes(cfg);
  return MemoryBudget.create(capacity, reserve);
}

/**
 * Bytes of the parse pool's batch copies in flight at most: ramBytes/32, and room for two of the
 * largest pages (body cap + decoded cap), so that one large page in a worker does not hold the
 * ordinary pages back.
 */
export function parseCopyBytes(cfg: Pick<CrawlConfig, 'ramBytes' | 'maxBodyBytes'>): number {
  return Math.max(Math.floor(cfg.ramBytes / 32), 2 * (cfg.maxBodyBytes + MAX_DECODED_BYTES));
}
