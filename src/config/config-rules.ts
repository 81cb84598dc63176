/**
 * The rules every configuration value must meet, as one table: type, unit, range, length. One
 * validator (`checkConfigValue`, then `checkConfigRelations` over the whole object) serves every
 * source alike — command-line flags, a config file, the manifest a resume reads, `POST /config` —
 * through resolveCrawlConfig (config.ts). A violation is CRAWL_CONFIG_INVALID naming the key and
 * the value (docs/errors.md; exit 2 on the command line, 400 from the status server).
 *
 * Why the bounds:
 * - every duration becomes a Node timer somewhere (a delay heap's wake-up, a fetch timeout, the
 *   checkpoint and progress periods, the --max-time stop); Node turns a delay above 2^31−1 ms into
 *   1 ms, so a larger value would do the opposite of what it says: MAX_TIMER_MS caps them all;
 * - sizes and counts are capped where a larger one would only exhaust the machine (a body cap above
 *   1 GiB, 10^4 concurrent fetches, 256 parse threads) or the process (a header line longer than
 *   what servers accept, a User-Agent of 100 KB sent with every request);
 * - strings that reach the wire (User-Agent, headers) or a regex engine (include/exclude) or the
 *   file system (paths) have length limits.
 * Numbers must be JSON numbers here: the flag parser and the config-file reader turn a flag's text
 * ("5s", "1.5G") into numbers before this; a string where a number is due is refused, wherever it
 * comes from. Sizes (`…Bytes`) also take size text ("512M") from library callers.
 */
import net from 'node:net';
import path from 'node:path';
import { canonicalizeUrl } from '../url/index.js';
import { normalizeHeaders } from './request-headers.js';
import { cidr, hostPort, invalid, parseSize, zstdLevel } from './config-values.js';

/** Largest delay a Node timer keeps (setTimeout turns anything above into 1 ms). */
export const MAX_TIMER_MS = 2 ** 31 - 1;
const MiB = 1024 ** 2;
const GiB = 1024 ** 3;

export type Rule =
  /** a whole number of milliseconds in [min, MAX_TIMER_MS] */
  | { kind: 'ms'; min: number; nullable?: true }
  /** a whole number of bytes (or size text) in [min, max] */
  | { kind: 'bytes'; min: number; max: number }
  | { kind: 'int'; min: number; max: number; nullable?: true }
  /** a number above 0, at most max */
  | { kind: 'positive'; max: number }
  | { kind: 'enum'; values: readonly string[] }
  | { kind: 'bool' }
  | { kind: 'text'; maxLength: number; check?: (key: string, v: string) => void }
  /** a file system path, resolved against the working directory */
  | { kind: 'path'; nullable?: true }
  /** a list of strings (one string is a list of one) */
  | { kind: 'list'; maxItems: number; maxLength: number; item?: (key: string, v: string) => string }
  | { kind: 'custom'; check: (key: string, v: unknown, cwd: string) => unknown };

/** The longest path accepted (Linux PATH_MAX). */
export const MAX_PATH_BYTES = 4096;
/** Request header limits: count, one `Name: value` line, all lines together (what common servers accept: 8 KiB a line). */
export const MAX_HEADERS = 64;
export const MAX_HEADER_LINE = 8192;
export const MAX_HEADERS_TOTAL = 16384;
/** The longest User-Agent. */
export const MAX_USER_AGENT = 512;
/** The longest seed URL (longer ones are never fetched: docs/url.md caps URLs on the same order). */
export const MAX_SEED_URL = 8192;

function seedUrl(key: string, s: string): string {
  // The crawl canonicalizes every seed (docs/url.md); one it would drop is refused here instead.
  if (!/^https?:\/\//i.test(s) || canonicalizeUrl(s) === null) {
    throw invalid(key, `entries must be absolute http(s) URLs (got ${JSON.stringify(s.length > 200 ? s.slice(0, 200) + '…' : s)})`, s);
  }
  return s;
}

function regex(key: string, re: string): string {
  try {
    new RegExp(re);
  } catch (e) {
    throw invalid(key, `has an invalid regular expression ${JSON.stringify(re)}: ${(e as Error).message}`, re);
  }
  return re;
}

function userAgent(key: string, v: string): void {
  // eslint-disable-next-line no-control-regex -- control characters are what this rule refuses
  if (/[\x00-\x08\x0a-\x1f\x7f]/.test(v)) throw invalid(key, 'must not contain line breaks or control characters', v);
  // The fetcher's own rule (src/fetch): a crawler must say who runs it and how to reach them.
  if (!/https?:\/\/\S+/.test(v)) {
    throw invalid(key, `must contain a contact URL, e.g. "mybot/1.0 (+https://example.org/bot)" (got ${JSON.stringify(v.length > 200 ? v.slice(0, 200) + '…' : v)})`, v);
  }
}

/** Is `ip` a loopback address (127.0.0.0/8, ::1, or an IPv4-mapped loopback address)? */
export function isLoopback(ip: string): boolean {
  const v = ip.toLowerCase().replace(/^::ffff:(?=\d+\.)/, '');
  return (net.isIPv4(v) && v.startsWith('127.')) || v === '::1';
}

function statusHost(key: string, v: string): void {
  if (net.isIP(v) === 0) throw invalid(key, `must be an IP address (got ${JSON.stringify(v)})`, v);
  // The status server takes control commands: it listens on loopback only (reach it from elsewhere
  // through an SSH tunnel, docs/operations.md), whatever the source of the value.
  if (!isLoopback(v)) throw invalid(key, `must be a loopback address such as 127.0.0.1 or ::1 (got ${JSON.stringify(v)}); reach the status server from elsewhere through an SSH tunnel`, v);
}

function headers(key: string, v: unknown): string[] {
  const lines = normalizeHeaders(v);
  if (lines.length > MAX_HEADERS) throw invalid(key, `must be at most ${MAX_HEADERS} headers (got ${lines.length})`, lines.length);
  let total = 0;
  for (const l of lines) {
    if (l.length > MAX_HEADER_LINE) throw invalid(key, `entries must be at most ${MAX_HEADER_LINE} characters (got one of ${l.length}: ${JSON.stringify(l.slice(0, 60) + '…')})`, l.length);
    total += l.length + 2;
  }
  if (total > MAX_HEADERS_TOTAL) throw invalid(key, `must be at most ${MAX_HEADERS_TOTAL} characters together (got ${total})`, total);
  return lines;
}

/** `train`, `off`, or a dictionary file's path (resolved against the working directory). */
function zstdDictionary(key: string, v: unknown, cwd: string): string {
  if (v === 'train' || v === 'off') return v;
  if (typeof v !== 'string' || v.trim() === '') throw invalid(key, `must be a non-empty string: train, off or a file (got ${JSON.stringify(v)})`, v);
  if (v.includes('\0')) throw invalid(key, 'must not contain a NUL character', v);
  const p = path.resolve(cwd, v);
  if (Buffer.byteLength(p) > MAX_PATH_BYTES) throw invalid(key, `must be at most ${MAX_PATH_BYTES} bytes long`, p.length);
  return p;
}

/** Every configuration key's rule (defaults: defaultCrawlConfig in config.ts; docs/configuration.md). */
export const CONFIG_RULES = {
  seeds: { kind: 'list', maxItems: 10_000_000, maxLength: MAX_SEED_URL, item: seedUrl },
  seedsFile: { kind: 'path', nullable: true },
  stateDir: { kind: 'path' },
  outDir: { kind: 'path' },
  dnsServers: { kind: 'list', maxItems: 16, maxLength: 64, item: hostPort },
  allowNetworks: { kind: 'list', maxItems: 1024, maxLength: 64, item: cidr },
  userAgent: { kind: 'text', maxLength: MAX_USER_AGENT, check: userAgent },
  maxDepth: { kind: 'int', min: 0, max: 1_000_000, nullable: true },
  scope: { kind: 'enum', values: ['any', 'pld', 'host'] },
  sitemaps: { kind: 'enum', values: ['robots', 'robots+root', 'off'] },
  include: { kind: 'list', maxItems: 1024, maxLength: 4096, item: regex },
  exclude: { kind: 'list', maxItems: 1024, maxLength: 4096, item: regex },
  ramBytes: { kind: 'bytes', min: 0, max: 4096 * GiB }, // its floor, MIN_RAM_BYTES, with its reason: config.ts
  workers: { kind: 'int', min: 1, max: 256 },
  fetchConcurrency: { kind: 'int', min: 1, max: 10_000 },
  hostTableSize: { kind: 'int', min: 16, max: 100_000_000, nullable: true },
  warcCompression: { kind: 'enum', values: ['gzip', 'zstd', 'none'] },
  warcMaxFileBytes: { kind: 'bytes', min: 1 * MiB, max: 64 * GiB },
  warcZstdLevel: { kind: 'custom', check: (_k, v) => zstdLevel(v) },
  warcZstdDictionary: { kind: 'custom', check: zstdDictionary },
  warcDns: { kind: 'bool' },
  statusPort: { kind: 'int', min: 0, max: 65535, nullable: true },
  statusHost: { kind: 'text', maxLength: 64, check: statusHost },
  checkpointIntervalMs: { kind: 'ms', min: 100 },
  progress: { kind: 'enum', values: ['auto', 'tty', 'plain', 'none'] },
  progressIntervalMs: { kind: 'ms', min: 50 },
  maxBodyBytes: { kind: 'bytes', min: 1024, max: 1 * GiB },
  fetchTimeoutMs: { kind: 'ms', min: 10 },
  retryDelayScale: { kind: 'positive', max: 1000 },
  images: { kind: 'bool' },
  requisites: { kind: 'bool' },
  parseTimeoutMs: { kind: 'ms', min: 10 },
  headers: { kind: 'custom', check: headers },
  tlsInsecure: { kind: 'bool' },
  crawlLogFormat: { kind: 'enum', values: ['drumcrawl', 'heritrix'] },
  pageWorkers: { kind: 'enum', values: ['on', 'off'] },
  politenessMarginMs: { kind: 'ms', min: 0 },
  budget: { kind: 'enum', values: ['crawl', 'flat', 'proportional', 'inverse', 'popular-only'] },
  budgetB0: { kind: 'int', min: 1, max: 1_000_000 },
  reputation: { kind: 'enum', values: ['trusted', 'indegree'] },
  hostDelayMs: { kind: 'ms', min: 0 },
  ipDelayMs: { kind: 'ms', min: 0 },
  minHostDelayMs: { kind: 'ms', min: 0 },
  minIpDelayMs: { kind: 'ms', min: 0 },
  maxPages: { kind: 'int', min: 0, max: Number.MAX_SAFE_INTEGER, nullable: true },
  maxTimeMs: { kind: 'ms', min: 0, nullable: true },
  paused: { kind: 'bool' },
} as const satisfies Record<string, Rule>;

export type ConfigKey = keyof typeof CONFIG_RULES;

const shown = (v: unknown): string => {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 80 ? `${s.slice(0, 80)}…` : s;
};

function wholeNumber(key: string, v: unknown, min: number, max: number, nullable: boolean, unit = ''): number | null {
  if (v === null && nullable) return null;
  const what = `${min > 0 ? 'a positive' : 'a non-negative'} integer${unit}${nullable ? ' or null' : ''}`;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min) {
    throw invalid(key, `must be ${what}${min > 1 ? ` of at least ${min}` : ''} (got ${shown(v)})`, v);
  }
  if (v > max) throw invalid(key, `must be ≤ ${max}${unit} (got ${v})`, v);
  return v;
}

/** One value checked against its key's rule; returns it in its canonical form (paths resolved against `cwd`). */
export function checkConfigValue(key: ConfigKey, v: unknown, cwd: string): unknown {
  const rule: Rule = CONFIG_RULES[key];
  switch (rule.kind) {
    case 'ms': {
      if (v === null && rule.nullable === true) return null;
      if (typeof v === 'number' && Number.isInteger(v) && v > MAX_TIMER_MS) {
        throw invalid(key, `must be at most ${MAX_TIMER_MS} ms (2^31−1, about 24.8 days: the longest delay a Node timer keeps; got ${v})`, v);
      }
      return wholeNumber(key, v, rule.min, MAX_TIMER_MS, rule.nullable === true, ' (ms)');
    }
    case 'bytes': {
      if (typeof v !== 'number' && typeof v !== 'string') throw invalid(key, `must be a number of bytes or a size like 512M (got ${shown(v)})`, v);
      const n = parseSize(v, key);
      if (n < rule.min) throw invalid(key, `must be at least ${rule.min} bytes (got ${n})`, n);
      if (n > rule.max) throw invalid(key, `must be at most ${rule.max} bytes (got ${n})`, n);
      return n;
    }
    case 'int':
      return wholeNumber(key, v, rule.min, rule.max, rule.nullable === true);
    case 'positive':
      if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0 || v > rule.max) {
        throw invalid(key, `must be a number above 0 and at most ${rule.max} (got ${shown(v)})`, v);
      }
      return v;
    case 'enum':
      if (typeof v !== 'string' || !rule.values.includes(v)) throw invalid(key, `must be one of ${rule.values.join(', ')} (got ${shown(v)})`, v);
      return v;
    case 'bool':
      if (typeof v !== 'boolean') throw invalid(key, `must be true or false (got ${shown(v)})`, v);
      return v;
    case 'text':
      if (typeof v !== 'string' || v.trim() === '') throw invalid(key, `must be a non-empty string (got ${shown(v)})`, v);
      if (v.length > rule.maxLength) throw invalid(key, `must be at most ${rule.maxLength} characters (got ${v.length})`, v.length);
      rule.check?.(key, v);
      return v;
    case 'path': {
      if (v === null && rule.nullable === true) return null;
      if (typeof v !== 'string' || v.trim() === '') throw invalid(key, `must be a non-empty string (got ${shown(v)})`, v);
      if (v.includes('\0')) throw invalid(key, 'must not contain a NUL character', v);
      const p = path.resolve(cwd, v);
      if (Buffer.byteLength(p) > MAX_PATH_BYTES) throw invalid(key, `must be at most ${MAX_PATH_BYTES} bytes long (got ${Buffer.byteLength(p)})`, p.length);
      return p;
    }
    case 'list': {
      const list = typeof v === 'string' ? [v] : v;
      if (!Array.isArray(list) || list.some((x) => typeof x !== 'string')) throw invalid(key, 'must be a list of strings', v);
      if (list.length > rule.maxItems) throw invalid(key, `must have at most ${rule.maxItems} entries (got ${list.length})`, list.length);
      return (list as string[]).map((s) => {
        if (s.length > rule.maxLength) throw invalid(key, `entries must be at most ${rule.maxLength} characters (got one of ${s.length}: ${shown(s.slice(0, 60))})`, s.length);
        return rule.item === undefined ? s : rule.item(key, s);
      });
    }
    case 'custom':
      return rule.check(key, v, cwd);
  }
}

/** Is `inner` the directory `outer` or inside it (paths already resolved)? */
function within(inner: string, outer: string): boolean {
  const rel = path.relative(outer, inner);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** The rules between values, checked once every value has passed its own. */
export function checkConfigRelations(c: {
  stateDir: string; outDir: string; seedsFile: string | null; ramBytes: number; maxBodyBytes: number;
  hostDelayMs: number; minHostDelayMs: number; ipDelayMs: number; minIpDelayMs: number;
}): void {
  if (c.minHostDelayMs > c.hostDelayMs) {
    throw invalid('minHostDelayMs', `(τh0 = ${c.minHostDelayMs}) must not exceed hostDelayMs (τh = ${c.hostDelayMs})`, c.minHostDelayMs);
  }
  if (c.minIpDelayMs > c.ipDelayMs) {
    throw invalid('minIpDelayMs', `(τs0 = ${c.minIpDelayMs}) must not exceed ipDelayMs (τs = ${c.ipDelayMs})`, c.minIpDelayMs);
  }
  // The state and output directories are each the crawler's alone: one inside the other would mix
  // their files (a WARC named like a DRUM bucket, a resume that cuts the other's torn tails).
  if (within(c.stateDir, c.outDir) || within(c.outDir, c.stateDir)) {
    throw invalid('stateDir', `${c.stateDir} and outDir ${c.outDir} must be apart (neither inside the other)`, c.stateDir);
  }
  if (c.seedsFile !== null && (within(c.seedsFile, c.stateDir) || within(c.seedsFile, c.outDir))) {
    throw invalid('seedsFile', `${c.seedsFile} must not be inside the state or output directory (the crawler owns their files)`, c.seedsFile);
  }
  // A body is held whole in RAM while it is parsed and archived: one must fit many times in --ram.
  if (c.maxBodyBytes * 8 > c.ramBytes) {
    throw invalid('maxBodyBytes', `(${c.maxBodyBytes} bytes) must be at most an eighth of ramBytes (${c.ramBytes} bytes)`, c.maxBodyBytes);
  }
}
