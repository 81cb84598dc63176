/**
 * Cheap accessors on CANONICAL URLs (output of canonicalizeUrl): the form is known —
 * `http[s]://[userinfo@]host[:port]/path[?query]` — so plain slicing is enough. Behaviour on other
 * strings is unspecified.
 */

/** Index just past `scheme://`. */
function authorityStart(url: string): number {
  return url.charCodeAt(4) === 58 ? 7 : 8; // 'http:' or 'https:'
}

/** End of the authority: the first '/' after `scheme://` (canonical URLs always have a path). */
function authorityEnd(url: string, start: number): number {
  const slash = url.indexOf('/', start);
  return slash < 0 ? url.length : slash;
}

/** Lower-case host of a canonical URL, without port or userinfo (IPv6 keeps its brackets). */
export function hostOf(canonicalUrl: string): string {
  let start = authorityStart(canonicalUrl);
  const end = authorityEnd(canonicalUrl, start);
  const at = canonicalUrl.lastIndexOf('@', end - 1);
  if (at >= start) start = at + 1;
  if (canonicalUrl.charCodeAt(start) === 91) return canonicalUrl.slice(start, canonicalUrl.indexOf(']', start) + 1);
  const colon = canonicalUrl.indexOf(':', start);
  return canonicalUrl.slice(start, colon >= 0 && colon < end ? colon : end);
}

/** Port of a canonical URL as a number (the scheme default when none is written). */
export function portOf(canonicalUrl: string): number {
  let start = authorityStart(canonicalUrl);
  const end = authorityEnd(canonicalUrl, start);
  const at = canonicalUrl.lastIndexOf('@', end - 1);
  if (at >= start) start = at + 1;
  const close = canonicalUrl.charCodeAt(start) === 91 ? canonicalUrl.indexOf(']', start) : start;
  const colon = canonicalUrl.indexOf(':', close);
  if (colon >= 0 && colon < end) return +canonicalUrl.slice(colon + 1, end);
  return canonicalUrl.charCodeAt(4) === 115 ? 443 : 80;
}

/** `scheme://[userinfo@]host[:port]` of a canonical URL. */
export function urlOriginOf(canonicalUrl: string): string {
  return canonicalUrl.slice(0, authorityEnd(canonicalUrl, authorityStart(canonicalUrl)));
}

/** Path and query (`/p?q`) of a canonical URL: what goes on the HTTP request line. */
export function urlPathAndQueryOf(canonicalUrl: string): string {
  const start = authorityStart(canonicalUrl);
  const slash = canonicalUrl.indexOf('/', start);
  return slash < 0 ? '/' : canonicalUrl.slice(slash);
}

/**
 * A copy of `s` that shares no memory with the string it was cut from, for strings kept in
 * long-lived caches. V8 makes `slice`/`substring` results of 13+ characters "sliced strings" that
 * point into their parent, and the parse worker's hosts are slices of link values, themselves
 * slices of the page's decoded text: a cache entry keyed by such a host kept that whole page
 * (~20 KB) alive — up to one page per cached host, tens of MB in the parse worker's old
 * generation (measured: 2,000 pages parsed → +37 MB retained; docs/performance.md, "Parse
 * side"), which the old-generation GC then marks and the RSS carries. `' ' + s` is a cons
 * string; slicing it flattens it into a fresh sequential string first, so the result's parent
 * holds only these characters. (Shorter strings are never slices: V8 copies them.) For cache
 * inserts only — it allocates twice.
 */
export function unpinned(s: string): string {
  return s.length < 13 ? s : (' ' + s).slice(1);
}
