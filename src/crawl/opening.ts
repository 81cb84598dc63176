/**
 * Opening a crawl (thesis Fig. 2's parts, started in order): a new crawl or the resume of one from
 * its state directory, under the directory's lock (state-lock.ts). The WARC is recovered up to the
 * checkpoint, the archive thread, crawl log and page workers start (the parse pool is made, its
 * first worker boots after the crawl's first request: crawler-core.ts afterFirstRequest), then the
 * two DRUM threads, the frontier and the fetcher; a resume then reads what was pending or done since
 * the checkpoint (checkpoint.ts, admit-log.ts, resume-dedup.ts) and gives it back to the frontier.
 * The crawler's class (pipeline.ts Crawler) passes its constructor in (MakeCrawler): this file
 * does not import the scheduler it opens.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { CrawlError } from '../errors.js';
import { checkOwnTree } from '../disk/safe-fs.js';
import { DrumProxy, DrumThread } from '../threads/drum/drum-proxy.js';
import { DNS_CACHE_FILE, DnsCache, loadDnsFile } from '../dns/index.js';
import type { Fetcher } from '../fetch/index.js';
import { CrawlLog } from '../store/index.js';
import { zstdArchiveOptions } from '../threads/archive/archive-zstd.js';
import { ArchiveThread } from '../threads/archive/archive-thread.js';
import { recoverWarc, relocate } from '../state/recovery.js';
import { dnsArchiver } from '../threads/archive/archive-hooks.js';
import { decodeFrontierUrl } from '../frontier/index.js';
import { openFrontierPort, withMargin, type FrontierPort } from './ports/index.js';
import { crawlRamPlan, type RamPlan } from '../budget/ram-budget.js';
import type { CrawlConfig, CrawlConfigInput } from '../config/config.js';
import { readManifest, resolveRecordedConfig, readPending, writePending, readDoneLog, DoneLog, type CheckpointManifest } from '../state/checkpoint.js';
import { ParsePool, parseHoldMs } from '../threads/page/parse-pool.js';
import { newBodyBudget, parseCopyBytes, type BodyBudget } from '../budget/body-budget.js';
import { PAGE_WORKERS_REFUSED, PageWorkerPool } from '../threads/page/page-worker-pool.js';
import { AdmitLog } from '../state/admit-log.js';
import { SyncedPositionLog, readSyncedPosition } from '../state/warc-synced.js';
import { newFetcher, fetcherOptions } from './fetch/index.js';
import { CheckpointStage } from './checkpoint-stage.js';
import { LinkScope, scopeAnchors } from '../config/link-scope.js';
import { StateLock } from '../state/state-lock.js';
import { SitemapRouter, plainHops } from '../sitemap/crawl.js';
import { SitemapListingLog } from '../sitemap/listing-log.js';
import type { CrawlerOptions } from './core/index.js';
import type { EarlyStart } from './ports/early-robots.js';
import { openMark, openMarked } from '../monitor/open-trace.js';

/** The crawler's constructor, with the parts the opening made (crawler-core.ts CrawlerCore). */
export type MakeCrawler<T> = (
  cfg: CrawlConfig, manifest: CheckpointManifest | null, urlSeen: DrumProxy, contentSeen: DrumProxy, frontier: FrontierPort, dns: DnsCache,
  fetcher: Fetcher, warc: ArchiveThread, crawlLog: CrawlLog, pool: ParsePool | null, pages: PageWorkerPool | null, opts: CrawlerOptions,
) => T;

/**
 * Keys per ContentSeen bucket in Z before they settle into its deep part (DrumOptions.settleKeys):
 * a merge passes over at most about 4 × 2^15 keys of Z (~10 MB at ~80 bytes a key, the first
 * capture's URL and date), and a settling rewrites a bucket's deep part once per 2^15 new keys.
 */
const CONTENT_SETTLE_KEYS = 1 << 15;

export abstract class OpeningStage extends CheckpointStage {
  /** The state directory's lock, held from the opening until the crawler has closed (pipeline.ts close). */
  protected stateLock: StateLock | null = null;

  /** Open a new crawl in `config.stateDir` (refused when it holds one already: resume that). */
  protected static async openNew<T extends OpeningStage>(config: CrawlConfig, opts: CrawlerOptions, make: MakeCrawler<T>): Promise<T> {
    await mkdir(config.stateDir, { recursive: true });
    return OpeningStage.locked(config.stateDir, async () => {
      const manifest = await readManifest(config.stateDir);
      if (manifest !== null) throw new CrawlError('CRAWL_STATE_EXISTS', `${config.stateDir} already holds a crawl; use \`drumcrawl resume ${config.stateDir}\``);
      return OpeningStage.start(config, null, opts, make);
    });
  }

  /**
   * Resume the crawl whose state is `stateDir`, wherever that directory now is (recovery.ts
   * relocate: the paths recorded in the manifest are not trusted after a move or a copy).
   */
  protected static async resumeFrom<T extends OpeningStage>(stateDir: string, overrides: CrawlConfigInput, opts: CrawlerOptions, make: MakeCrawler<T>): Promise<T> {
    if ((await readManifest(path.resolve(stateDir))) === null) throw new CrawlError('CRAWL_STATE_MISSING', `${stateDir} holds no checkpoint to resume`);
    return OpeningStage.locked(path.resolve(stateDir), () => OpeningStage.resumeLocked(stateDir, overrides, opts, make));
  }

  private static async resumeLocked<T extends OpeningStage>(stateDir: string, overrides: CrawlConfigInput, opts: CrawlerOptions, make: MakeCrawler<T>): Promise<T> {
    // Again holding the lock: its last holder may have checkpointed since (replaced, never removed).
    const manifest = (await readManifest(path.resolve(stateDir)))!;
    const where = await relocate(stateDir, manifest.config.stateDir, manifest.config.outDir, overrides.outDir as string | undefined, manifest.warc);
    // The limits (--max-pages, --max-time) belong to the command that names them: a resume runs
    // without the last run's limits unless it is given its own (a stored limit that was reached
    // would end every resume at once).
    const cfg = resolveRecordedConfig(path.resolve(stateDir), manifest, where, overrides);
    return OpeningStage.start(cfg, manifest, opts, make);
  }

  /** `open` run holding the state directory's lock (state-lock.ts); the crawler releases it when it closes. */
  private static async locked<T extends OpeningStage>(stateDir: string, open: () => Promise<T>): Promise<T> {
    const lock = await StateLock.acquire(stateDir);
    const crawler = await open().catch(async (e: unknown) => { await lock.release(); throw e; });
    crawler.stateLock = lock;
    return crawler;
  }

  private static async start<T extends OpeningStage>(cfg: CrawlConfig, manifest: CheckpointManifest | null, opts: CrawlerOptions, make: MakeCrawler<T>): Promise<T> {
    // Nothing below the two directories may lead elsewhere (a link or hard link planted where the
    // crawler keeps its own files): checked before anything in them is opened (src/disk/safe-fs.ts).
    checkOwnTree(cfg.stateDir);
    checkOwnTree(cfg.outDir);
    const shared = opts.shared;
    // First: a --warc-zstd-dictionary file that is not one is refused before anything is created.
    // (On a resume the checkpoint's WARC file gives the dictionary: it sits before every offset
    // recovery may cut at.)
    const zstdOpts = shared !== undefined ? {} : await zstdArchiveOptions(cfg, manifest?.warc ?? null);
    await mkdir(cfg.stateDir, { recursive: true });
    await mkdir(cfg.outDir, { recursive: true });
    // Only this crawl's WARC bytes after the last sync's position (warc-synced.ts), or else after
    // the checkpoint's offset, are read (recovery.ts).
    const recovered = manifest !== null && shared === undefined ? await recoverWarc(cfg.outDir, manifest.warc, await readSyncedPosition(cfg.stateDir)) : [];
    // Indexes left open by this recovery or by an earlier run that ended before finishing them:
    // the crawler sorts them while it crawls (checkpoint-stage.ts finishIndexes).
    openMark('warc-recovered');
    const unsorted = [...new Set([...recovered.filter((r) => r.indexOpen).map((r) => path.basename(r.file)), ...(manifest?.indexing ?? [])])];

    // RAM split: every share is in ram-budget.ts (a partition of a cluster node: its share of the
    // node's budget, the node holding the fixed part; its parse pool is the node's).
    const plan = crawlRamPlan(cfg, shared?.ramBytes);
    const warc = shared?.warc ?? await ArchiveThread.open({
      dir: cfg.outDir,
      prefix: 'drumcrawl',
      compression: cfg.warcCompression,
      maxFileBytes: cfg.warcMaxFileBytes,
      ...zstdOpts,
      info: { software: 'drumcrawl/0.1', 'http-header-user-agent': cfg.userAgent, format: 'WARC File Format 1.1' },
    });
    openMark('archive-thread');
    const crawlLog = shared?.crawlLog ?? await CrawlLog.open(path.join(cfg.outDir, 'crawl.log'), { format: cfg.crawlLogFormat });
    const scope = manifest ? { hosts: manifest.scopeHosts, plds: manifest.scopePlds } : scopeAnchors(cfg.seeds);
    const parseData = {
      images: cfg.images, include: cfg.include, exclude: cfg.exclude, scope: cfg.scope, scopeHosts: scope.hosts, scopePlds: scope.plds,
      warc: warc.encodeOptions,
    };
    const workerOpts = { threads: plan.parseWorkers, timeoutMs: cfg.parseTimeoutMs, heapMb: plan.parseWorkerHeapMb };
    // A new crawl's seeds' robots.txt may be on the wire already (early-robots.ts, started by the
    // CLI before the crawler's modules loaded): its DNS cache, Fetcher, body budget and floors are
    // the crawl's.
    const early = manifest === null && shared === undefined ? opts.early ?? null : null;
    const budget = early?.budget ?? newBodyBudget(cfg); // the bytes of fetched bodies, whichever thread fetched them (body-budget.ts)
    // --page-workers on: the workers fetch, parse and encode (page-worker.ts); off: the main thread
    // fetches and the parse pool parses and encodes.
    if (shared !== undefined && cfg.pageWorkers === 'on') throw new CrawlError('CRAWL_CONFIG_INVALID', PAGE_WORKERS_REFUSED);
    const pages = cfg.pageWorkers === 'on' ? new PageWorkerPool({ ...parseData, fetcher: fetcherOptions(cfg), refused: [], budget: budget.buffer }, { ...workerOpts, floors: early?.sharedFloors ?? undefined }) : null;
    // The page workers' isolates before the DRUM threads' (a process-wide flag while they start).
    await pages?.online();
    openMark('page-workers-online');
    // The parse pool's first worker boots once the crawl's first request is on the wire
    // (crawler-core.ts afterFirstRequest), not before it: nothing before that request needs a parse
    // (robots.txt is parsed on this thread), and its ~0.2 s of CPU then overlaps the network wait
    // (docs/performance.md "Start-up and real pages").
    const pool = pages === null ? shared?.pool ?? new ParsePool(parseData, { ...workerOpts, copyBytes: parseCopyBytes(cfg), holdMs: parseHoldMs(), deferStart: true }) : null;
    const warm = pages !== null ? pages.warmup() : Promise.resolve();
    warm.catch(() => undefined); // awaited below; a failure surfaces there
    try {
      const c = await OpeningStage.openRest(cfg, manifest, opts, { warc, crawlLog, pool, pages, warm, scope, budget, plan, early }, make);
      c.finishIndexes(unsorted);
      return c;
    } catch (e) {
      // Nothing may keep the process alive after a failed open (its threads would); shared parts are their owner's.
      if (shared === undefined) for (const part of [pool, pages, warc, crawlLog, early?.fetcher]) await part?.close().catch(() => undefined);
      early?.dns.close();
      throw e;
    }
  }

  /** The rest of start(): DRUMs, frontier, fetcher, pending URLs (the parse pool boots meanwhile). */
  private static async openRest<T extends OpeningStage>(
    cfg: CrawlConfig, manifest: CheckpointManifest | null, opts: CrawlerOptions,
    o: { warc: ArchiveThread; crawlLog: CrawlLog; pool: ParsePool | null; pages: PageWorkerPool | null; warm: Promise<void>; scope: { hosts: string[]; plds: string[] }; budget: BodyBudget; plan: RamPlan; early: EarlyStart | null },
    make: MakeCrawler<T>,
  ): Promise<T> {
    const { warc, crawlLog, pool, pages, warm, scope, budget, plan, early } = o;
    let crawler: T | undefined;
    // Both DRUMs run in worker threads (drum-proxy.ts): their merges do synchronous sequential
    // I/O that must not stall the sockets.
    const urlSeenOpen = DrumProxy.openBytes(
      path.join(cfg.stateDir, 'urlseen'),
      {
        ramBytes: plan.urlSeenBytes,
        valueBytes: 0,
        // Fewer, larger buckets than the model's k: every bucket merge costs a few fsyncs and hands
        // over at least one result chunk (one STAR batch + one BEAST commit each), and this crawler
        // merges often (whenever the frontier starves), not only when r is reached.
        buckets: 4,
        deliver: 'unique',
        // CLOCK cache in front of URLseen (thesis V.2): most duplicate links hit it, never reach disk.
        cacheEntries: plan.urlSeenCacheEntries,
      },
      // URLseen's answers go to the stage after the one that asks (admit/admit-stage.ts).
      (batch) => crawler!.onUrlSeenResults(batch),
      {
        // One BEAST commit per bucket merge, before DRUM commits it (DRUM's beforeCommit): the
        // result chunks are only placed (onUrlSeenResults) — at-least-once holds, one fdatasync
        // round per bucket. The admit log records the bucket's keys around it, so that a resumed
        // run does not admit them again (admit-log.ts).
        beforeCommit: (bucket) => crawler!.admitLog!.beforeCommit(bucket, (mark) => crawler!.frontier.commitAdmits(mark)),
        // A larger young generation than the other DRUM hosts (drum-proxy.ts, DRUM_HOST_LIMITS):
        // measured when URLseen's delivery still made an object per result (drum-proxy.ts).
        youngGenMb: 24,
        thread: opts.shared?.urlSeenThread,
      },
    );
    // ContentSeen and STAR's PLD store share one thread (one isolate: JIT once, one heap to
    // collect); both merge about once a second and briefly, so neither waits long for the other.
    const smallDrums = opts.shared?.smallThread ?? new DrumThread();
    const contentSeenOpen = DrumProxy.open(
      path.join(cfg.stateDir, 'contentseen'),
      // keepFirst: a digest keeps its first capture, which every later copy's revisit record refers
      // to. settleKeys: merged once a second, not when r is reached, ContentSeen keeps at most
      // about CONTENT_SETTLE_KEYS keys per bucket in Z (each merge passes over them) and the older
      // ones in the deep part, looked up by one block read (src/drum/deep.ts).
      { ramBytes: plan.contentSeenBytes, valueBytes: 'variable', valueBytesHint: 72, auxBytesHint: 4, buckets: 4, keepFirst: true, settleKeys: CONTENT_SETTLE_KEYS },
      // ContentSeen's answers go to the stage after the one that asks (archive/archive-stage.ts).
      (batch) => crawler!.onContentResults(batch),
      { thread: smallDrums },
    );
    const [urlSeen, contentSeen] = await Promise.all([openMarked('urlseen-open', urlSeenOpen), openMarked('contentseen-open', contentSeenOpen)]);
    // every answer a server gave, archived as a dns: record (archive-hooks.ts)
    const archiveDns = cfg.warcDns ? dnsArchiver(warc, (e) => crawler?.fail(e), () => crawler?.archivingDns ?? true) : undefined;
    if (early !== null && archiveDns !== undefined) early.archiveDnsTo(archiveDns);
    const dns = opts.shared?.dns ?? early?.dns ?? new DnsCache({
      servers: cfg.dnsServers.length > 0 ? cfg.dnsServers : undefined,
      maxEntries: plan.dnsCacheEntries,
      onAnswer: archiveDns,
    });
    // A resume starts from the answers its last checkpoint saved (src/dns/dns-file.ts), loaded
    // beside the rest of the opening (slices between its other steps) and in before it ends.
    const dnsLoaded = manifest !== null && opts.shared === undefined ? loadDnsFile(path.join(cfg.stateDir, DNS_CACHE_FILE), dns, Date.now) : null;
    const frontier = await openFrontierPort(path.join(cfg.stateDir, 'frontier'), opts.shared !== undefined ? { ...cfg, ramBytes: opts.shared.ramBytes } : cfg, dns, {
      onDrop: (u, reason) => {
        crawler?.count(`dropped:${reason}`);
        crawler?.crawlLog.writeDropped({ time: new Date(), url: u.url, hops: plainHops(u.hops), reason, via: u.via, path: u.path });
      },
      starThread: smallDrums,
      cluster: opts.cluster?.frontier,
    });
    openMark('frontier-open');
    // With page workers this Fetcher (robots.txt) shares its wire gate with theirs (wire-share.ts).
    const fetcher = opts.shared?.fetcher ?? early?.fetcher ?? newFetcher(cfg, dns, pages?.floors.forThread(0), budget);
    // The parse workers boot while the DRUM threads open (each loads its code: ~1 s apiece on a
    // loaded 2-core box, which a resume would otherwise pay one after the other).
    await warm;
    openMark('page-workers-warm');
    crawler = make(cfg, manifest, urlSeen, contentSeen, frontier, dns, fetcher, warc, crawlLog, pool, pages, opts);
    const c = crawler;
    if (opts.shared === undefined) c.syncedLog = new SyncedPositionLog(cfg.stateDir);
    frontier.onRefillBatch(() => { openMark('refill-batch'); c.wake.kick(); });
    if (pages !== null) {
      pages.floors.setFloors(withMargin(cfg.minHostDelayMs, cfg), withMargin(cfg.minIpDelayMs, cfg));
      // The 'dispatch' event and TRACE lines in time order: each send reported as it happens.
      const report = (): void => pages.reportStarts((o, at, ip) => c.dispatched(o.url, ip, false, at));
      if (process.env.DRUMCRAWL_TRACE_FETCH) report();
      c.on('newListener', (name: string) => { if (name === 'dispatch') report(); });
    }
    await dnsLoaded;
    await OpeningStage.restore(c, cfg, manifest, scope, frontier);
    openMark('restored');
    return c;
  }

  /**
   * The rest of the opening once the crawler exists: a new crawl's scope and admit log, or a
   * resumed one's pending URLs, done pages and admit log given back to the frontier; then the
   * sitemap router and done.log.
   */
  private static async restore<T extends OpeningStage>(c: T, cfg: CrawlConfig, manifest: CheckpointManifest | null, scope: { hosts: string[]; plds: string[] }, frontier: FrontierPort): Promise<void> {
    let done: Uint8Array[] | undefined;
    if (manifest === null) {
      for (const h of scope.hosts) c.scopeHosts.push(h); // a loop: a spread of 10^5 seeds' hosts overflows the stack
      for (const p of scope.plds) c.scopePlds.push(p);
      c.admitLog = (await AdmitLog.open(cfg.stateDir, frontier.admitMark)).log;
    } else {
      // URLs that were in flight at the crash (or at the last checkpoint): fetch them again.
      const recs = await readPending(cfg.stateDir);
      openMark('pending-read');
      // Pages finished durably after that checkpoint (done.log): the frontier hands them out again
      // (its cursors are from the checkpoint); dispatch skips them, so only the in-flight window is
      // fetched twice.
      done = await readDoneLog(cfg.stateDir);
      for (const d of done) c.again.addDone(decodeFrontierUrl(d).url, d);
      openMark('done-log-read');
      const admits = await AdmitLog.open(cfg.stateDir, frontier.admitMark);
      openMark('admit-log-read');
      c.admitLog = admits.log;
      c.again.setRedelivered(admits.redelivered);
      const back = recs.map((r) => decodeFrontierUrl(r));
      c.again.addReadmitted(back.map((u) => u.url));
      if (back.length > 0) await frontier.readmit(back);
      // (Re-admitted URLs are durable in QR once the frontier commits; pending.bin keeps them
      // until then — the first checkpoint rewrites it.)
      openMark('readmitted');
      await frontier.commit();
      await writePending(cfg.stateDir, []);
      openMark('frontier-committed');
    }
    c.sitemapLog = await SitemapListingLog.open(path.join(cfg.outDir, 'sitemaps.log'));
    c.sitemaps = new SitemapRouter(
      cfg.sitemaps,
      new LinkScope({ scope: cfg.scope, scopeHosts: c.scopeHosts, scopePlds: c.scopePlds, include: cfg.include, exclude: cfg.exclude }),
      cfg.maxDepth,
      {
        submit: (url, hops, via, hopPath) => c.submitUrl(url, hops, via, hopPath),
        drop: (url, hops, code, via, hopPath) => c.crawlLog.writeDropped({ time: new Date(), url, hops, reason: code, via, path: hopPath }),
        count: (k) => c.count(k),
      },
      c.sitemapLog,
    );
    c.doneLog = await DoneLog.open(cfg.stateDir, done); // done.log read once
    if (manifest === null) c.doneLog.rewrite([]); // a new crawl in a state dir without a manifest
  }
}
