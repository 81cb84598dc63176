/**
 * robots.txt parser (RFC 9309 §2.1–2.2, §2.5).
 *
 * The file is read as bytes (a `string` body is UTF-8 encoded first) so that the parse limit is a
 * byte limit, as §2.5 states it, and so that non-ASCII octets in patterns can be percent-encoded
 * exactly as §2.2.2 asks. One pass, no regular expressions, no backtracking: cost is linear in the
 * bytes parsed.
 *
 * Lines: CR, LF and CRLF all end a line (§2.2 `NL`); a `#` starts a comment; keys are matched
 * case-insensitively; unknown keys and garbage lines are skipped (§2.3.1.5: "MUST try to parse
 * each line … MUST use the parseable rules"). Grouping (§2.1): one or more `user-agent` lines open a
 * group, `allow`/`disallow` lines belong to the last group, and a `user-agent` line after a rule
 * opens a new group. Rules before the first group are ignored; `sitemap`, `crawl-delay` and unknown
 * lines never end a group (§2.2.4 "other records MUST NOT end a group").
 *
 * Tolerances taken from Google's reference parser (google/robotstxt robots.cc), each harmless under
 * the RFC: a full or partial UTF-8 BOM at the start is skipped; a missing `:` is accepted when the
 * line is exactly `key value`; common misspellings of `disallow` / `user-agent` / `sitemap` are
 * read as meant; a user-agent value is its leading product-token characters (`Googlebot/2.1` →
 * `Googlebot`), and `* anything` is the global group.
 */

import { escapePattern } from './normalize.js';

/** Parse limit default: 512 KiB. RFC 9309 §2.5: "The parsing limit MUST be at least 500 kibibytes". */
export const ROBOTS_DEFAULT_MAX_BYTES = 512 * 1024;

export interface ParsedRobotsRule {
  /** Normalized pattern (ASCII, percent-encoding canonical, `*` wildcards, optional final `$`). */
  readonly pattern: string;
  readonly allow: boolean;
}

export interface ParsedRobotsGroup {
  /** Lower-cased product tokens named by this group's user-agent lines (empty strings dropped). */
  readonly agents: string[];
  /** True when one of the user-agent lines was `*`. */
  global: boolean;
  readonly rules: ParsedRobotsRule[];
  /** Crawl-delay in seconds, if the group set a valid one (largest value wins). */
  crawlDelay: number | undefined;
}

export interface ParsedRobots {
  groups: ParsedRobotsGroup[];
  sitemaps: string[];
  /** Lines with a recognized key (user-agent, allow, disallow, sitemap, crawl-delay). */
  validDirectives: number;
  /** `key: value` lines whose key is not recognized. */
  unknownDirectives: number;
  /** 1-based number of the last line that carried a directive (valid or unknown); 0 if none. */
  lastLineSeen: number;
  /** Bytes actually parsed (≤ maxBytes). */
  bytesParsed: number;
  /** True when the body was longer than the parse limit and the rest was ignored. */
  truncated: boolean;
}

const enum Key { Unknown, UserAgent, Allow, Disallow, Sitemap, CrawlDelay }

const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: false });

function isWs(b: number): boolean {
  return b === 0x20 || b === 0x09;
}

/** Lower-cased key text[s, e); keys longer than 32 characters cannot be recognized anyway. */
function lowerKey(text: string, s: number, e: number): string {
  return e - s > 32 ? '' : text.slice(s, e).toLowerCase();
}

function classifyKey(k: string): Key {
  switch (k) {
    case 'user-agent': case 'useragent': case 'user agent':
      return Key.UserAgent;
    case 'allow':
      return Key.Allow;
    // Frequent typos accepted by Google's parser; reading them as meant is what the author wanted.
    case 'disallow': case 'dissallow': case 'dissalow': case 'disalow': case 'diasllow': case 'disallaw':
      return Key.Disallow;
    case 'sitemap': case 'site-map':
      return Key.Sitemap;
    case 'crawl-delay': case 'crawldelay': case 'crawl delay':
      return Key.CrawlDelay;
    default:
      return Key.Unknown;
  }
}

/** RFC 9309 product-token characters: `-`, `A-Z`, `_`, `a-z` (§2.2.1 ABNF `identifier`). */
export function isProductTokenChar(c: number): boolean {
  return c === 0x2d || c === 0x5f || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}

/**
 * The product token of a user-agent string: its leading identifier characters, e.g.
 * `drumcrawl/0.1 (+https://…)` → `drumcrawl`. Empty when the string does not start with one.
 */
export function userAgentToken(userAgent: string): string {
  let i = 0;
  while (i < userAgent.length && isProductTokenChar(userAgent.charCodeAt(i))) i++;
  return userAgent.slice(0, i);
}

/** RFC 9309 §2.2.1: a user agent we can obey is a non-empty product token and nothing else. */
export function isValidUserAgentToObey(userAgent: string): boolean {
  return userAgent.length > 0 && userAgentToken(userAgent).length === userAgent.length;
}

/**
 * The part of a robots.txt body that is parsed: up to maxBytes, without the line the limit cuts,
 * after a UTF-8 BOM. `pos` is where parsing starts.
 */
function bodyBounds(all: Uint8Array, maxBytes: number): { end: number; truncated: boolean; pos: number } {
  let end = all.length;
  let truncated = false;
  if (end > maxBytes) {
    truncated = true;
    end = maxBytes;
    // The line cut by the limit is dropped: a cut pattern would be a different (broader) rule.
    let j = end;
    while (j > 0 && all[j - 1] !== 0x0a && all[j - 1] !== 0x0d) j--;
    // Keep the line only if the limit falls exactly on its end-of-line.
    if (all[end] !== 0x0a && all[end] !== 0x0d) end = j;
  }
  const bytes = all;
  let pos = 0;
  // UTF-8 BOM (EF BB BF), or a partial one, at the very start only.
  if (end > 0 && bytes[0] === 0xef) {
    pos = 1;
    if (end > 1 && bytes[1] === 0xbb) {
      pos = 2;
      if (end > 2 && bytes[2] === 0xbf) pos = 3;
    }
  }
  return { end, truncated, pos };
}

/** Parse a robots.txt body (string or bytes). Never throws. */
export function parseRobotsBody(body: string | Uint8Array, maxBytes = ROBOTS_DEFAULT_MAX_BYTES): ParsedRobots {
  const all = typeof body === 'string' ? utf8.encode(body) : body;
  const { end, truncated, pos: start } = bodyBounds(all, maxBytes);
  const bytes = all;
  // One native latin1 decode: one character per byte, so indexes are byte offsets, charCodeAt is a
  // byte read, and keys / plain patterns are cheap slices instead of strings built char by char.
  const text = Buffer.from(all.buffer, all.byteOffset, end).toString('latin1');
  let pos = start;

  const out: ParsedRobots = {
    groups: [], sitemaps: [], validDirectives: 0, unknownDirectives: 0, lastLineSeen: 0,
    bytesParsed: end, truncated,
  };
  const st: GroupState = { current: null, agentRun: false };
  let lineNo = 0;

  while (pos < end) {
    // Find end of line.
    let eol = pos;
    while (eol < end && text.charCodeAt(eol) !== 0x0a && text.charCodeAt(eol) !== 0x0d) eol++;
    const lineStart = pos;
    let lineEnd = eol;
    // Advance past the line terminator (CRLF counts as one).
    if (eol < end) {
      pos = eol + 1;
      if (text.charCodeAt(eol) === 0x0d && pos < end && text.charCodeAt(pos) === 0x0a) pos++;
    } else {
      pos = eol;
    }
    lineNo++;

    // Strip comment.
    for (let i = lineStart; i < lineEnd; i++) {
      if (text.charCodeAt(i) === 0x23) { lineEnd = i; break; }
    }
    let s = lineStart;
    while (s < lineEnd && isWs(text.charCodeAt(s))) s++;
    let e = lineEnd;
    while (e > s && isWs(text.charCodeAt(e - 1))) e--;
    if (s === e) continue;

    // key ':' value, or (tolerance) exactly "key value".
    let colon = -1;
    for (let i = s; i < e; i++) if (text.charCodeAt(i) === 0x3a) { colon = i; break; }
    let keyEnd: number;
    let valStart: number;
    if (colon >= 0) {
      keyEnd = colon;
      valStart = colon + 1;
    } else {
      let ws = -1;
      for (let i = s; i < e; i++) if (isWs(text.charCodeAt(i))) { ws = i; break; }
      if (ws < 0) continue;
      keyEnd = ws;
      valStart = ws;
      while (valStart < e && isWs(text.charCodeAt(valStart))) valStart++;
      let twoWords = true;
      for (let i = valStart; i < e; i++) if (isWs(text.charCodeAt(i))) { twoWords = false; break; }
      if (!twoWords) continue;
    }
    while (keyEnd > s && isWs(text.charCodeAt(keyEnd - 1))) keyEnd--;
    if (keyEnd === s) continue;
    while (valStart < e && isWs(text.charCodeAt(valStart))) valStart++;
    const valEnd = e;

    const key = classifyKey(lowerKey(text, s, keyEnd));
    out.lastLineSeen = lineNo;
    if (key === Key.Unknown) {
      out.unknownDirectives++;
      continue;
    }
    out.validDirectives++;

    applyDirective(key, text, bytes, valStart, valEnd, out, st);
  }
  return out;
}

/** The group being filled while a body is parsed. */
interface GroupState {
  current: ParsedRobotsGroup | null;
  /** last group-relevant line was user-agent (the next one joins the group) */
  agentRun: boolean;
}

/** One recognised directive (its value is text[valStart, valEnd)) applied to `out` and the group state. */
function applyDirective(key: Key, text: string, bytes: Uint8Array, valStart: number, valEnd: number, out: ParsedRobots, st: GroupState): void {
  switch (key) {
    case Key.Unknown:
      return; // not a directive: the caller skips such lines before it gets here
    case Key.UserAgent: {
      if (st.current === null || !st.agentRun) {
        st.current = { agents: [], global: false, rules: [], crawlDelay: undefined };
        out.groups.push(st.current);
      }
      st.agentRun = true;
      if (valStart < valEnd && text.charCodeAt(valStart) === 0x2a && (valStart + 1 === valEnd || isWs(text.charCodeAt(valStart + 1)))) {
        st.current.global = true;
      } else {
        let t = valStart;
        while (t < valEnd && isProductTokenChar(text.charCodeAt(t))) t++;
        if (t > valStart) st.current.agents.push(text.slice(valStart, t).toLowerCase());
      }
      break;
    }
    case Key.Allow:
    case Key.Disallow: {
      if (st.current === null) break; // rules before the first group are ignored (§2.1)
      st.agentRun = false;
      if (valStart === valEnd) break; // empty value: matches nothing
      const pattern = plainPattern(text, valStart, valEnd) ? text.slice(valStart, valEnd) : escapePattern(bytes.subarray(valStart, valEnd));
      st.current.rules.push({ pattern, allow: key === Key.Allow });
      break;
    }
    case Key.Sitemap: {
      if (valStart < valEnd) out.sitemaps.push(utf8Decoder.decode(bytes.subarray(valStart, valEnd)));
      break;
    }
    case Key.CrawlDelay: {
      if (st.current === null) break;
      const v = parseDelay(text.slice(valStart, Math.min(valEnd, valStart + 32)));
      if (v !== undefined && (st.current.crawlDelay === undefined || v > st.current.crawlDelay)) st.current.crawlDelay = v;
      break;
    }
  }
}

/** Crawl-delay value: a non-negative decimal number of seconds; anything else is ignored. */
function parseDelay(txt: string): number | undefined {
  if (!/^[0-9]+(\.[0-9]*)?$|^\.[0-9]+$/.test(txt)) return undefined;
  const v = Number(txt);
  return Number.isFinite(v) ? v : undefined;
}

/**
 * Printable ASCII without `%` and without `: / ? @ [ ]` after a `?`: already in canonical form
 * (normalize.ts), no re-encoding needed.
 */
function plainPattern(text: string, s: number, e: number): boolean {
  let q = false;
  for (let i = s; i < e; i++) {
    const c = text.charCodeAt(i);
    if (c <= 0x20 || c >= 0x7f || c === 0x25) return false;
    if (q && (c === 0x3a || c === 0x2f || c === 0x3f || c === 0x40 || c === 0x5b || c === 0x5d)) return false;
    if (c === 0x3f) q = true;
  }
  return true;
}
