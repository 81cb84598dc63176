/**
 * A cluster node (docs/cluster.md): one drumcrawl process that hosts some of a crawl's partitions,
 * each a whole crawler over its own state directory (partition-host.ts), on parts they share —
 * one parse pool, two DRUM threads, one fetcher and DNS cache, one WARC writer and crawl log, one
 * last-step floor guard, one fetch concurrency, one router for the URLs they hand to other
 * partitions. Besides the partitions, the node
 *
 *   - keeps its record in the KV bucket (node.<id>) every HEARTBEAT_MS: its state, partitions and
 *     figures; a node whose record it cannot write for CUTOFF_MS pauses every partition (it may be
 *     cut off from the cluster, and an operator may then forget it);
 *   - places partitions: every node computes the same rendezvous placement over the members, and
 *     takes the lease of each partition placed on it that is free (new, its own, or released to
 *     it); one placed elsewhere it hands off (drains, checkpoints, uploads its state, releases);
 *   - decides the end of the crawl: when every partition has a live holder that reports it settled
 *     and the stream is empty, twice with the same acknowledgement counts in between (each node
 *     writes its count before it acknowledges), it sets `done`, and every partition then ends.
 */
import { EventEmitter } from 'node:events';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { CrawlError } from '../errors.js';
import { ArchiveThread } from '../threads/archive/archive-thread.js';
import { CrawlLog } from '../store/index.js';
import { DnsCache } from '../dns/index.js';
import { newFetcher } from '../crawl/fetch/fetch-stage.js';
import { FloorGuard } from '../crawl/ports/floor-guard.js';
import { ParsePool } from '../threads/page/parse-pool.js';
import { PAGE_WORKERS_REFUSED } from '../threads/page/page-worker-pool.js';
import { budgetStatus, newBodyBudget, parseCopyBytes } from '../budget/body-budget.js';
import { DrumThread } from '../threads/drum/drum-proxy.js';
import { dnsArchiver } from '../threads/archive/archive-hooks.js';
import { scopeAnchors } from '../config/link-scope.js';
import { recoverWarc } from '../state/recovery.js';
import { zstdArchiveOptions } from '../threads/archive/archive-zstd.js';
import { writeFileAtomic, type CheckpointManifest } from '../state/checkpoint.js';
import type { CrawlConfig, CrawlConfigInput } from '../config/config.js';
import type { CrawlSummary } from '../crawl/pipeline.js';
import type { SharedParts } from '../crawl/ports/cluster-port.js';
import { ensurePartitions, isTransient, jsonBytes, openEngine, type Engine } from './engine/engine.js';
import { ClusterView, metaOrCreate, type CrawlMeta, type MemberStatus } from './engine/view.js';
import { DEFAULT_PARTITIONS } from './partition.js';
import { Placement, type PlacementNode } from './placement.js';
import { Router } from './engine/router.js';
import { ClusterRanks } from './star-link.js';
import { NodeIpGate, defaultSlotMs } from './engine/ip-slots.js';
import { withMargin } from '../crawl/ports/frontier-port.js';
import { FRONTIER_PRESETS } from '../frontier/index.js';
import { conflicts, crawlWide, type ClusterArgs } from './options.js';
import { clusterMetrics, crawlEnded, readClusterTable, sumSnapshots, type ClusterFigures, type NodeSnapshot, type PartitionRow } from './status.js';
import { ProgressPrinter, type StatusSnapshot } from '../monitor/stats.js';
import { startStatusServer, CONTROL_TOKEN_FILE, type StatusController, type StatusServer } from '../monitor/status-server.js';
import type { Exposition } from '../monitor/metrics-exposition.js';

/** How often the node rewrites its record (ms). */
export const HEARTBEAT_MS = 1_000;
/** A node that could not write its record for this long pauses its partitions (ms). */
export const CUTOFF_MS = 5_000;
/** How often placement and the end of the crawl are looked at (ms). */
const TICK_MS = 500;
const NODE_FILE = 'node.json';

interface NodeFile {
  crawl: string;
  node: string;
  url: string;
  createdAt: string;
  /** the WARC writer's position at the last checkpoint of any partition (recovery starts there) */
  warc: { file: string; offset: number } | null;
  /** the node's own settings as it last ran (a resume starts from them) */
  config: CrawlConfig;
}

export interface NodeStartOptions {
  args: ClusterArgs;
  cfg: CrawlConfig;
  /** config keys the command line set (a joining node must not set the crawl's differently) */
  given: ReadonlySet<string>;
  progressOut?: NodeJS.WritableStream & { isTTY?: boolean };
  /** makes the node's directories (the CLI's checked plan): called once the crawl has accepted the node */
  prepare?: () => Promise<void>;
}

export interface NodeSummary {
  stopReason: string;
  finished: boolean;
  partitions: number[];
  summaries: CrawlSummary[];
}

export class ClusterNode extends EventEmitter implements PlacementNode, StatusController {
  readonly placement: Placement = new Placement(this);
  readonly router: Router;
  readonly ranks = new ClusterRanks();
  private tickTimer: NodeJS.Timeout | null = null;
  private beatTimer: NodeJS.Timeout | null = null;
  /** --max-time of this run of the node (its own limit: each node stops itself, checkpointed) */
  private limitTimer: NodeJS.Timeout | null = null;
  private statusChain: Promise<unknown> = Promise.resolve();
  private lastBeatOk = Date.now();
  private cutOff = false;
  private acked = 0;
  /** an operator asked this node to leave (`drumcrawl cluster leave`): it hands everything off, then stops */
  private leaving = false;
  private lastDoneCheck = 0;
  private lastHist = 0;
  private readonly histSent = new Map<number, string>();
  private checkingDone = false;
  private stopReason: string | null = null;
  private failure: unknown = null;
  private resolveEnd!: () => void;
  private readonly end = new Promise<void>((r) => { this.resolveEnd = r; });
  private readonly summaries: CrawlSummary[] = [];
  private file: NodeFile;
  private readonly startedAt = Date.now();
  private readonly cpuStart = process.cpuUsage();
  private rows: PartitionRow[] = [];
  private lastRows = 0;
  private paused = false;
  private statusServer: StatusServer | null = null;
  private printer: ProgressPrinter | null = null;
  private signalHandler: ((sig: NodeJS.Signals) => void) | null = null;

  private constructor(
    readonly engine: Engine,
    readonly meta: CrawlMeta,
    readonly cfg: CrawlConfig,
    readonly args: ClusterArgs,
    readonly parts: Omit<SharedParts, 'ramBytes'>,
    file: NodeFile,
    readonly view: ClusterView,
    readonly ipGate: NodeIpGate,
  ) {
    super();
    this.file = file;
    // The router's budget: 1/32 of the node's RAM, 4–64 MiB.
    this.router = new Router(engine, args.node, meta.partitions, Math.max(4 << 20, Math.min(64 << 20, Math.floor(cfg.ramBytes / 32))));
  }

  get partitions(): number {
    return this.meta.partitions;
  }

  get done(): boolean {
    return this.view.done;
  }

  get id(): string {
    return this.args.node;
  }

  /**
   * Joins (or creates) the crawl: the engine, the crawl's meta (this node's crawl settings when it
   * is the first; checked against the crawl's otherwise), the partitions' consumers, the shared
   * parts (with the node's WARC files recovered from its last checkpoint).
   */
  static async start(o: NodeStartOptions): Promise<ClusterNode> {
    const { args } = o;
    // A node's partitions share its fetcher, parse pool and WARC writer (ClusterNode.parts): page
    // workers, which fetch on their own threads, are not available to them. The single-node
    // default (on) becomes off here; asked for by name, they are refused.
    if (o.cfg.pageWorkers === 'on' && o.given.has('pageWorkers')) throw new CrawlError('CRAWL_CONFIG_INVALID', PAGE_WORKERS_REFUSED);
    const cfg: CrawlConfig = { ...o.cfg, pageWorkers: 'off' };
    const nodeFile = path.join(cfg.stateDir, NODE_FILE);
    let file: NodeFile | null = null;
    try {
      file = JSON.parse(await readFile(nodeFile, 'utf8')) as NodeFile;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    if (file !== null && (file.crawl !== args.crawl || file.node !== args.node)) {
      throw new CrawlError('CRAWL_CLUSTER_CONFIG', `${cfg.stateDir} is the state of node ${file.node} of crawl ${file.crawl}, not of node ${args.node} of ${args.crawl}`);
    }
    const engine = await openEngine(args.url, args.crawl, args.node);
    try {
      const floorMs = withMargin(cfg.minIpDelayMs, cfg);
      const skewMs = args.skewMs ?? 50;
      const { meta, created } = await metaOrCreate(engine, () => ({
        version: 1, crawl: args.crawl, partitions: args.partitions ?? DEFAULT_PARTITIONS, config: crawlWide(cfg),
        expect: args.expect ?? 1, slotMs: defaultSlotMs(floorMs, skewMs), floorMs, skewMs, createdAt: new Date().toISOString(),
      }));
      if (!created) {
        if (args.partitions !== null && args.partitions !== meta.partitions) {
          throw new CrawlError('CRAWL_CLUSTER_CONFIG', `crawl ${args.crawl} has ${meta.partitions} partitions, fixed when it was created (--partitions ${args.partitions} given)`);
        }
        const bad = conflicts(meta.config, cfg, o.given);
        if (bad.length > 0) throw new CrawlError('CRAWL_CLUSTER_CONFIG', `crawl ${args.crawl} exists with other settings for ${bad.join(', ')}: a joining node takes the crawl's (leave those flags out)`);
      }
      if (((meta.config.seeds as unknown[] | undefined) ?? []).length === 0) throw new CrawlError('CRAWL_CONFIG_INVALID', 'no seed URLs: the node that creates a cluster crawl gives them');
      // Only now, the crawl having accepted this node, is anything made on its disk.
      await o.prepare?.();
      await mkdir(cfg.stateDir, { recursive: true });
      await mkdir(cfg.outDir, { recursive: true });
      await ensurePartitions(engine, meta.partitions);
      // Every partition crawls with the crawl's settings and this node's own.
      const full: CrawlConfig = { ...cfg, ...(meta.config as Partial<CrawlConfig>), stateDir: cfg.stateDir, outDir: cfg.outDir };
      file = { ...(file ?? { crawl: args.crawl, node: args.node, createdAt: new Date().toISOString(), warc: null }), url: args.url, config: cfg };
      await recoverWarc(full.outDir, file.warc);
      await writeFileAtomic(nodeFile, new TextEncoder().encode(JSON.stringify(file, null, 2)));
      const view = new ClusterView(engine);
      let node: ClusterNode | undefined;
      const gate = new NodeIpGate(engine, args.node, { slotMs: meta.slotMs, floorMs: meta.floorMs, skewMs: meta.skewMs },
        FRONTIER_PRESETS.default.maxConnectionsPerIp, (key) => view.ips.get(key), (e) => node?.fail(e));
      const base = await ClusterNode.parts(full, file.warc, gate, (e) => node?.fail(e));
      node = new ClusterNode(engine, meta, full, args, base, file, view, gate);
      await view.start();
      return node;
    } catch (e) {
      await engine.close().catch(() => undefined);
      throw e;
    }
  }

  /** The parts every partition shares (pipeline.ts SharedParts, less the RAM share). */
  private static async parts(cfg: CrawlConfig, last: NodeFile['warc'], gate: NodeIpGate, fail: (e: unknown) => void): Promise<Omit<SharedParts, 'ramBytes'>> {
    const warc = await ArchiveThread.open({
      dir: cfg.outDir,
      prefix: 'drumcrawl',
      compression: cfg.warcCompression,
      maxFileBytes: cfg.warcMaxFileBytes,
      ...(await zstdArchiveOptions(cfg, last)),
      info: { software: 'drumcrawl/0.1', 'http-header-user-agent': cfg.userAgent, format: 'WARC File Format 1.1' },
    });
    const crawlLog = await CrawlLog.open(path.join(cfg.outDir, 'crawl.log'), { format: cfg.crawlLogFormat });
    const dns = new DnsCache({
      servers: cfg.dnsServers.length > 0 ? cfg.dnsServers : undefined,
      onAnswer: cfg.warcDns ? dnsArchiver(warc, fail) : undefined,
    });
    const scope = scopeAnchors(cfg.seeds);
    const pool = new ParsePool(
      { images: cfg.images, include: cfg.include, exclude: cfg.exclude, scope: cfg.scope, scopeHosts: scope.hosts, scopePlds: scope.plds, warc: warc.encodeOptions },
      // The parse copies in flight bounded as a single crawl's are (body-budget.ts parseCopyBytes).
      { threads: cfg.workers, timeoutMs: cfg.parseTimeoutMs, heapMb: Math.max(64, Math.floor(cfg.ramBytes / 4 / cfg.workers / 2 ** 20)), copyBytes: parseCopyBytes(cfg) },
    );
    await pool.warmup();
    const urlSeenThread = new DrumThread(24);
    const smallThread = new DrumThread();
    urlSeenThread.retain();
    smallThread.retain();
    // The floors across the node's partitions, and the per-IP slot rule across nodes, at the last step.
    const floors = new FloorGuard(() => cfg, null, (ip, t) => gate.window(ip, t));
    // One body budget from the node's --ram for the fetcher all partitions share (body-budget.ts):
    // what hostile servers send is bounded on a cluster node as in a single crawl.
    return { warc, crawlLog, pool, dns, fetcher: newFetcher(cfg, dns, undefined, newBodyBudget(cfg)), urlSeenThread, smallThread, floors };
  }

  // --------------------------------------------------------------------------------------- run

  /** Runs until the crawl is done everywhere, or this node is stopped; then closes everything. */
  async run(opts: { progressOut?: NodeJS.WritableStream & { isTTY?: boolean }; handleSignals?: boolean } = {}): Promise<NodeSummary> {
    if (this.cfg.statusPort !== null) {
      this.statusServer = await startStatusServer(this, this.cfg.statusPort, this.cfg.statusHost, { tokenFile: path.join(this.cfg.stateDir, CONTROL_TOKEN_FILE) });
      this.parts.fetcher.refuseEndpoint(this.cfg.statusHost, this.statusServer.port);
      this.emit('status-server', this.statusServer.url, this.statusServer.token);
    }
    this.printer = new ProgressPrinter(() => this.snapshot(), opts.progressOut ?? process.stderr, this.cfg.progress, this.cfg.progressIntervalMs);
    this.printer.start();
    if (opts.handleSignals) {
      this.signalHandler = (sig) => this.stop(`signal:${sig}`);
      process.on('SIGINT', this.signalHandler);
      process.on('SIGTERM', this.signalHandler);
    }
    // This node's limits, as a single crawl's (pipeline.ts): --max-time from the start of this run,
    // --max-pages over the pages of the partitions it hosts (tickNow). The node stops as on a signal:
    // its partitions drain and checkpoint, its leases stay its own.
    if (this.cfg.maxTimeMs !== null) this.limitTimer = setTimeout(() => this.stop('max-time'), this.cfg.maxTimeMs);
    await this.placement.cleanup();
    this.view.onChange((k) => this.changed(k));
    this.beatTimer = setInterval(() => void this.beat(), HEARTBEAT_MS);
    this.tickTimer = setInterval(() => void this.tick(), TICK_MS);
    await this.beat();
    void this.tick();
    if (this.view.done) this.whenDone();
    await this.end;
    return this.finish();
  }

  /** Stops the node: its partitions drain and checkpoint; its leases stay its own (a restart resumes them). */
  stop(reason = 'stop'): void {
    if (this.stopReason !== null) {
      for (const h of this.placement.hosts.values()) h.crawler?.stop(reason); // a second stop hurries
      return;
    }
    this.stopReason = reason;
    this.resolveEnd();
  }

  fail(e: unknown): void {
    this.failure ??= e;
    this.emit('error-event', e);
    this.stop(`error:${(e as { code?: string }).code ?? (e as Error).message}`);
  }

  private async finish(): Promise<NodeSummary> {
    if (this.tickTimer !== null) clearInterval(this.tickTimer);
    if (this.limitTimer !== null) clearTimeout(this.limitTimer);
    await this.ticking;
    this.printer?.stop();
    if (this.signalHandler !== null) {
      process.off('SIGINT', this.signalHandler);
      process.off('SIGTERM', this.signalHandler);
    }
    const closing = [...this.placement.hosts.values()].map(async (h) => {
      const s = await h.close(this.stopReason ?? 'done');
      if (s !== null) this.summaries.push(s);
    });
    await Promise.allSettled(closing);
    // wait for partitions still opening: they close as soon as they are open
    while (this.placement.opening.size > 0) await new Promise((r) => setTimeout(r, 50));
    await this.router.close();
    this.ipGate.close();
    if (this.beatTimer !== null) clearInterval(this.beatTimer);
    await this.writeStatus(this.stopReason === 'left' ? 'left' : 'stopped').catch(() => undefined);
    await this.view.stop();
    await this.statusServer?.close().catch(() => undefined);
    await this.closeParts();
    await this.engine.close();
    if (this.failure !== null) throw this.failure;
    const finished = this.view.done;
    return { stopReason: finished ? 'done' : `stop:${this.stopReason ?? 'stop'}`, finished, partitions: [...this.placement.hosts.keys()].sort((a, b) => a - b), summaries: this.summaries };
  }

  private async closeParts(): Promise<void> {
    const b = this.parts;
    for (const part of [() => b.pool.close(), () => b.fetcher.close(), () => b.dns.close(), () => b.warc.close(), () => b.crawlLog.close(),
      () => b.urlSeenThread.release(), () => b.smallThread.release()]) {
      await Promise.resolve().then(part).catch((e: unknown) => { this.failure ??= e; });
    }
  }

  // ------------------------------------------------------------------------------- membership

  private changed(key: string): void {
    if (key.startsWith('lease.')) {
      const p = Number(key.slice(6));
      const l = this.view.leases.get(p);
      const h = this.placement.hosts.get(p);
      // Never crawl a partition whose lease names another node: stop at once.
      if (h !== undefined && (l === undefined || l.value.node !== this.id || l.value.state !== 'held')) {
        h.crawler?.pause();
        this.placement.hosts.delete(p);
        void h.close('lease-lost').catch((e) => this.fail(e));
      }
    }
    if (key === 'done' && this.view.done) this.whenDone();
  }

  /** The crawl ended: each partition's crawler ends by itself (mayFinish); the node ends with them. */
  private whenDone(): void {
    void Promise.all([...this.placement.hosts.values()].map((h) => h.ended())).then(() => {
      if (this.stopReason === null) {
        this.stopReason = 'done';
        this.resolveEnd();
      }
    });
  }

  /** Pages of the partitions this node hosts (each partition's count covers its whole crawl). */
  private hostedPages(): number {
    let pages = 0;
    for (const h of this.placement.hosts.values()) pages += h.snapshot()?.pages ?? 0;
    return pages;
  }

  private status(state: MemberStatus['state']): MemberStatus {
    const hosted = [...this.placement.hosts.keys()].sort((a, b) => a - b);
    const settled = hosted.filter((p) => this.placement.hosts.get(p)!.settled);
    let pages = 0;
    let pps = 0;
    for (const h of this.placement.hosts.values()) {
      const s = h.snapshot();
      if (s === null) continue;
      pages += s.pages;
      pps += s.pagesPerSec;
    }
    const cpu = process.cpuUsage(this.cpuStart);
    return {
      id: this.id, state, at: Date.now(), hosted, settled,
      quiet: this.placement.steady && settled.length === hosted.length && this.router.idle,
      acked: this.acked, published: this.router.stats.published, publishedBytes: this.router.stats.publishedBytes,
      pages, pagesPerSec: pps, cpuSeconds: (cpu.user + cpu.system) / 1e6, statusUrl: this.statusServer?.url ?? null,
    };
  }

  /** Writes the node's record (in order with every other write of it). */
  private writeStatus(state: MemberStatus['state'] = this.leaving ? 'leaving' : 'active'): Promise<unknown> {
    this.statusChain = this.statusChain.catch(() => undefined).then(() => this.engine.kv.put(`node.${this.id}`, jsonBytes(this.status(state))));
    return this.statusChain;
  }

  private beating = false;

  /**
   * Rewrites the node's record (one write at a time). No write confirmed for CUTOFF_MS: every
   * partition pauses until one is (the node may be cut off from the cluster).
   */
  private async beat(): Promise<void> {
    if (!this.cutOff && Date.now() - this.lastBeatOk > CUTOFF_MS) {
      this.cutOff = true;
      for (const h of this.placement.hosts.values()) h.crawler?.pause();
    }
    if (this.beating) return;
    this.beating = true;
    try {
      await this.writeStatus();
      this.lastBeatOk = Date.now();
      if (this.cutOff) {
        this.cutOff = false;
        if (!this.paused) for (const h of this.placement.hosts.values()) h.crawler?.resume();
      }
    } catch {
      // counted by the next beat's check
    } finally {
      this.beating = false;
    }
  }

  /** n acknowledgements are about to go: counted in the node's record first (termination check). */
  async beforeAck(n: number): Promise<void> {
    this.acked += n;
    await this.writeStatus();
  }

  fetchRoom(): number {
    let used = 0;
    for (const h of this.placement.hosts.values()) used += h.crawler?.fetchesInFlight ?? 0;
    return this.cfg.fetchConcurrency - used;
  }

  // -------------------------------------------------------------------------------- placement

  /** The tick under way (finish waits for it: nothing may use the connection once it drains). */
  private ticking: Promise<void> | null = null;

  private tick(): Promise<void> {
    if (this.stopReason !== null || this.ticking !== null) return this.ticking ?? Promise.resolve();
    this.ticking = this.tickNow().finally(() => { this.ticking = null; });
    return this.ticking;
  }

  private async tickNow(): Promise<void> {
    try {
      this.ranks.refresh(this.view.hists);
      await this.publishRanks();
      if (!this.leaving && this.view.leaveRequested.has(this.id)) {
        this.leaving = true;
        this.log(`leaving: handing every partition off`);
      }
      if (!this.view.done && !this.cutOff) await this.placement.place(this.leaving);
      if (this.leaving && this.placement.hosts.size === 0 && this.placement.steady && this.stopReason === null) {
        this.stopReason = 'left';
        this.resolveEnd();
        return;
      }
      if (this.cfg.maxPages !== null && this.stopReason === null && this.hostedPages() >= this.cfg.maxPages) this.stop('max-pages');
      if (Date.now() - this.lastRows >= 5_000) {
        this.lastRows = Date.now();
        this.rows = (await readClusterTable(this.engine, this.meta, new Set(this.placement.hosts.keys()))).rows;
      }
      await this.maybeDone();
    } catch (e) {
      // The server away (restarting): the next tick tries again. A failure while the node stops
      // (the connection draining) is not the crawl's either.
      if (this.stopReason === null && !isTransient(e)) this.fail(e);
    }
  }

  /** Each hosted partition's STAR histogram to KV hist.<p> (when it changed; at most every 2 s). */
  private async publishRanks(): Promise<void> {
    if (Date.now() - this.lastHist < 2_000) return;
    this.lastHist = Date.now();
    for (const [p, b] of this.ranks.ownSparse()) {
      const key = Buffer.from(b).toString('base64');
      if (this.histSent.get(p) === key) continue;
      await this.engine.kv.put(`hist.${p}`, b);
      this.histSent.set(p, key);
    }
  }

  /** A partition checkpointed: the WARC writer's position is where the node's recovery starts. */
  checkpointed(m: CheckpointManifest): void {
    this.file = { ...this.file, warc: m.warc };
    void writeFileAtomic(path.join(this.cfg.stateDir, NODE_FILE), new TextEncoder().encode(JSON.stringify(this.file, null, 2))).catch((e) => this.fail(e));
  }

  // ------------------------------------------------------------------- for placement.ts

  get holding(): boolean {
    return this.paused || this.cutOff;
  }

  get stopping(): boolean {
    return this.stopReason !== null;
  }

  /** A partition's crawler ended by itself: fine once the crawl is done, a failure before. */
  partitionEnded(p: number, s: CrawlSummary | null): void {
    if (s !== null && !this.view.done && this.stopReason === null) this.fail(new CrawlError('CRAWL_CLUSTER_PARTITION', `partition ${p} ended (${s.stopReason}) before the crawl did`));
  }

  /** A line about the cluster (moves, leaving) on stderr, whatever the progress mode. */
  log(line: string): void {
    process.stderr.write(`node ${this.id}: ${line}\n`);
  }

  // --------------------------------------------------------------------------- status surfaces

  snapshot(): NodeSnapshot {
    const parts: StatusSnapshot[] = [];
    for (const h of this.placement.hosts.values()) {
      const snap = h.snapshot();
      if (snap !== null) parts.push(snap);
    }
    const cpu = process.cpuUsage(this.cpuStart);
    const d = this.parts.dns.stats();
    const base: StatusSnapshot = {
      state: this.stopReason !== null ? 'stopping' : this.paused || this.cutOff ? 'paused' : 'running', stopReason: this.stopReason,
      startedAt: new Date(this.startedAt).toISOString(), elapsedMs: Date.now() - this.startedAt,
      pages: 0, requisites: 0, pagesOk: 0, bytes: 0, pagesPerSec: 0, mbPerSec: 0, urlsSeen: 0, urlsDiscovered: 0, urlsQueued: 0, duplicates: 0, inFlight: 0, parsing: 0,
      robotsFetches: 0, beast: { j: 0, qfSize: 0, qrSize: 0 }, hosts: { active: 0, waiting: 0 }, ips: { active: 0, waiting: 0 },
      dns: { lookups: d.lookups, hitRate: d.hitRate }, robots: { lookups: 0, hitRate: 0 },
      workers: { size: this.parts.pool.threads, replaced: this.parts.pool.replaced }, outcomes: {}, rssBytes: process.memoryUsage.rss(),
      cpuMsPerPage: 0, cpuSeconds: (cpu.user + cpu.system) / 1e6, urlsReady: 0, topPlds: [], checkpoints: 0, lastCheckpointAt: null,
      bodyBudget: budgetStatus(this.parts.fetcher.budget),
    };
    return { ...sumSnapshots(parts, base), cluster: this.figures() };
  }

  private figures(): ClusterFigures {
    const st = this.status('active');
    let admitted = 0;
    let acked = 0;
    let held = 0;
    for (const h of this.placement.hosts.values()) {
      admitted += h.inboxStats.admitted;
      acked += h.inboxStats.acked;
      held += h.inboxStats.held;
    }
    const r = this.router.stats;
    return {
      crawl: this.meta.crawl, node: this.id, partitions: this.meta.partitions, hosted: st.hosted, settled: st.settled, done: this.view.done,
      members: [...this.view.members.values()].map((m) => ({ id: m.value.id, state: m.value.state, live: this.view.isLive(m.value.id), hosted: m.value.hosted.length })),
      published: r.published, publishedBytes: r.publishedBytes, routedUrls: r.urls, routedVotes: r.votes, publishRetries: r.retries,
      routerPendingBytes: this.router.pendingBytes(), admitted, acked, held, rows: this.rows,
    };
  }

  metrics(): Exposition {
    return clusterMetrics(this.figures());
  }

  pause(): void {
    this.paused = true;
    for (const h of this.placement.hosts.values()) h.crawler?.pause();
  }

  resume(): void {
    this.paused = false;
    if (!this.cutOff) for (const h of this.placement.hosts.values()) h.crawler?.resume();
  }

  // ------------------------------------------------------------------------------ termination

  private async maybeDone(): Promise<void> {
    if (this.view.done || this.checkingDone || Date.now() - this.lastDoneCheck < 1_000) return;
    const me = this.status('active');
    if (!me.quiet) return;
    this.lastDoneCheck = Date.now();
    this.checkingDone = true;
    try {
      if (await crawlEnded(this.engine, this.view, this.meta.partitions, this.id)) {
        await this.engine.kv.put('done', jsonBytes({ at: new Date().toISOString(), by: this.id }));
      }
    } finally {
      this.checkingDone = false;
    }
  }
}
