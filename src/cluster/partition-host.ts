/**
 * One partition on its node: a whole crawler (src/crawl Crawler: its own URLseen, ContentSeen,
 * STAR, BEAST, robots DRUMs, politeness heaps, checkpoint and done.log) whose state is the
 * partition's directory, `<state>/p/<NN>`, so that the partition can move to another node as
 * that directory (snapshot.ts) and resume there like any stopped crawl. It runs on the parts its
 * node lends every partition (CrawlerOptions.shared: parse workers, DRUM threads, fetcher, DNS
 * cache, WARC writer, crawl log, last-step floors) and is the ClusterPort its crawler calls: its
 * foreign links go to the node's router, its inbox admits the batches other nodes sent it, and
 * each of its checkpoints acknowledges the batches it holds (inbox.ts).
 *
 * Settled (what the termination check asks of every partition): the crawler has had nothing to do
 * (idle, frontier empty, nothing unmerged: ClusterPort.mayFinish), a checkpoint that started in
 * that state has committed — so STAR's pending link pairs and the votes they route were flushed
 * and every held batch acknowledged — and no batch has come in since.
 */
import path from 'node:path';
import { Crawler, type CrawlerOptions, type CrawlSummary } from '../crawl/pipeline.js';
import { readManifest } from '../state/checkpoint.js';
import type { ClusterPort, FrontierCluster, SharedParts } from '../crawl/ports/cluster-port.js';
import type { CrawlConfig, CrawlConfigInput } from '../config/config.js';
import type { IpGate } from '../frontier/index.js';
import type { StatusSnapshot } from '../monitor/stats.js';
import { partitionOf } from './partition.js';
import { Inbox } from './engine/inbox.js';
import { StarLink, type ClusterRanks } from './star-link.js';
import type { Router } from './engine/router.js';
import type { Engine } from './engine/engine.js';
import type { Batch } from './engine/batch-codec.js';

/** What a partition needs from its node. */
export interface PartitionNode {
  readonly engine: Engine;
  readonly partitions: number;
  readonly router: Router;
  readonly ranks: ClusterRanks;
  readonly ipGate: IpGate;
  /** fetches the node may still start (its concurrency less every partition's in flight) */
  fetchRoom(): number;
  /** the crawl has ended everywhere (KV `done`) */
  readonly done: boolean;
  /** records n acknowledgements before they go (termination check) */
  beforeAck(n: number): Promise<void>;
  /** a partition failed: the node stops */
  fail(e: unknown): void;
}

/** Least time between two checkpoints a partition asks for (ms). */
const MIN_ASKED_CHECKPOINT_MS = 500;
/**
 * A batch held this long (ms) asks for a checkpoint, whatever the checkpoint interval: held
 * batches are kept alive meanwhile (inbox.ts), and a kill redelivers at most this much.
 */
const HELD_CHECKPOINT_MS = 45_000;

export function partitionDir(root: string, p: number): string {
  return path.join(root, 'p', String(p).padStart(4, '0'));
}

export class PartitionHost implements ClusterPort {
  crawler: Crawler | null = null;
  private run: Promise<CrawlSummary | null> | null = null;
  /** the crawler's run has ended (its parts are closed: only its last snapshot is left) */
  private over = false;
  private last: StatusSnapshot | null = null;
  private readonly inbox: Inbox;
  private quiet = false;
  private settledFlag = false;
  private startedQuiet = false;
  private lastAsked = 0;
  readonly frontier: FrontierCluster;

  constructor(
    readonly p: number,
    private readonly node: PartitionNode,
    /** this partition's config (state and output directories under the node's) */
    private readonly cfg: CrawlConfig,
    /** the node's parts, with this partition's RAM share */
    private readonly shared: SharedParts,
  ) {
    this.inbox = new Inbox(node.engine, p, (b) => this.admit(b), (n) => node.beforeAck(n), (e) => node.fail(e));
    const ram = shared.ramBytes;
    this.frontier = {
      pldStore: (own) => new StarLink(own, p, node.partitions, node.router),
      rankContext: (own) => node.ranks.context(p, own),
      ipGate: node.ipGate,
      // Pending votes (star.ts): 2^18 at ≥ 12 MiB of the partition's RAM share, fewer below (~48 B each).
      pendingVotes: Math.max(1 << 12, Math.min(1 << 18, Math.floor(ram / 48))),
    };
  }

  get stateDir(): string {
    return this.cfg.stateDir;
  }

  /**
   * Opens the partition's crawler — a new one, or the one its directory holds — and starts it and
   * its inbox. `overrides`: what a resume may change (the node's current settings).
   */
  async open(overrides: CrawlConfigInput): Promise<void> {
    const opts: CrawlerOptions = { shared: this.shared, cluster: this, progressOut: process.stderr };
    const existing = await readManifest(this.cfg.stateDir);
    this.crawler = existing === null
      ? await Crawler.open(this.cfg, opts)
      : await Crawler.resume(this.cfg.stateDir, { ...overrides, outDir: this.cfg.outDir, statusPort: null, progress: 'none' }, opts);
    this.run = this.crawler.run().catch((e: unknown) => {
      this.node.fail(e);
      return null;
    }).finally(() => { this.over = true; });
    this.inbox.start();
  }

  /** Stops pulling, then the crawler (drain, checkpoint: held batches are acknowledged); resolves when closed. */
  async close(reason: string): Promise<CrawlSummary | null> {
    await this.inbox.stop();
    this.crawler?.stop(reason);
    const s = this.run === null ? null : await this.run;
    await this.inbox.stop();
    return s;
  }

  /** The crawler's status snapshot; once its run has ended, the last one taken (its frontier is closed). */
  snapshot(): StatusSnapshot | null {
    if (this.crawler !== null && !this.over) {
      try {
        this.last = this.crawler.snapshot();
      } catch {
        // the crawler is closing its parts (its run ends): the last snapshot stands
      }
    }
    return this.last;
  }

  /** Resolves when the crawler's run ends by itself (the crawl is done, or it failed). */
  ended(): Promise<CrawlSummary | null> {
    return this.run ?? Promise.resolve(null);
  }

  get settled(): boolean {
    return this.settledFlag && this.inbox.heldCount === 0;
  }

  get inboxStats(): Inbox['stats'] {
    return this.inbox.stats;
  }

  private async admit(b: Batch): Promise<void> {
    this.quiet = false;
    this.settledFlag = false;
    if (this.crawler === null) throw new Error(`partition ${this.p}: batch before the crawler opened`);
    await this.crawler.admitBatch(b.urls, b.votes, b.voteCount);
  }

  // ---------------------------------------------------------------------------------- ClusterPort

  local(pldHi: number, pldLo: number): boolean {
    return partitionOf(pldHi, pldLo, this.node.partitions) === this.p;
  }

  route(pldHi: number, pldLo: number, url: Uint8Array, hops: number, suffix: Uint8Array): void {
    this.node.router.route(partitionOf(pldHi, pldLo, this.node.partitions), url, hops, suffix);
  }

  flush(): Promise<void> {
    return this.node.router.flush();
  }

  fetchRoom(): number {
    return this.node.fetchRoom();
  }

  get saturated(): boolean {
    return this.node.router.saturated;
  }

  checkpointStarting(): number {
    this.startedQuiet = this.quiet;
    return this.inbox.mark();
  }

  checkpointCommitted(mark: number): void {
    if (this.startedQuiet && this.quiet) this.settledFlag = true;
    void this.inbox.ackUpTo(mark);
  }

  checkpointDue(): boolean {
    const now = Date.now();
    if (now - this.lastAsked < MIN_ASKED_CHECKPOINT_MS) return false;
    const held = this.inbox.heldCount;
    const want = (this.quiet && (!this.settledFlag || held > 0)) || this.inbox.crowded || (held > 0 && this.inbox.oldestHeldMs(now) > HELD_CHECKPOINT_MS);
    if (want) this.lastAsked = now;
    return want;
  }

  mayFinish(): boolean {
    if (!this.quiet) {
      this.quiet = true;
      this.settledFlag = false;
    }
    return this.node.done;
  }
}
