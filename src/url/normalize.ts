/**
 * The string steps applied AFTER WHATWG parsing, shared by the slow path (new URL) and the fast
 * path (resolver.ts) so both produce byte-identical output. Each step is listed with its reason in
 * docs/url.md. Inputs here are always ASCII (WHATWG serializations are ASCII).
 */
import type { CompiledOptions, UrlRejectReason } from './options.js';

// 1 for the RFC 3986 "unreserved" characters ALPHA / DIGIT / "-" / "." / "_" / "~" (§2.3):
// percent-encoded unreserved octets are equivalent to the octets themselves (§6.2.2.2).
const UNRESERVED = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  if (/[A-Za-z0-9\-._~]/.test(ch)) UNRESERVED[c] = 1;
}

/** Value of an ASCII hex digit, or -1. */
function hexVal(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 65 && c <= 70) return c - 55;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

const HEX = '0123456789ABCDEF';

/**
 * Normalizes percent-escapes in one component (path or query): hex digits upper-cased
 * (RFC 3986 §6.2.2.1) and escapes of unreserved characters decoded (§6.2.2.2).
 *
 * A component holding a stray `%` (not followed by two hex digits) is only upper-cased, never
 * decoded: decoding next to a stray `%` could fuse it with the decoded text into a new escape
 * (`%%34%31` would become `%41`, which the next pass would read as `A`), breaking idempotence and
 * changing the request. Browsers send a stray `%` as is, and so do we.
 */
export function normalizePercent(s: string): string {
  let i = s.indexOf('%');
  if (i < 0) return s;
  const n = s.length;
  // Pass 1: is there a stray '%', and is there anything to change at all?
  let stray = false;
  let change = false;
  for (let j = i; j < n; j++) {
    if (s.charCodeAt(j) !== 37) continue;
    const h1 = j + 1 < n ? s.charCodeAt(j + 1) : 0;
    const h2 = j + 2 < n ? s.charCodeAt(j + 2) : 0;
    const v1 = hexVal(h1);
    const v2 = hexVal(h2);
    if (v1 < 0 || v2 < 0) {
      stray = true;
      continue;
    }
    if (h1 >= 97 || h2 >= 97 || UNRESERVED[v1 * 16 + v2] === 1) change = true;
    j += 2;
  }
  if (!change) return s;
  let out = '';
  let last = 0;
  for (; i < n; i++) {
    if (s.charCodeAt(i) !== 37) continue;
    const v1 = i + 1 < n ? hexVal(s.charCodeAt(i + 1)) : -1;
    const v2 = i + 2 < n ? hexVal(s.charCodeAt(i + 2)) : -1;
    if (v1 < 0 || v2 < 0) continue;
    const b = v1 * 16 + v2;
    out += s.slice(last, i);
    if (!stray && UNRESERVED[b] === 1) out += String.fromCharCode(b);
    else out += '%' + HEX[v1] + HEX[v2];
    last = i + 3;
    i += 2;
  }
  return out + s.slice(last);
}

/** A WHATWG single-dot segment: `.` or `%2e` (any case). */
function isSingleDot(seg: string): boolean {
  return seg === '.' || (seg.length === 3 && seg.toLowerCase() === '%2e');
}

/** A WHATWG double-dot segment: `..`, `.%2e`, `%2e.`, `%2e%2e` (any case). */
function isDoubleDot(seg: string): boolean {
  if (seg === '..') return true;
  if (seg.length !== 4 && seg.length !== 6) return false;
  const l = seg.toLowerCase();
  return l === '.%2e' || l === '%2e.' || l === '%2e%2e';
}

/**
 * WHATWG path resolution of dot segments for a special URL (the URL Standard's path state):
 * `..` pops (never above the root), and a trailing `.` or `..` leaves a trailing empty segment
 * (`/a/b/..` → `/a/`). `path` starts with '/'. The fast path only produces literal dots; the
 * `%2e` forms matter after session-id stripping turned a segment into one.
 */
export function removeDotSegments(path: string): string {
  if (path.indexOf('/.') < 0 && path.indexOf('%2') < 0) return path;
  // One pass; `out` is the resolved path so far ('/a/b'), `starts` the offsets in `out` where each
  // kept segment's '/' begins, so `..` pops by truncation. Bound: one entry per segment.
  let out = '';
  const starts: number[] = [];
  const n = path.length;
  let i = 1;
  for (;;) {
    let j = path.indexOf('/', i);
    if (j < 0) j = n;
    const last = j === n;
    const len = j - i;
    let dots = 0; // 1 = single-dot segment, 2 = double-dot segment
    if (len === 1 && path.charCodeAt(i) === 46) dots = 1;
    else if (len === 2 && path.charCodeAt(i) === 46 && path.charCodeAt(i + 1) === 46) dots = 2;
    else if ((len === 3 || len === 4 || len === 6) && (path.charCodeAt(i) === 37 || path.charCodeAt(i + 1) === 37)) {
      const seg = path.slice(i, j);
      dots = isDoubleDot(seg) ? 2 : isSingleDot(seg) ? 1 : 0;
    }
    if (dots === 2) {
      if (starts.length > 0) out = out.slice(0, starts.pop());
      if (last) out += '/';
    } else if (dots === 1) {
      if (last) out += '/';
    } else {
      starts.push(out.length);
      out += '/' + path.slice(i, j);
    }
    if (last) break;
    i = j + 1;
  }
  return out;
}

/** ASP.NET "cookieless session" path segments: `(S(24 chars))`, `(A(..)S(..)F(..))`, `(24 chars)`. */
const ASPNET_SEGMENT_RE = /\/\((?:(?:[A-Za-z]\([A-Za-z0-9_-]{1,}\))+|[a-z0-9]{24})\)(?=\/|$)/g;

/**
 * Session-id stripping on a percent-normalized path. Removing a parameter can remove a stray '%'
 * (so escapes may now be decoded) or turn a segment into a dot segment (`/a/..;jsessionid=1/b`), so
 * the path is re-normalized and dot segments re-resolved until stable: the result is what a
 * re-parse would give (idempotence). Each round strictly shortens the path, so it terminates.
 */
export function stripPathSessionIds(path: string, o: CompiledOptions): string {
  let p = path;
  for (;;) {
    let s = p;
    if (o.pathParamRe !== null && s.indexOf(';') >= 0) {
      o.pathParamRe.lastIndex = 0;
      s = s.replace(o.pathParamRe, '');
    }
    if (s.indexOf('/(') >= 0) {
      ASPNET_SEGMENT_RE.lastIndex = 0;
      s = s.replace(ASPNET_SEGMENT_RE, '');
      if (s === '') s = '/';
    }
    if (s === p) return p;
    p = removeDotSegments(normalizePercent(s));
  }
}

function isSessionName(name: string, o: CompiledOptions): boolean {
  const lower = name.toLowerCase();
  if (o.queryNames.has(lower)) return true;
  for (const p of o.queryPrefixes) if (lower.startsWith(p)) return true;
  return false;
}

/** Drops `name=value` query pairs whose name is a session-id parameter; other pairs untouched. */
export function stripQuerySessionIds(query: string, o: CompiledOptions): string {
  const pairs = query.split('&');
  let removed = false;
  const kept: string[] = [];
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    const name = eq < 0 ? pair : pair.slice(0, eq);
    if (name.length > 0 && isSessionName(name, o)) removed = true;
    else kept.push(pair);
  }
  return removed ? kept.join('&') : query;
}

export type Detailed = { url: string; reason?: undefined } | { url: null; reason: UrlRejectReason };

const REJECT: Record<UrlRejectReason, Detailed> = {
  unparseable: Object.freeze({ url: null, reason: 'unparseable' }),
  scheme: Object.freeze({ url: null, reason: 'scheme' }),
  'too-long': Object.freeze({ url: null, reason: 'too-long' }),
  empty: Object.freeze({ url: null, reason: 'empty' }),
  host: Object.freeze({ url: null, reason: 'host' }),
};

/** Frozen shared rejection results (no allocation on the reject path). */
export function reject(reason: UrlRejectReason): Detailed {
  return REJECT[reason];
}

/**
 * Assembles the canonical URL from WHATWG-serialized parts: `prefix` = `scheme://[userinfo@]host[:port]`,
 * `path` (starts with '/'), `query` (without '?', or null). Applies percent normalization, optional
 * session-id stripping, drops an empty query, enforces the length limit. `escapesDone`: the caller
 * guarantees path and query are already percent-normalized (the fast path: no '%' in the link, and
 * a canonical base), which saves a scan and a string flattening per link.
 */
export function finish(prefix: string, path: string, query: string | null, o: CompiledOptions, escapesDone = false): string | null {
  let p = escapesDone ? path : normalizePercent(path);
  if (o.strip) p = stripPathSessionIds(p, o);
  let q = query;
  if (q !== null) {
    if (q.length === 0) q = null;
    else {
      if (!escapesDone) q = normalizePercent(q);
      if (o.strip) {
        // Until stable, for the same reason as in stripPathSessionIds.
        for (;;) {
          const s = stripQuerySessionIds(q, o);
          if (s === q) break;
          q = normalizePercent(s);
        }
        if (q.length === 0) q = null;
      }
    }
  }
  const len = prefix.length + p.length + (q === null ? 0 : q.length + 1);
  if (len > o.maxLength) return null;
  return q === null ? prefix + p : prefix + p + '?' + q;
}

/**
 * DNS limits (RFC 1035 §2.3.4): a name longer than 253 characters or with a label longer than 63
 * cannot be resolved, so such hosts are refused ('host') rather than queued. Only for domain hosts
 * (not IP literals); `host` is ASCII.
 */
export function hostFitsDns(host: string): boolean {
  if (host.length > 253) return false;
  if (host.length <= 63) return true;
  let start = 0;
  for (;;) {
    const dot = host.indexOf('.', start);
    const end = dot < 0 ? host.length : dot;
    if (end - start > 63) return false;
    if (dot < 0) return true;
    start = dot + 1;
  }
}
