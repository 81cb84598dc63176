/**
 * Canonical octet form shared by patterns and URL paths, so that matching is a plain comparison
 * (RFC 9309 §2.2.2): octets outside printable US-ASCII are percent-encoded (UTF-8), `%xx` escapes of
 * unreserved characters (ALPHA / DIGIT / `-._~`, RFC 3986 §2.3) are decoded (the §2.2.2 table:
 * `/foo/bar/%62%61%7A` matches `/foo/bar/baz`), every other `%xx` has its hex upper-cased, and a
 * `%` that starts no `%xx` escape is written `%25` (so the canonical form is its own canonical form).
 * In URL paths a literal `*` or `$` is written `%2A` / `%24` so that a pattern that spells them
 * with percent-encoding matches them verbatim (§2.2.3), while `*` / `$` in a pattern stay special.
 *
 * Reserved characters (RFC 3986 §2.2) are percent-encoded before comparison where they are data:
 * after the first `?` (the query), the general delimiters `:` `/` `?` `@` `[` `]` are written
 * `%3A` `%2F` `%3F` `%40` `%5B` `%5D` — the §2.2.2 table's row `/foo/bar?baz=https://foo.bar` →
 * `/foo/bar?baz=https%3A%2F%2Ffoo.bar` — on both sides, so a rule and a URL that differ only in
 * how such a character is written match. In the path, `/` stays a segment delimiter and `%2F` stays
 * encoded (a reserved character is not decoded, §2.2.2), so `/a%2Fb` and `/a/b` differ. The query's
 * own separators (`&`, `=`, `;`, `+`, `,` …, the sub-delims) are left as written.
 */

const HEX = '0123456789ABCDEF';
const utf8 = new TextEncoder();

function hexVal(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  return -1;
}

function isUnreserved(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) ||
    c === 0x2d || c === 0x2e || c === 0x5f || c === 0x7e;
}

/** A general delimiter (RFC 3986 §2.2) that is percent-encoded when it appears in the query. */
function isQueryEncoded(b: number): boolean {
  return b === 0x3a || b === 0x2f || b === 0x3f || b === 0x40 || b === 0x5b || b === 0x5d;
}

/** Normalize octets to the canonical form; `urlSide` also escapes `*` and `$`. */
function canonicalOctets(bytes: Uint8Array, urlSide: boolean): string {
  const n = bytes.length;
  // Fast path: printable ASCII without `%`, without `: / ? @ [ ]` in the query (and, on the URL
  // side, without `*` / `$`) is canonical.
  if (n <= 4096) {
    let plain = true;
    let q = false;
    for (let i = 0; i < n; i++) {
      const b = bytes[i]!;
      if (b <= 0x20 || b >= 0x7f || b === 0x25 || (q && isQueryEncoded(b)) || (urlSide && (b === 0x2a || b === 0x24))) { plain = false; break; }
      if (b === 0x3f) q = true;
    }
    if (plain) return String.fromCharCode.apply(null, bytes as unknown as number[]);
  }
  let out = '';
  let inQuery = false;
  for (let i = 0; i < n; i++) {
    const b = bytes[i]!;
    if (inQuery && isQueryEncoded(b)) {
      out += '%' + HEX[b >> 4] + HEX[b & 15];
      continue;
    }
    if (b === 0x3f) inQuery = true; // the first `?` starts the query and stays as written
    if (b === 0x25 /* % */ && i + 2 < n) {
      const h = hexVal(bytes[i + 1]!);
      const l = hexVal(bytes[i + 2]!);
      if (h >= 0 && l >= 0) {
        const v = (h << 4) | l;
        out += isUnreserved(v) ? String.fromCharCode(v) : '%' + HEX[h] + HEX[l];
        i += 2;
        continue;
      }
      out += '%25';
    } else if (b === 0x25) {
      out += '%25'; // a `%` that starts no escape is a literal percent sign: `%25` (RFC 3986 §2.4)
    } else if (b <= 0x20 || b >= 0x7f) {
      out += '%' + HEX[b >> 4] + HEX[b & 15];
    } else if (urlSide && (b === 0x2a || b === 0x24)) {
      out += b === 0x2a ? '%2A' : '%24';
    } else {
      out += String.fromCharCode(b);
    }
  }
  return out;
}

/** A robots.txt pattern (value bytes or string) in canonical form. Google's `MaybeEscapePattern`, plus unreserved decoding. */
export function escapePattern(value: Uint8Array | string): string {
  return canonicalOctets(typeof value === 'string' ? utf8.encode(value) : value, false);
}

/**
 * A URL path(+params+query) in canonical form. Fast path: most crawler URLs are already canonical
 * printable ASCII without `%`, `*`, `$`, or `: / ? @ [ ]` in the query, and are returned as they
 * are (no allocation).
 */
export function canonicalPath(path: string): string {
  const n = path.length;
  let inQuery = false;
  for (let i = 0; i < n; i++) {
    const c = path.charCodeAt(i);
    if (c <= 0x20 || c >= 0x7f || c === 0x25 || c === 0x2a || c === 0x24 || (inQuery && isQueryEncoded(c))) {
      return canonicalOctets(utf8.encode(path), true);
    }
    if (c === 0x3f) inQuery = true;
  }
  return path;
}

/**
 * The part of a URL robots rules are matched against: path, params and query, fragment dropped,
 * `/` when there is no path (Google's `GetPathParamsQuery`; conformance file
 * path_params_query_cases.json). Accepts absolute URLs, scheme-less `host/path` and bare paths.
 */
export function pathParamsQuery(url: string): string {
  let searchStart = 0;
  if (url.length >= 2 && url.charCodeAt(0) === 0x2f && url.charCodeAt(1) === 0x2f) searchStart = 2;
  const earlyPath = firstOf(url, searchStart);
  let protocolEnd = url.indexOf('://', searchStart);
  if (protocolEnd >= 0 && earlyPath >= 0 && earlyPath < protocolEnd) protocolEnd = -1;
  protocolEnd = protocolEnd < 0 ? searchStart : protocolEnd + 3;
  const pathStart = firstOf(url, protocolEnd);
  if (pathStart < 0) return '/';
  const hash = url.indexOf('#', searchStart);
  if (hash >= 0 && hash < pathStart) return '/';
  const pathEnd = hash < 0 ? url.length : hash;
  const p = url.slice(pathStart, pathEnd);
  return url.charCodeAt(pathStart) === 0x2f ? p : '/' + p;
}

/** Index of the first `/`, `?` or `;` at or after `from`, or -1. */
function firstOf(s: string, from: number): number {
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x2f || c === 0x3f || c === 0x3b) return i;
  }
  return -1;
}
