/**
 * The crawler's state (thesis Fig. 2), shared by its stages (the rooms fetch/ … durable/ beside this
 * one) and its scheduler (pipeline.ts): the components it drives (two DRUMs, frontier, DNS, fetcher,
 * WARC writer, crawl log, parse pool or page workers), the page job that travels the stages, the
 * pages between dispatch and durability with the bounds that hold them back (pipeline.ts header),
 * the counters a checkpoint stores, and two helpers every stage uses: an outcome's count and the
 * crawl-log line of a fetch. No stage's work is here: a job's data does not pass through this file.
 */
import { openMark } from '../../monitor/open-trace.js';
import { EventEmitter } from 'node:events';
import type { DrumProxy } from '../../threads/drum/drum-proxy.js';
import type { DnsCache } from '../../dns/index.js';
import type { Fetcher, FetchResult } from '../../fetch/index.js';
import type { EncodedGroupLike, LinkTable } from '../../threads/links-codec.js';
import type { CrawlLog } from '../../store/index.js';
import type { ArchiveThread } from '../../threads/archive/archive-thread.js';
import type { FrontierUrl } from '../../frontier/index.js';
import type { FrontierPort } from '../ports/frontier-port.js';
import type { CrawlConfig } from '../../config/config.js';
import { crawlRamPlan } from '../../budget/ram-budget.js';
import { RunMetrics } from '../../monitor/run-metrics.js';
import { emptyCounters, type CheckpointManifest, type CrawlCounters, type DoneLog } from '../../state/checkpoint.js';
import type { ParsePool } from '../../threads/page/parse-pool.js';
import { Wakeup } from '../../util/wakeup.js';
import type { AdmitLog } from '../../state/admit-log.js';
import type { SyncedPositionLog } from '../../state/warc-synced.js';
import { ResumeDedup } from '../../state/resume-dedup.js';
import { FloorGuard } from '../ports/floor-guard.js';
import { BacklogPace } from '../ports/backlog-pace.js';
import type { SharedFloors } from '../../threads/page/page-worker-floors.js';
import type { PageWorkerPool } from '../../threads/page/page-worker-pool.js';
import { PldTally } from '../../monitor/pld-tally.js';
import { hostOf, pldOrHost } from '../../url/index.js';
import type { ClusterPort, SharedParts } from '../ports/cluster-port.js';
import type { EarlyStart } from '../ports/early-robots.js';
import { plainHops, type SitemapRouter } from '../../sitemap/crawl.js';
import type { SitemapListingLog } from '../../sitemap/listing-log.js';

/** Read once (as src/fetch does for its WIRE lines): process.env is a slow lookup for a per-page check. */
const TRACE_FETCH = process.env.DRUMCRAWL_TRACE_FETCH !== undefined && process.env.DRUMCRAWL_TRACE_FETCH !== '';

export interface CrawlerOptions {
  /** Where the progress printer writes. @default process.stderr */
  progressOut?: NodeJS.WritableStream & { isTTY?: boolean };
  /** Install SIGINT/SIGTERM handlers (graceful stop; a second signal hurries). @default false */
  handleSignals?: boolean;
  /** Parts lent by a process running several crawls (src/cluster): used, not closed, WARC not recovered here. */
  shared?: SharedParts;
  /** This crawl is one partition of a cluster crawl (cluster-port.ts). */
  cluster?: ClusterPort;
  /**
   * A new crawl's parts made before the crawler, its seeds' robots.txt already on the wire
   * (early-robots.ts: the CLI starts them before it loads the crawler); ignored by a resume and a
   * cluster node.
   */
  early?: EarlyStart;
}

/** A page from dispatch to durability. */
export interface PageJob {
  id: number;
  fu: FrontierUrl;
  rec: Uint8Array;
  result?: FetchResult;
  date?: Date;
  table?: LinkTable;
  group: EncodedGroupLike | null;
  /** bytes held while waiting for ContentSeen (body + link table + WARC group) */
  bodyBytes: number;
  /** payload bytes as transferred (the crawl log's `bytes`; the body itself is dropped early) */
  payloadBytes: number;
  /** a sitemap's entries handed to URLseen (the page is durable only after the next URLseen merge) */
  sitemapQueued?: number;
  /** when the frontier released it (clock(), page-worker-floors.ts): its lateness on the wire counts from here */
  releasedAt: number;
  /** a page requisite (requisites.ts): counted apart from pages */
  requisite: boolean;
  /** the fetch is still counted in `inFlight` (endFlight clears it, once) */
  flying: boolean;
  /** the page is counted in `parsing` (endParse clears it, once) */
  parsing: boolean;
  /** the frontier took the URL back to retry it (politenessOutcome): its page is not archived as final */
  retry: boolean;
}

export abstract class CrawlerCore extends EventEmitter {
  /** sitemap discovery and reading (src/sitemap/crawl.ts); set by Crawler.openRest */
  protected sitemaps: SitemapRouter | null = null;
  protected sitemapLog: SitemapListingLog | null = null;
  protected cfg: CrawlConfig;
  /** the stop aborted the fetches in flight: their answers are not reported (stop.ts) */
  protected aborting = false;

  protected readonly counters: CrawlCounters;
  protected epoch: number;
  protected seedsInjected: boolean;
  protected readonly scopeHosts: string[];
  protected readonly scopePlds: string[];

  /** URLs taken out of the frontier and not yet durable (bounded by the back-pressure limits). */
  protected readonly pending = new Map<number, Uint8Array>();
  /** done.log (checkpoint.ts): pages that left `pending` durably since the frontier's last commit */
  protected doneLog: DoneLog | null = null;
  /** The WARC position of each sync, for a resume after a crash (warc-synced.ts); null: a cluster node's shared archive. */
  protected syncedLog: SyncedPositionLog | null = null;
  /** what a resumed run must not fetch again (resume-dedup.ts) */
  protected readonly again = new ResumeDedup();
  /** URLseen's unique keys of the current bucket merge, recorded by the admit log (admit-log.ts) */
  protected admitLog: AdmitLog | null = null;
  /**
   * ids of pages whose URL the frontier holds: released by it, its fetchDone not yet called. The
   * frontier's RAM snapshot covers them, so a checkpoint leaves them out of pending.bin.
   */
  protected readonly heldIds = new Set<number>();
  protected nextId = 1;
  protected inFlight = 0;
  /** of inFlight, page requisites (requisites.ts): --max-pages counts the others */
  protected requisitesInFlight = 0;
  protected robotsInFlight = 0;
  protected parsing = 0;
  /**
   * Page jobs started and not yet handed over (to ContentSeen, the merge or sync lists, or dropped):
   * besides the fetch and the parse, a job also awaits a sitemap's read and the WARC between them,
   * and the crawl is idle (drain ends, the parts close) only when no job is in any such step.
   */
  protected jobs = 0;
  /** set when the crawl's parts begin to close: results that come after are not acted on */
  protected closing = false;
  /** false from the final checkpoint on: DNS answers are no longer archived (archive-hooks.ts dnsArchiver) */
  archivingDns = true;
  protected readonly awaitingContent = new Map<number, PageJob>();
  protected awaitingContentBytes = 0;
  protected readonly contentBatchBytes: number;
  /** The bound on `pending`: the RAM plan's pendingPages, at least fetchConcurrency × 64 (ram-budget.ts). */
  protected readonly pendingBound: number;
  /**
   * Dispatch's smooth back-pressure from URLseen (on `pending`, in pages) and ContentSeen (on
   * awaitingContentBytes): backlog-pace.ts. Their releases: the end of each merge.
   */
  protected readonly urlSeenPace: BacklogPace;
  protected readonly contentPace: BacklogPace;
  /** Body bytes of a page awaiting ContentSeen, a running mean: the content pace's bytes in pages. */
  protected contentBytesPerPage = 32 * 1024;
  /** pages whose links sit in URLseen's buffers (durable after the next URLseen merge) */
  protected awaitingMerge: number[] = [];
  /** pages fully written, durable after the next WARC sync */
  protected awaitingSync: number[] = [];
  protected unmergedLinks = 0;
  /** A checkpoint is under way: no URLseen merge starts (checkpoint-stage.ts). */
  protected holdUrlMerges = false;
  /** A checkpoint is under way: no ContentSeen merge starts (checkpoint-stage.ts). */
  protected holdContentMerges = false;
  /** Durations of merges and checkpoints, event-loop delay, thread roles (bench:soak, the status page). */
  protected readonly runMetrics = new RunMetrics();
  protected unmergedContent = 0;
  protected lastUrlMerge = Date.now();
  protected lastContentMerge = Date.now();
  protected dispatchedThisRun = 0;

  protected readonly wake = new Wakeup();
  protected readonly fp = new Uint32Array(6);
  /** submitTable's PLD→PLD pairs (bound: the largest page's link count × 16 B) */
  protected pairScratch = new Uint32Array(1024);
  /**
   * The floors' actual starts shared with the page workers (page-worker-floors.ts); null when pages
   * are fetched on this thread (--page-workers off).
   */
  protected readonly sharedFloors: SharedFloors | null;
  /** the floors, checked once more right before each request is sent */
  protected readonly floors: FloorGuard;
  /** The seeds' robots.txt fetched while the crawler opened (early-robots.ts), or null. */
  protected readonly early: EarlyStart | null;
  /** This crawl as a partition of a cluster crawl (cluster-port.ts), or null: a single-node crawl. */
  protected readonly cluster: ClusterPort | null;
  /** Top PLDs by page fetches this run, in fixed memory (pld-tally.ts; the status page). */
  protected readonly plds = new PldTally((url) => pldOrHost(hostOf(url)));

  protected constructor(
    cfg: CrawlConfig,
    manifest: CheckpointManifest | null,
    protected readonly urlSeen: DrumProxy,
    protected readonly contentSeen: DrumProxy,
    protected readonly frontier: FrontierPort,
    protected readonly dns: DnsCache,
    protected readonly fetcher: Fetcher,
    protected readonly warc: ArchiveThread,
    protected readonly crawlLog: CrawlLog,
    /** the parse pool (--page-workers off), else null: the page workers parse */
    protected readonly pool: ParsePool | null,
    /** the page workers (--page-workers on), else null */
    protected readonly pages: PageWorkerPool | null,
    protected readonly opts: CrawlerOptions,
  ) {
    super();
    this.cfg = cfg;
    this.sharedFloors = pages?.floors ?? null;
    // (the early robots.txt fetches' guard: their actual starts are what the next requests count from)
    this.early = manifest === null && opts.shared === undefined ? opts.early ?? null : null;
    this.floors = opts.shared?.floors ?? this.early?.floorGuard(() => this.cfg) ?? new FloorGuard(() => this.cfg, this.sharedFloors);
    this.cluster = opts.cluster ?? null;
    this.counters = manifest ? { ...emptyCounters(), ...manifest.counters, outcomes: { ...manifest.counters.outcomes } } : emptyCounters();
    this.epoch = manifest?.epoch ?? 0;
    this.seedsInjected = manifest?.seedsInjected ?? false;
    this.scopeHosts = manifest?.scopeHosts ?? [];
    this.scopePlds = manifest?.scopePlds ?? [];
    // Bodies held while their ContentSeen answer is pending: 1/16 of the RAM budget's shares (of a
    // partition's share on a cluster node), 4..64 MB (ram-budget.ts).
    const plan = crawlRamPlan(cfg, opts.shared?.ramBytes);
    this.contentBatchBytes = plan.contentBatchBytes;
    this.pendingBound = Math.max(cfg.fetchConcurrency * 64, plan.pendingPages);
    this.urlSeenPace = new BacklogPace(this.pendingBound, Date.now());
    this.contentPace = new BacklogPace(this.contentBatchBytes, Date.now());
  }

  /** Fetches in progress, pages and robots.txt (a cluster node sums them over its partitions). */
  get fetchesInFlight(): number {
    return this.inFlight + this.robotsInFlight;
  }

  protected count(key: string): void {
    this.counters.outcomes[key] = (this.counters.outcomes[key] ?? 0) + 1;
  }

  protected logFetch(job: PageJob, outcome: string, digest: string | null): void {
    const r = job.result!;
    this.crawlLog.write({
      // When the fetch finished (docs/output-format.md): its start plus its duration.
      time: new Date((job.date?.getTime() ?? Date.now()) + r.timings.totalMs),
      status: r.status ?? null,
      bytes: job.payloadBytes,
      durationMs: Math.round(r.timings.totalMs),
      url: job.fu.url,
      hops: plainHops(job.fu.hops),
      digest,
      outcome,
      mime: r.contentType ?? null,
      via: job.fu.via,
      path: job.fu.path,
    });
  }

  /**
   * A request's actual start (`at` on the shared clock, page-worker-floors.ts) to the TRACE line and
   * the 'dispatch' event: at once on this thread, when its answer comes back from a page worker.
   */
  protected dispatched(url: string, ip: string, robots: boolean, at: number): void {
    if (TRACE_FETCH) process.stderr.write(`TRACE ${at.toFixed(1)} ${ip} ${url}\n`);
    if (this.listenerCount('dispatch') > 0) this.emit('dispatch', { at, url, ip, robots });
    if (!this.firstRequestSent) {
      this.firstRequestSent = true;
      openMark('first-request');
      // after this run of the event loop, which sends the request
      setImmediate(() => this.afterFirstRequest());
    }
  }

  /** Whether a request has gone out in this run (dispatched). */
  private firstRequestSent = false;

  /**
   * The parts nothing before the first request needs start once it is on the wire: the parse
   * pool's first worker (opening.ts: ~0.2 s of CPU to boot and load, overlapping the network
   * wait). A page that comes back before it is up waits in the pool (piscina starts a worker for
   * it if none is starting).
   */
  private afterFirstRequest(): void {
    if (this.pool === null || this.opts.shared !== undefined) return;
    this.pool.warmup().catch((e: unknown) => this.fail(e));
  }

  /** A page fetch ends (its answer came, or it never went out): counted once. */
  protected endFlight(job: PageJob): void {
    if (!job.flying) return;
    job.flying = false;
    this.inFlight--;
    if (job.requisite) this.requisitesInFlight--;
  }

  /** A page enters the parse (the pool's or a page worker's). */
  protected startParse(job: PageJob): void {
    job.parsing = true;
    this.parsing++;
  }

  /** A page's parse ends (its output came, or none will): counted once. */
  protected endParse(job: PageJob): void {
    if (!job.parsing) return;
    job.parsing = false;
    this.parsing--;
  }

  /** Stops the crawl (pipeline.ts) after an unexpected error in a task. */
  protected abstract fail(e: unknown): void;
}
