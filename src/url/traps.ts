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

  if (depth >= maxRep && maxRep !== Infinity) {
    const counts = new Map<string, number>(); // bounded by the path depth (≤ maxPathDepth entries)
    let segStart = pathStart + 1;
    for (let i = segStart; i <= pathEnd; i++) {
      if (i === pathEnd || canonicalUrl.charCodeAt(i) === 47) {
        if (i > segStart) {
          const seg = canonicalUrl.slice(segStart, i);
          const c = (counts.get(seg) ?? 0) + 1;
          if (c >= maxRep) return 'repeated-segment';
          counts.set(seg, c);
        }
        segStart = i + 1;
      }
    }
  }

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
