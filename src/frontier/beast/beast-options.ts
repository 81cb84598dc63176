/** The options of a BEAST (beast.ts), given by the frontier (options.ts). */
import type { FrontierUrl } from '../record.js';

export interface BeastOptions {
  /** Initial number of queues j (≥ 1). @default 2 */
  initialQueues?: number;
  /** Cap on j ("some maximum OS-imposed limit"). @default 256 */
  maxQueues?: number;
  /** Distinct PLDs counted in one QF re-spread pass. @default 1_048_576 (≈ 24 MB) */
  maxPassPlds?: number;
  /** Records read from QF per batch during a re-spread. @default 4096 */
  respreadBatch?: number;
  /** Refreshes the budget B of URLs read back from QF (e.g. `star.rebudget`). */
  rebudget?: (urls: FrontierUrl[]) => Promise<void>;
  /**
   * True while a host still holds its full share of URLs in RAM: its deferred URLs stay in QH at a
   * re-spread instead of making a round trip through the ring only to be deferred again.
   */
  hostFull?: (hostHi: number, hostLo: number) => boolean;
  /** The frontier's clock in ms (paces re-reads of the deferrals: beast.ts). @default Date.now */
  now?: () => number;
  /**
   * Awaited between batches of a re-spread and of a checkpoint's queue compaction, so that the
   * caller's event loop keeps running (a re-spread reads all of QF, which grows with the crawl).
   */
  pause?: () => Promise<void>;
}
