/**
 * The crawler: IRLbot's pipeline (thesis Fig. 2, ch. VII) as one process.
 *
 *   frontier.nextReady ─► fetch (bounded concurrency) ─► WARC + crawl log
 *        ▲                   │ 2xx                         ▲
 *        │                   ▼                             │ response │ revisit
 *        │            parse pool (piscina) ─► ContentSeen DRUM (payload digest) ┘
 *        │                                      │ unique: links
 *        │                                      ▼
 *        └── frontier.admit ◄── STAR ◄── URLseen DRUM (check+update, aux = URL record)
 *   DNS + robots side loop: frontier robots items → DnsCache → fetchRobots → frontier.robotsDone
 *
 * Event loop: I/O and scheduling only. CPU-heavy work (HTML decode, link extraction,
 * canonicalization, hashing, digests) runs in the parse pool and comes back as one compact buffer.
 * The DRUMs run in two worker threads: URLseen alone, ContentSeen with STAR's PLD store (one
 * isolate for both: drum-proxy.ts DrumThread).
 *
 * Back-pressure (no unbounded in-RAM queue), each bound from the config:
 *   - fetches in flight ≤ fetchConcurrency;
 *   - pages in the parse pool: dispatch pauses while it is saturated (`ParsePool.saturated`: every
 *     worker has its queue of pages and as many again wait to be handed over);
 *   - pages waiting for the ContentSeen answer hold their bodies: ≤ contentBatchBytes (then a
 *     ContentSeen merge runs; dispatch pauses past it);
 *   - links wait in the URLseen DRUM's own buffers (disk-backed; `needsMerge` → merge);
 *   - the frontier holds a bounded number of URLs in RAM (its own `ramUrls` cap);
 *   - the pending set (URLs taken out of the frontier, not yet durable) is bounded by the above.
 *
 * Durability (see checkpoint.ts): URLseen's unique URLs are placed in STAR/BEAST as its results
 * arrive and made durable (frontier.commitAdmits) before URLseen commits each bucket. A page
 * leaves the pending set once its WARC records and crawl-log line are synced and its links are
 * in a merged URLseen; it is then appended to done.log. pending.bin and the frontier's read
 * cursors are written only at checkpoints: after a crash the crawl resumes from the last one, the
 * frontier hands out again what it had handed out since, and dispatch skips the URLs done.log
 * holds — so only the pages in flight at the crash are fetched twice.
 */
import { EventEmitter } from 'node:events';
import { mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { CrawlError } from '../errors.js';
import type { DrumResult } from '../drum/index.js';
import { DrumProxy, DrumThread } from './drum-proxy.js';
import { forEachResult } from './drum-codec.js';
import { DnsCache } from '../dns/index.js';
import { Fetcher, isHttpResponse, type FetchResult } from '../fetch/index.js';
import { ALLOW_ALL, fetchRobots } from '../robots/index.js';
import type { EncodedGroupLike } from './links-codec.js';
import { WarcWriter, CrawlLog, type TruncatedReason } from '../store/index.js';
import { recoverWarc, relocate } from './recovery.js';
import { canonicalizeUrl, fingerprintInto, hostOf, pldOrHost } from '../url/index.js';
import { FrontierUrl, encodeFrontierUrl, decodeFrontierUrl } from '../frontier/index.js';
import { openFrontierPort, politenessOutcome, withMargin, type FrontierPort } from './frontier-port.js';
import { type CrawlConfig, applyRuntimeChange, resolveCrawlConfig, type CrawlConfigInput } from './config.js';
import {
  emptyCounters, readManifest, writeManifest, readPending, writePending, readDoneLog, DoneLog, MANIFEST_VERSION,
  type CheckpointManifest, type CrawlCounters,
} from './checkpoint.js';
import { ParsePool } from './parse-pool.js';
import { LinkTable } from './links-codec.js';
import { RateMeter, ProgressPrinter, type StatusSnapshot, type CrawlState } from './stats.js';
import { startStatusServer, CONTROL_TOKEN_FILE, type StatusServer } from './status-server.js';
import { Wakeup } from './wakeup.js';
import { ABORTED_OUTCOME, graceOver } from './stop.js';
import { AdmitLog } from './admit-log.js';
import { ResumeDedup } from './resume-dedup.js';
import { LinkScope, DROP_CODES } from './link-scope.js';
import { SitemapRouter, isSitemapHops, plainHops } from '../sitemap/crawl.js';
import { SitemapListingLog } from '../sitemap/listing-log.js';

export interface CrawlerOptions {
  /** Where the progress printer writes. @default process.stderr */
  progressOut?: NodeJS.WritableStream & { isTTY?: boolean };
  /** Install SIGINT/SIGTERM handlers (graceful stop; a second signal hurries). @default false */
  handleSignals?: boolean;
}

export interface CrawlSummary {
  stopReason: string;
  finished: boolean;
  pages: number;
  bytes: number;
  duplicates: number;
  urlsSeen: number;
  elapsedMs: number;
  pagesPerSec: number;
  /** null when this run fetched no page (a ratio over zero pages means nothing) */
  cpuMsPerPage: number | null;
  peakRssBytes: number;
  outcomes: Record<string, number>;
  warcDir: string;
  warcFiles: string[];
  stateDir: string;
  statusUrl: string | null;
  /** requests released by the heaps before a floor had passed, held by the last-step guard */
  floorGuardHolds: number;
}

/** A page from dispatch to durability. */
interface PageJob {
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
}

const EMPTY = new Uint8Array(0);
/** Read once (as src/fetch does for its WIRE lines): process.env is a slow lookup for a per-page check. */
const TRACE_FETCH = process.env.DRUMCRAWL_TRACE_FETCH !== undefined && process.env.DRUMCRAWL_TRACE_FETCH !== '';

/** What the frontier is told for a URL skipped at dispatch (resume-dedup.ts): a success. */
const SKIPPED: FetchResult = {
  url: '', ip: '', outcome: 'ok', requestHead: EMPTY, body: EMPTY, decoded: EMPTY, truncated: false, startedAt: 0, timings: { totalMs: 0 },
};

const AUX_HEADER = 20;
const enc = new TextEncoder();
const dec = new TextDecoder();

/** URLseen aux: [u32 hostHi, hostLo, pldHi, pldLo, hops] + URL bytes. */
function encodeAux(hostHi: number, hostLo: number, pldHi: number, pldLo: number, hops: number, url: Uint8Array): Uint8Array {
  const b = new Uint8Array(AUX_HEADER + url.byteLength);
  const dv = new DataView(b.buffer);
  dv.setUint32(0, hostHi, true);
  dv.setUint32(4, hostLo, true);
  dv.setUint32(8, pldHi, true);
  dv.setUint32(12, pldLo, true);
  dv.setUint32(16, hops, true);
  b.set(url, AUX_HEADER);
  return b;
}

/** Little-endian u32 at `o` (no DataView object per read: these run per URL and per page). */
const le32 = (b: Uint8Array, o: number): number => (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0;

/**
 * `b[from, to)` as a string: canonical URLs are ASCII, for which latin1 is exact and cheaper than
 * UTF-8. `b` is a Buffer over a whole result batch: no view object per URL.
 */
function urlTextAt(b: Buffer, from: number, to: number): string {
  for (let i = from; i < to; i++) if (b[i]! >= 0x80) return dec.decode(b.subarray(from, to));
  return b.toString('latin1', from, to);
}

/** URLseen's unique URLs from one result chunk (drum-codec layout, aux = encodeAux's). */
function decodeUniqueUrls(buf: Uint8Array, now: number, keep: (hi: number, lo: number) => boolean): FrontierUrl[] {
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  const out: FrontierUrl[] = [];
  forEachResult(buf, (_op, unique, hi, lo, _vo, _vl, a, n) => {
    if (!unique || n < AUX_HEADER || !keep(hi, lo)) return;
    out.push(new FrontierUrl({
      url: urlTextAt(b, a + AUX_HEADER, a + n),
      hostHi: le32(b, a),
      hostLo: le32(b, a + 4),
      pldHi: le32(b, a + 8),
      pldLo: le32(b, a + 12),
      hops: le32(b, a + 16),
      budget: 0,
      admitted: 0,
      discoveredAt: now,
    }));
  });
  return out;
}

/**
 * ContentSeen value: [f64 date ms] + URL of the first capture (for the revisit's WARC-Refers-To-*),
 * encoded into a scratch buffer: a view valid until the next call (the DRUM batch copies it at once;
 * a fresh ArrayBuffer per page would be one more malloc for V8's ArrayBuffer sweeper).
 */
let contentScratch = new Uint8Array(1024);
let contentScratchDv = new DataView(contentScratch.buffer);
function encodeContentValue(url: string, date: Date): Uint8Array {
  if (contentScratch.byteLength < 8 + url.length * 3) {
    contentScratch = new Uint8Array(2 * (8 + url.length * 3));
    contentScratchDv = new DataView(contentScratch.buffer);
  }
  contentScratchDv.setFloat64(0, date.getTime(), true);
  const { written } = enc.encodeInto(url, contentScratch.subarray(8));
  return contentScratch.subarray(0, 8 + written);
}
/** ContentSeen aux: the page's job id (u32 LE); scratch, copied by the DRUM batch like the value. */
const contentAux = new Uint8Array(4);
function decodeContentValue(b: Uint8Array): { url: string; date: Date } {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  return { date: new Date(dv.getFloat64(0, true)), url: dec.decode(b.subarray(8)) };
}

/** Longest wait between ContentSeen merges while the frontier is not starving (see startMerges). */
const CONTENT_MERGE_MS = 1000;

/** A response record's WARC-Truncated value: false, or why the body is not all the server sent. */
const truncation = (r: FetchResult): false | TruncatedReason => (r.truncated ? r.truncatedReason ?? 'unspecified' : false);

const isHtml = (ct: string | undefined): boolean => ct === undefined || /^(text\/html|application\/xhtml\+xml)/i.test(ct);

export class Crawler extends EventEmitter {
  private cfg: CrawlConfig;
  private state: CrawlState = 'starting';
  private stopReason: string | null = null;
  private finished = false;
  private hurry = false;
  /** when stop() was first called (ms), for the grace period of fetches in flight (stop.ts) */
  private stopAt = 0;
  /** the stop aborted the fetches in flight: their answers are not reported (stop.ts) */
  private aborting = false;

  private readonly counters: CrawlCounters;
  private epoch: number;
  private seedsInjected: boolean;
  private readonly scopeHosts: string[];
  private readonly scopePlds: string[];

  /** URLs taken out of the frontier and not yet durable (bounded by the back-pressure limits). */
  private readonly pending = new Map<number, Uint8Array>();
  /** done.log (checkpoint.ts): pages that left `pending` durably since the frontier's last commit */
  private doneLog: DoneLog | null = null;
  /** what a resumed run must not fetch again (resume-dedup.ts) */
  private readonly again = new ResumeDedup();
  /** URLseen's unique keys of the current bucket merge, made durable in admits.bin (admit-log.ts) */
  private admitLog: AdmitLog | null = null;
  /** ids of page fetches in progress */
  private readonly inFlightIds = new Set<number>();
  private nextId = 1;
  private inFlight = 0;
  private robotsInFlight = 0;
  private parsing = 0;
  private readonly awaitingContent = new Map<number, PageJob>();
  private awaitingContentBytes = 0;
  private readonly contentBatchBytes: number;
  /** pages whose links sit in URLseen's buffers (durable after the next URLseen merge) */
  private awaitingMerge: number[] = [];
  /** pages fully written, durable after the next WARC sync */
  private awaitingSync: number[] = [];
  private unmergedLinks = 0;
  private unmergedContent = 0;
  private lastUrlMerge = Date.now();
  private lastContentMerge = Date.now();
  private lastCheckpoint = Date.now();
  private contentMerging: Promise<void> | null = null;
  private urlMerging: Promise<void> | null = null;
  private merging = 0;
  private lastSync = Date.now();
  private lastRefill = 0;
  private dispatchedThisRun = 0;

  private readonly wake = new Wakeup();
  private readonly pageRate = new RateMeter();
  private readonly byteRate = new RateMeter();
  private rateTimer: NodeJS.Timeout | null = null;
  private checkpoints = 0;
  private lastCheckpointAt: string | null = null;
  private peakRss = 0;
  private readonly runStart = Date.now();
  private readonly cpuStart = process.cpuUsage();
  private readonly startedAt = new Date();
  private printer: ProgressPrinter | null = null;
  private statusServer: StatusServer | null = null;
  private signalHandler: ((sig: NodeJS.Signals) => void) | null = null;
  private readonly fp = new Uint32Array(6);
  /** submitTable's PLD→PLD pairs (bound: the largest page's link count × 16 B) */
  private pairScratch = new Uint32Array(1024);
  private readonly lastHostStart = new Map<string, number>();
  private readonly lastIpStart = new Map<string, number>();
  /** actual start of the last request per host / IP (the reservations above may be earlier) */
  private readonly hostStarted = new Map<string, number>();
  private readonly ipStarted = new Map<string, number>();
  private lastGuardPrune = 0;
  /** requests the floor guard had to hold (the heaps released them early) */
  private guardHolds = 0;
  /** sitemap discovery and reading (src/sitemap/crawl.ts); set by openRest */
  private sitemaps: SitemapRouter | null = null;
  private sitemapLog: SitemapListingLog | null = null;

  private constructor(
    cfg: CrawlConfig,
    manifest: CheckpointManifest | null,
    private readonly urlSeen: DrumProxy,
    private readonly contentSeen: DrumProxy,
    private readonly frontier: FrontierPort,
    private readonly dns: DnsCache,
    private readonly fetcher: Fetcher,
    private readonly warc: WarcWriter,
    private readonly crawlLog: CrawlLog,
    private readonly pool: ParsePool,
    private readonly opts: CrawlerOptions,
  ) {
    super();
    this.cfg = cfg;
    this.counters = manifest ? { ...emptyCounters(), ...manifest.counters, outcomes: { ...manifest.counters.outcomes } } : emptyCounters();
    this.epoch = manifest?.epoch ?? 0;
    this.seedsInjected = manifest?.seedsInjected ?? false;
    this.scopeHosts = manifest?.scopeHosts ?? [];
    this.scopePlds = manifest?.scopePlds ?? [];
    // Bodies held while their ContentSeen answer is pending: 1/16 of the RAM budget, 4..64 MB.
    this.contentBatchBytes = Math.max(4 << 20, Math.min(64 << 20, Math.floor(cfg.ramBytes / 16)));
  }

  /**
   * Open a crawl. A state dir that already holds a checkpoint is resumed (the stored startup
   * config is kept; `overrides` may change runtime options and the status/progress settings).
   */
  static async open(config: CrawlConfig, opts: CrawlerOptions = {}): Promise<Crawler> {
    const manifest = await readManifest(config.stateDir);
    if (manifest !== null) throw new CrawlError('CRAWL_STATE_EXISTS', `${config.stateDir} already holds a crawl; use \`drumcrawl resume ${config.stateDir}\``);
    return Crawler.start(config, null, opts);
  }

  /**
   * Resume the crawl whose state is `stateDir`, wherever that directory now is (recovery.ts
   * relocate: the paths recorded in the manifest are not trusted after a move or a copy).
   */
  static async resume(stateDir: string, overrides: CrawlConfigInput = {}, opts: CrawlerOptions = {}): Promise<Crawler> {
    const manifest = await readManifest(path.resolve(stateDir));
    if (manifest === null) throw new CrawlError('CRAWL_STATE_MISSING', `${stateDir} holds no checkpoint to resume`);
    const where = await relocate(stateDir, manifest.config.stateDir, manifest.config.outDir, overrides.outDir as string | undefined);
    // The limits (--max-pages, --max-time) belong to the command that names them: a resume runs
    // without the last run's limits unless it is given its own (a stored limit that was reached
    // would end every resume at once).
    const stored: CrawlConfigInput = { ...(manifest.config as CrawlConfigInput), maxPages: null, maxTimeMs: null };
    const cfg = resolveCrawlConfig({ ...stored, ...overrides, ...where });
    return Crawler.start(cfg, manifest, opts);
  }

  private static async start(cfg: CrawlConfig, manifest: CheckpointManifest | null, opts: CrawlerOptions): Promise<Crawler> {
    await mkdir(cfg.stateDir, { recursive: true });
    await mkdir(cfg.outDir, { recursive: true });
    // Only this crawl's WARC bytes after the checkpoint's offset are read (recovery.ts).
    if (manifest !== null) await recoverWarc(cfg.outDir, manifest.warc);

    // RAM split (ramBytes): DRUM buffers 1/8 each for URLseen, 1/32 ContentSeen, the frontier 1/4,
    // parse workers' heaps 1/4 across the pool, the rest for fetch buffers, bodies and V8.
    const ram = cfg.ramBytes;
    const warc = await WarcWriter.open({
      dir: cfg.outDir,
      prefix: 'drumcrawl',
      compression: cfg.warcCompression,
      maxFileBytes: cfg.warcMaxFileBytes,
      info: { software: 'drumcrawl/0.1', 'http-header-user-agent': cfg.userAgent, format: 'WARC File Format 1.1' },
    });
    const crawlLog = await CrawlLog.open(path.join(cfg.outDir, 'crawl.log'));
    const scope = manifest ? { hosts: manifest.scopeHosts, plds: manifest.scopePlds } : scopeAnchors(cfg.seeds);
    const pool = new ParsePool(
      {
        images: cfg.images, include: cfg.include, exclude: cfg.exclude, scope: cfg.scope, scopeHosts: scope.hosts, scopePlds: scope.plds,
        warc: warc.encodeOptions,
      },
      { threads: cfg.workers, timeoutMs: cfg.parseTimeoutMs, heapMb: Math.max(64, Math.floor(ram / 4 / cfg.workers / 2 ** 20)) },
    );
    const warm = pool.warmup();
    warm.catch(() => undefined); // awaited below; a failure surfaces there
    try {
      return await Crawler.openRest(cfg, manifest, opts, { warc, crawlLog, pool, warm, scope });
    } catch (e) {
      // Nothing may keep the process alive after a failed open (its worker threads would).
      await pool.close().catch(() => undefined);
      await warc.close().catch(() => undefined);
      await crawlLog.close().catch(() => undefined);
      throw e;
    }
  }

  /** The rest of start(): DRUMs, frontier, fetcher, pending URLs (the parse pool boots meanwhile). */
  private static async openRest(
    cfg: CrawlConfig, manifest: CheckpointManifest | null, opts: CrawlerOptions,
    o: { warc: WarcWriter; crawlLog: CrawlLog; pool: ParsePool; warm: Promise<void>; scope: { hosts: string[]; plds: string[] } },
  ): Promise<Crawler> {
    const { warc, crawlLog, pool, warm, scope } = o;
    const ram = cfg.ramBytes;
    let crawler: Crawler | undefined;
    // Both DRUMs run in worker threads (drum-proxy.ts): their merges do synchronous sequential
    // I/O that must not stall the sockets.
    const urlSeenOpen = DrumProxy.openBytes(
      path.join(cfg.stateDir, 'urlseen'),
      {
        ramBytes: Math.floor(ram / 8),
        valueBytes: 0,
        // Fewer, larger buckets than the model's k: every bucket merge costs a few fsyncs and hands
        // over at least one result chunk (one STAR batch + one BEAST commit each), and this crawler
        // merges often (whenever the frontier starves), not only when r is reached.
        buckets: 4,
        deliver: 'unique',
        // CLOCK cache in front of URLseen (thesis V.2): most duplicate links hit it, never reach disk.
        cacheEntries: Math.max(1 << 16, Math.min(1 << 22, Math.floor(ram / 64 / 16))),
      },
      (batch) => crawler!.onUrlSeenResults(batch),
      {
        // One BEAST commit per bucket merge, before DRUM commits it (DRUM's beforeCommit): the
        // result chunks are only placed (onUrlSeenResults) — at-least-once holds, one fdatasync
        // round per bucket.
        // Then admits.bin names the bucket's keys (admit-log.ts: no re-admission after a kill).
        beforeCommit: async () => {
          await crawler!.frontier.commitAdmits();
          await crawler!.admitLog?.commit();
        },
        // A larger young generation than the other DRUM hosts (drum-proxy.ts, DRUM_HOST_LIMITS):
        // measured when URLseen's delivery still made an object per result (drum-proxy.ts).
        youngGenMb: 24,
      },
    );
    // ContentSeen and STAR's PLD store share one thread (one isolate: JIT once, one heap to
    // collect); both merge about once a second and briefly, so neither waits long for the other.
    const smallDrums = new DrumThread();
    const contentSeenOpen = DrumProxy.open(
      path.join(cfg.stateDir, 'contentseen'),
      { ramBytes: Math.floor(ram / 32), valueBytes: 'variable', valueBytesHint: 72, auxBytesHint: 4, buckets: 4 },
      (batch) => crawler!.onContentResults(batch),
      { thread: smallDrums },
    );
    const [urlSeen, contentSeen] = await Promise.all([urlSeenOpen, contentSeenOpen]);
    const dns = new DnsCache({ servers: cfg.dnsServers.length > 0 ? cfg.dnsServers : undefined });
    const frontier = await openFrontierPort(path.join(cfg.stateDir, 'frontier'), cfg, dns, {
      onDrop: (u, reason) => {
        crawler?.count(`dropped:${reason}`);
        crawler?.crawlLog.writeDropped({ time: new Date(), url: u.url, hops: plainHops(u.hops), reason });
      },
      starThread: smallDrums,
    });
    const fetcher = new Fetcher({
      userAgent: cfg.userAgent,
      dns,
      maxBodyBytes: cfg.maxBodyBytes,
      // Bodies of every type are downloaded and archived as received (PDF, images, …): what is
      // parsed for links (HTML) is decided after the fetch, not by what is read off the wire.
      acceptContentTypes: null,
      totalTimeoutMs: cfg.fetchTimeoutMs,
      connectTimeoutMs: Math.min(10_000, cfg.fetchTimeoutMs),
      headersTimeoutMs: Math.min(15_000, cfg.fetchTimeoutMs),
      bodyTimeoutMs: Math.min(15_000, cfg.fetchTimeoutMs),
      // The floors where the server sees them: a request queued behind a slow one on its IP's
      // connection is written no sooner than τs0 / τh0 after the previous one (src/fetch wire gate).
      minIpIntervalMs: withMargin(cfg.minIpDelayMs, cfg),
      minHostIntervalMs: withMargin(cfg.minHostDelayMs, cfg),
      // The network guard refuses special-purpose addresses; these ranges are allowed anyway.
      allowedNetworks: cfg.allowNetworks,
    });
    // The parse workers boot while the DRUM threads open (each loads its code: ~1 s apiece on a
    // loaded 2-core box, which a resume would otherwise pay one after the other).
    await warm;
    crawler = new Crawler(cfg, manifest, urlSeen, contentSeen, frontier, dns, fetcher, warc, crawlLog, pool, opts);
    const c = crawler;
    if (manifest === null) {
      c.scopeHosts.push(...scope.hosts);
      c.scopePlds.push(...scope.plds);
    } else {
      // URLs that were in flight at the crash (or at the last checkpoint): fetch them again.
      const recs = await readPending(cfg.stateDir);
      // Pages finished durably after that checkpoint (done.log): the frontier hands them out again
      // (its cursors are from the checkpoint); dispatch skips them, so only the in-flight window is
      // fetched twice.
      for (const d of await readDoneLog(cfg.stateDir)) c.again.addDone(decodeFrontierUrl(d).url, d);
      const back = recs.map((r) => decodeFrontierUrl(r));
      c.again.addReadmitted(back.map((u) => u.url));
      if (back.length > 0) await frontier.readmit(back);
      c.again.setRedelivered(await AdmitLog.load(cfg.stateDir));
      // (Re-admitted URLs are durable in QR once the frontier commits; pending.bin keeps them
      // until then — the first checkpoint rewrites it.)
      await frontier.commit();
      await writePending(cfg.stateDir, []);
    }
    c.admitLog = new AdmitLog(cfg.stateDir);
    c.sitemapLog = await SitemapListingLog.open(path.join(cfg.outDir, 'sitemaps.log'));
    c.sitemaps = new SitemapRouter(
      cfg.sitemaps,
      new LinkScope({ scope: cfg.scope, scopeHosts: c.scopeHosts, scopePlds: c.scopePlds, include: cfg.include, exclude: cfg.exclude }),
      cfg.maxDepth,
      {
        submit: (url, hops) => c.submitUrl(url, hops),
        drop: (url, hops, code) => c.crawlLog.writeDropped({ time: new Date(), url, hops, reason: code }),
        count: (k) => c.count(k),
      },
      c.sitemapLog,
    );
    c.doneLog = await DoneLog.open(cfg.stateDir);
    if (manifest === null) c.doneLog.rewrite([]); // a new crawl in a state dir without a manifest
    return c;
  }

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
    if (rss > this.peakRss) this.peakRss = rss;
    const cpu = process.cpuUsage(this.cpuStart);
    const pagesRun = Math.max(1, this.dispatchedThisRun);
    return {
      state: this.state,
      stopReason: this.stopReason,
      startedAt: this.startedAt.toISOString(),
      elapsedMs: Date.now() - this.runStart,
      pages: this.counters.pages,
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
      workers: { size: this.pool.threads, replaced: this.pool.replaced },
      outcomes: { ...this.counters.outcomes },
      rssBytes: rss,
      cpuMsPerPage: (cpu.user + cpu.system) / 1000 / pagesRun,
      checkpoints: this.checkpoints,
      lastCheckpointAt: this.lastCheckpointAt,
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
      this.emit('status-server', this.statusServer.url, this.statusServer.token);
    }
    this.printer = new ProgressPrinter(() => this.snapshot(), this.opts.progressOut ?? process.stderr, this.cfg.progress, this.cfg.progressIntervalMs);
    this.printer.start();
    this.rateTimer = setInterval(() => {
      const now = Date.now();
      this.pageRate.sample(now, this.counters.pages);
      this.byteRate.sample(now, this.counters.bytes);
      const rss = process.memoryUsage.rss();
      if (rss > this.peakRss) this.peakRss = rss;
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
      }
      await this.loop();
      await this.drain();
      const reason = this.finished ? 'done' : `stop:${this.stopReason ?? 'stop'}`;
      await this.checkpoint(reason);
      // The live block ends with the same word as the summary: done only when the frontier ran dry.
      this.state = this.finished ? 'done' : 'stopped';
      return await this.summary();
    } finally {
      this.printer.stop();
      if (this.rateTimer) clearInterval(this.rateTimer);
      if (this.signalHandler) {
        process.off('SIGINT', this.signalHandler);
        process.off('SIGTERM', this.signalHandler);
      }
      await this.close();
    }
  }

  private async injectSeeds(): Promise<void> {
    for (const raw of this.cfg.seeds) {
      const url = canonicalizeUrl(raw);
      if (url === null) continue;
      this.submitUrl(url, 0);
    }
    this.seedsInjected = true;
    await this.mergeUrlSeen();
  }

  /** One URL into URLseen (seeds and redirect targets; page links come as tables). */
  private submitUrl(url: string, hops: number): void {
    const host = hostOf(url);
    const fp = this.fp;
    fingerprintInto(url, fp, 0);
    fingerprintInto(host, fp, 2);
    fingerprintInto(pldOrHost(host), fp, 4);
    this.urlSeen.checkUpdate(fp[0]!, fp[1]!, undefined, encodeAux(fp[2]!, fp[3]!, fp[4]!, fp[5]!, hops, enc.encode(url)));
    this.unmergedLinks++;
    this.counters.urlsDiscovered++;
  }

  private stopCondition(): string | null {
    if (this.cfg.maxPages !== null && this.counters.pages + this.inFlight >= this.cfg.maxPages) return 'max-pages';
    if (this.cfg.maxTimeMs !== null && Date.now() - this.runStart >= this.cfg.maxTimeMs) return 'max-time';
    return null;
  }

  private backPressure(): boolean {
    return (
      this.pool.saturated ||
      this.awaitingContentBytes >= this.contentBatchBytes ||
      this.pending.size >= this.cfg.fetchConcurrency * 64
    );
  }

  private async loop(): Promise<void> {
    for (;;) {
      if (this.stopReason === null) {
        const why = this.stopCondition();
        if (why === 'max-time') this.stop(why);
      }
      if (this.stopReason !== null) return;

      // Blocking phase: the frontier's disk work (BEAST/QR queues use synchronous I/O) and
      // checkpoints run here, BEFORE dispatching — never between a dispatch and its socket write,
      // which would make the server see two requests closer together than the heaps planned.
      // Refills run below a low-water mark (or once a second). Admissions do not wait for this
      // phase: URLseen's results are admitted as they arrive (onUrlSeenResults).
      const tr = performance.now();
      const low = this.frontier.readyCount() < 2 * this.cfg.fetchConcurrency;
      if (low || Date.now() - this.lastRefill >= 1000) {
        this.lastRefill = Date.now();
        await this.frontier.refill();
      }
      const te = performance.now();
      if (process.env.DRUMCRAWL_DEBUG_TIMING && te - tr > 50) console.error(`blocking phase: refill ${(te - tr).toFixed(0)} ms`);
      this.startMerges(false);
      if (Date.now() - this.lastCheckpoint >= this.cfg.checkpointIntervalMs) await this.checkpoint('periodic');

      let dispatched = 0;
      if (this.state === 'running') {
        const limitByPages = this.cfg.maxPages === null ? Infinity : this.cfg.maxPages - this.counters.pages - this.inFlight;
        let room = Math.min(this.cfg.fetchConcurrency - this.inFlight - this.robotsInFlight, limitByPages);
        if (room > 0 && !this.backPressure()) {
          // The frontier stamps each release with this time as the request's start (start-to-start
          // politeness): it must be taken right here, never before an await.
          const items = this.frontier.nextReady(Date.now(), room);
          for (const it of items) {
            if (it.kind === 1) this.startRobots(it);
            else this.startPage(it);
            room--;
          }
          dispatched = items.length;
          // Let undici put the requests on the wire before any other work runs: the frontier
          // stamped them as started now, and a late write would shorten the gap the server sees.
          if (items.length > 0) {
            await new Promise<void>((r) => setImmediate(r));
            await new Promise<void>((r) => setImmediate(r));
          }
        }
        if (this.cfg.maxPages !== null && this.counters.pages >= this.cfg.maxPages && this.inFlight === 0) {
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
    return this.inFlight === 0 && this.robotsInFlight === 0 && this.parsing === 0 && this.awaitingContent.size === 0;
  }

  /**
   * Start DRUM merges in the background (they run in worker threads) when due: a buffer is full,
   * bodies wait for ContentSeen, or the frontier is starving. `force` merges whatever is buffered
   * (the frontier ran dry: a small crawl must not wait for a buffer to fill).
   */
  private startMerges(force: boolean): void {
    const now = Date.now();
    const starving = this.frontier.readyCount() < this.cfg.fetchConcurrency;
    // ContentSeen: each merge rewrites the touched buckets' part of Z (one row per page crawled),
    // so its cost per page falls with the pages per merge. Once a second while the frontier has
    // work; every 250 ms while it starves (links reach URLseen only after their page's answer);
    // at once when the pipeline holds nothing else or the held bodies reach half their bound.
    // (Every 250 ms, or whenever no page was parsing, cost its thread 0.12–0.19 ms per page in
    // bench:e2e; once a second 0.05–0.06: docs/performance.md, "Main thread".)
    if (this.contentMerging === null && this.unmergedContent > 0 &&
      (force || this.awaitingContentBytes >= this.contentBatchBytes / 2 || this.contentSeen.needsMerge ||
        (this.parsing === 0 && this.inFlight === 0) || now - this.lastContentMerge > (starving ? 250 : CONTENT_MERGE_MS))) {
      this.contentMerging = this.track(this.mergeContent()).finally(() => {
        this.contentMerging = null;
      });
    }
    if (this.urlMerging === null && this.unmergedLinks > 0 && this.contentMerging === null &&
      (force || this.urlSeen.needsMerge || (starving && now - this.lastUrlMerge > 100) || now - this.lastUrlMerge > 5000)) {
      this.urlMerging = this.track(this.mergeUrlSeen()).finally(() => {
        this.urlMerging = null;
      });
    }
    if (this.urlMerging === null && this.awaitingSync.length > 0 && now - this.lastSync > 1000) {
      this.lastSync = now;
      void this.track(this.syncOutputs());
    }
  }

  private track(p: Promise<void>): Promise<void> {
    this.merging++;
    return p
      .catch((e) => this.fail(e))
      .finally(() => {
        this.merging--;
        this.wake.kick();
      });
  }


  // ---------------------------------------------------------------------------------------------
  // fetch

  private startPage(fu: FrontierUrl): void {
    const skip = this.again.skipAtDispatch(fu.url);
    if (skip !== null) {
      // Handled already (resume-dedup.ts): free its slots, no request.
      this.frontier.done(fu, SKIPPED);
      this.count(`skipped:${skip}`);
      this.wake.kick();
      return;
    }
    const id = this.nextId++;
    const rec = encodeFrontierUrl(fu);
    this.pending.set(id, rec);
    this.inFlight++;
    this.dispatchedThisRun++;
    const job: PageJob = { id, fu, rec, bodyBytes: 0, payloadBytes: 0, group: null };
    this.inFlightIds.add(id);
    void this.fetchPage(job)
      .catch((e) => this.fail(e))
      .finally(() => this.inFlightIds.delete(id));
  }

  private async fetchPage(job: PageJob): Promise<void> {
    const fu = job.fu;
    let r: FetchResult;
    try {
      const host = hostOf(fu.url);
      for (let wait = this.floorGuard(host, fu.ip); wait !== undefined; wait = this.floorStart(host, fu.ip)) await wait;
      job.date = new Date();
      if (this.aborting) r = { ...SKIPPED, url: fu.url, outcome: ABORTED_OUTCOME };
      else {
        this.traceDispatch(host, fu.url, fu.ip, false);
        r = await this.fetcher.fetch({ url: fu.url, ip: fu.ip });
      }
    } finally {
      this.inFlight--;
      this.inFlightIds.delete(job.id);
    }
    job.result = r;
    if (this.aborting && r.outcome === ABORTED_OUTCOME) {
      // Cut short by the stop (stop.ts): not a page; the frontier still holds the URL as in
      // flight and the stop's checkpoint snapshots it, so the resume fetches it again.
      this.pending.delete(job.id);
      this.count('aborted:stop');
      this.logFetch(job, r.outcome, null);
      this.wake.kick();
      return;
    }
    job.payloadBytes = r.body.byteLength;
    this.counters.pages++;
    this.counters.bytes += r.body.byteLength;
    this.count(r.status !== undefined ? String(r.status) : r.outcome);
    const pol = politenessOutcome(r, fu.attempts + 1, this.cfg.retryDelayScale);
    this.frontier.done(fu, r);
    this.wake.kick();
    // A URL to be retried went back into the frontier's RAM (its snapshot covers it now).
    if (pol.retry) this.pending.delete(job.id);
    // A retry is a new hand-out of the URL, not a duplicate one.
    if (pol.retry) this.again.retried(fu.url);

    if (!isHttpResponse(r)) {
      // Transport failure (DNS, connect, timeout, reset…): nothing to archive; logged with its code.
      this.logFetch(job, r.outcome, null);
      if (!pol.retry) this.awaitingSync.push(job.id);
      return;
    }
    this.counters.pagesOk++;
    if (r.location !== undefined && r.status! >= 300 && r.status! < 400) {
      // Redirects are not followed inline: the target enters as a new link (dedup, robots,
      // politeness apply), at the same depth.
      const target = canonicalizeUrl(r.location);
      if (target !== null) this.submitUrl(target, fu.hops);
    }
    const ok2xx = r.outcome === 'ok';
    // A sitemap (src/sitemap/crawl.ts) is read here, before the body goes to the parse pool (which
    // archives it like any payload): its entries enter URLseen as links.
    if (ok2xx && isSitemapHops(fu.hops) && this.sitemaps !== null) job.sitemapQueued = (await this.sitemaps.read(fu.url, fu.hops, r.decoded)).queued;
    const html = ok2xx && isHtml(r.contentType) && !isSitemapHops(fu.hops);
    const follow = html && (this.cfg.maxDepth === null || fu.hops < this.cfg.maxDepth);
    this.parsing++;
    let po;
    try {
      po = await this.pool.run({
        url: fu.url, body: r.body, decoded: r.decoded, charset: r.charset, html, follow,
        exchange: { ip: fu.ip, dateMs: job.date.getTime(), requestHead: r.requestHead, responseHead: r.responseHead!, truncated: truncation(r) },
      });
    } finally {
      this.parsing--;
    }
    if (!po.ok) {
      // The supervisor replaced the worker; the page is kept (response record written here) and
      // recorded with the supervisor's outcome code; its links are not followed.
      this.count(po.code);
      await this.warc.writeExchange({
        url: fu.url, ip: fu.ip, date: job.date, requestHead: r.requestHead, responseHead: r.responseHead!, body: r.body, truncated: truncation(r),
      });
      this.logFetch(job, po.code, null);
      ((job.sitemapQueued ?? 0) > 0 ? this.awaitingMerge : this.awaitingSync).push(job.id);
      this.wake.kick();
      return;
    }
    job.table = new LinkTable(po.table);
    job.group = po.group;
    if (!ok2xx) {
      // Non-2xx answers are archived as they are; only 2xx payloads take part in dedup.
      await this.warc.appendEncoded(po.group!);
      this.logFetch(job, r.outcome, po.group!.payloadDigest);
      if (!pol.retry) (r.location !== undefined ? this.awaitingMerge : this.awaitingSync).push(job.id);
      this.wake.kick();
      return;
    }
    const digest = job.table.info().digest;
    fingerprintInto(digest, this.fp, 0);
    contentAux[0] = job.id;
    contentAux[1] = job.id >>> 8;
    contentAux[2] = job.id >>> 16;
    contentAux[3] = job.id >>> 24;
    job.bodyBytes = r.body.byteLength + po.table.byteLength + po.group!.data.byteLength;
    // The encoded group holds the body now: let the fetched bytes go (the result is ours alone).
    r.body = EMPTY;
    r.decoded = EMPTY;
    this.awaitingContent.set(job.id, job);
    this.awaitingContentBytes += job.bodyBytes;
    this.contentSeen.checkUpdate(this.fp[0]!, this.fp[1]!, encodeContentValue(fu.url, job.date), contentAux);
    this.unmergedContent++;
    this.wake.kick();
  }

  private startRobots(item: FrontierUrl): void {
    this.robotsInFlight++;
    this.counters.robotsFetches++;
    void (async () => {
      try {
        if (this.fetcher.refusal(item.ip, portOfUrl(item.url)) !== null) {
          // The network guard refuses the host's address: no robots.txt can be asked there. Each
          // page URL goes on to the fetcher, which refuses it too (nothing is sent) and crawl.log
          // records it with CRAWL_FETCH_BLOCKED_ADDRESS.
          this.frontier.robotsDone(item, { rules: ALLOW_ALL, outcome: 'CRAWL_FETCH_BLOCKED_ADDRESS', expiresAt: Date.now() + 3_600_000 });
          return;
        }
        const start = Date.now();
        let robotsUrl: string | null = null;
        const r = await fetchRobots(this.fetcher, item.host, item.ip, portOfUrl(item.url), this.cfg.userAgent, {
          dns: this.dns,
          // Every request, the first and each redirect hop (which may go to another server's IP),
          // waits for its IP's floor and is traced: robots.txt fetches count per IP (RFC 9309).
          beforeRequest: async (req) => {
            robotsUrl ??= req.url;
            const ip = req.ip ?? item.ip;
            for (let wait = this.floorGuard(null, ip); wait !== undefined; wait = this.floorStart(null, ip)) await wait;
            this.traceDispatch(null, req.url, ip, true);
          },
        });
        // An answer cut short by the stop is not one (stop.ts): the resumed run asks again.
        if (!this.aborting) this.frontier.robotsDone(item, r);
        // The host's sitemaps (--sitemaps) enter URLseen like links (src/sitemap/crawl.ts).
        if (!this.aborting && this.sitemaps !== null) this.sitemaps.fromRobots(item.host, item.url, r.sitemaps);
        const now = new Date();
        this.crawlLog.writeRobots({
          time: now, status: r.status ?? null, bytes: r.fetchResult?.body.byteLength ?? 0, durationMs: now.getTime() - start,
          url: robotsUrl ?? item.url, outcome: r.outcome,
        });
      } finally {
        this.robotsInFlight--;
        this.wake.kick();
      }
    })().catch((e) => this.fail(e));
  }

  /**
   * A request is about to be sent (its floors passed): its start is stamped here, once, and that one
   * time is what the floors count from (hostStarted / ipStarted), what the TRACE line
   * (DRUMCRAWL_TRACE_FETCH) shows and what the 'dispatch' event the e2e tests judge carries. The
   * caller runs this in the same synchronous run as floorStart and the send, but one run of the
   * event loop is not one instant: a scavenge or the process being descheduled between floorStart's
   * read of the clock and this one (up to 34 ms seen in the e2e tiny crawl at load ~9; scavenges of
   * 20–54 ms in bench:e2e) made the request leave later than recorded, and the next one to its
   * host, held to the recorded start + floor, left that much sooner after it (e2e, load ~10: 114.7
   * ms apart with a 160 ms floor). Stamped here, no lateness before this point can shorten a gap
   * (test/crawl/floor-guard.test.ts). `host` null: robots.txt (IP floor only).
   */
  private traceDispatch(host: string | null, url: string, ip: string, robots: boolean): void {
    const now = performance.now();
    if (host !== null && withMargin(this.cfg.minHostDelayMs, this.cfg) > 0) this.hostStarted.set(host, now);
    if (withMargin(this.cfg.minIpDelayMs, this.cfg) > 0) this.ipStarted.set(ip, now);
    const at = performance.timeOrigin + now;
    if (TRACE_FETCH) process.stderr.write(`TRACE ${at.toFixed(1)} ${ip} ${url}\n`);
    if (this.listenerCount('dispatch') > 0) this.emit('dispatch', { at, url, ip, robots });
  }

  /**
   * The floors, enforced once more at the last step (defence in depth): whatever the heaps'
   * bookkeeping says, a request to a host (pages) or an IP (pages and robots.txt) starts no sooner
   * than τh0 / τs0 (+ margin) after the previous one actually started. A request released early is
   * held (its slot in the heaps stays taken) and the next start time is reserved at once, so held
   * requests are spaced too. A held request whose timer fired late (a busy event loop) re-checks
   * against the actual start of the previous request before it goes, so lateness never shortens
   * a gap. RAM: two entries per host / IP started within the last floor period (pruned), i.e.
   * bounded by the fetch rate × the floor.
   */
  private floorGuard(host: string | null, ip: string): Promise<void> | undefined {
    const hostFloor = withMargin(this.cfg.minHostDelayMs, this.cfg);
    const ipFloor = withMargin(this.cfg.minIpDelayMs, this.cfg);
    if (hostFloor === 0 && ipFloor === 0) return undefined;
    const now = performance.now();
    const start = Math.max(now, this.floorDue(host, ip, hostFloor, ipFloor, true));
    if (host !== null && hostFloor > 0) this.lastHostStart.set(host, start);
    if (ipFloor > 0) this.lastIpStart.set(ip, start);
    if (now - this.lastGuardPrune > 10_000) {
      this.lastGuardPrune = now;
      const prune = (m: Map<string, number>, floor: number): void => {
        for (const [k, t] of m) if (t < now - floor) m.delete(k);
      };
      prune(this.lastHostStart, hostFloor);
      prune(this.lastIpStart, ipFloor);
      prune(this.hostStarted, hostFloor);
      prune(this.ipStarted, ipFloor);
    }
    if (start <= now) return this.floorStart(host, ip);
    this.guardHolds++;
    return new Promise((r) => setTimeout(r, Math.ceil(start - now)));
  }

  /**
   * The second half of the guard, run right before the request is sent, in the same synchronous
   * run as the send: undefined = go now (the caller's traceDispatch records the start), else wait
   * and ask again. It checks the actual starts of the previous requests, because a held request may be sent late (a busy
   * event loop, a long microtask queue before the caller's continuation) and lateness must never
   * shorten the gap to the next one. Floors re-read: a live change (POST /config) applies too.
   */
  private floorStart(host: string | null, ip: string): Promise<void> | undefined {
    const now = performance.now();
    const due = this.floorDue(host, ip, withMargin(this.cfg.minHostDelayMs, this.cfg), withMargin(this.cfg.minIpDelayMs, this.cfg), false);
    if (due > now) return new Promise((r) => setTimeout(r, Math.ceil(due - now)));
    return undefined;
  }

  /** Earliest start allowed by the previous requests' reserved (`reserved`) and actual starts. */
  private floorDue(host: string | null, ip: string, hostFloor: number, ipFloor: number, reserved: boolean): number {
    let due = -Infinity;
    if (host !== null && hostFloor > 0) {
      due = Math.max(due, (this.hostStarted.get(host) ?? -Infinity) + hostFloor);
      if (reserved) due = Math.max(due, (this.lastHostStart.get(host) ?? -Infinity) + hostFloor);
    }
    if (ipFloor > 0) {
      due = Math.max(due, (this.ipStarted.get(ip) ?? -Infinity) + ipFloor);
      if (reserved) due = Math.max(due, (this.lastIpStart.get(ip) ?? -Infinity) + ipFloor);
    }
    return due;
  }

  private count(key: string): void {
    this.counters.outcomes[key] = (this.counters.outcomes[key] ?? 0) + 1;
  }

  private logFetch(job: PageJob, outcome: string, digest: string | null): void {
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
    });
  }

  // ---------------------------------------------------------------------------------------------
  // DRUM results

  private async mergeContent(): Promise<void> {
    if (this.unmergedContent === 0) return;
    const n = this.unmergedContent;
    this.unmergedContent = 0;
    this.lastContentMerge = Date.now();
    const t0 = performance.now();
    await this.contentSeen.merge();
    if (process.env.DRUMCRAWL_DEBUG_TIMING) console.error(`content merge ${n} in ${(performance.now() - t0).toFixed(0)} ms`);
  }

  /** ContentSeen answers: unique payload → response record + links onward; duplicate → revisit. */
  private async onContentResults(batch: DrumResult[]): Promise<void> {
    for (const res of batch) {
      if (res.aux === null) continue;
      const id = le32(res.aux, 0);
      const job = this.awaitingContent.get(id);
      if (job === undefined) continue;
      this.awaitingContent.delete(id);
      this.awaitingContentBytes -= job.bodyBytes;
      const table = job.table!;
      // DRUM gives the value stored before this tuple: for the 2nd+ copy in one batch, the 1st's.
      const original = !res.unique && res.value !== null ? decodeContentValue(res.value) : null;
      // A re-fetch after a crash may find its own earlier digest: it is still the original capture.
      if (original !== null && original.url !== job.fu.url) {
        this.counters.duplicates++;
        const r = job.result!;
        await this.warc.writeRevisit({
          url: job.fu.url,
          ip: job.fu.ip,
          date: job.date!,
          requestHead: r.requestHead,
          responseHead: r.responseHead!,
          payloadDigest: job.group!.payloadDigest,
          refersToUri: original.url,
          refersToDate: original.date,
        });
        this.logFetch(job, 'duplicate', job.group!.payloadDigest);
        ((job.sitemapQueued ?? 0) > 0 ? this.awaitingMerge : this.awaitingSync).push(id);
        continue;
      }
      await this.warc.appendEncoded(job.group!);
      this.logFetch(job, 'ok', job.group!.payloadDigest);
      this.logDroppedLinks(job.fu, table);
      this.submitTable(job.fu, table);
      (table.count > 0 || (job.sitemapQueued ?? 0) > 0 ? this.awaitingMerge : this.awaitingSync).push(id);
    }
    this.wake.kick();
  }

  /** The page's links refused by the trap check or the scope (link-scope.ts): one crawl-log line each. */
  private logDroppedLinks(src: FrontierUrl, t: LinkTable): void {
    const d = t.dropped();
    if (d.length === 0) return;
    const time = new Date();
    const hops = plainHops(src.hops) + 1;
    for (const { url, code } of d) {
      const reason = DROP_CODES[code] ?? 'CRAWL_SCOPE_OUT';
      this.count(`dropped:${reason}`);
      this.crawlLog.writeDropped({ time, url, hops, reason });
    }
  }

  /** A page's links into URLseen (aux = URL record) and its PLD→PLD pairs to STAR. */
  private submitTable(src: FrontierUrl, t: LinkTable): void {
    const n = t.count;
    if (n === 0) return;
    const hops = src.hops + 1;
    // PLD pairs into a reused scratch (addPldLinks copies them): no ArrayBuffer per page for V8's
    // ArrayBuffer sweeper (docs/performance.md, "Main thread").
    if (this.pairScratch.length < n * 4) this.pairScratch = new Uint32Array(Math.max(n * 4, this.pairScratch.length * 2));
    const pairs = this.pairScratch;
    let m = 0;
    for (let i = 0; i < n; i++) {
      const pHi = t.word(i, 4);
      const pLo = t.word(i, 5);
      // aux as encodeAux lays it out, written straight into the DRUM batch (no per-link array)
      this.urlSeen.checkUpdateWords(t.word(i, 0), t.word(i, 1), t.word(i, 2), t.word(i, 3), pHi, pLo, hops, t.urlBytes(i));
      if (pHi !== src.pldHi || pLo !== src.pldLo) {
        pairs[m * 4] = src.pldHi;
        pairs[m * 4 + 1] = src.pldLo;
        pairs[m * 4 + 2] = pHi;
        pairs[m * 4 + 3] = pLo;
        m++;
      }
    }
    this.unmergedLinks += n;
    this.counters.urlsDiscovered += n;
    if (m > 0) this.frontier.addPldLinks(pairs, m);
  }

  private async mergeUrlSeen(): Promise<void> {
    if (this.unmergedLinks === 0) {
      await this.syncOutputs();
      return;
    }
    const covered = this.awaitingMerge;
    this.awaitingMerge = [];
    this.unmergedLinks = 0;
    this.lastUrlMerge = Date.now();
    const t0 = performance.now();
    await this.urlSeen.merge();
    // That merge re-delivered the bucket a kill left uncommitted, if any (admit-log.ts).
    this.again.mergeEnded();
    if (process.env.DRUMCRAWL_DEBUG_TIMING) console.error(`url merge in ${(performance.now() - t0).toFixed(0)} ms`);
    // Every page whose links that merge covered is now durable once its WARC record is.
    this.awaitingSync.push(...covered);
    await this.syncOutputs();
  }

  /**
   * URLseen answers: unique URLs → STAR (B, P) → BEAST, placed but not yet durable: URLseen's DRUM
   * calls `frontier.commitAdmits()` (its beforeCommit) once per bucket, after the bucket's last
   * chunk, and commits its Z only when that resolved — nothing it reported unique can be lost.
   */
  private async onUrlSeenResults(batch: Uint8Array): Promise<void> {
    const admits = this.admitLog;
    const again = this.again;
    const unique = decodeUniqueUrls(batch, Date.now(), (hi, lo) => {
      admits?.add(hi, lo);
      return again.keepUnique(hi, lo);
    });
    this.counters.urlsSeen += unique.length;
    if (unique.length === 0) return;
    // Admitted at once, not in the scheduler's next turn (that wait cost up to 500 ms per result
    // chunk, ~16 chunks per merge): STAR runs in a worker thread, BEAST appends without blocking
    // I/O; the commit (fdatasyncs, on the thread pool) runs once per bucket in beforeCommit.
    await this.frontier.admit(unique, { durable: false });
    this.wake.kick();
  }

  /** WARC + crawl log durable → the pages waiting only for that leave the pending set. */
  private async syncOutputs(): Promise<void> {
    if (this.awaitingSync.length === 0) return;
    const done = this.awaitingSync;
    this.awaitingSync = [];
    await this.warc.sync();
    await this.crawlLog.flush();
    const recs: Uint8Array[] = [];
    for (const id of done) {
      const rec = this.pending.get(id);
      if (rec !== undefined) recs.push(rec);
      this.pending.delete(id);
    }
    // After the data is durable, never before: an entry makes resume skip the URL.
    this.doneLog?.append(recs);
  }

  // ---------------------------------------------------------------------------------------------
  // drain, checkpoint, close

  private async drain(): Promise<void> {
    while (!this.hurry && (!this.idle() || this.merging > 0)) {
      if (!this.aborting && this.stopReason !== null && this.stopReason !== 'done' && graceOver(this.stopAt) && this.inFlight + this.robotsInFlight > 0) {
        this.aborting = true;
        this.fetcher.abortInFlight();
      }
      this.startMerges(true);
      await this.wake.sleep(20);
    }
  }

  async checkpoint(reason: string): Promise<void> {
    await this.checkpointNow(reason);
  }

  private async checkpointNow(reason: string): Promise<void> {
    const T = (l: string): void => { if (process.env.DRUMCRAWL_DEBUG_TIMING) console.error(`ckpt ${l} ${(performance.now() - t0).toFixed(1)}`); };
    const t0 = performance.now();
    const startedAt = new Date().toISOString();
    // (URLseen's unique URLs are admitted, durably, before its merge commits: nothing waits here.)
    if (this.contentMerging) await this.contentMerging;
    if (this.urlMerging) await this.urlMerging;
    // Push everything buffered through: ContentSeen → (WARC, links) → URLseen → frontier.
    await this.mergeContent();
    await this.mergeUrlSeen();
    await this.syncOutputs();
    T('merged+synced');
    await this.frontier.checkpoint();
    T('star');
    // pending.bin before the frontier moves its read cursors: every URL taken out of the frontier
    // and not yet durable (in flight, parsing, awaiting a merge) is either still in the frontier's
    // committed state or in this file. After the commit, in-flight URLs are in the frontier's RAM
    // snapshot, so the file is rewritten without them (no double fetch after resume).
    await writePending(this.cfg.stateDir, this.pending.values());
    this.doneLog?.mark();
    await this.frontier.commit();
    T('frontier.commit');
    // The frontier's state now covers every page finished before the mark; keep what it does not.
    this.doneLog?.rewrite(this.again.doneRecords());
    const inFlightIds = new Set(this.inFlightIds);
    await writePending(this.cfg.stateDir, [...this.pending].filter(([id]) => !inFlightIds.has(id)).map(([, r]) => r));
    const elapsed = Date.now() - this.lastCheckpoint;
    this.lastCheckpoint = Date.now();
    this.epoch++;
    const cpu = process.cpuUsage(this.cpuStart);
    const pos = this.warc.position();
    const m: CheckpointManifest = {
      version: MANIFEST_VERSION,
      epoch: this.epoch,
      startedAt,
      writtenAt: new Date().toISOString(),
      reason,
      finished: this.finished,
      config: this.cfg,
      counters: { ...this.counters, crawlMs: this.counters.crawlMs + elapsed, cpuMicros: cpu.user + cpu.system },
      warc: { file: path.basename(pos.file), offset: pos.offset },
      seedsInjected: this.seedsInjected,
      scopeHosts: this.scopeHosts,
      scopePlds: this.scopePlds,
      pending: this.pending.size,
    };
    this.counters.crawlMs += elapsed;
    await writeManifest(this.cfg.stateDir, m);
    this.checkpoints++;
    this.lastCheckpointAt = m.writtenAt;
    this.emit('checkpoint', m);
  }

  private async summary(): Promise<CrawlSummary> {
    const cpu = process.cpuUsage(this.cpuStart);
    const elapsed = Date.now() - this.runStart;
    const files = (await readdir(this.cfg.outDir)).filter((f) => /\.warc(\.gz|\.zst)?$/.test(f)).sort();
    return {
      stopReason: this.stopReason ?? 'done',
      finished: this.finished,
      pages: this.counters.pages,
      bytes: this.counters.bytes,
      duplicates: this.counters.duplicates,
      urlsSeen: this.counters.urlsSeen,
      elapsedMs: elapsed,
      pagesPerSec: (this.dispatchedThisRun * 1000) / Math.max(1, elapsed),
      cpuMsPerPage: this.dispatchedThisRun === 0 ? null : (cpu.user + cpu.system) / 1000 / this.dispatchedThisRun,
      peakRssBytes: this.peakRss,
      outcomes: { ...this.counters.outcomes },
      warcDir: this.cfg.outDir,
      warcFiles: files.map((f) => path.join(this.cfg.outDir, f)),
      stateDir: this.cfg.stateDir,
      statusUrl: this.statusServer?.url ?? null,
      floorGuardHolds: this.guardHolds,
    };
  }

  private fail(e: unknown): void {
    // An unexpected error in a fetch/parse task: stop the crawl with a checkpoint rather than
    // continue with a page silently missing; the page stays in the pending set for `resume`.
    this.emit('error-event', e);
    if (this.stopReason === null) this.stop(`error:${(e as { code?: string }).code ?? (e as Error).message}`);
  }

  private async close(): Promise<void> {
    await this.statusServer?.close();
    await this.pool.close();
    await this.fetcher.close();
    this.dns.close();
    await this.warc.close();
    await this.crawlLog.close();
    await this.sitemapLog?.close();
    this.doneLog?.close();
    await this.urlSeen.close();
    await this.contentSeen.close();
    await this.frontier.close();
  }
}

function portOfUrl(url: string): number {
  const u = new URL(url);
  return u.port !== '' ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
}

function scopeAnchors(seeds: readonly string[]): { hosts: string[]; plds: string[] } {
  const hosts = new Set<string>();
  const plds = new Set<string>();
  for (const s of seeds) {
    const c = canonicalizeUrl(s);
    if (c === null) continue;
    const h = hostOf(c);
    hosts.add(h);
    plds.add(pldOrHost(h));
  }
  return { hosts: [...hosts], plds: [...plds] };
}
