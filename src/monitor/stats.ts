/**
 * Crawl visibility: counters, rates, the status snapshot, its Prometheus text rendering and the
 * progress printer (a live status block on a TTY, plain periodic lines otherwise). The status
 * server that serves the snapshot and takes control requests is src/crawl/status-server.ts.
 *
 * Bounds: the rate window keeps at most RATE_WINDOW samples; outcome counts have one entry per
 * distinct outcome code (a fixed, small set of CRAWL_* codes plus HTTP status classes).
 */
import { Exposition, type MetricType } from './metrics-exposition.js';
import type { PldRow } from './pld-tally.js';
import { renderRobotsDrums } from './robots-metrics.js';
import type { RobotsTotals } from '../robots/index.js';
import type { RunStatus } from './run-metrics.js';

/** 'done': the frontier ran dry; 'stopped': a stop (signal, limit, POST /stop) ended the run. */
export type CrawlState = 'starting' | 'running' | 'paused' | 'stopping' | 'done' | 'stopped';

/** Everything the status surfaces show; plain data, safe to JSON.stringify. */
export interface StatusSnapshot {
  state: CrawlState;
  stopReason: string | null;
  startedAt: string;
  elapsedMs: number;
  pages: number;              // page fetches completed (any outcome), page requisites included, robots.txt excluded
  requisites: number;         // of those, page requisites (--requisites: scripts, style sheets, images …)
  pagesOk: number;            // fetches with a 2xx/3xx/4xx HTTP response
  bytes: number;              // payload bytes received (pages)
  pagesPerSec: number;        // over the last ~10 s
  mbPerSec: number;           // MB (10^6) per second over the last ~10 s
  urlsSeen: number;           // unique URLs (URLseen keys)
  urlsDiscovered: number;     // links extracted (before dedup)
  urlsQueued: number;         // URLs waiting in the frontier (BEAST queues + QR + ready)
  duplicates: number;         // pages whose payload was an exact duplicate (revisit records)
  inFlight: number;           // fetches in progress
  parsing: number;            // pages in the parse pool
  robotsFetches: number;
  beast: { j: number; switches?: number; qfSize: number; qrSize: number };
  hosts: { active: number; waiting: number };
  ips: { active: number; waiting: number };
  dns: { lookups: number; hitRate: number };
  robots: { lookups: number; hitRate: number };
  /** RobotsCache / RobotsRequested DRUMs (src/crawl/ports/robots-stage.ts), over all runs */
  robotsDrums?: RobotsTotals;
  workers: { size: number; replaced: number };
  /** the body budget (src/budget/body-budget.ts): its size, what fetched bodies hold now, the most they held, takes refused */
  bodyBudget?: { capacityBytes: number; usedBytes: number; peakBytes: number; waits: number };
  outcomes: Record<string, number>;
  rssBytes: number;
  cpuMsPerPage: number;
  cpuSeconds: number;         // process CPU (user + system) since this run started
  urlsReady: number;          // URLs in RAM waiting for their host/IP delay (not in flight)
  topPlds: PldRow[];          // PLDs with the most page fetches this run (pld-tally.ts)
  checkpoints: number;
  lastCheckpointAt: string | null;
  /**
   * The batch stages' backlogs and their bounds (src/crawl/ports/backlog-pace.ts): pages taken from
   * the frontier and not yet durable, and bytes of bodies awaiting ContentSeen; dispatch is paced
   * above half of either bound and stops at it.
   */
  backlog?: { pendingPages: number; pendingBound: number; contentBytes: number; contentBound: number };
  /** Pauses, heap, loop delay, frontier depth, thread roles (run-metrics.ts); absent before a run starts. */
  run?: RunStatus;
}

const RATE_WINDOW = 20;

/** Sliding rate over the last few samples (one sample per `sample()` call, ~every 500 ms). */
export class RateMeter {
  private readonly t: number[] = [];
  private readonly v: number[] = [];
  sample(now: number, value: number): void {
    this.t.push(now);
    this.v.push(value);
    if (this.t.length > RATE_WINDOW) {
      this.t.shift();
      this.v.shift();
    }
  }
  /** units per second over the window (0 until two samples exist) */
  rate(): number {
    const n = this.t.length;
    if (n < 2) return 0;
    const dt = this.t[n - 1]! - this.t[0]!;
    return dt <= 0 ? 0 : ((this.v[n - 1]! - this.v[0]!) * 1000) / dt;
  }
}

/** What `drumcrawl_build_info` carries (build-info.ts reads it once per process). */
export interface BuildInfo {
  version: string;
  commit: string;
  node: string;
}

const STATES: readonly CrawlState[] = ['starting', 'running', 'paused', 'stopping', 'done', 'stopped'];

/**
 * The metric families, in exposition order: [name, type, help, value]. Counts are counters
 * (`_total`), sizes are gauges, units are base units; rates are left to the scraper
 * (`rate(drumcrawl_pages_total[1m])`). To expose more, add a row here (and its field to
 * StatusSnapshot); docs/operations.md lists every family.
 */
export const METRIC_ROWS: readonly (readonly [string, MetricType, string, (s: StatusSnapshot) => number])[] = [
  ['drumcrawl_start_time_seconds', 'gauge', 'Unix time this run started.', (s) => Date.parse(s.startedAt) / 1000],
  ['drumcrawl_pages_total', 'counter', 'Page fetches completed, any outcome, page requisites included (robots.txt excluded).', (s) => s.pages],
  ['drumcrawl_requisites_total', 'counter', 'Of the page fetches, page requisites (scripts, style sheets, images, media, objects).', (s) => s.requisites],
  ['drumcrawl_pages_http_total', 'counter', 'Page fetches that got an HTTP response.', (s) => s.pagesOk],
  ['drumcrawl_bytes_total', 'counter', 'Payload bytes received for pages.', (s) => s.bytes],
  ['drumcrawl_urls_seen_total', 'counter', 'Unique URLs added to URLseen (DRUM).', (s) => s.urlsSeen],
  ['drumcrawl_urls_discovered_total', 'counter', 'Links extracted, before dedup.', (s) => s.urlsDiscovered],
  ['drumcrawl_urls_queued', 'gauge', 'URLs in the frontier: BEAST queues, QF, QR and RAM.', (s) => s.urlsQueued],
  ['drumcrawl_urls_ready', 'gauge', 'URLs in RAM, waiting for their host or IP delay, not in flight.', (s) => s.urlsReady],
  ['drumcrawl_duplicates_total', 'counter', 'Exact-duplicate payloads (WARC revisit records).', (s) => s.duplicates],
  ['drumcrawl_in_flight', 'gauge', 'Fetches in progress (pages and robots.txt).', (s) => s.inFlight],
  ['drumcrawl_parsing', 'gauge', 'Pages in the parse pool.', (s) => s.parsing],
  ['drumcrawl_pending_pages', 'gauge', 'Pages taken from the frontier and not yet durable (waiting for their fetch, parse, merges or sync).', (s) => s.backlog?.pendingPages ?? 0],
  ['drumcrawl_pending_pages_bound', 'gauge', 'Bound on pending pages: dispatch is paced above half of it and stops at it.', (s) => s.backlog?.pendingBound ?? 0],
  ['drumcrawl_content_backlog_bytes', 'gauge', 'Bytes of bodies awaiting the ContentSeen answer.', (s) => s.backlog?.contentBytes ?? 0],
  ['drumcrawl_content_backlog_bound_bytes', 'gauge', 'Bound on bodies awaiting ContentSeen: dispatch is paced above half of it and stops at it.', (s) => s.backlog?.contentBound ?? 0],
  ['drumcrawl_robots_fetches_total', 'counter', 'robots.txt fetches.', (s) => s.robotsFetches],
  ['drumcrawl_beast_j', 'gauge', 'BEAST: number of queues j.', (s) => s.beast.j],
  ['drumcrawl_beast_qf_size', 'gauge', 'BEAST: URLs in QF.', (s) => s.beast.qfSize],
  ['drumcrawl_qr_size', 'gauge', 'URLs parked waiting for robots.txt (QR).', (s) => s.beast.qrSize],
  ['drumcrawl_hosts_active', 'gauge', 'Hosts with URLs ready in RAM.', (s) => s.hosts.active],
  ['drumcrawl_hosts_waiting', 'gauge', 'Hosts waiting for their delay.', (s) => s.hosts.waiting],
  ['drumcrawl_ips_active', 'gauge', 'IPs with URLs ready.', (s) => s.ips.active],
  ['drumcrawl_ips_waiting', 'gauge', 'IPs waiting for their delay.', (s) => s.ips.waiting],
  ['drumcrawl_dns_lookups_total', 'counter', 'DNS cache lookups.', (s) => s.dns.lookups],
  ['drumcrawl_dns_hit_ratio', 'gauge', 'DNS cache hit ratio (0 to 1).', (s) => s.dns.hitRate],
  ['drumcrawl_robots_lookups_total', 'counter', 'Robots cache lookups.', (s) => s.robots.lookups],
  ['drumcrawl_robots_hit_ratio', 'gauge', 'Robots cache hit ratio (0 to 1).', (s) => s.robots.hitRate],
  ['drumcrawl_parse_workers', 'gauge', 'Parse worker threads.', (s) => s.workers.size],
  ['drumcrawl_parse_workers_replaced_total', 'counter', 'Parse workers replaced after a crash or hang.', (s) => s.workers.replaced],
  ['drumcrawl_body_budget_bytes', 'gauge', 'Size of the body budget (fetched bodies and their decoded copies, until parsed).', (s) => s.bodyBudget?.capacityBytes ?? 0],
  ['drumcrawl_body_budget_used_bytes', 'gauge', 'Bytes of the body budget held now.', (s) => s.bodyBudget?.usedBytes ?? 0],
  ['drumcrawl_body_budget_peak_bytes', 'gauge', 'Most bytes of the body budget held at once in this run.', (s) => s.bodyBudget?.peakBytes ?? 0],
  ['drumcrawl_body_budget_waits_total', 'counter', 'Takes of the body budget refused (a body or decode waited).', (s) => s.bodyBudget?.waits ?? 0],
  ['drumcrawl_resident_memory_bytes', 'gauge', 'Resident set size of the crawler process.', (s) => s.rssBytes],
  ['drumcrawl_cpu_seconds_total', 'counter', 'CPU seconds (user + system) the process used in this run.', (s) => s.cpuSeconds],
  ['drumcrawl_checkpoints_total', 'counter', 'Checkpoints written in this run.', (s) => s.checkpoints],
  ['drumcrawl_last_checkpoint_timestamp_seconds', 'gauge', 'Unix time of the last checkpoint written (0: none yet).',
    (s) => (s.lastCheckpointAt === null ? 0 : Date.parse(s.lastCheckpointAt) / 1000)],
];

/** Prometheus text exposition format (version 0.0.4) of a snapshot; `e` may already hold families. */
export function renderPrometheus(s: StatusSnapshot, build?: BuildInfo, e = new Exposition()): string {
  if (build !== undefined) {
    e.gauge('drumcrawl_build_info', 'Build of the running crawler (the value is always 1).', 1, { ...build });
  }
  // One series per state, 1 for the current one: `drumcrawl_state{state="paused"} == 1` alerts.
  e.family('drumcrawl_state', 'gauge', 'Crawl state: 1 for the current state, 0 for the others.',
    STATES.map((st) => ({ labels: { state: st }, value: st === s.state ? 1 : 0 })));
  for (const [name, type, help, value] of METRIC_ROWS) e.family(name, type, help, [{ value: value(s) }]);
  if (s.robotsDrums !== undefined) {
    renderRobotsDrums(s.robotsDrums, (name, type, help, value) => e.family(`drumcrawl_${name}`, type, help, [{ value }]));
  }
  e.family('drumcrawl_outcomes_total', 'counter', 'Page fetch outcomes by code: HTTP status, or a CRAWL_* code for transport failures.',
    Object.entries(s.outcomes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([outcome, n]) => ({ labels: { outcome }, value: n })));
  return e.text();
}

// ---------------------------------------------------------------------------------------------
// Human-readable status

function si(n: number): string {
  if (n >= 1e9) return (n / 1e9).toFixed(2) + 'G';
  if (n >= 1e6) return (n / 1e6).toFixed(2) + 'M';
  if (n >= 1e4) return (n / 1e3).toFixed(1) + 'k';
  return String(Math.round(n));
}
function pct(x: number): string {
  return (x * 100).toFixed(0) + '%';
}
function dur(ms: number): string {
  const s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return `${h > 0 ? h + 'h' : ''}${String(m).padStart(h > 0 ? 2 : 1, '0')}m${String(s % 60).padStart(2, '0')}s`;
}

/** Top outcome codes, most frequent first ("ok 1.2k · 404 12 · CRAWL_FETCH_TIMEOUT 3"). */
export function formatOutcomes(o: Record<string, number>, max = 6): string {
  const e = Object.entries(o).sort((a, b) => b[1] - a[1]);
  const shown = e.slice(0, max).map(([k, v]) => `${k} ${si(v)}`);
  if (e.length > max) shown.push(`+${e.length - max} more`);
  return shown.join(' · ') || '-';
}

/** One plain line (non-TTY logs). */
export function formatPlainLine(s: StatusSnapshot): string {
  return (
    `[${dur(s.elapsedMs)}] ${s.state} pages=${s.pages} (${s.pagesPerSec.toFixed(1)}/s, ${s.mbPerSec.toFixed(2)} MB/s) ` +
    `seen=${s.urlsSeen} queued=${s.urlsQueued} dup=${s.duplicates} inflight=${s.inFlight} ` +
    `beast.j=${s.beast.j} qf=${s.beast.qfSize} qr=${s.beast.qrSize} ` +
    `hosts=${s.hosts.active}/${s.hosts.waiting} ips=${s.ips.active}/${s.ips.waiting} ` +
    `dns.hit=${pct(s.dns.hitRate)} robots.hit=${pct(s.robots.hitRate)} rss=${si(s.rssBytes)}B ` +
    `outcomes={${formatOutcomes(s.outcomes, 8)}}`
  );
}

/** The live TTY block (a few lines, redrawn in place). */
export function formatTtyBlock(s: StatusSnapshot): string[] {
  return [
    `drumcrawl ${s.state}  ${dur(s.elapsedMs)}  pages ${si(s.pages)}  ${s.pagesPerSec.toFixed(1)} pages/s  ${s.mbPerSec.toFixed(2)} MB/s  RSS ${si(s.rssBytes)}B`,
    `URLs seen ${si(s.urlsSeen)}  queued ${si(s.urlsQueued)}  dup ${si(s.duplicates)}  in flight ${s.inFlight}  parsing ${s.parsing}  BEAST j=${s.beast.j} QF ${si(s.beast.qfSize)}  QR ${si(s.beast.qrSize)}`,
    `hosts active ${si(s.hosts.active)} waiting ${si(s.hosts.waiting)}  IPs active ${si(s.ips.active)} waiting ${si(s.ips.waiting)}  DNS hit ${pct(s.dns.hitRate)}  robots hit ${pct(s.robots.hitRate)}`,
    `outcomes: ${formatOutcomes(s.outcomes)}`,
  ];
}

/**
 * Prints status periodically: on a TTY, a block redrawn in place (ANSI cursor-up + clear-line);
 * otherwise one plain line per interval. `stop()` prints a final line/block.
 */
export class ProgressPrinter {
  private timer: NodeJS.Timeout | null = null;
  private drawn = 0;
  private readonly tty: boolean;
  constructor(
    private readonly snapshot: () => StatusSnapshot,
    private readonly out: NodeJS.WritableStream & { isTTY?: boolean },
    mode: 'auto' | 'tty' | 'plain' | 'none',
    private readonly intervalMs: number,
  ) {
    this.tty = mode === 'tty' || (mode === 'auto' && out.isTTY === true);
    this.mode = mode;
  }
  private readonly mode: string;
  start(): void {
    if (this.mode === 'none') return;
    const period = this.tty ? Math.min(this.intervalMs, 500) : this.intervalMs;
    this.timer = setInterval(() => this.print(), period);
    this.timer.unref();
  }
  print(): void {
    const s = this.snapshot();
    if (this.tty) {
      const lines = formatTtyBlock(s);
      let buf = this.drawn > 0 ? `\x1b[${this.drawn}F` : '';
      for (const l of lines) buf += `\x1b[2K${l}\n`;
      this.drawn = lines.length;
      this.out.write(buf);
    } else {
      this.out.write(formatPlainLine(s) + '\n');
    }
  }
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.mode !== 'none') this.print();
  }
}

/** What `Crawler.run()` returns: the end of a run (the CLI prints it). */
export interface CrawlSummary {
  stopReason: string;
  finished: boolean;
  /** fetches (any outcome), page requisites included */
  pages: number;
  /** of those, page requisites (requisites.ts) */
  requisites: number;
  bytes: number;
  duplicates: number;
  urlsSeen: number;
  elapsedMs: number;
  pagesPerSec: number;
  /** null when this run fetched no page (a ratio over zero pages means nothing) */
  cpuMsPerPage: number | null;
  /** the process's peak RSS (the kernel's high-water mark: in one process, earlier runs too) */
  peakRssBytes: number;
  outcomes: Record<string, number>;
  warcDir: string;
  warcFiles: string[];
  stateDir: string;
  statusUrl: string | null;
  /** requests released by the heaps before a floor had passed, held by the last-step guard */
  floorGuardHolds: number;
}
