/**
 * Hot path: resolve and canonicalize the links of one page against its (pre-parsed) base.
 *
 * A page has ~59 links on average (IRLbot thesis, ch. VI), all resolved against the same base, and
 * almost all are plain ASCII relative or absolute http links. `new URL(rel, base)` re-parses the
 * base every time and costs ~2.5 µs; this module parses the base once (LinkResolver) and resolves
 * the common case with string code. Anything unusual — non-ASCII, `%`, backslash, whitespace,
 * control characters, IP-like or `xn--` hosts, userinfo, odd slashes, quotes, brackets — falls back
 * to the WHATWG reference path (canonicalize.ts). test/url/fastpath.test.ts checks with fast-check
 * (and on all conformance inputs) that both paths give identical results and reasons.
 */
import { canonicalizeSlow, lastWhatwgPath } from './canonicalize.js';
import { finish, hostFitsDns, reject, removeDotSegments, stripPathSessionIds, normalizePercent, type Detailed } from './normalize.js';
import { hostOf, unpinned } from './host.js';
import { fingerprintInto } from './fingerprint.js';
import { pldOrHost } from './pld.js';
import { compileOptions, type CanonicalizeOptions, type CompiledOptions, type UrlRejectReason } from './options.js';

// Characters (before '#') that the fast path accepts (UNSAFE_G is the complement): letters,
// digits and  ! $ & ( ) * + , - . / : ; = ? @ _ ~
// WHATWG copies every one of them verbatim into path and query of a special URL, so no escaping
// decision is needed. Everything else (%, \, ', ", <, >, `, {, }, ^, |, [, ], space, controls,
// non-ASCII) takes the reference path.
const HOST_CHAR = new Uint8Array(128); // a-z A-Z 0-9 - .
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  if (/[A-Za-z0-9\-.]/.test(ch)) HOST_CHAR[c] = 1;
}

// SCAN_G stops at an unsafe character, ':', '?' or '/.', so one call tells a plain relative link
// (no scheme, no query, no dot segment) from the rest; it continues from lastIndex (g flag; `test`
// allocates no match object). After the '?' only unsafe characters matter: UNSAFE_G.
const SCAN_G = /[^A-Za-z0-9!$&()*+,\-./;=@_~]|\/\./g;
const SCAN_NODOT_G = /[^A-Za-z0-9!$&()*+,\-./;=@_~]/g;
const UNSAFE_G = /[^A-Za-z0-9!$&()*+,\-./:;=?@_~]/g;
// Scheme characters after the first: a-z A-Z 0-9 + - .
const SCHEME_CHAR = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  if (/[A-Za-z0-9+\-.]/.test(String.fromCharCode(c))) SCHEME_CHAR[c] = 1;
}

// Internal fast-path outcomes besides a URL string.
const NOT_HANDLED = 0;
const TOO_LONG = 1;
const SCHEME = 2;
type FastResult = string | typeof NOT_HANDLED | typeof TOO_LONG | typeof SCHEME;

function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || ((c | 32) >= 97 && (c | 32) <= 102);
}

/**
 * `rel` without leading and trailing C0 controls and spaces — the URL Standard's first step — or
 * `rel` itself when it has none (then callers do not retry the fast path).
 */
function trimC0(rel: string): string {
  let a = 0;
  let b = rel.length;
  while (a < b && rel.charCodeAt(a) <= 0x20) a++;
  while (b > a && rel.charCodeAt(b - 1) <= 0x20) b--;
  return a === 0 && b === rel.length ? rel : rel.slice(a, b);
}

function isAlpha(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90);
}

/**
 * Fast parse of `scheme://authority[path][?query]` from `rel[start..end)` (start = authority).
 * Handles plain DNS names only; returns NOT_HANDLED for anything the URL Standard's host parser
 * might treat specially (IPv4 number forms, `xn--` labels, empty labels, userinfo, odd ports).
 */
/** Host parsed by the last successful fastAuthority call (saves re-slicing it out of the URL). */
let authorityHost = '';
/**
 * Direct-mapped cache of raw hosts (HOST_CHAR only) that passed the checks, with their lower-case
 * form, so a link to a host seen before skips the checks without slicing the host out of the link
 * (a page links to few hosts, a crawl revisits the same ones). The slot is a hash of the raw host
 * computed during the authority scan; a slot holds the last host that hashed to it. Bound:
 * ACCEPTED_SLOTS pairs of short strings.
 */
const ACCEPTED_SLOTS = 1024;
const acceptedRaw: string[] = new Array<string>(ACCEPTED_SLOTS).fill('');
const acceptedLower: string[] = new Array<string>(ACCEPTED_SLOTS).fill('');

/**
 * Lower-case form of `rawHost` (letters, digits, '-', '.' only) when the fast path may take it as is,
 * or null: empty labels, a digit-led last label (the URL Standard's "ends in a number" rule makes
 * the host an IPv4 address), `xn--` labels (need Punycode validation) and over-long names are left
 * to the reference parser. Depends on the string only.
 */
function checkHost(rawHost: string): string | null {
  const host = rawHost.toLowerCase();
  const hl = host.length;
  if (host.charCodeAt(0) === 46 || host.charCodeAt(hl - 1) === 46 || host.indexOf('..') >= 0) return null;
  const lastDot = host.lastIndexOf('.');
  const lc = host.charCodeAt(lastDot + 1);
  if (lc >= 48 && lc <= 57) return null;
  if (host.startsWith('xn--') || host.indexOf('.xn--') >= 0) return null;
  if (!hostFitsDns(host)) return null;
  return host;
}

/**
 * `http(s)://` + authority + path + query of `rel[start..end)` (start = authority), or a non-URL
 * outcome. `knownRaw` (with its checked lower-case form `knownHost`) is a raw host the caller has
 * already checked, usually the base's: a link that starts with it, followed by '/', '?' or the end,
 * skips the scan of the authority.
 */
function fastAuthority(rel: string, start: number, end: number, q: number, dot: number, https: boolean, o: CompiledOptions,
  asIs: boolean, escapesDone: boolean, knownRaw: string, knownHost: string): FastResult {
  let authEnd: number;
  let colon = -1;
  let rawHost: string;
  let host: string;
  const kl = knownRaw.length;
  const ke = start + kl;
  let kc: number;
  // `indexOf(x, start) === start` rather than `startsWith(x, start)`: the same answer, and ~2x
  // cheaper on the sliced strings an HTML parser hands over (Node 20).
  if (kl > 0 && (ke === end || (kc = rel.charCodeAt(ke)) === 47 || kc === 63) && rel.indexOf(knownRaw, start) === start) {
    // Same result as the scan below: knownRaw holds HOST_CHARs only, and what follows ends the host.
    authEnd = ke;
    rawHost = knownRaw;
    host = knownHost;
  } else {
    let k = start;
    let hash = 0;
    for (; k < end; k++) {
      const c = rel.charCodeAt(k);
      if (c === 47 || c === 63) break; // '/' or '?'
      if (c === 58) {
        if (colon >= 0) return NOT_HANDLED;
        colon = k;
      } else if (colon < 0) {
        if (HOST_CHAR[c] !== 1) return NOT_HANDLED;
        hash = (Math.imul(hash, 31) + c) | 0;
      } else if (c < 48 || c > 57) {
        return NOT_HANDLED;
      }
    }
    authEnd = k;
    const hostEnd = colon >= 0 ? colon : authEnd;
    if (hostEnd === start) return NOT_HANDLED;
    const slot = (hash ^ (hash >>> 10)) & (ACCEPTED_SLOTS - 1);
    const cached = acceptedRaw[slot]!;
    if (cached.length === hostEnd - start && cached.length > 0 && rel.indexOf(cached, start) === start) {
      // A host accepted before: the checks depend on the host string only.
      rawHost = cached;
      host = acceptedLower[slot]!;
    } else {
      // Copies (unpinned): a slice of the link would keep the whole page text alive in the cache.
      rawHost = unpinned(rel.slice(start, hostEnd));
      const checked = checkHost(rawHost);
      if (checked === null) return NOT_HANDLED;
      acceptedRaw[slot] = rawHost;
      acceptedLower[slot] = checked;
      host = checked;
    }
  }
  // The port's value from its digits (checked 0-9 by the scan): no slice, no number-to-string, and
  // its text is only built (`port`) when the URL is assembled below.
  let portNum = -1; // -1: no port, or the scheme's default
  let portAsIs = true;
  if (colon >= 0) {
    const digits = authEnd - colon - 1;
    if (digits > 5) return NOT_HANDLED;
    portAsIs = false; // ':' alone, or a default port: the canonical URL has no port
    if (digits > 0) {
      let p = 0;
      for (let k = colon + 1; k < authEnd; k++) p = p * 10 + rel.charCodeAt(k) - 48;
      if (p > 65535) return NOT_HANDLED;
      if (p !== (https ? 443 : 80)) {
        portNum = p;
        portAsIs = digits === 1 || rel.charCodeAt(colon + 1) !== 48; // ':' + p is the link's text: no leading zeros
      }
    }
  }
  const pathEnd = q >= 0 ? q : end;
  const hasPath = authEnd < pathEnd; // then rel[authEnd] === '/'
  if (dot >= 0 && dot < authEnd) dot = rel.indexOf('/.', authEnd); // (a host cannot hold '/.'; kept exact anyway)
  const dotFree = !hasPath || dot < 0 || dot >= pathEnd;
  // Already canonical (lower-case `http(s)://`, lower-case host, canonical port, a path with no dot
  // segment): the URL is the link itself, minus fragment and empty query — no string is built.
  if (asIs && hasPath && dotFree && portAsIs && !o.strip && host === rawHost) {
    const stop = q === end - 1 ? q : end;
    if (stop > o.maxLength) return TOO_LONG;
    authorityHost = host;
    return stop === rel.length ? rel : rel.slice(0, stop);
  }
  const prefix = (https ? 'https://' : 'http://') + host + (portNum < 0 ? '' : ':' + portNum);
  const path = !hasPath ? '/' : dotFree ? rel.slice(authEnd, pathEnd) : removeDotSegments(rel.slice(authEnd, pathEnd));
  const url = finish(prefix, path, q >= 0 ? rel.slice(q + 1, end) : null, o, escapesDone);
  if (url === null) return TOO_LONG;
  authorityHost = host;
  return url;
}

/**
 * Resolves and canonicalizes links against one base URL; create one per fetched page (after
 * `<base href>` is known) and call `resolve` for every extracted link value.
 *
 * Memory: the resolver holds the base's parts only (a few strings).
 */
export class LinkResolver {
  /** Canonical base URL, or null when the base is absent or not a canonicalizable http(s) URL. */
  readonly base: string | null;
  /** Why the base was refused (undefined when `base` is set or no base was given). */
  readonly baseReason: UrlRejectReason | undefined;
  private readonly rawBase: string | undefined;
  private readonly o: CompiledOptions;
  /** Relative links may use the fast path (base parsed, and its parts are fast-path compatible). */
  private readonly fastRelative: boolean;
  private readonly https: boolean;
  private readonly origin: string; // scheme://[userinfo@]host[:port] of the base
  private readonly path: string; // canonical base path
  private readonly dir: string; // base path up to and including its last '/'
  private readonly host: string; // host of the base ('' without one)
  /** The base's host when it passes the fast path's host checks (then links naming it skip them), else ''. */
  private readonly knownRaw: string;
  private readonly originPath: string; // origin + path
  // dirs[i] = base directory i levels up (dirs[0] = dir, last = '/'); originDirs[i] = origin + dirs[i].
  // Bound: one entry per base path segment.
  private readonly dirs: string[] = [];
  private readonly originDirs: string[] = [];
  /**
   * Host of the URL the last successful `resolve`/`resolveDetailed` returned (= hostOf(url)). For
   * links on the base's host it is the same string object every time, so Map lookups keyed by it
   * (PLD cache, politeness tables) hit V8's cached string hash.
   */
  lastHost = '';
  // resolveWithKeys' memo: host and PLD keys of the last host seen (links of a page share hosts).
  private keyHost: string | null = null;
  private readonly hostKeys = new Uint32Array(4);

  constructor(base?: string, opts?: CanonicalizeOptions) {
    const o = compileOptions(opts);
    this.o = o;
    this.rawBase = base;
    this.origin = '';
    this.path = '/';
    this.dir = '/';
    this.host = '';
    this.knownRaw = '';
    this.originPath = '';
    this.https = false;
    this.fastRelative = false;
    this.base = null;
    this.baseReason = undefined;
    if (base === undefined) return;
    // A plain absolute base (the crawler's page URLs are canonical already) is parsed by the fast
    // path of a base-less resolver, which is property-tested to equal the reference path. It must
    // hold no '%' (then the raw WHATWG path has no stray '%') and no '/.' (then the raw path has no
    // dot segment that Node 20's parser might leave unresolved, see below).
    const quick = o.strip || base.indexOf('/.') >= 0 || base.indexOf('%') >= 0 ? NOT_HANDLED : baseParser(o, opts).fast(base);
    const fastBase = typeof quick === 'string';
    let canon: string;
    let raw = '';
    if (fastBase) {
      canon = quick;
    } else {
      const r = canonicalizeSlow(base, undefined, o);
      raw = lastWhatwgPath(); // = new URL(base).pathname when r.url !== null
      if (r.url === null) {
        this.baseReason = r.reason;
        return;
      }
      canon = r.url;
    }
    this.base = canon;
    this.https = canon.charCodeAt(4) === 115; // 'https:' vs 'http:'
    const pathStart = canon.indexOf('/', this.https ? 8 : 7);
    const q = canon.indexOf('?', pathStart);
    this.origin = canon.slice(0, pathStart);
    this.path = q < 0 ? canon.slice(pathStart) : canon.slice(pathStart, q);
    this.dir = this.path.slice(0, this.path.lastIndexOf('/') + 1);
    this.host = hostOf(canon);
    this.knownRaw = checkHost(this.host) === this.host ? this.host : '';
    this.originPath = this.origin + this.path;
    for (let d = this.dir; ; d = d.slice(0, d.lastIndexOf('/', d.length - 2) + 1)) {
      this.dirs.push(d);
      this.originDirs.push(this.origin + d);
      if (d.length <= 1) break;
    }
    // Relative resolution on the canonical base equals resolution on the WHATWG base only if the
    // base path had no stray '%' (which blocks decoding of the whole path) and session-id
    // stripping did not change its segments. Otherwise every link takes the reference path.
    if (fastBase) {
      // Parsed by the fast path: no '%', no '/.', no session-id stripping (o.strip is false).
      this.fastRelative = true;
    } else {
      const norm = normalizePercent(raw);
      const strayPercent = raw.indexOf('%') >= 0 && /%(?![0-9A-Fa-f]{2})/.test(raw);
      // Node 20 (ada) can leave dot segments in the base path (`/a//.b/..`, docs/url.md); the
      // reference path then resolves links against that raw path, and so must we: fast relative
      // resolution only when the raw path has none.
      this.fastRelative = !strayPercent && removeDotSegments(raw) === raw && (!o.strip || stripPathSessionIds(norm, o) === norm);
    }
  }

  /**
   * The resolver for a fetched page: `<base href>` (if any) resolved against the page URL, as a
   * browser does; a base href that does not parse or is not http(s) is ignored (the page URL is
   * used), since a crawler cannot resolve links against `javascript:` or `data:` anyway.
   */
  static forPage(pageUrl: string, baseHref?: string | null, opts?: CanonicalizeOptions): LinkResolver {
    if (baseHref !== undefined && baseHref !== null) {
      let resolved: URL | null = null;
      try {
        resolved = new URL(baseHref, pageUrl);
      } catch {
        resolved = null;
      }
      if (resolved !== null && (resolved.protocol === 'http:' || resolved.protocol === 'https:')) {
        return new LinkResolver(resolved.href, opts);
      }
    }
    return new LinkResolver(pageUrl, opts);
  }

  /** The canonical URL of `rel` resolved against the base, or null (see `resolveDetailed`). */
  resolve(rel: string): string | null {
    if (rel.length > this.o.maxLength * 8) return null;
    let f = this.fast(rel);
    if (typeof f === 'string') return f;
    if (f === NOT_HANDLED) f = this.fastTrimmed(rel);
    if (typeof f === 'string') return f;
    if (f === TOO_LONG || f === SCHEME) return null;
    const url = canonicalizeSlow(rel, this.rawBase, this.o).url;
    if (url !== null) this.lastHost = hostOf(url);
    return url;
  }

  /**
   * `resolve`, plus the three DRUM keys of the result written to out[offset..offset+6):
   * URL key (hi, lo), host key (hi, lo), PLD key (hi, lo) — exactly urlFingerprint / hostKeyInto /
   * pldKeyInto (docs/url.md). Host and PLD keys are memoized for runs of links on one host.
   * Nothing is written when the result is null.
   */
  resolveWithKeys(rel: string, out: Uint32Array, offset: number): string | null {
    const url = this.resolve(rel);
    if (url === null) return null;
    fingerprintInto(url, out, offset);
    const host = this.lastHost;
    const k = this.hostKeys;
    if (host !== this.keyHost) {
      fingerprintInto(host, k, 0);
      fingerprintInto(pldOrHost(host), k, 2);
      this.keyHost = host;
    }
    out[offset + 2] = k[0]!;
    out[offset + 3] = k[1]!;
    out[offset + 4] = k[2]!;
    out[offset + 5] = k[3]!;
    return url;
  }

  /** Like `resolve`, with the reason for a null. */
  resolveDetailed(rel: string): Detailed {
    if (rel.length > this.o.maxLength * 8) return reject('too-long');
    let f = this.fast(rel);
    if (f === NOT_HANDLED) f = this.fastTrimmed(rel);
    if (typeof f === 'string') return { url: f };
    if (f === TOO_LONG) return reject('too-long');
    if (f === SCHEME) return reject('scheme');
    const r = canonicalizeSlow(rel, this.rawBase, this.o);
    if (r.url !== null) this.lastHost = hostOf(r.url);
    return r;
  }

  /** The reference path only (no fast path); exported for tests and benchmarks. */
  resolveReference(rel: string): Detailed {
    return canonicalizeSlow(rel, this.rawBase, this.o);
  }

  private dirUp(pops: number): string {
    const a = this.dirs;
    return a[pops < a.length ? pops : a.length - 1]!;
  }

  /**
   * After the fast path declined `rel`: the fast path on it without leading/trailing C0 controls
   * and spaces (`href=" page.html "`) — WHATWG strips them before parsing, so the result is the same
   * URL. Needs a non-empty rest; tabs and newlines inside still go to the reference path.
   */
  private fastTrimmed(rel: string): FastResult {
    const n = rel.length;
    if (n === 0 || (rel.charCodeAt(0) > 0x20 && rel.charCodeAt(n - 1) > 0x20)) return NOT_HANDLED;
    const t = trimC0(rel);
    return t.length === 0 ? NOT_HANDLED : this.fast(t);
  }

  private fast(rel: string): FastResult {
    const n = rel.length;
    // Native regex scans (irregexp beats a charCodeAt loop, notably on the sliced strings an HTML
    // parser hands over) find, in one pass for most links: the fragment or first unsafe character
    // (`end`), the scheme's colon (`j`), the query (`q`) and the first '/.' of the path (`dot`).
    let end = n;
    let j = -1; // end of the scheme, when rel starts with `scheme:`
    let q = -1;
    let dot = -1;
    let colonSeen = false;
    let pct = false; // the link holds percent-escapes (all well-formed): normalize them
    let re = SCAN_G;
    re.lastIndex = 0;
    while (re.test(rel)) {
      const li = re.lastIndex;
      const p = li - 1;
      const c = rel.charCodeAt(p); // (charCodeAt is not free on sliced strings: read each char once)
      if (c === 46) {
        // The first '/.' (a one-character match never ends in '.', which is safe); later ones do
        // not matter, so the scan goes on without looking for them.
        dot = li - 2;
        re = SCAN_NODOT_G;
        re.lastIndex = li;
        continue;
      }
      if (c === 58) {
        // rel is `scheme:…` when everything before its first colon is a scheme (letter, then
        // letters, digits, + - .); a later colon is plain path or query text.
        if (!colonSeen && isAlpha(rel.charCodeAt(0))) {
          let k = 1;
          while (k < p && SCHEME_CHAR[rel.charCodeAt(k)] === 1) k++;
          if (k === p) j = p;
        }
        colonSeen = true;
        continue;
      }
      if (c === 37) {
        // A percent-escape, copied verbatim by WHATWG and normalized by finish(). A stray '%' (the
        // stray rule works per component, against the raw base path) and '%2e' in the path (WHATWG
        // reads `%2e` segments as dot segments) take the reference path.
        const h1 = rel.charCodeAt(p + 1);
        if (!isHex(h1) || !isHex(rel.charCodeAt(p + 2)) || (h1 === 50 && (rel.charCodeAt(p + 2) | 32) === 101)) return NOT_HANDLED;
        pct = true;
        continue;
      }
      if (c === 63) {
        // The query: from here on only an unsafe character, an escape or the fragment matters.
        q = p;
        UNSAFE_G.lastIndex = p + 1;
        while (UNSAFE_G.test(rel)) {
          const b = UNSAFE_G.lastIndex - 1;
          const cb = rel.charCodeAt(b);
          if (cb === 37 && isHex(rel.charCodeAt(b + 1)) && isHex(rel.charCodeAt(b + 2))) {
            pct = true;
            continue;
          }
          if (cb !== 35) return NOT_HANDLED;
          end = b;
          break;
        }
        break;
      }
      if (c !== 35) return NOT_HANDLED;
      end = p; // the fragment is dropped, whatever it contains
      break;
    }
    const hasBase = this.base !== null;
    if (end === 0) {
      // '' or '#…': the base itself.
      if (!hasBase) return NOT_HANDLED;
      this.lastHost = this.host;
      return this.base!;
    }
    const c0 = rel.charCodeAt(0);
    if (j >= 0) return this.fastAbsolute(rel, j, end, q, dot, pct, c0);
    if (!hasBase || !this.fastRelative) return NOT_HANDLED;
    return this.fastRelativeLink(rel, c0, end, q, dot, pct);
  }

  /** fast() for a link that starts with `scheme:` (j: its colon); the scan's marks as in fast(). */
  private fastAbsolute(rel: string, j: number, end: number, q: number, dot: number, pct: boolean, c0: number): FastResult {
    const n = rel.length;
    // 'http' / 'https' compared case-insensitively without slicing (| 32 lower-cases letters).
    let isHttp = false;
    let lower = false;
    if (j === 4 || j === 5) {
      const c1 = rel.charCodeAt(1), c2 = rel.charCodeAt(2), c3 = rel.charCodeAt(3);
      const c4 = j === 5 ? rel.charCodeAt(4) : 115;
      isHttp = (c0 | 32) === 104 && (c1 | 32) === 116 && (c2 | 32) === 116 && (c3 | 32) === 112 && (c4 | 32) === 115;
      lower = c0 === 104 && c1 === 116 && c2 === 116 && c3 === 112 && c4 === 115;
    }
    if (isHttp) {
      // Only the plain `http://host` form; `http:g`, `http:/g`, `http:///g` have special
      // WHATWG meanings that the reference parser handles.
      if (j + 3 < end && rel.charCodeAt(j + 1) === 47 && rel.charCodeAt(j + 2) === 47 && rel.charCodeAt(j + 3) !== 47) {
        // As-is only when the scheme is already lower-case (then rel[0..j+3) is canonical).
        const f = fastAuthority(rel, j + 3, end, q, dot, j === 5, this.o, lower && !pct, !pct, this.knownRaw, this.host);
        if (typeof f === 'string') this.lastHost = authorityHost;
        return f;
      }
      return NOT_HANDLED;
    }
    // Other special schemes can fail to parse (reason 'unparseable'); leave them to WHATWG.
    const scheme = rel.slice(0, j).toLowerCase();
    if (scheme === 'ftp' || scheme === 'ws' || scheme === 'wss' || scheme === 'file') return NOT_HANDLED;
    // A non-special scheme not followed by '/' is an opaque-path URL, which never fails to
    // parse (mailto:, javascript:, tel:, data: …): refuse it for its scheme.
    if (j + 1 < n && rel.charCodeAt(j + 1) === 47) return NOT_HANDLED;
    return SCHEME;
  }

  /**
   * fast() for a scheme-relative (`//host…`), absolute-path, query-only or document-relative link
   * against a base that allows the fast path; the scan's marks as in fast().
   */
  private fastRelativeLink(rel: string, c0: number, end: number, q: number, dot: number, pct: boolean): FastResult {
    const n = rel.length;
    if (c0 === 47 && rel.charCodeAt(1) === 47) {
      // '//host…': scheme-relative; '///…' is left to WHATWG (slashes are skipped there).
      if (end > 2 && rel.charCodeAt(2) !== 47) {
        const f = fastAuthority(rel, 2, end, q, dot, this.https, this.o, false, !pct, this.knownRaw, this.host);
        if (typeof f === 'string') this.lastHost = authorityHost;
        return f;
      }
      return NOT_HANDLED;
    }
    const pathEnd = q >= 0 ? q : end;
    // Leading './' and '../' of a document-relative link walk the (canonical, dot-free) base
    // directory: `pops` directories up.
    let k = 0;
    let pops = 0;
    if (c0 !== 47 && c0 !== 63) {
      while (rel.charCodeAt(k) === 46) {
        const c1 = rel.charCodeAt(k + 1);
        if (c1 === 47) k += 2;
        else if (c1 === 46 && rel.charCodeAt(k + 2) === 47) {
          k += 3;
          pops++;
        } else break;
      }
    }
    if (!this.o.strip && !pct) {
      // Direct assembly, the common case: base prefix + the link's own path and query in one slice,
      // when no dot segment is left in the path (escapes need no work: no '%' here, canonical base).
      // (A '/.' inside the leading './' '../' run is not in the rest of the path: look again.)
      if (dot >= 0 && dot < k) dot = rel.indexOf('/.', k);
      if (rel.charCodeAt(k) !== 46 && (dot < 0 || dot >= pathEnd)) {
        const dirIdx = pops < this.originDirs.length ? pops : this.originDirs.length - 1;
        const prefix = c0 === 47 ? this.origin : c0 === 63 ? this.originPath : this.originDirs[dirIdx]!;
        const stop = q === end - 1 ? q : end; // an empty query is dropped
        if (prefix.length + stop - k > this.o.maxLength) return TOO_LONG;
        this.lastHost = this.host;
        return prefix + (k === 0 && stop === n ? rel : rel.slice(k, stop));
      }
    }
    let path: string;
    const query = q >= 0 ? rel.slice(q + 1, end) : null;
    if (c0 === 63) path = this.path;
    else if (c0 === 47) path = removeDotSegments(pathEnd === n ? rel : rel.slice(0, pathEnd));
    else {
      const d = this.dirUp(pops);
      const rest = k === 0 && pathEnd === n ? rel : rel.slice(k, pathEnd);
      path = rest.charCodeAt(0) === 46 || rest.indexOf('/.') >= 0 ? removeDotSegments(d + rest) : d + rest;
    }
    const url = finish(this.origin, path, query, this.o, !pct);
    if (url === null) return TOO_LONG;
    this.lastHost = this.host;
    return url;
  }
}

const noBaseResolvers = new WeakMap<CompiledOptions, LinkResolver>();

/** The base-less resolver of an options object (absolute links only; also parses bases). */
export function baseParser(o: CompiledOptions, opts: CanonicalizeOptions | undefined): LinkResolver {
  let r = noBaseResolvers.get(o);
  if (r === undefined) {
    r = new LinkResolver(undefined, opts);
    noBaseResolvers.set(o, r);
  }
  return r;
}
