/**
 * Crawler-trap heuristics on canonical URLs, for the frontier to drop or deprioritize a URL.
 *
 * - Repeated segment: a path segment occurring `maxRepeatedSegment` (3) or more times, e.g.
 *   `/a/b/a/b/a/b/` — the symbolic-link and relative-link loops that KSpider and Heritrix
 *   (PathologicalPathDecideRule: more than 2 repetitions) detect. Occurrences anywhere in the
 *   path count, not only consecutive ones, because link loops interleave (`/a/b/a/b/a/`).
 * - Path depth: more than `maxPathDepth` (20) segments — Heritrix' TooManyPathSegmentsDecideRule
 *   default; calendars and session paths grow without end.
 * - Query parameters: more than `maxQueryParams` (16) `&`-separated non-empty pairs — faceted
 *   search pages combine filters without end.
 * - Length: more than `maxUrlLength` (2048) characters — the canonicalizer's default limit, also
 *   a common server limit.
 * A limit set to 0 or Infinity disables that check (0 for counts would reject everything, so it
 * is read as "off").
 */
export interface TrapLimits {
  /** A segment occurring this many times or more is a trap. @default 3 */
  maxRepeatedSegment?: number;
  /** More path segments than this is a trap. @default 20 */
  maxPathDepth?: number;
  /** More query parameters than this is a trap. @default 16 */
  maxQueryParams?: number;
  /** A longer URL is a trap. @default 2048 */
  maxUrlLength?: number;
}

export type TrapReason = 'repeated-segment' | 'path-depth' | 'query-params' | 'too-long';

export const DEFAULT_TRAP_LIMITS: Readonly<Required<TrapLimits>> = Object.freeze({
  maxRepeatedSegment: 3,
  maxPathDepth: 20,
  maxQueryParams: 16,
  maxUrlLength: 2048,
});

function lim(v: number | undefined, d: number): number {
  if (v === undefined) return d;
  return v <= 0 ? Infinity : v;
}

/** The first trap rule `canonicalUrl` breaks, or null. Cheap: one pass over the path. */
export function trapCheck(canonicalUrl: string, limits?: TrapLimits): TrapReason | null {
  const maxLen = lim(limits?.maxUrlLength, DEFAULT_TRAP_LIMITS.maxUrlLength);
  if (canonicalUrl.length > maxLen) return 'too-long';
  const maxRep = lim(limits?.maxRepeatedSegment, DEFAULT_TRAP_LIMITS.maxRepeatedSegment);
  const maxDepth = lim(limits?.maxPathDepth, DEFAULT_TRAP_LIMITS.maxPathDepth);
  const maxParams = lim(limits?.maxQueryParams, DEFAULT_TRAP_LIMITS.maxQueryParams);

  const pathStart = canonicalUrl.indexOf('/', canonicalUrl.charCodeAt(4) === 58 ? 7 : 8);
  if (pathStart < 0) return null;
  const q = canonicalUrl.indexOf('?', pathStart);
  const pathEnd = q < 0 ? canonicalUrl.length : q;

  // Depth = number of '/' in the path (`/` is depth 1, `/a/b` depth 2, `/a/b/` depth 3).
  let depth = 0;
  for (let i = pathStart; i < pathEnd; i++) if (canonicalUrl.charCodeAt(i) === 47) depth++;
  if (depth > maxDepth) return 'path-depth';

  if (depth >= maxRep && maxRep !== Infinity && repeatedSegment(canonicalUrl, pathStart, pathEnd, maxRep)) return 'repeated-segment';

  if (q >= 0 && maxParams !== Infinity) {
    let params = 0;
    let pairStart = q + 1;
    const n = canonicalUrl.length;
    for (let i = pairStart; i <= n; i++) {
      if (i === n || canonicalUrl.charCodeAt(i) === 38) {
        if (i > pairStart) params++;
        pairStart = i + 1;
      }
    }
    if (params > maxParams) return 'query-params';
  }
  return null;
}

/**
 * Segment bounds of the path being checked (start, end pairs). Bound: grows to the most segments
 * one checked path had (≤ half the URL length limit).
 */
let SEG = new Int32Array(2 * 32);
/** Up to this many segments they are compared pair by pair; deeper paths are counted in a Map. */
const PAIRWISE_MAX = 32;

/**
 * A non-empty path segment of url[pathStart..pathEnd) occurs maxRep times or more. Up to
 * PAIRWISE_MAX segments (the default depth limit is 20) the segments are compared in place, pair
 * by pair — most paths have a handful, and a Map plus a string per segment cost more than the
 * comparisons (this runs once per followed link in the parse worker); deeper paths use a Map.
 */
function repeatedSegment(url: string, pathStart: number, pathEnd: number, maxRep: number): boolean {
  let m = 0;
  let segStart = pathStart + 1;
  for (let i = segStart; i <= pathEnd; i++) {
    if (i === pathEnd || url.charCodeAt(i) === 47) {
      if (i > segStart) {
        if (2 * m + 2 > SEG.length) {
          const bigger = new Int32Array(SEG.length * 2);
          bigger.set(SEG);
          SEG = bigger;
        }
        SEG[2 * m] = segStart;
        SEG[2 * m + 1] = i;
        m++;
      }
      segStart = i + 1;
    }
  }
  if (m > 0 && maxRep <= 1) return true;
  if (m > PAIRWISE_MAX) {
    const counts = new Map<string, number>(); // ≤ m entries
    for (let a = 0; a < m; a++) {
      const seg = url.slice(SEG[2 * a]!, SEG[2 * a + 1]!);
      const c = (counts.get(seg) ?? 0) + 1;
      if (c >= maxRep) return true;
      counts.set(seg, c);
    }
    return false;
  }
  for (let a = 0; a < m; a++) {
    const sa = SEG[2 * a]!;
    const len = SEG[2 * a + 1]! - sa;
    let c = 1;
    for (let b = a + 1; b < m; b++) {
      const sb = SEG[2 * b]!;
      if (SEG[2 * b + 1]! - sb !== len) continue;
      let k = 0;
      while (k < len && url.charCodeAt(sa + k) === url.charCodeAt(sb + k)) k++;
      if (k === len && ++c >= maxRep) return true;
    }
  }
  return false;
}
