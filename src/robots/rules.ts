/**
 * Matching (RFC 9309 §2.2.2–2.2.3) and the compact compiled form (serialize / deserialize).
 *
 * A pattern is split once, at compile time, into its literal pieces around `*` (runs collapsed)
 * plus an end anchor for a final `$`. Matching is then greedy and left-most: the first piece must be
 * a prefix, each middle piece is found with `indexOf` after the previous one, and the last piece
 * must be a suffix (anchored) or occur after (unanchored). For `*`-only globs greedy left-most
 * placement is exact, so there is no backtracking and no regex: the cost is
 * O(|path| · |pattern|) in the worst case and usually O(|path|), whatever the number of `*`.
 *
 * Precedence (§2.2.2): the matching rule with the most octets wins; on equal length allow wins.
 * Rules are sorted once by (length desc, allow first), so the first match decides.
 */

import { CrawlError } from '../errors.js';
import { canonicalPath, pathParamsQuery } from './normalize.js';
import { type ParsedRobots, type ParsedRobotsGroup, type ParsedRobotsRule, parseRobotsBody, userAgentToken, ROBOTS_DEFAULT_MAX_BYTES } from './parse.js';

/** One compiled rule. */
class Matcher {
  readonly pattern: string;
  readonly allow: boolean;
  readonly priority: number;
  private readonly pieces: string[];
  private readonly anchored: boolean;
  private readonly literal: boolean;

  constructor(pattern: string, allow: boolean) {
    this.pattern = pattern;
    this.allow = allow;
    this.priority = pattern.length;
    // A `$` is an anchor only as the last character (§2.2.3); elsewhere it is a literal octet.
    this.anchored = pattern.length > 0 && pattern.charCodeAt(pattern.length - 1) === 0x24;
    const body = this.anchored ? pattern.slice(0, -1) : pattern;
    const raw = body.split('*');
    const pieces: string[] = [raw[0]!];
    for (let i = 1; i < raw.length; i++) {
      // `a**b` ≡ `a*b`: drop empty middle pieces, keep a trailing empty one (means "ends with *").
      if (raw[i] === '' && i < raw.length - 1) continue;
      pieces.push(raw[i]!);
    }
    this.pieces = pieces.slice(); // exact length: a pushed array keeps ≥ 17 slots (ramBytes counts the exact ones)
    this.literal = pieces.length === 1;
  }

  /**
   * Estimated heap bytes: the object (with V8's in-object slack), its pieces array (exact length),
   * and the piece strings — none when the pattern is one literal piece (split returns the pattern
   * itself); the pattern string is counted by the caller.
   */
  ramBytes(): number {
    const shared = this.literal && !this.anchored;
    return 120 + 16 + 8 * this.pieces.length + (shared ? 0 : strBytes(this.pattern.length));
  }

  /** Second character of the literal prefix when the pattern starts `/x` (x printable ASCII), else -1. */
  bucketKey(): number {
    const first = this.pieces[0]!;
    if (first.length < 2 || first.charCodeAt(0) !== 0x2f) return -1;
    const c = first.charCodeAt(1);
    return c < 128 ? c : -1;
  }

  matches(path: string): boolean {
    const pieces = this.pieces;
    const first = pieces[0]!;
    if (this.literal) return this.anchored ? path === first : path.startsWith(first);
    if (!path.startsWith(first)) return false;
    let pos = first.length;
    const last = pieces.length - 1;
    for (let i = 1; i < last; i++) {
      const p = pieces[i]!;
      const at = path.indexOf(p, pos);
      if (at < 0) return false;
      pos = at + p.length;
    }
    const tail = pieces[last]!;
    if (this.anchored) return path.length - tail.length >= pos && path.endsWith(tail);
    return tail.length === 0 || path.indexOf(tail, pos) >= 0;
  }
}

function compileMatchers(rules: readonly ParsedRobotsRule[]): Matcher[] {
  const ms = rules.map((r) => new Matcher(r.pattern, r.allow));
  ms.sort((a, b) => b.priority - a.priority || (a.allow === b.allow ? 0 : a.allow ? -1 : 1));
  return ms;
}

/**
 * Candidate lists by the path's second character (the first after `/`): a rule whose literal
 * prefix is `/x…` can only match paths starting `/x`. Each list keeps the global precedence order
 * and includes the rules without such a prefix (`/`, `/*…`), so the first match still decides.
 * Built only for files with more than 8 rules. Memory ≤ 96 lists × rules.
 */
function bucketize(ms: readonly Matcher[]): { buckets: Array<Matcher[] | undefined>; generic: Matcher[] } | null {
  if (ms.length <= 8) return null;
  const generic: Matcher[] = [];
  const keys = new Set<number>();
  for (const m of ms) {
    const k = m.bucketKey();
    if (k < 0) generic.push(m);
    else keys.add(k);
  }
  const buckets: Array<Matcher[] | undefined> = new Array(128).fill(undefined);
  // (.slice(): exact length, as ramBytes counts; filter's result keeps ≥ 17 slots)
  for (const k of keys) buckets[k] = ms.filter((m) => { const mk = m.bucketKey(); return mk < 0 || mk === k; }).slice();
  return { buckets, generic: generic.slice() };
}

function decide(ms: readonly Matcher[], canonical: string): boolean {
  for (let i = 0; i < ms.length; i++) {
    const m = ms[i]!;
    if (m.matches(canonical)) return m.allow;
  }
  return true;
}

const ROBOTS_PATH = '/robots.txt';

/** The rules that apply to one agent, compiled: what crawling needs per URL. */
export interface RobotsRules {
  /** `pathAndQuery` is the path+query of the URL (a full URL is accepted too). */
  isAllowed(pathAndQuery: string): boolean;
  /** Crawl-delay of the selected group(s) in ms (undefined when none was given). */
  readonly crawlDelayMs: number | undefined;
  /** Number of allow/disallow rules. */
  readonly ruleCount: number;
  /** Compact binary form; `deserializeRobotsRules` reverses it. */
  serialize(): Uint8Array;
  /**
   * Estimated heap bytes of these compiled rules (the frontier's host table charges it against its
   * byte bound): each matcher with its pattern and pieces, and the per-character index of a file
   * with more than 8 rules (≤ 96 lists × rules).
   */
  readonly ramBytes: number;
}

/** Estimated heap bytes of a one-byte string (16-byte header, 8-byte aligned). */
function strBytes(n: number): number {
  return 16 + ((n + 7) & ~7);
}

/** Largest Crawl-delay kept, 1 day: larger values are hostile or mistakes; the politeness layer may clamp further. */
export const ROBOTS_MAX_CRAWL_DELAY_MS = 86_400_000;

class CompiledRules implements RobotsRules {
  readonly crawlDelayMs: number | undefined;
  readonly ruleCount: number;
  readonly ramBytes: number;
  private readonly matchers: Matcher[];
  private readonly index: ReturnType<typeof bucketize>;

  constructor(matchers: Matcher[], crawlDelayMs: number | undefined) {
    this.matchers = matchers;
    this.ruleCount = matchers.length;
    this.crawlDelayMs = crawlDelayMs;
    this.index = bucketize(matchers);
    // object + matchers array; per matcher: its pattern, object, pieces array and piece strings
    // (test/frontier/ram-estimates.test.ts holds this against the measured heap)
    let bytes = 160 + 16 + 8 * matchers.length;
    for (const m of matchers) bytes += strBytes(m.pattern.length) + m.ramBytes();
    if (this.index !== null) {
      bytes += 16 + 8 * 128 + 16 + 8 * this.index.generic.length;
      for (const b of this.index.buckets) if (b !== undefined) bytes += 16 + 8 * b.length;
    }
    this.ramBytes = bytes;
  }

  isAllowed(pathAndQuery: string): boolean {
    if (this.matchers.length === 0) return true;
    // A path (leading `/`) is used as is; anything else is read as a URL.
    const p = pathAndQuery.charCodeAt(0) === 0x2f ? pathAndQuery : pathParamsQuery(pathAndQuery);
    if (p === ROBOTS_PATH) return true; // "The /robots.txt URI is implicitly allowed" (RFC 9309 §2.2.2)
    const c = canonicalPath(p);
    const ix = this.index;
    if (ix === null) return decide(this.matchers, c);
    const k = c.charCodeAt(1);
    return decide((k < 128 ? ix.buckets[k] : undefined) ?? ix.generic, c);
  }

  /**
   * Format (all integers unsigned LEB128 varints):
   *   u8 version (=1) · u8 flags (bit0: has crawl delay) · [varint crawlDelayMs] · varint nRules ·
   *   nRules × ( varint (patternLength << 1 | allow) · pattern bytes (ASCII) )
   * Patterns are canonical ASCII (normalize.ts), so one byte per character. Rules are stored in
   * precedence order, so decoding does not need to sort again.
   */
  serialize(): Uint8Array {
    let size = 2 + 5 + 5;
    for (const m of this.matchers) size += 5 + m.pattern.length;
    const out = new Uint8Array(size);
    let o = 0;
    out[o++] = 1;
    out[o++] = this.crawlDelayMs === undefined ? 0 : 1;
    const put = (v: number): void => {
      while (v >= 0x80) { out[o++] = (v & 0x7f) | 0x80; v = Math.floor(v / 128); }
      out[o++] = v;
    };
    if (this.crawlDelayMs !== undefined) put(this.crawlDelayMs);
    put(this.matchers.length);
    for (const m of this.matchers) {
      put(m.pattern.length * 2 + (m.allow ? 1 : 0));
      for (let i = 0; i < m.pattern.length; i++) out[o++] = m.pattern.charCodeAt(i);
    }
    return out.slice(0, o);
  }
}

/** Decode `RobotsRules.serialize()` output. Throws CRAWL_ROBOTS_BAD_SERIALIZED on malformed input. */
export function deserializeRobotsRules(b: Uint8Array): RobotsRules {
  let o = 0;
  const bad = (): never => {
    throw new CrawlError('CRAWL_ROBOTS_BAD_SERIALIZED', `malformed serialized robots rules at byte ${o}`);
  };
  const get = (): number => {
    let v = 0;
    let mul = 1;
    for (let i = 0; i < 5; i++) {
      if (o >= b.length) bad();
      const x = b[o++]!;
      v += (x & 0x7f) * mul;
      if (x < 0x80) return v;
      mul *= 128;
    }
    return bad();
  };
  if (b.length < 3 || b[0] !== 1) bad();
  const flags = b[1]!;
  o = 2;
  const delay = flags & 1 ? get() : undefined;
  const n = get();
  const ms: Matcher[] = [];
  for (let r = 0; r < n; r++) {
    const h = get();
    const len = Math.floor(h / 2);
    if (o + len > b.length) bad();
    // One flat string (a char-by-char concatenation builds a rope of one node per character).
    const pat = Buffer.from(b.buffer, b.byteOffset + o, len).toString('latin1');
    o += len;
    ms.push(new Matcher(pat, (h & 1) === 1));
  }
  if (o !== b.length) bad();
  return new CompiledRules(ms, delay);
}

/** Everything is allowed (no robots.txt, 4xx — RFC 9309 §2.3.1.3). */
export const ALLOW_ALL: RobotsRules = new CompiledRules([], undefined);
/** Nothing is allowed but /robots.txt itself (robots.txt unreachable: 5xx, timeout, network error — §2.3.1.4). */
export const DISALLOW_ALL: RobotsRules = new CompiledRules([new Matcher('/', false)], undefined);

/** A parsed robots.txt, able to answer for any user agent. */
export interface RobotsTxt {
  /** `userAgent` is a product token, compared case-insensitively with the groups' tokens. */
  isAllowed(userAgent: string, url: string): boolean;
  /** Crawl-delay in seconds for this agent's group(s), undefined when none. */
  crawlDelay(userAgent: string): number | undefined;
  readonly sitemaps: string[];
  /** The parser's view (groups, counters), for diagnostics and tests. */
  readonly parsed: ParsedRobots;
  /** The groups that apply to `userAgent` (RFC 9309 §2.2.1 selection), merged. */
  rulesFor(userAgent: string): RobotsRules;
}

/** Select and merge groups for `agent` (lower-cased): specific groups, else `*` groups, else none. */
function selectGroups(groups: readonly ParsedRobotsGroup[], agent: string): ParsedRobotsGroup[] {
  const specific: ParsedRobotsGroup[] = [];
  if (agent.length > 0) {
    for (const g of groups) if (g.agents.includes(agent)) specific.push(g);
  }
  if (specific.length > 0) return specific;
  return groups.filter((g) => g.global);
}

function buildRules(groups: readonly ParsedRobotsGroup[]): RobotsRules {
  const rules: ParsedRobotsRule[] = [];
  let delay: number | undefined;
  for (const g of groups) {
    for (const r of g.rules) rules.push(r);
    if (g.crawlDelay !== undefined && (delay === undefined || g.crawlDelay > delay)) delay = g.crawlDelay;
  }
  const delayMs = delay === undefined ? undefined : Math.min(Math.round(delay * 1000), ROBOTS_MAX_CRAWL_DELAY_MS);
  if (rules.length === 0 && delayMs === undefined) return ALLOW_ALL;
  return new CompiledRules(compileMatchers(rules), delayMs);
}

/** Bound of the per-RobotsTxt agent → rules memo (a handful of agents in practice). */
const AGENT_MEMO_MAX = 16;

class ParsedRobotsTxt implements RobotsTxt {
  readonly parsed: ParsedRobots;
  readonly sitemaps: string[];
  private readonly memo = new Map<string, RobotsRules>();

  constructor(parsed: ParsedRobots) {
    this.parsed = parsed;
    this.sitemaps = parsed.sitemaps;
  }

  rulesFor(userAgent: string): RobotsRules {
    const agent = userAgent.toLowerCase();
    let r = this.memo.get(agent);
    if (r === undefined) {
      r = buildRules(selectGroups(this.parsed.groups, agent));
      if (this.memo.size >= AGENT_MEMO_MAX) this.memo.clear();
      this.memo.set(agent, r);
    }
    return r;
  }

  isAllowed(userAgent: string, url: string): boolean {
    return this.rulesFor(userAgent).isAllowed(pathParamsQuery(url));
  }

  crawlDelay(userAgent: string): number | undefined {
    let delay: number | undefined;
    for (const g of selectGroups(this.parsed.groups, userAgent.toLowerCase())) {
      if (g.crawlDelay !== undefined && (delay === undefined || g.crawlDelay > delay)) delay = g.crawlDelay;
    }
    return delay;
  }
}

export interface ParseRobotsOptions {
  /** Parse limit in bytes (default 512 KiB; RFC 9309 §2.5 requires at least 500 KiB). */
  maxBytes?: number;
}

/** Parse a robots.txt body. Never throws; garbage yields an empty (allow-all) file. */
export function parseRobotsTxt(body: string | Uint8Array, opts?: ParseRobotsOptions): RobotsTxt {
  const max = opts?.maxBytes ?? ROBOTS_DEFAULT_MAX_BYTES;
  if (!(max >= 500 * 1024)) {
    throw new CrawlError('CRAWL_ROBOTS_BAD_OPTION', 'options.maxBytes must be at least 512000 (RFC 9309 §2.5)');
  }
  return new ParsedRobotsTxt(parseRobotsBody(body, max));
}

/**
 * The rules for OUR crawler, group selection done once. `userAgent` may be the full User-Agent
 * header (`drumcrawl/0.1 (+https://…)`): its product token (`drumcrawl`) selects the group.
 */
export function compileRobots(txt: RobotsTxt, userAgent: string): RobotsRules {
  return txt.rulesFor(userAgentToken(userAgent));
}
