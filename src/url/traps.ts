/**
 * Crawler-trap heuristics on canonical URLs, for the frontier to drop or deprioritize a URL.
 *
 * - Repeated segments: a block of path segments repeated back to back, making a run whose first
 *   segment occurs `maxRepeatedSegment` (3) times — `/a/a/a/`, `/a/b/a/b/a/`, `/x/y/z/x/y/z/x/` —
 *   the symbolic-link and relative-link loops that KSpider and Heritrix (PathologicalPathDecideRule:
 *   a segment sequence repeated consecutively more than 2 times) detect: a relative link `a/` on a
 *   page under `a/` appends a copy of the block each time it is followed, and interleaved loops
 *   (`/a/b/a/b/a/`) are runs of a longer block. A segment that recurs apart from itself is no loop:
 *   repository hosts, documentation trees and archives repeat names (`/django/django/blob/main/
 *   django/template/context.py`), so only runs count. A run of one purely numeric segment needs one
 *   more occurrence, because dates are written that way (`/10/10/10/` is 10 October 2010).
 *   Empty segments (`//`) are skipped.
 * - Path depth: more than `maxPathDepth` (20) segments — Heritrix' TooManyPathSegmentsDecideRule
 *   default; calendars and session paths grow without end.
 * - Query parameters: more than `maxQueryParams` (16) `&`-separated non-empty pairs — faceted
 *   search pages combine filters without end.
 * - Length: more than `maxUrlLength` (2048) characters — the canonicalizer's default limit, also
 *   a common server limit.
 * A limit set to 0 or Infinity disables that check (0 for counts would reject everything, so it
 * is read as "off"). Session ids are the canonical form's concern (src/url normalize.ts,
 * `stripSessionIds`); budgets (STAR, BEAST) bound what a trap the rules miss can take.
 *
 * Measured on real URLs (test/url/trap-corpus.test.ts): every URL of three real manuals and three
 * public URL lists, 10,580 URLs, no false positive (the rule that counted occurrences anywhere in the
 * path flagged the Python manual's link to Django's source above).
 */
export interface TrapLimits {
  /** A block of segments repeated back to back so that its first segment occurs this many times is a trap. @default 3 */
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

/** Segments a and b of url are equal. */
function same(url: string, a: number, b: number): boolean {
  const sa = SEG[2 * a]!;
  const len = SEG[2 * a + 1]! - sa;
  const sb = SEG[2 * b]!;
  if (SEG[2 * b + 1]! - sb !== len) return false;
  for (let k = 0; k < len; k++) if (url.charCodeAt(sa + k) !== url.charCodeAt(sb + k)) return false;
  return true;
}

/** Segment a is all ASCII digits. */
function numeric(url: string, a: number): boolean {
  for (let k = SEG[2 * a]!; k < SEG[2 * a + 1]!; k++) {
    const c = url.charCodeAt(k);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

/**
 * The non-empty segments of url[pathStart..pathEnd) contain a run of period p whose first segment
 * occurs maxRep times: a factor of (maxRep − 1)·p + 1 segments in which every segment equals the one
 * p before it (p = 1: the same segment maxRep times in a row; p = 2: x y x y x for 3). A period-1 run
 * of a numeric segment needs maxRep + 1 (dates). In place, comparing segments by their characters:
 * O(segments²) comparisons at worst, and the default depth limit keeps paths at 20 segments.
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
  // Period p: `run` counts consecutive k with segment k equal to segment k + p; a run of
  // (maxRep − 2)·p + 1 such k spans (maxRep − 1)·p + 1 segments.
  for (let p = 1; (maxRep - 1) * p + 1 <= m; p++) {
    const need = (maxRep - 2) * p + 1;
    let run = 0;
    for (let k = 0; k + p < m; k++) {
      if (!same(url, k, k + p)) {
        run = 0;
        continue;
      }
      run++;
      if (run >= need && !(p === 1 && numeric(url, k) && run < need + 1)) return true;
    }
  }
  return false;
}
