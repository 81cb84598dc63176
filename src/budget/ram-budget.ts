/**
 * Where `--ram` goes: every structure of the crawler whose size could grow with the crawl — with
 * URLs, hosts, PLDs, IPs or the robots queue — gets its bound here, from the one budget, so that
 * the whole process stays under `--ram` on a web of any number of hosts (docs/configuration.md,
 * "RAM", prints this table). Everything else that grows lives on disk (DRUM, BEAST, QR).
 *
 * Off the main thread's V8 heap (ArrayBuffers in the DRUM threads, the parse workers' own isolates):
 *
 *   URLseen DRUM            R/8            buffers + CLOCK cache (thesis V.2: R/64 / 16 entries)
 *   ContentSeen DRUM        R/32
 *   STAR's PLD DRUMs        R/32           8–64 MiB
 *   RobotsCache DRUM        R/64           4–64 MiB
 *   RobotsRequested DRUM    R/128          4–64 MiB
 *   parse worker heaps      R/4            across the pool, ≥ 64 MiB each
 *   bodies awaiting dedup   R/16           4–64 MiB (src/crawl/core/crawler-core.ts)
 *
 * On the main thread's heap, whose limit is 7/16 of R (heap-budget.ts), by estimated bytes:
 *
 *   frontier URLs in RAM    R/8            frontierUrlRamBytes each (~470 B for a real-web URL)
 *   host table              R/16           HOST_ENTRY_BYTES + origin + address + robots rules
 *   DNS cache               R/128          DNS_ENTRY_BYTES per host
 *   BEAST re-spread counts  R/128          PASS_PLD_BYTES per PLD counted in one pass
 *   STAR pending votes      R/128          PENDING_VOTE_BYTES per vote, at most 2^18
 *
 * which leaves ~0.23 R of the main heap to what is bounded by the fetch concurrency, not by the
 * crawl: pages in flight and in the parse pool, result chunks, refill batches, the status history.
 *
 * Fixed, whatever R (small): the low-PLD pace (2^16 slots, 2.4 MiB), the parse workers' host-key
 * cache (8,192 hosts each), the fetcher's connection pools (1,024, LRU), the top-PLD tally (256),
 * STAR's promotions awaiting the frontier (2^16), the status history (fixed rings).
 */
import { HOST_ENTRY_BYTES } from '../frontier/politeness/host-table.js';

const MiB = 1024 * 1024;

/** Estimated heap bytes of one DNS cache entry: the host name key, the entry and its address list. */
export const DNS_ENTRY_BYTES = 256;
/** Estimated bytes of one PLD in BEAST's per-pass counter table (U64Map at load ≤ 1/2, doubled while it grows). */
export const PASS_PLD_BYTES = 48;
/** Estimated bytes of one STAR pending vote (6 words, a flag, its entries in two U64Maps). */
export const PENDING_VOTE_BYTES = 80;
/** Slots of the frontier's URL slab per byte of its share: the slab's arrays cost 16 B a slot, so not one per 216-byte minimum URL. */
const URL_SLOT_BYTES = 320;
/** A host entry's origin and address strings on a typical web (~40-character host names). */
const HOST_STRING_BYTES = 80;

export interface RamPlan {
  ramBytes: number;
  /** DRUM R of URLseen, ContentSeen, STAR's store, RobotsCache, RobotsRequested */
  urlSeenBytes: number;
  urlSeenCacheEntries: number;
  contentSeenBytes: number;
  starBytes: number;
  robotsCacheBytes: number;
  robotsRequestedBytes: number;
  /** V8 heap of each parse worker (MiB) */
  parseWorkerHeapMb: number;
  /** bodies held while their ContentSeen answer is pending */
  contentBatchBytes: number;
  /** the frontier's URLs in RAM: estimated bytes, and slab slots */
  frontierUrlBytes: number;
  frontierUrlSlots: number;
  /** the frontier's host table: estimated bytes, and entries */
  hostTableBytes: number;
  hostTableEntries: number;
  dnsCacheEntries: number;
  beastPassPlds: number;
  pendingVotes: number;
}

const clamp = (x: number, lo: number, hi: number): number => Math.max(lo, Math.min(hi, Math.floor(x)));

/** The bounds for a `--ram` of `ramBytes` and `workers` parse workers; `hostTableSize` (--host-table) overrides the host table's entries. */
export function ramPlan(ramBytes: number, workers = 1, hostTableSize: number | null = null): RamPlan {
  const R = ramBytes;
  const hostTableBytes = Math.floor(R / 16);
  return {
    ramBytes: R,
    urlSeenBytes: Math.floor(R / 8),
    urlSeenCacheEntries: clamp(R / 64 / 16, 1 << 16, 1 << 22),
    contentSeenBytes: Math.floor(R / 32),
    starBytes: clamp(R / 32, 8 * MiB, 64 * MiB),
    robotsCacheBytes: clamp(R / 64, 4 * MiB, 64 * MiB),
    robotsRequestedBytes: clamp(R / 128, 4 * MiB, 64 * MiB),
    parseWorkerHeapMb: Math.max(64, Math.floor(R / 4 / Math.max(1, workers) / MiB)),
    contentBatchBytes: clamp(R / 16, 4 * MiB, 64 * MiB),
    frontierUrlBytes: Math.floor(R / 8),
    frontierUrlSlots: Math.max(1000, Math.floor(R / 8 / URL_SLOT_BYTES)),
    hostTableBytes,
    hostTableEntries: hostTableSize ?? Math.max(1024, Math.floor(hostTableBytes / (HOST_ENTRY_BYTES + HOST_STRING_BYTES))),
    dnsCacheEntries: Math.max(4096, Math.floor(R / 128 / DNS_ENTRY_BYTES)),
    beastPassPlds: Math.max(4096, Math.floor(R / 128 / PASS_PLD_BYTES)),
    pendingVotes: clamp(R / 128 / PENDING_VOTE_BYTES, 4096, 1 << 18),
  };
}
