/**
 * The crawler: IRLbot's pipeline (thesis Fig. 2, ch. VII) as one process.
 *
 *   frontier.nextReady ─► fetch (bounded concurrency) ─► WARC + crawl log
 *        ▲                   │ 2xx                         ▲
 *        │                   ▼                             │ response │ revisit
 *        │            parse pool (piscina) ─► ContentSeen DRUM (payload digest) ┘
 *        │                                      │ unique: links
 *        │                                      ▼
 *        └── frontier.admitUnique ◄── STAR ◄── URLseen DRUM (check+update, aux = URL record)
 *   DNS + robots side loop: frontier robots items → DnsCache → fetchRobots → frontier.robotsDone
 *
 * Event loop: I/O and scheduling only. CPU-heavy work (HTML decode, link extraction,
 * canonicalization, hashing, digests) runs in the parse pool and comes back as one compact buffer
 * (or, with --page-workers on, the fetch too runs on workers: page-worker-pool.ts).
 * The DRUMs run in two worker threads: URLseen alone, ContentSeen with STAR's PLD store (one
 * isolate for both: drum-proxy.ts DrumThread). The WARC writer runs in a thread of its own
 * (archive-thread.ts).
 *
 * The crawler is one object built in layers, one stage of a page job per room, the last stage
 * lowest (docs/architecture.md, "A page job's path"): core/ (the state the stages share), then
 * durable/ (the sync), admit/ (URLseen's answers into STAR and BEAST), urlseen/ (URLseen and its
 * merges), archive/ (ContentSeen's answers: records, links), content/ (the parser's output into
 * ContentSeen), fetched/ (the fetch's report, the body to the parse pool), fetch/ (the crawling
 * threads); over them merge-schedule.ts (when merges and syncs run), checkpoint-stage.ts,
 * opening.ts (open or resume) and this file (the scheduler loop, control, drain, close). A job
 * moves down the stages one way: the pools and DRUMs deliver their answers to the stage after the
 * one that asked. The DRUM record layouts are in src/threads/drum/drum-codec.ts.
 *
 * Back-pressure (no unbounded in-RAM queue), each bound from the config:
 *   - fetches in flight ≤ fetchConcurrency;
 *   - pages in the parse pool: dispatch pauses while it is saturated (`ParsePool.saturated`: every
 *     worker has its queue of pages and as many again wait to be handed over); with page workers
 *     (--page-workers on), while 16 fetched pages per worker wait for their parse there
 *     (`PageWorkerPool.saturated`);
 *   - pages waiting for the ContentSeen answer hold their bodies: ≤ contentBatchBytes (then a
 *     ContentSeen merge runs; dispatch pauses past it);
 *   - links wait in the URLseen DRUM's own buffers (disk-backed; `needsMerge` → merge);
 *   - the frontier holds a bounded number of URLs in RAM (its own `ramUrls` cap);
 *   - the pending set (URLs taken out of the frontier, not yet durable) is bounded by the RAM
 *     plan's pendingPages (ram-budget.ts), at least fetchConcurrency × 64.
 * Before those hard bounds, URLseen's and ContentSeen's backlogs pace dispatch (backlog-pace.ts):
 * above half their bound, pages go out at the rate that fills the rest by the next merge's end.
 *
 * Durability (see checkpoint.ts): URLseen's unique URLs are placed in STAR/BEAST as its results
 * arrive and made durable (frontier.commitAdmits) before URLseen commits each bucket. A page
 * leaves the pending set once its WARC records and crawl-log line are synced and its links are
 * in a merged URLseen; it is then appended to done.log. The pending set's bound and its pace are
 * also the crawl's back-pressure on URLseen: while merges fall behind, fetching slows to their
 * rate. pending.bin and the frontier's read
 * cursors are written only at checkpoints: after a crash the crawl resumes from the last one, the
 * frontier hands out again what it had handed out since, and dispatch skips the URLs done.log
 * holds — so only the pages in flight at the crash are fetched twice.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { canonicalizeUrl, fingerprintInto, hostOf, pldOrHost } from '../url/index.js';
import { withMargin, graceOver } from './ports/index.js';
import { type CrawlConfig, applyRuntimeChange, type CrawlConfigInput } from '../config/config.js';
import { budgetStatus } from '../budget/body-budget.js';
import { ProgressPrinter, RateMeter, type CrawlState, type CrawlSummary, type StatusSnapshot } from '../monitor/stats.js';
import { startStatusServer, CONTROL_TOKEN_FILE, type StatusServer } from '../monitor/status-server.js';
import { OpeningStage, type MakeCrawler } from './opening.js';
import { runStatus } from '../monitor/run-metrics.js';
import type { CrawlerOptions } from './core/index.js';
import { openMark } from '../monitor/open-trace.js';

export type { CrawlerOptions } from './core/index.js';

export type { CrawlSummary } from '../monitor/stats.js';

export class Crawler extends OpeningStage {
  private state: CrawlState = 'starting';
  private stopReason: string | null = null;
  private hurry = false;
  /** when stop() was first called (ms), for the grace period of fetches in flight (stop.ts) */
  private stopAt = 0;
  private lastRefill = 0;
  /** The frontier's refill running beside the scheduler (loop), or null. */
  private refilling: Promise<void> | null = null;
  private readonly pageRate = new RateMeter();
  private readonly byteRate = new RateMeter();
  private rateTimer: NodeJS.Timeout | null = null;
  /** The first error that stopped the crawl (fail()): what run() rejects with. */
  private failure: unknown = null;
  private readonly runStart = Date.now();
  private readonly startedAt = new Date();
  private printer: ProgressPrinter | null = null;
  private statusServer: StatusServer | null = null;
  private signalHandler: ((sig: NodeJS.Signals) => void) | null = null;

  /** Open a new crawl in `config.stateDir` (refused when it holds one already: resume that). */
  static async open(config: CrawlConfig, opts: CrawlerOptions = {}): Promise<Crawler> {
    return Crawler.openNew(config, opts, Crawler.make);
  }

  /**
   * Resume the crawl whose state is `stateDir`, wherever that directory now is (recovery.ts
   * relocate: the paths recorded in the manifest are not trusted after a move or a copy).
   */
  static async resume(stateDir: string, overrides: CrawlConfigInput = {}, opts: CrawlerOptions = {}): Promise<Crawler> {
    return Crawler.resumeFrom(stateDir, overrides, opts, Crawler.make);
  }

  /** The opening's parts made into the crawler (opening.ts). */
  private static readonly make: MakeCrawler<Crawler> = (...parts) => new Crawler(...parts);

  get config(): CrawlConfig {
    return this.cfg;
  }

  // ---------------------------------------------------------------------------------------------
  // control

  pause(): void {
    if (this.state === 'running') this.state = 'paused';
    this.cfg = applyRuntimeChange(this.cfg, { paused: true });
  }

  resume(): void {
    if (this.state === 'paused') this.state = 'running';
    this.cfg = applyRuntimeChange(this.cfg, { paused: false });
    this.wake.kick();
  }

  /** Graceful stop: no new fetches, drain in-flight ones, checkpoint. A second call hurries. */
  stop(reason = 'stop'): void {
    if (this.stopReason !== null) {
      this.hurry = true;
      this.wake.kick();
      return;
    }
    this.stopReason = reason;
    this.stopAt = Date.now();
    this.state = 'stopping';
    this.wake.kick();
  }

  setRuntime(change: Record<string, unknown>): Record<string, unknown> {
    const next = applyRuntimeChange(this.cfg, change);
    if (['hostDelayMs', 'ipDelayMs', 'minHostDelayMs', 'minIpDelayMs'].some((k) => k in change)) this.frontier.setDelays(next);
    if ('minHostDelayMs' in change || 'minIpDelayMs' in change) {
      // The wire gate keeps the floors too (src/fetch): the same margins as at start.
      this.fetcher.setIntervals({ minIpIntervalMs: withMargin(next.minIpDelayMs, next), minHostIntervalMs: withMargin(next.minHostDelayMs, next) });
      this.pages?.setIntervals(withMargin(next.minIpDelayMs, next), withMargin(next.minHostDelayMs, next));
      this.sharedFloors?.setFloors(withMargin(next.minHostDelayMs, next), withMargin(next.minIpDelayMs, next));
    }
    this.cfg = next;
    if ('paused' in change) (change.paused ? this.pause() : this.resume());
    this.wake.kick();
    const { hostDelayMs, ipDelayMs, minHostDelayMs, minIpDelayMs, maxPages, maxTimeMs, paused } = this.cfg;
    return { hostDelayMs, ipDelayMs, minHostDelayMs, minIpDelayMs, maxPages, maxTimeMs, paused };
  }

  snapshot(): StatusSnapshot {
    const f = this.frontier.stats();
    const d = this.dns.stats();
    const rss = process.memoryUsage.rss();
    const cpu = process.cpuUsage(this.cpuStart);
    const pagesRun = Math.max(1, this.dispatchedThisRun);
    return {
      state: this.state,
      stopReason: this.stopReason,
      startedAt: this.startedAt.toISOString(),
      elapsedMs: Date.now() - this.runStart,
      pages: this.counters.pages, requisites: this.counters.requisites,
      pagesOk: this.counters.pagesOk,
      bytes: this.counters.bytes,
      pagesPerSec: this.pageRate.rate(),
      mbPerSec: this.byteRate.rate() / 1e6,
      urlsSeen: this.counters.urlsSeen,
      urlsDiscovered: this.counters.urlsDiscovered,
      urlsQueued: f.queued,
      duplicates: this.counters.duplicates,
      inFlight: this.inFlight + this.robotsInFlight,
      parsing: this.parsing,
      robotsFetches: this.counters.robotsFetches,
      beast: { j: f.beastJ, switches: f.beastSwitches, qfSize: f.qfSize, qrSize: f.qrSize },
      hosts: { active: f.hostsActive, waiting: f.hostsWaiting },
      ips: { active: f.ipsActive, waiting: f.ipsWaiting },
      dns: { lookups: d.lookups, hitRate: d.hitRate },
      robots: { lookups: f.robotsLookups, hitRate: f.robotsHitRate },
      robotsDrums: f.robotsDrums,
      workers: { size: (this.pool ?? this.pages)!.threads, replaced: (this.pool ?? this.pages)!.replaced },
      bodyBudget: budgetStatus(this.fetcher.budget),
      outcomes: { ...this.counters.outcomes },
      rssBytes: rss,
      cpuMsPerPage: (cpu.user + cpu.system) / 1000 / pagesRun,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      urlsReady: f.readyCount,
      topPlds: this.plds.top(20),
      checkpoints: this.checkpoints,
      lastCheckpointAt: this.lastCheckpointAt,
      backlog: { pendingPages: this.pending.size, pendingBound: this.pendingBound, contentBytes: this.awaitingContentBytes, contentBound: this.contentBatchBytes },
      run: runStatus(this.runMetrics, { pagesStarted: this.dispatchedThisRun, dueNow: f.dueNow, frontier: f.depth, dns: { entries: d.entries, waiting: d.waiting }, ramBytes: this.cfg.ramBytes }),
    };
  }

  // ---------------------------------------------------------------------------------------------
  // the run

  async run(): Promise<CrawlSummary> {
    this.state = this.cfg.paused ? 'paused' : 'running';
    if (this.cfg.statusPort !== null) {
      this.statusServer = await startStatusServer(this, this.cfg.statusPort, this.cfg.statusHost, { tokenFile: path.join(this.cfg.stateDir, CONTROL_TOKEN_FILE) });
      // A page must never make the crawler fetch (and archive) its own control surface.
      this.fetcher.refuseEndpoint(this.cfg.statusHost, this.statusServer.port);
      this.pages?.refuseEndpoint(this.cfg.statusHost, this.statusServer.port);
      this.emit('status-server', this.statusServer.url, this.statusServer.token);
    }
    this.runMetrics.start();
    this.printer = new ProgressPrinter(() => this.snapshot(), this.opts.progressOut ?? process.stderr, this.cfg.progress, this.cfg.progressIntervalMs);
    this.printer.start();
    this.rateTimer = setInterval(() => {
      const now = Date.now();
      this.pageRate.sample(now, this.counters.pages);
      this.byteRate.sample(now, this.counters.bytes);
    }, 500);
    this.rateTimer.unref();
    if (this.opts.handleSignals) {
      this.signalHandler = (sig) => this.stop(`signal:${sig}`);
      process.on('SIGINT', this.signalHandler);
      process.on('SIGTERM', this.signalHandler);
    }
    try {
      if (!this.seedsInjected) {
        await this.injectSeeds();
        // A first checkpoint at once: a crawl killed in its first seconds can be resumed too.
        await this.checkpoint('start');
      } else {
        // A resumed run's first checkpoint names its own WARC writer, whose files the next
        // recovery then repairs (recovery.ts); the frontier's RAM is still empty, so it is cheap.
        await this.checkpoint('resume');
        openMark('resume-checkpoint');
      }
      await this.loop();
      await this.drain();
      const reason = this.finished ? 'done' : `stop:${this.stopReason ?? 'stop'}`;
      // Nothing is archived after the final checkpoint's WARC position (the frontier may still be
      // resolving hosts for its queues while the parts close).
      this.archivingDns = false;
      // After a failure the crawl resumes from its last checkpoint; this one is tried all the same.
      await this.checkpoint(reason).catch((e: unknown) => { throw this.failure ?? e; });
      if (this.failure !== null) throw this.failure;
      // The live block ends with the same word as the summary: done only when the frontier ran dry.
      this.state = this.finished ? 'done' : 'stopped';
      return await this.summary();
    } finally {
      this.printer.stop();
      this.runMetrics.stop();
      if (this.rateTimer) clearInterval(this.rateTimer);
      if (this.signalHandler) {
        process.off('SIGINT', this.signalHandler);
        process.off('SIGTERM', this.signalHandler);
      }
      // What stopped the crawl is what run() reports, not a part that then failed to close too.
      await this.close().catch((e: unknown) => { if (this.failure === null) throw e; });
    }
  }

  private async injectSeeds(): Promise<void> {
    const plds = new Uint32Array(this.cfg.seeds.length * 2);
    let n = 0;
    for (const raw of this.cfg.seeds) {
      const url = canonicalizeUrl(raw);
      if (url === null) continue;
      fingerprintInto(pldOrHost(hostOf(url)), plds, 2 * n);
      if (this.cluster !== null && !this.cluster.local(plds[2 * n]!, plds[2 * n + 1]!)) continue; // each partition takes its own seeds
      this.submitUrl(url, 0);
      n++;
    }
    // The operator vouches for the seeds' PLDs: STAR's trusted in-degree starts from them.
    await this.frontier.vouch(plds, n);
    this.seedsInjected = true;
    await this.mergeUrlSeen();
  }

  private stopCondition(): string | null {
    if (this.cfg.maxPages !== null && this.pagesCounted() + this.pagesInFlight() >= this.cfg.maxPages) return 'max-pages';
    if (this.cfg.maxTimeMs !== null && Date.now() - this.runStart >= this.cfg.maxTimeMs) return 'max-time';
    return null;
  }

  private backPressure(): boolean {
    return (
      this.pool?.saturated === true ||
      this.pages?.saturated === true ||
      this.awaitingContentBytes >= this.contentBatchBytes ||
      this.fetcher.budget?.tight === true || // fetched bodies hold most of the body budget (body-budget.ts)
      this.pending.size >= this.pendingBound ||
      this.cluster?.saturated === true
    );
  }

  /**
   * Pages the batch stages' paces allow now (backlog-pace.ts): URLseen's on the pending set, in
   * pages; ContentSeen's on the bodies awaiting its answer, in bytes at the running mean per page.
   */
  private pacedRoom(now: number): number {
    const byLinks = this.urlSeenPace.room(now, this.pending.size);
    const byBodies = Math.floor(this.contentPace.room(now, this.awaitingContentBytes, this.contentBytesPerPage) / this.contentBytesPerPage);
    return Math.min(byLinks, byBodies);
  }

  private async loop(): Promise<void> {
    for (;;) {
      if (this.stopReason === null) {
        const why = this.stopCondition();
        if (why === 'max-time') this.stop(why);
      }
      if (this.stopReason !== null) return;

      // The frontier's disk work (BEAST/QR reads, QR rescans, re-spreads) runs beside this loop,
      // in batches that never fall between a dispatch and its socket writes (frontier-port.ts
      // DispatchWindow): started below a low-water mark or once a second, never waited for — a
      // re-spread reads all of QF, which grows with the crawl. Admissions do not wait for it
      // either: URLseen's results are admitted as they arrive (onUrlSeenResults).
      // A partition of a cluster node waits for its refill here (its partitions share the node's
      // event loop and wire, and the cross-node IP slots are planned from the dispatch).
      const low = this.frontier.readyCount() < 2 * this.cfg.fetchConcurrency;
      if (this.cluster !== null && (low || Date.now() - this.lastRefill >= 1000)) {
        this.lastRefill = Date.now();
        await this.frontier.refill();
      } else if (this.refilling === null && (low || Date.now() - this.lastRefill >= 1000)) {
        this.lastRefill = Date.now();
        // (No kick when it ends: a refill with nothing to do ends at once, and a kick each time
        // would turn this loop into a chain of microtasks that starves sockets and timers. Its
        // batches kick the loop as they bring URLs: onRefillBatch.)
        this.refilling = this.frontier.refill()
          .catch((e: unknown) => this.fail(e))
          .finally(() => {
            this.refilling = null;
          });
      }
      this.startMerges(false);
      await this.periodicCheckpoint();
      this.frontier.pumpRobots();

      let dispatched = 0;
      if (this.state === 'running') {
        const limitByPages = this.cfg.maxPages === null ? Infinity : this.cfg.maxPages - this.pagesCounted() - this.pagesInFlight();
        let room = Math.min(this.cfg.fetchConcurrency - this.inFlight - this.robotsInFlight, limitByPages);
        if (this.cluster !== null) room = Math.min(room, this.cluster.fetchRoom()); // a cluster node's partitions share its concurrency
        if (room > 0 && !this.backPressure()) room = Math.min(room, this.pacedRoom(Date.now()));
        else room = 0;
        if (room > 0) {
          // The frontier stamps each release with this time as the request's start (start-to-start
          // politeness): it must be taken right here, never before an await.
          const items = this.frontier.nextReady(Date.now(), room);
          for (const it of items) {
            if (it.kind === 1) this.startRobots(it);
            else this.startPage(it);
            room--;
          }
          dispatched = items.length;
          this.urlSeenPace.took(dispatched);
          this.contentPace.took(dispatched * this.contentBytesPerPage);
          // Let undici put the requests on the wire before any other work runs: the frontier
          // stamped them as started now, and a late write would shorten the gap the server sees.
          if (items.length > 0) {
            this.frontier.dispatchWindow(true);
            try {
              await new Promise<void>((r) => setImmediate(r));
              await new Promise<void>((r) => setImmediate(r));
            } finally {
              this.frontier.dispatchWindow(false);
            }
          }
        }
        if (this.cfg.maxPages !== null && this.pagesCounted() >= this.cfg.maxPages && this.inFlight === 0) {
          this.stop('max-pages');
          return;
        }
      }

      if (this.idle() && this.frontier.isEmpty()) {
        if (this.unmergedLinks > 0 || this.unmergedContent > 0 || this.merging > 0) {
          this.startMerges(true);
          await this.wake.sleep(20);
          continue;
        }
        // A partition of a cluster crawl idles until the whole crawl has ended (batches may come).
        if (this.cluster !== null && !this.cluster.mayFinish()) {
          await this.wake.sleep(100);
          continue;
        }
        this.finished = true;
        this.stopReason = 'done';
        return;
      }
      const wakeAt = this.frontier.nextWakeup();
      let ms = wakeAt === null ? 200 : Math.min(200, wakeAt - Date.now());
      // Nothing was due although the heaps say "now" (e.g. the IP's connection is busy): wait for
      // an event (fetch done → kick) rather than spin.
      if (ms <= 0 && dispatched === 0) ms = 5;
      if (this.cfg.maxTimeMs !== null) ms = Math.min(ms, Math.max(1, this.runStart + this.cfg.maxTimeMs - Date.now()));
      // Always yield to the macrotask queue: awaiting resolved promises alone never lets sockets,
      // timers and worker messages run.
      if (ms > 0) await this.wake.sleep(ms);
      else await new Promise<void>((r) => setImmediate(r));
    }
  }

  private idle(): boolean {
    return this.jobs === 0 && this.inFlight === 0 && this.robotsInFlight === 0 && this.parsing === 0 && this.awaitingContent.size === 0;
  }

  // ---------------------------------------------------------------------------------------------
  // drain, checkpoint, close

  private async drain(): Promise<void> {
    // Not after a failure (fail()): the pages it left half done never finish, and they stay pending.
    while (!this.hurry && this.failure === null && (!this.idle() || this.merging > 0)) {
      if (!this.aborting && this.stopReason !== null && this.stopReason !== 'done' && graceOver(this.stopAt) && this.inFlight + this.robotsInFlight > 0) {
        this.aborting = true;
        this.fetcher.abortInFlight();
        this.pages?.abortInFlight();
        this.pool?.abandonWaiting(); // pages fetched and not yet parsed are not waited for (stop.ts)
        this.pages?.abandonUnparsed();
      }
      await this.settlePeriodic();
      this.startMerges(true);
      await this.wake.sleep(20);
    }
  }

  private async summary(): Promise<CrawlSummary> {
    const cpu = process.cpuUsage(this.cpuStart);
    const elapsed = Date.now() - this.runStart;
    const files = (await readdir(this.cfg.outDir)).filter((f) => /\.warc(\.gz|\.zst)?$/.test(f)).sort();
    return {
      stopReason: this.stopReason ?? 'done',
      finished: this.finished,
      pages: this.counters.pages, requisites: this.counters.requisites,
      bytes: this.counters.bytes,
      duplicates: this.counters.duplicates,
      urlsSeen: this.counters.urlsSeen,
      elapsedMs: elapsed,
      pagesPerSec: (this.dispatchedThisRun * 1000) / Math.max(1, elapsed),
      cpuMsPerPage: this.dispatchedThisRun === 0 ? null : (cpu.user + cpu.system) / 1000 / this.dispatchedThisRun,
      peakRssBytes: process.resourceUsage().maxRSS * 1024,
      outcomes: { ...this.counters.outcomes },
      warcDir: this.cfg.outDir,
      warcFiles: files.map((f) => path.join(this.cfg.outDir, f)),
      stateDir: this.cfg.stateDir,
      statusUrl: this.statusServer?.url ?? null,
      floorGuardHolds: this.floors.holds,
    };
  }
  protected fail(e: unknown): void {
    // An unexpected error in a fetch/parse task: stop the crawl with a checkpoint rather than
    // continue with a page silently missing; the page stays in the pending set for `resume`.
    this.emit('error-event', e);
    this.failure ??= e;
    if (this.stopReason === null) this.stop(`error:${(e as { code?: string }).code ?? (e as Error).message}`);
  }
  /** Close every part, each even when one before it failed; then throw the first failure. */
  private async close(): Promise<void> {
    let first: unknown = null;
    this.closing = true;
    // Parts lent by the process (CrawlerOptions.shared) stay open: their owner closes them.
    const own = this.opts.shared === undefined;
    for (const part of [
      () => this.statusServer?.close(), () => this.marked(), () => this.indexed(), () => own && this.pool?.close(), () => this.pages?.close(), () => own && this.fetcher.close(),
      () => own && this.dns.close(), () => own && this.warc.close(), () => own && this.crawlLog.close(), () => this.sitemapLog?.close(),
      () => this.doneLog?.close(), () => this.urlSeen.close(), () => this.contentSeen.close(), () => this.frontier.close(),
    ]) await Promise.resolve().then(part).catch((e: unknown) => { first ??= e; });
    if (first !== null) throw first; // the lock is kept: a part that failed to close may still write the state
    await this.stateLock?.release();
  }
}
