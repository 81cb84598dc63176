/**
 * The pipeline's view of a cluster crawl (src/cluster, docs/cluster.md): what a crawler calls when
 * it is one partition of a crawl spread over several drumcrawl nodes. A partition is the set of
 * pay-level domains whose key falls in it, so its URLseen, STAR in-degrees, BEAST queues, robots
 * and host politeness need nothing from other partitions; only links cross, and IPs are shared.
 * Without a cluster (the single-node crawl) the crawler holds no ClusterPort and calls none of
 * this.
 *
 * The hooks, each called from one place:
 *   local / route     a page's links (urlseen/urlseen-stage.ts submitTable) and single URLs (redirects,
 *                     sitemaps, seeds: urlseen-stage.ts submitUrl): URLs of other partitions are handed
 *                     to `route` instead of URLseen;
 *   flush             before the pages whose links were routed count as durable (mergeUrlSeen):
 *                     everything routed is then in the stream;
 *   saturated         dispatch waits while publishes are at their bound (backPressure);
 *   fetchRoom         the node's fetch concurrency, shared by its partitions (the scheduler loop);
 *   checkpoint*       a checkpoint's start and commit: batches received from the stream are
 *                     acknowledged only once a committed checkpoint holds their effect;
 *   mayFinish         the crawler has nothing to do: it ends only when the whole crawl has;
 *   frontier          STAR's store and rank context, and the IP gate of the heaps.
 * A received batch enters through Crawler.admitBatch, exactly as the crawler's own links do.
 */
import type { FrontierCluster } from './frontier-port.js';
import { encodeLinks, LinkTable, type LinkEntry } from '../../threads/links-codec.js';
import type { ArchiveThread } from '../../threads/archive/archive-thread.js';
import type { CrawlLog } from '../../store/index.js';
import type { ParsePool } from '../../threads/page/parse-pool.js';
import type { DnsCache } from '../../dns/index.js';
import type { Fetcher } from '../../fetch/index.js';
import type { DrumThread } from '../../threads/drum/drum-proxy.js';
import type { FloorGuard } from './floor-guard.js';

/** The parts a process that runs several crawls lends each (pipeline.ts CrawlerOptions.shared). */
export interface SharedParts {
  warc: ArchiveThread;
  crawlLog: CrawlLog;
  pool: ParsePool;
  dns: DnsCache;
  fetcher: Fetcher;
  /** the thread URLseen's DRUM runs in; and the one of ContentSeen, STAR's store and the robots DRUMs */
  urlSeenThread: DrumThread;
  smallThread: DrumThread;
  /** the last-step floors (floor-guard.ts), kept for every crawl of the process together */
  floors: FloorGuard;
  /**
   * This crawl's share of the process's RAM budget: what it sizes its own structures by (DRUM
   * buffers, the frontier's RAM, held bodies) in place of the config's ramBytes, which stays the
   * process's budget.
   */
  ramBytes: number;
}

export type { FrontierCluster } from './frontier-port.js';

export interface ClusterPort {
  /** Whether a PLD (its key words) belongs to this partition. */
  local(pldHi: number, pldLo: number): boolean;
  /**
   * One URL of another partition (its canonical form's UTF-8 bytes, its hops and discovery suffix
   * as drum-codec.ts encodes them): batched for that partition's owner. The bytes are copied.
   */
  route(pldHi: number, pldLo: number, url: Uint8Array, hops: number, suffix: Uint8Array): void;
  /** Resolves once everything routed before the call is stored in the stream. */
  flush(): Promise<void>;
  /** Fetches this partition may start now within its node's concurrency (shared by its partitions). */
  fetchRoom(): number;
  /** Routed URLs wait for their publishes at the bound: no new fetch starts until they drain. */
  readonly saturated: boolean;
  /** A checkpoint begins: returns a mark of the received batches its effects will cover. */
  checkpointStarting(): number;
  /** The checkpoint begun with `mark` has committed (its manifest is written). */
  checkpointCommitted(mark: number): void;
  /** A checkpoint is wanted now (received batches wait long for their acknowledgement). */
  checkpointDue(): boolean;
  /** The crawler is idle with an empty frontier: whether the crawl as a whole is finished. */
  mayFinish(): boolean;
  readonly frontier: FrontierCluster;
}

/**
 * A page's link table with the links of other partitions routed away (ClusterPort.route): the
 * table itself when every link is local, else a new table of the local ones.
 */
export function routeTable(t: LinkTable, port: ClusterPort, hops: number, suffix: Uint8Array): LinkTable {
  const n = t.count;
  let foreign = 0;
  for (let i = 0; i < n; i++) if (!port.local(t.word(i, 4), t.word(i, 5))) foreign++;
  if (foreign === 0) return t;
  const keep: LinkEntry[] = [];
  for (let i = 0; i < n; i++) {
    const hi = t.word(i, 4);
    const lo = t.word(i, 5);
    if (port.local(hi, lo)) keep.push(t.entry(i));
    else port.route(hi, lo, t.urlBytes(i), hops, suffix);
  }
  return new LinkTable(encodeLinks(keep));
}
