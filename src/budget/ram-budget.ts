/**
 * Where `--ram` goes: every structure of the crawler whose size could grow with the crawl — with
 * URLs, hosts, PLDs, IPs or the robots queue — gets its bound here, from the one budget, so that
 * the whole process stays under `--ram` on a web of any number of hosts (docs/configuration.md,
 * "RAM", prints this table). Everything else that grows lives on disk (DRUM, BEAST, QR).
 *
 * First the process's fixed part F = 160 MiB comes off R (FIXED_BYTES): what the process holds
 * whatever the budget — node's code and file maps (47 MiB resident), malloc's own pages (the
 * compilers' zones, sockets, small buffers: 40–60 MiB of brk heap), and the V8 heaps of the three
 * threads that hold no share below (the URLseen host, the ContentSeen/STAR/robots host and the
 * archive thread: 9–25 MiB each, and each has a transient that must stay within that — e.g. the
 * archive thread's sort of a finished WARC's index, 4 MiB runs (src/store/cdxj/cdxj-writer.ts),
 * whose 32 MiB runs took its heap to 65 MiB; their buffers are outside their heaps). Measured in node's
 * diagnostic reports and /proc/<pid>/smaps of a 10^7-host crawl at --ram 512M (docs/performance.md
 * "Memory"). The shares are of U = R − F (at least R/2):
 *
 * Off the main thread's V8 heap (ArrayBuffers in the DRUM threads, the parse workers' own isolates):
 *
 *   URLseen DRUM            U/8            buffers + CLOCK cache (thesis V.2: U/64 / 16 entries)
 *   ContentSeen DRUM        U/128          4–64 MiB: merged once a second (src/crawl/merge-schedule.ts),
 *                                          a batch of ~1 s of pages, far below any bucket size r;
 *                                          + its deep part's index (src/drum/deep.ts): 16 B per 16 KiB
 *                                          of deep part on disk, ~1.3 KB per 10^4 pages — the one RAM
 *                                          use here that grows with the crawl (80 MiB at 10^9 pages)
 *   STAR's PLD DRUMs        U/32           8–64 MiB
 *   RobotsCache DRUM        U/64           4–64 MiB, + its deep part's index (as ContentSeen's: ~1 KB
 *                                          per 10^4 authorities answered)
 *   RobotsRequested DRUM    U/128          4–64 MiB, + its deep part's index (likewise)
 *   fetched bodies          U/16           ≥ 40 MiB: each body and its decoded copy from the first
 *                                          byte until its parse answers, in whichever thread fetched
 *                                          it (ArrayBuffers, off every heap: body-budget.ts)
 *   parse worker heaps      U/4 − bodies   across the pool, ≥ 64 MiB each: at most that / 64 MiB
 *                                          workers (1 at --ram 512M, 2 at 1G), however many cores
 *   bodies awaiting dedup   U/16           4–64 MiB (src/crawl/core/crawler-core.ts): the pages of
 *                                          one ContentSeen merge and of the one that follows; at
 *                                          U/32 it filled while a merge was answered and stopped
 *                                          the fetches (bench/results/soak-1g-1e6-cb2a8d1.json)
 *   pages pending           U/32           PENDING_PAGE_BYTES each, 2^14–2^18 pages: the pages taken
 *                                          out of the frontier and not yet durable, each its frontier
 *                                          record (an ArrayBuffer of its own) in a Map; they wait for
 *                                          the URLseen merge under way and the next one, so this
 *                                          bound over two merges' time caps the crawl's pages/s
 *                                          (src/crawl/ports/backlog-pace.ts). The floor's 10 MiB
 *                                          (2^14 = the default fetchConcurrency × 64) are among what
 *                                          the fetch concurrency bounds, below; the share is above it
 *
 * On the main thread's heap, whose old space is max(128 MiB, 9/32 R) (heap-budget.ts), by estimated bytes:
 *
 *   frontier URLs in RAM    U/8            frontierUrlRamBytes each (~470 B for a real-web URL)
 *   host table              U/16           HOST_ENTRY_BYTES + origin + address + robots rules
 *   DNS cache               U/128          DNS_ENTRY_BYTES per host
 *   BEAST re-spread counts  U/128          PASS_PLD_BYTES per PLD counted in one pass
 *   STAR pending votes      U/128          PENDING_VOTE_BYTES per vote, at most 2^18
 *
 * which leaves at least 0.1 R of the main heap to what is bounded by the fetch concurrency, not by
 * the crawl: pages in flight and in the parse pool, result chunks, refill batches, the status history.
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
/**
 * Bytes of RAM one pending page holds: 615 B of RSS per entry for a Map<number, Uint8Array> of
 * 150–190-byte records (a frontier record's size on a real-web URL), measured with node 20.
 */
export const PENDING_PAGE_BYTES = 640;
/** The fewest pending pages the plan gives: the default fetchConcurrency (256) × 64. */
export const PENDING_PAGES_FLOOR = 1 << 14;
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
  /** fetched bodies in flight, in every thread (body-budget.ts: at least its reserve + 16 MiB) */
  bodyBytes: number;
  /** parse workers (or page workers): the cores asked for, as many as their share holds at 64 MiB each */
  parseWorkers: number;
  /** V8 heap of each page worker, or parse worker with --page-workers off (MiB) */
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
  /** pages taken out of the frontier and not yet durable (the crawler takes at least fetchConcurrency × 64) */
  pendingPages: number;
}

const clamp = (x: number, lo: number, hi: number): number => Math.max(lo, Math.min(hi, Math.floor(x)));

/** The process's fixed part, taken off --ram before the shares (see the header). */
export const FIXED_BYTES = 160 * MiB;

/** A parse worker's smallest heap (its old space and an 8 MiB young generation: parse-pool.ts). */
const PARSE_WORKER_MIN_BYTES = 64 * MiB;

/**
 * The smallest share of fetched bodies: the default body cap and decoded cap (8 + 16 MiB, the
 * body budget's reserve: one body allowed into it always finishes) and 16 MiB for every other
 * page in flight (body-budget.ts).
 */
const BODY_MIN_BYTES = 40 * MiB;

/** U: what the shares divide, --ram less the fixed part, at least half of it. */
export function shareableRam(ramBytes: number): number {
  return Math.max(Math.floor(ramBytes / 2), ramBytes - FIXED_BYTES);
}

/**
 * The bounds for a `--ram` of `ramBytes` and `workers` parse workers: shares of shareableRam, or
 * with `ofProcess` false of `ramBytes` itself (a cluster partition's share of its node's budget,
 * whose fixed part the node holds once). `hostTableSize` (--host-table) overrides the host table's entries.
 */
export function ramPlan(ramBytes: number, workers = 1, hostTableSize: number | null = null, ofProcess = true): RamPlan {
  const U = ofProcess ? shareableRam(ramBytes) : ramBytes;
  const hostTableBytes = Math.floor(U / 16);
  const bodyBytes = Math.max(BODY_MIN_BYTES, Math.floor(U / 16));
  // The bodies are held by the threads that parse them (a page worker fetches and parses its
  // pages; the parse pool's workers get copies): their share comes out of the parse side's.
  const parseShare = Math.floor(U / 4) - bodyBytes;
  const parseWorkers = Math.max(1, Math.min(workers, Math.floor(parseShare / PARSE_WORKER_MIN_BYTES)));
  return {
    ramBytes,
    urlSeenBytes: Math.floor(U / 8),
    urlSeenCacheEntries: clamp(U / 64 / 16, 1 << 16, 1 << 22),
    contentSeenBytes: clamp(U / 128, 4 * MiB, 64 * MiB),
    starBytes: clamp(U / 32, 8 * MiB, 64 * MiB),
    robotsCacheBytes: clamp(U / 64, 4 * MiB, 64 * MiB),
    robotsRequestedBytes: clamp(U / 128, 4 * MiB, 64 * MiB),
    bodyBytes,
    parseWorkers,
    parseWorkerHeapMb: Math.max(PARSE_WORKER_MIN_BYTES / MiB, Math.floor(parseShare / parseWorkers / MiB)),
    contentBatchBytes: clamp(U / 16, 4 * MiB, 64 * MiB),
    frontierUrlBytes: Math.floor(U / 8),
    frontierUrlSlots: Math.max(1000, Math.floor(U / 8 / URL_SLOT_BYTES)),
    hostTableBytes,
    hostTableEntries: hostTableSize ?? Math.max(1024, Math.floor(hostTableBytes / (HOST_ENTRY_BYTES + HOST_STRING_BYTES))),
    dnsCacheEntries: Math.max(4096, Math.floor(U / 128 / DNS_ENTRY_BYTES)),
    beastPassPlds: Math.max(4096, Math.floor(U / 128 / PASS_PLD_BYTES)),
    pendingVotes: clamp(U / 128 / PENDING_VOTE_BYTES, 4096, 1 << 18),
    pendingPages: clamp(U / 32 / PENDING_PAGE_BYTES, PENDING_PAGES_FLOOR, 1 << 18),
  };
}

/**
 * A crawl's plan: of its --ram (a process of its own), or of `partitionRam`, a cluster partition's
 * share of its node's budget.
 */
export function crawlRamPlan(cfg: { ramBytes: number; workers: number; hostTableSize: number | null }, partitionRam?: number): RamPlan {
  return partitionRam !== undefined
    ? ramPlan(partitionRam, cfg.workers, cfg.hostTableSize, false)
    : ramPlan(cfg.ramBytes, cfg.workers, cfg.hostTableSize);
}
