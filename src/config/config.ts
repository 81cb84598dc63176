/**
 * The crawl's one validated configuration object (piscina's `kDefaultOptions` + precise messages,
 * crawlee's "unit in the name, @default documented"). Every option lives here, once:
 *
 *   CLI flags ──parseCrawlArgs──┐
 *   config file (JSON) ─────────┼──► resolveCrawlConfig(partial) ──► CrawlConfig (frozen, validated)
 *   library callers ────────────┘
 *
 * Options split in two groups. STARTUP options fix the shape of the crawl (directories, RAM, worker
 * count, seeds…) and are stored in the checkpoint manifest, so `resume` continues with the same ones.
 * RUNTIME options (delays, pause, page/time limits) may be changed while a crawl runs (status server
 * POST /config, or `resume --host-delay …`); `RUNTIME_KEYS` lists them.
 *
 * Every invalid field raises `CrawlError('CRAWL_CONFIG_INVALID', '<key> must be …')`.
 */
import { constants as FS } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CrawlError } from '../errors.js';
import { CRAWL_CONFIG_INVALID, bool, invalid, parseDurationMs, parseSize, str, strList } from './config-values.js';
import { CONFIG_RULES, type ConfigKey, type Rule, checkConfigRelations, checkConfigValue } from './config-rules.js';

export { CRAWL_CONFIG_INVALID, parseDurationMs, parseSize };

export type CrawlScope = 'any' | 'pld' | 'host';
/** Where sitemaps are discovered (src/sitemap): robots.txt `Sitemap:` lines, also /sitemap.xml, or not at all. */
export type SitemapDiscovery = 'robots' | 'robots+root' | 'off';
export type WarcCompression = 'gzip' | 'zstd' | 'none';
export type ProgressMode = 'auto' | 'tty' | 'plain' | 'none';
export type CrawlLogFormat = 'drumcrawl' | 'heritrix';

/** Options a running crawl may change (status server, resume flags). */
export interface RuntimeOptions {
  /** τh for ordinary (budget B0) domains: min start-to-start gap between two requests to one host. @default 5000 */
  hostDelayMs: number;
  /** τs for ordinary domains: min start-to-start gap between two requests to one IP (server). @default 1000 */
  ipDelayMs: number;
  /** τh0: floor that budget scaling may shorten τh to. Nothing ever goes below it. @default 1000 */
  minHostDelayMs: number;
  /** τs0: floor that budget scaling may shorten τs to. Nothing ever goes below it. @default 50 */
  minIpDelayMs: number;
  /** Stop (checkpoint, exit 0) after this many fetched pages; null = unlimited. @default null */
  maxPages: number | null;
  /** Stop (checkpoint, exit 0) after this many ms of crawling in this run; null = unlimited. @default null */
  maxTimeMs: number | null;
  /** Start paused (no new fetches are dispatched). @default false */
  paused: boolean;
}

/** Options fixed when a crawl starts (stored in the checkpoint manifest). */
export interface StartupOptions {
  /** Seed URLs (positional arguments plus the lines of `seedsFile`). */
  seeds: string[];
  /** File with one seed URL per line ('#' comments allowed). @default null */
  seedsFile: string | null;
  /** Directory holding all crawl state (DRUMs, queues, manifest). @default './crawl-state' */
  stateDir: string;
  /** Directory for WARC files and the crawl log. @default './crawl-out' */
  outDir: string;
  /** DNS servers as host:port; empty = the system resolvers. @default [] */
  dnsServers: string[];
  /**
   * CIDRs the network guard lets the fetcher connect to although they are special-purpose
   * (loopback, private, link-local …; src/fetch/address-guard.ts). Public addresses need no entry.
   * @default []
   */
  allowNetworks: string[];
  /** User-Agent header; should carry a contact URL. Also the robots.txt agent token (its first word). */
  userAgent: string;
  /** Do not enqueue links more than this many hops from a seed; null = unlimited. @default null */
  maxDepth: number | null;
  /**
   * Follow links to any host, only the seeds' PLDs, or only the seeds' hosts. The default keeps a
   * crawl near its seeds (a real-web crawl with `any` soon reaches the whole web). @default 'pld'
   */
  scope: CrawlScope;
  /**
   * Sitemaps (sitemaps.org) to fetch per host: those its robots.txt names, also its /sitemap.xml,
   * or none. @default 'robots'
   */
  sitemaps: SitemapDiscovery;
  /** URL must match at least one of these regexes (when any given). @default [] */
  include: string[];
  /** URL must match none of these regexes. @default [] */
  exclude: string[];
  /** RAM budget for the whole process (DRUM buffers, caches, in-flight pages). @default 1.5 GiB */
  ramBytes: number;
  /** Parse worker threads (piscina). @default os.availableParallelism() */
  workers: number;
  /** Max concurrent HTTP fetches (page and robots.txt). @default 256 */
  fetchConcurrency: number;
  /** Entries of the frontier's RAM host table (idle hosts are evicted when it is full); null = from ramBytes. @default null */
  hostTableSize: number | null;
  /** WARC record compression. @default 'gzip' */
  warcCompression: WarcCompression;
  /** Rotate WARC files at this size. @default 1 GiB */
  warcMaxFileBytes: number;
  /** zstd WARC: compression level, 1–22 (docs/output-format.md has the measured trade-off). @default 3 */
  warcZstdLevel: number;
  /**
   * zstd WARC: the dictionary every file begins with (IIPC warc-zstd): 'train' trains one from the
   * crawl's first 1 MiB of records (the files before it have none; a resume reuses the last file's),
   * 'off' writes none, any other value is the path of a zstd dictionary file (RFC 8878 §5, e.g.
   * from `zstd --train`). @default 'train'
   */
  warcZstdDictionary: string;
  /**
   * Archive every DNS answer the crawler asks a server for as a `dns:` response record, as Heritrix
   * does (docs/output-format.md). On by default: it records which address each host's pages came
   * from, for one small record per host lookup (a fraction of a percent of the WARC bytes).
   * @default true
   */
  warcDns: boolean;
  /** Serve /metrics, /status and POST /pause|/resume|/stop on 127.0.0.1:port; null = off; 0 = pick. @default null */
  statusPort: number | null;
  /** Address the status server binds (loopback by default). @default '127.0.0.1' */
  statusHost: string;
  /** Write a checkpoint this often. @default 60000 */
  checkpointIntervalMs: number;
  /** Live status: auto (TTY → live line, else plain lines), tty, plain, none. @default 'auto' */
  progress: ProgressMode;
  /** Plain progress line / TTY refresh period. @default 10000 (plain), 500 (tty) */
  progressIntervalMs: number;
  /** Body cap per fetched page (bytes transferred). @default 8 MiB */
  maxBodyBytes: number;
  /** Whole-request timeout per fetch. @default 30000 */
  fetchTimeoutMs: number;
  /**
   * Multiplies every backoff and host penalty of the retry table (docs/errors.md: a reset is
   * retried after 2 min, then 4 min …). 1 in a real crawl; tests set it small (0.001 turns
   * minutes into tenths of a second). A server's Retry-After is never scaled. @default 1
   */
  retryDelayScale: number;
  /** Also extract <img src> links. @default false */
  images: boolean;
  /**
   * Page requisites (Heritrix's embeds, wget's `-p`): each crawled page's scripts, style sheets
   * (and the URLs in them: @import, url()), icons, images (src, srcset), media sources, `<object
   * data>`, `<embed src>` and the URLs in its `<style>` blocks and style attributes are fetched and
   * archived too, within the scope, the trap checks and politeness like any URL, so that the archive
   * replays the page as it was. They are counted apart from pages (--max-pages counts pages) and
   * taken past --max-depth (a chain of at most requisites.ts MAX_REQUISITE_HOPS). On by default:
   * every crawl archives what it fetches. @default true
   */
  requisites: boolean;
  /**
   * Added to every non-zero delay handed to the politeness heaps. The frontier times a request
   * from its dispatch; the server sees it a little later (event loop, socket write), so two
   * requests dispatched exactly τ apart can arrive closer than τ. The margin absorbs that jitter
   * so that the server-side gap never undercuts τ. @default 5
   */
  politenessMarginMs: number;
  /**
   * STAR budget function F(d) (thesis VI.2): 'crawl' (the thesis crawl: top-ranked PLDs get 10..10K
   * pages per BEAST pass, others B0), 'flat' (B0 for every PLD), 'proportional', 'inverse',
   * 'popular-only'. In a web of a few dozen PLDs every PLD is "top-ranked" under 'crawl'; use 'flat'
   * to keep a spam farm to B0 per pass there. @default 'crawl'
   */
  budget: 'crawl' | 'flat' | 'proportional' | 'inverse' | 'popular-only';
  /** B0: the default budget (pages per PLD per BEAST pass) and the delay scaling reference. @default 10 */
  budgetB0: number;
  /**
   * What STAR's in-degree d counts (src/frontier/star/star.ts): 'trusted' — links from trusted PLDs only
   * (seeds' PLDs, and PLDs with a trusted in-degree ≥ 2), up to 4 page votes per source PLD; or
   * 'indegree' — every distinct source PLD once (the thesis' plain in-degree). @default 'trusted'
   */
  reputation: 'trusted' | 'indegree';
  /** Per-parse hard timeout: a worker exceeding it is replaced and the page recorded as CRAWL_PARSE_TIMEOUT. @default 10000 */
  parseTimeoutMs: number;
  /** Extra request headers, `Name: value` lines (validated by request-headers.ts). @default [] */
  headers: string[];
  /** Accept TLS certificates that do not verify (self-signed, expired, wrong name). @default false */
  tlsInsecure: boolean;
  /** crawl.log line format: drumcrawl's TSV or Heritrix's 12 space-separated fields. @default 'drumcrawl' */
  crawlLogFormat: CrawlLogFormat;
  /**
   * Page workers (page-worker.ts): each page is fetched, parsed and its WARC records encoded on a
   * worker thread, which owns its own HTTP connections; 'off' fetches on the main thread and parses
   * in the parse pool. @default 'on' (or DRUMCRAWL_PAGE_WORKERS from the environment); a cluster node's partitions: 'off'
   */
  pageWorkers: 'on' | 'off';
}

export type CrawlConfig = Readonly<StartupOptions & RuntimeOptions>;
export type CrawlConfigInput = Partial<StartupOptions & RuntimeOptions>;

export const RUNTIME_KEYS: readonly (keyof RuntimeOptions)[] = [
  'hostDelayMs', 'ipDelayMs', 'minHostDelayMs', 'minIpDelayMs', 'maxPages', 'maxTimeMs', 'paused',
];

export const DEFAULT_USER_AGENT = 'drumcrawl/0.1 (+https://github.com/drumcrawl/drumcrawl)';
const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

/** The defaults, in one place (documented in docs/configuration.md). */
export function defaultCrawlConfig(): StartupOptions & RuntimeOptions {
  return {
    seeds: [],
    seedsFile: null,
    stateDir: './crawl-state',
    outDir: './crawl-out',
    dnsServers: [],
    allowNetworks: [],
    userAgent: DEFAULT_USER_AGENT,
    maxDepth: null,
    scope: 'pld',
    sitemaps: 'robots',
    include: [],
    exclude: [],
    ramBytes: 1.5 * GiB,
    workers: Math.max(1, os.availableParallelism()),
    fetchConcurrency: 256,
    hostTableSize: null,
    warcCompression: 'gzip',
    warcMaxFileBytes: GiB,
    warcZstdLevel: 3,
    warcZstdDictionary: 'train',
    warcDns: true,
    statusPort: null,
    statusHost: '127.0.0.1',
    checkpointIntervalMs: 60_000,
    progress: 'auto',
    progressIntervalMs: 10_000,
    maxBodyBytes: 8 * MiB,
    fetchTimeoutMs: 30_000,
    retryDelayScale: 1,
    images: false,
    requisites: true,
    parseTimeoutMs: 10_000,
    headers: [],
    tlsInsecure: false,
    crawlLogFormat: 'drumcrawl',
    // On for a single-node crawl (a cluster node's partitions crawl without them: src/cluster/node.ts).
    // The environment may set the default (DRUMCRAWL_PAGE_WORKERS=on|off): so the test suites and
    // benches run either way without a flag in each; an explicit option wins.
    pageWorkers: process.env.DRUMCRAWL_PAGE_WORKERS === 'off' ? 'off' : 'on',
    politenessMarginMs: 5,
    budget: 'crawl',
    budgetB0: 10,
    reputation: 'trusted',
    hostDelayMs: 5000,
    ipDelayMs: 1000,
    minHostDelayMs: 1000,
    minIpDelayMs: 50,
    maxPages: null,
    maxTimeMs: null,
    paused: false,
  };
}

const ALL_KEYS = new Set<string>(Object.keys(defaultCrawlConfig()));
// Every option has exactly one rule (config-rules.ts): a key without one does not compile.
const RULE_FOR_EVERY_KEY: Record<keyof (StartupOptions & RuntimeOptions), Rule> = CONFIG_RULES;
void RULE_FOR_EVERY_KEY;

/**
 * Merge `input` over the defaults and validate every field. Unknown keys are an error (a typo in a
 * config file should not silently do nothing). Relative directories are resolved against `cwd`.
 */
/**
 * The smallest accepted --ram. At 64M the URLseen share (1/8) is below DRUM's floor and the crawl
 * could not start (CRAWL_DRUM_OPTIONS); 256M is the smallest budget the test suite crawls with.
 */
export const MIN_RAM_BYTES = 256 * MiB;
/**
 * The smallest --ram the process' RSS has been measured to stay under, started through
 * bin/drumcrawl (whose heap limit for the main thread follows --ram, src/budget/heap-budget.ts): a
 * 30-minute crawl of a 10^7-host simweb at --ram 512M peaked at 488 MiB (`npm run bench:soak`,
 * bench/results/soak-512m-1e7-30min-27f86e5.json). Below it, the process' fixed part (160 MiB:
 * src/budget/ram-budget.ts) leaves the crawl structures' shares too little room; `ramFloorWarning`
 * says so at start.
 */
export const RSS_HELD_FROM_MIB = 512;

/** A warning for a --ram the process may not stay under (null when the budget has been measured to hold). */
export function ramFloorWarning(cfg: Pick<CrawlConfig, 'ramBytes'>): string | null {
  if (cfg.ramBytes >= RSS_HELD_FROM_MIB * MiB) return null;
  return `--ram ${Math.round(cfg.ramBytes / MiB)}M is below what this process has been measured to stay under (${RSS_HELD_FROM_MIB}M): its fixed part (V8 isolates, code, malloc arenas) leaves the crawl structures' shares too little room, so RSS may exceed the budget`;
}

export function resolveCrawlConfig(input: CrawlConfigInput, opts: { cwd?: string } = {}): CrawlConfig {
  const cwd = opts.cwd ?? process.cwd();
  for (const k of Object.keys(input)) {
    if (!ALL_KEYS.has(k)) throw invalid(k, `is not a known option (known: ${[...ALL_KEYS].sort().join(', ')})`);
  }
  const raw: Record<string, unknown> = { ...defaultCrawlConfig() };
  for (const [k, v] of Object.entries(input)) if (v !== undefined) raw[k] = v;
  // Each value by its rule (config-rules.ts), then the rules between values.
  const cfg: Record<string, unknown> = {};
  for (const k of Object.keys(CONFIG_RULES) as ConfigKey[]) cfg[k] = checkConfigValue(k, raw[k], cwd);
  const out = cfg as unknown as StartupOptions & RuntimeOptions;
  if (out.ramBytes < MIN_RAM_BYTES) {
    throw invalid('ramBytes', `must be at least 256M (got ${out.ramBytes} bytes): below that the DRUM shares fall under their floors, and the process itself needs more (see docs/configuration.md)`, out.ramBytes);
  }
  checkConfigRelations(out);
  return Object.freeze(out);
}

/**
 * Apply a change of runtime options to a running config (status server POST /config). Only
 * RUNTIME_KEYS are accepted; the result is re-validated as a whole.
 */
export function applyRuntimeChange(cfg: CrawlConfig, change: Record<string, unknown>): CrawlConfig {
  for (const k of Object.keys(change)) {
    if (!(RUNTIME_KEYS as readonly string[]).includes(k)) {
      throw invalid(k, `cannot be changed while a crawl runs (runtime options: ${RUNTIME_KEYS.join(', ')})`);
    }
  }
  const { ...startup } = cfg as StartupOptions & RuntimeOptions;
  return resolveCrawlConfig({ ...startup, ...(change as CrawlConfigInput) });
}

/**
 * A flag's value in a config file as the text the flag parser takes: strings, numbers and booleans
 * only (`String()` of an object may throw — e.g. one whose `toString` is not a function — or say
 * "[object Object]").
 */
function scalarText(k: string, v: unknown, file: string): string {
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw invalid(k, `in ${file} must be a string or a number (got ${v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v})`);
}

/**
 * Map a JSON config file's keys to config keys. A file may use the config keys themselves
 * (`hostDelayMs`, `ramBytes`) or the CLI flag names (`host-delay`, `ram`, `dns-server`…), with the
 * flags' units (a flag's value in a file means exactly what it means on the command line).
 */
export function configFromFileObject(obj: unknown, file = 'config file'): CrawlConfigInput {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
    throw new CrawlError(CRAWL_CONFIG_INVALID, `${file} must hold a JSON object`);
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj as Record<string, unknown>)) {
    // A name that is both a config key and another key's flag means the config key here: `seeds`
    // in a file is the list of seed URLs (the seed *file* is `seedsFile`), as on the command line
    // `--seeds <file>` is the file. The only such name is `seeds` (a test pins it).
    const flag = ALL_KEYS.has(k) && FLAG_BY_NAME.get(k)?.key !== k ? undefined : FLAG_BY_NAME.get(k);
    if (flag !== undefined && flag.key !== 'config') {
      if (flag.kind === 'bool') out[flag.key] = bool(k, v);
      else if (flag.repeat) out[flag.key] = (Array.isArray(v) ? v : [v]).map((x) => flag.parse(scalarText(k, x, file)));
      else out[flag.key] = flag.parse(scalarText(k, v, file));
    } else if (ALL_KEYS.has(k)) {
      out[k] = v;
    } else {
      throw invalid(k, `in ${file} is not a known option`);
    }
  }
  return out as CrawlConfigInput;
}

// ---------------------------------------------------------------------------------------------
// Command-line flags. One table drives the CLI's help text (src/cli/commands/crawl.ts registers
// these with commander) and `parseCrawlArgs`, the pure function that turns argv into a config.

export interface FlagSpec {
  /** flag name without dashes */
  name: string;
  /** placeholder shown in help, e.g. '<ms>'; '' for boolean flags */
  value: string;
  key: keyof (StartupOptions & RuntimeOptions) | 'config';
  kind: 'value' | 'bool';
  repeat?: boolean;
  description: string;
  parse: (v: string) => unknown;
}

const id = (v: string): string => v;
const int = (key: string) => (v: string): number => {
  if (!/^\s*\d+\s*$/.test(v)) throw invalid(key, `must be a non-negative integer (got ${JSON.stringify(v)})`, v);
  return Number(v);
};
const ms = (key: string) => (v: string): number => parseDurationMs(v, key, 'ms');
const num = (key: string) => (v: string): number => {
  if (!/^\s*(\d+(\.\d*)?|\.\d+)(e[-+]?\d+)?\s*$/i.test(v)) throw invalid(key, `must be a number (got ${JSON.stringify(v)})`, v);
  return Number(v);
};

export const CRAWL_FLAGS: readonly FlagSpec[] = [
  { name: 'config', value: '<file>', key: 'config', kind: 'value', description: 'JSON config file (same keys as the flags or the config object); flags override it', parse: id },
  { name: 'seeds', value: '<file>', key: 'seedsFile', kind: 'value', description: 'file with one seed URL per line', parse: id },
  { name: 'state', value: '<dir>', key: 'stateDir', kind: 'value', description: 'state directory (default ./crawl-state)', parse: id },
  { name: 'out', value: '<dir>', key: 'outDir', kind: 'value', description: 'output directory for WARC files and crawl log (default ./crawl-out)', parse: id },
  { name: 'dns-server', value: '<host:port>', key: 'dnsServers', kind: 'value', repeat: true, description: 'DNS server to use (repeatable; default: system resolvers)', parse: id },
  { name: 'allow-network', value: '<cidr>', key: 'allowNetworks', kind: 'value', repeat: true, description: 'let the crawler connect to this special-purpose range (loopback, private …; refused by default; repeatable)', parse: id },
  { name: 'user-agent', value: '<s>', key: 'userAgent', kind: 'value', description: 'User-Agent, with a contact URL', parse: id },
  { name: 'max-pages', value: '<n>', key: 'maxPages', kind: 'value', description: 'stop after n fetched pages (checkpoint, exit 0)', parse: int('maxPages') },
  { name: 'max-time', value: '<s>', key: 'maxTimeMs', kind: 'value', description: 'stop after s seconds (also 10m, 2h; checkpoint, exit 0)', parse: (v) => parseDurationMs(v, 'maxTimeMs', 's') },
  { name: 'max-depth', value: '<n>', key: 'maxDepth', kind: 'value', description: 'max link hops from a seed', parse: int('maxDepth') },
  { name: 'scope', value: '<any|pld|host>', key: 'scope', kind: 'value', description: "follow links within the seeds' PLDs (default pld), the seeds' hosts, or anywhere", parse: id },
  { name: 'sitemaps', value: '<robots|robots+root|off>', key: 'sitemaps', kind: 'value', description: "fetch the sitemaps robots.txt names (default robots), also each host's /sitemap.xml, or none", parse: id },
  { name: 'include', value: '<regex>', key: 'include', kind: 'value', repeat: true, description: 'only enqueue URLs matching a regex (repeatable)', parse: id },
  { name: 'exclude', value: '<regex>', key: 'exclude', kind: 'value', repeat: true, description: 'never enqueue URLs matching a regex (repeatable)', parse: id },
  { name: 'host-delay', value: '<ms>', key: 'hostDelayMs', kind: 'value', description: 'τh: per-host delay for ordinary domains (default 5000)', parse: ms('hostDelayMs') },
  { name: 'ip-delay', value: '<ms>', key: 'ipDelayMs', kind: 'value', description: 'τs: per-IP delay for ordinary domains (default 1000)', parse: ms('ipDelayMs') },
  { name: 'min-host-delay', value: '<ms>', key: 'minHostDelayMs', kind: 'value', description: 'τh0: floor of the per-host delay (default 1000)', parse: ms('minHostDelayMs') },
  { name: 'min-ip-delay', value: '<ms>', key: 'minIpDelayMs', kind: 'value', description: 'τs0: floor of the per-IP delay (default 50)', parse: ms('minIpDelayMs') },
  { name: 'ram', value: '<size>', key: 'ramBytes', kind: 'value', description: 'RAM budget, e.g. 512M, 1.5G (default 1.5G)', parse: (v) => parseSize(v, 'ramBytes') },
  { name: 'workers', value: '<n>', key: 'workers', kind: 'value', description: 'parse worker threads (default: cores)', parse: int('workers') },
  { name: 'host-table', value: '<n>', key: 'hostTableSize', kind: 'value', description: 'entries of the RAM host table, at least 16 (default: from --ram)', parse: int('hostTableSize') },
  { name: 'concurrency', value: '<n>', key: 'fetchConcurrency', kind: 'value', description: 'max concurrent fetches (default 256)', parse: int('fetchConcurrency') },
  { name: 'warc-compression', value: '<gzip|zstd|none>', key: 'warcCompression', kind: 'value', description: 'WARC record compression (default gzip)', parse: id },
  { name: 'warc-zstd-level', value: '<1-22>', key: 'warcZstdLevel', kind: 'value', description: 'zstd WARC compression level (default 3)', parse: int('warcZstdLevel') },
  { name: 'warc-zstd-dictionary', value: '<train|off|file>', key: 'warcZstdDictionary', kind: 'value', description: "zstd WARC dictionary at the start of each file: trained from the crawl's first records (default train), none, or a zstd dictionary file", parse: id },
  { name: 'warc-max-size', value: '<size>', key: 'warcMaxFileBytes', kind: 'value', description: 'rotate WARC files at this size (default 1G)', parse: (v) => parseSize(v, 'warcMaxFileBytes') },
  { name: 'warc-dns', value: '', key: 'warcDns', kind: 'bool', description: 'archive DNS answers as dns: records (default on; --warc-dns=false turns it off)', parse: () => true },
  { name: 'status-port', value: '<port>', key: 'statusPort', kind: 'value', description: 'serve /metrics and /status on 127.0.0.1:port (0 = any free port)', parse: int('statusPort') },
  { name: 'checkpoint-interval', value: '<ms>', key: 'checkpointIntervalMs', kind: 'value', description: 'checkpoint period (default 60000)', parse: ms('checkpointIntervalMs') },
  { name: 'progress', value: '<auto|tty|plain|none>', key: 'progress', kind: 'value', description: 'status display (default auto)', parse: id },
  { name: 'progress-interval', value: '<ms>', key: 'progressIntervalMs', kind: 'value', description: 'plain status line period (default 10000)', parse: ms('progressIntervalMs') },
  { name: 'max-body', value: '<size>', key: 'maxBodyBytes', kind: 'value', description: 'body size cap per page (default 8M)', parse: (v) => parseSize(v, 'maxBodyBytes') },
  { name: 'fetch-timeout', value: '<ms>', key: 'fetchTimeoutMs', kind: 'value', description: 'per-fetch timeout (default 30000)', parse: ms('fetchTimeoutMs') },
  { name: 'retry-delay-scale', value: '<x>', key: 'retryDelayScale', kind: 'value', description: 'multiply the retry backoffs and host penalties of docs/errors.md (default 1)', parse: num('retryDelayScale') },
  { name: 'politeness-margin', value: '<ms>', key: 'politenessMarginMs', kind: 'value', description: 'added to non-zero delays to absorb dispatch jitter (default 5)', parse: ms('politenessMarginMs') },
  { name: 'budget', value: '<crawl|flat|proportional|inverse|popular-only>', key: 'budget', kind: 'value', description: 'STAR budget function F(d) (default crawl)', parse: id },
  { name: 'budget-b0', value: '<n>', key: 'budgetB0', kind: 'value', description: 'B0: default pages per PLD per BEAST pass (default 10)', parse: int('budgetB0') },
  { name: 'reputation', value: '<trusted|indegree>', key: 'reputation', kind: 'value', description: "what STAR's in-degree counts: links from trusted PLDs only, or every PLD (default trusted)", parse: id },
  { name: 'header', value: "<'Name: value'>", key: 'headers', kind: 'value', repeat: true, description: 'send this request header on every request (repeatable)', parse: id },
  { name: 'tls-insecure', value: '', key: 'tlsInsecure', kind: 'bool', description: 'accept TLS certificates that do not verify (self-signed, expired)', parse: () => true },
  { name: 'crawl-log-format', value: '<drumcrawl|heritrix>', key: 'crawlLogFormat', kind: 'value', description: "crawl.log format: drumcrawl's TSV or Heritrix's (default drumcrawl)", parse: id },
  { name: 'page-workers', value: '<on|off>', key: 'pageWorkers', kind: 'value', description: 'fetch, parse and encode each page on worker threads (default on; a cluster node: off)', parse: id },
  { name: 'images', value: '', key: 'images', kind: 'bool', description: 'also follow <img src>', parse: () => true },
  { name: 'requisites', value: '', key: 'requisites', kind: 'bool', description: 'fetch each page\'s requisites: scripts, style sheets, images, media, objects (default on; --requisites=false turns it off)', parse: () => true },
  { name: 'paused', value: '', key: 'paused', kind: 'bool', description: 'start paused (resume via the status server)', parse: () => true },
];

const FLAG_BY_NAME = new Map<string, FlagSpec>(CRAWL_FLAGS.map((f) => [f.name, f]));

/** What parseCrawlArgs returns: the flag values (config keys) and the config file path, if any. */
export interface ParsedCrawlArgs {
  input: CrawlConfigInput;
  configFile: string | null;
}

/**
 * Pure argv → config input. Accepts `--flag value`, `--flag=value`, repeated repeatable flags,
 * `--` to end flags, and positional seed URLs. Does no I/O: the CLI reads the config file and the
 * seeds file (see `loadCrawlConfig`). Throws CRAWL_CONFIG_INVALID on an unknown flag or a bad value.
 */
export function parseCrawlArgs(argv: readonly string[]): ParsedCrawlArgs {
  const input: Record<string, unknown> = {};
  const seeds: string[] = [];
  let configFile: string | null = null;
  let flagsDone = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (flagsDone || !a.startsWith('--') || a === '--') {
      if (a === '--' && !flagsDone) {
        flagsDone = true;
        continue;
      }
      if (!flagsDone && a.startsWith('-') && a !== '-') throw invalid(a, 'is not a known flag');
      seeds.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = a.slice(2, eq < 0 ? undefined : eq);
    const spec = FLAG_BY_NAME.get(name);
    if (spec === undefined) throw invalid(`--${name}`, 'is not a known flag (see drumcrawl crawl --help)');
    if (spec.kind === 'bool') {
      if (eq >= 0) input[spec.key] = bool(`--${name}`, a.slice(eq + 1));
      else input[spec.key] = true;
      continue;
    }
    let v: string;
    if (eq >= 0) v = a.slice(eq + 1);
    else {
      const next = argv[i + 1];
      if (next === undefined) throw invalid(`--${name}`, `needs a value ${spec.value}`);
      v = next;
      i++;
    }
    if (spec.key === 'config') {
      configFile = v;
      continue;
    }
    const parsed = spec.parse(v);
    if (spec.repeat) input[spec.key] = [...((input[spec.key] as unknown[] | undefined) ?? []), parsed];
    else input[spec.key] = parsed;
  }
  if (seeds.length > 0) input.seeds = seeds;
  return { input: input as CrawlConfigInput, configFile };
}

/** The largest seeds file read (its URLs are kept in the checkpoint manifest, read into RAM). */
export const MAX_SEEDS_FILE_BYTES = 16 * MiB;
/** The largest config file read. */
export const MAX_CONFIG_FILE_BYTES = 1 * MiB;

/**
 * Read the seeds file: one URL per line, blank lines and '#' comments ignored.
 */
export function parseSeedList(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const t = line.trim();
    if (t === '' || t.startsWith('#')) continue;
    out.push(t);
  }
  return out;
}

/**
 * Read a user-given text file (seeds, config): it must be a regular file (a FIFO or a device would
 * block or never end), at most `maxBytes` long, and valid UTF-8 (a byte that is not would otherwise
 * become U+FFFD inside a URL). Errors are CRAWL_CONFIG_INVALID naming `what` and the file.
 */
export async function readInputFile(what: string, file: string, maxBytes: number): Promise<string> {
  const bad = (why: string, cause?: unknown): CrawlError =>
    new CrawlError(CRAWL_CONFIG_INVALID, `${what} ${file} ${why}`, cause === undefined ? undefined : { cause });
  const st = await stat(file).catch((e: Error) => {
    throw bad(`could not be read: ${e.message}`, e);
  });
  if (!st.isFile()) throw bad('could not be read: it is not a regular file');
  if (st.size > maxBytes) throw bad(`is ${st.size} bytes, more than the ${maxBytes} allowed`);
  // O_NONBLOCK: a file swapped for a FIFO after the stat above still cannot block the open.
  const fh = await open(file, FS.O_RDONLY | FS.O_NONBLOCK).catch((e: Error) => {
    throw bad(`could not be read: ${e.message}`, e);
  });
  let bytes: Buffer;
  try {
    // One byte more than the size seen: a file that grew since is noticed, not read without end.
    const buf = Buffer.alloc(st.size + 1);
    let n = 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, n, buf.length - n, null);
      if (bytesRead === 0) break;
      n += bytesRead;
      if (n > st.size) throw bad('changed while it was read');
    }
    bytes = buf.subarray(0, n);
  } catch (e) {
    if (e instanceof CrawlError) throw e;
    throw bad(`could not be read: ${(e as Error).message}`, e);
  } finally {
    await fh.close();
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw bad('is not valid UTF-8 text');
  }
}

/**
 * argv → validated config, with file I/O: the config file (flags override it) and the seeds file
 * (its URLs are appended to the positional seeds).
 */
export async function loadCrawlConfig(argv: readonly string[], opts: { cwd?: string } = {}): Promise<CrawlConfig> {
  const cwd = opts.cwd ?? process.cwd();
  const { input, configFile } = parseCrawlArgs(argv);
  let merged: CrawlConfigInput = {};
  if (configFile !== null) {
    const file = path.resolve(cwd, configFile);
    const text = await readInputFile('config file', file, MAX_CONFIG_FILE_BYTES);
    let obj: unknown;
    try {
      obj = JSON.parse(text);
    } catch (e) {
      throw new CrawlError(CRAWL_CONFIG_INVALID, `config file ${file} could not be read as JSON: ${(e as Error).message}`, { cause: e });
    }
    merged = configFromFileObject(obj, file);
  }
  merged = { ...merged, ...input };
  let seeds = [...strList('seeds', merged.seeds ?? [])];
  if (merged.seedsFile !== undefined && merged.seedsFile !== null) {
    const file = path.resolve(cwd, str('seedsFile', merged.seedsFile));
    const list = parseSeedList(await readInputFile('seedsFile', file, MAX_SEEDS_FILE_BYTES));
    if (list.length === 0) throw new CrawlError(CRAWL_CONFIG_INVALID, `seedsFile ${file} holds no seed URLs (one URL per line; '#' starts a comment)`);
    seeds = [...seeds, ...list];
  }
  return resolveCrawlConfig({ ...merged, seeds }, { cwd });
}
