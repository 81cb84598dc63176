/**
 * Fetching robots.txt with RFC 9309 §2.3 access semantics and §2.4 caching:
 *
 *   2xx                      → parse; rules apply (outcome 'ok'); cached ≤ 24 h (`cacheTtlMs`),
 *                              shorter when Cache-Control max-age says so (never below `minTtlMs`)
 *   3xx                      → followed here (unlike page fetches), up to 5 consecutive redirects,
 *                              across hosts; the rules found apply to the ORIGINAL host (§2.3.1.2)
 *   > 5 redirects            → "MAY assume robots.txt is unavailable" (§2.3.1.2): allow all,
 *                              CRAWL_ROBOTS_REDIRECT_LIMIT; a redirect back to a URL of the chain
 *                              (itself included) is a loop, a chain that never ends: the same,
 *                              at once (without asking the loop's servers again)
 *   4xx (not 429)            → unavailable: allow all (§2.3.1.3), CRAWL_ROBOTS_UNAVAILABLE
 *   5xx, 429, timeouts,      → unreachable: complete disallow (§2.3.1.4), or the cached copy passed
 *   network errors, DNS,       as `previous`; CRAWL_ROBOTS_UNREACHABLE; expires after
 *   undecodable body           `unreachableRetryMs` (or the server's Retry-After, if longer) so the
 *                              caller retries. 429 is read as "server busy" (as Google does), not as
 *                              "unavailable": allowing everything to a server that asks us to slow
 *                              down would be the wrong way round.
 *
 * The body cap for robots.txt is the parse limit (512 KiB by default), above the RFC's 500 KiB floor.
 */
// Imported file by file (not via ../fetch/index.js), because fetch/index.ts re-exports fetchRobots.
import type { Fetcher, FetchResult } from './fetcher.js';
import { FETCH_OUTCOMES as F, ROBOTS_OUTCOMES as R } from './error-policy.js';
import type { DnsCache } from '../dns/index.js';
import { ALLOW_ALL, DISALLOW_ALL, compileRobots, parseRobotsTxt, type RobotsRules } from '../robots/rules.js';
import { ROBOTS_DEFAULT_MAX_BYTES } from '../robots/parse.js';

export interface FetchRobotsOptions {
  /** Scheme of the host (default 'http'). */
  scheme?: 'http' | 'https';
  /** Consecutive redirects followed (default 5, the RFC's minimum). */
  maxRedirects?: number;
  /** Resolves hosts reached by a cross-host redirect (default: the Fetcher's own `dns` option). */
  dns?: DnsCache;
  /** Longest time a fetched robots.txt is used, ms (default 24 h, RFC 9309 §2.4). */
  cacheTtlMs?: number;
  /** Shortest, whatever Cache-Control says, ms (default 1 h). */
  minTtlMs?: number;
  /** When to try again after an unreachable robots.txt, ms (default 30 min). */
  unreachableRetryMs?: number;
  /** The last good rules, used instead of complete disallow while robots.txt is unreachable. */
  previous?: RobotsRules;
  /** Parse limit and body cap, bytes (default 512 KiB). */
  maxBytes?: number;
  /** Clock for expiresAt (default Date.now). */
  now?: () => number;
  /**
   * Called (and awaited) before every request, the first and each redirect hop, with the IP the
   * request goes to (undefined when no `dns` was given for a cross-host hop: the Fetcher resolves
   * it). The crawler's politeness guard waits here, so a redirect to another host's server is
   * spaced on that server's IP like any other request (RFC 9309 fetches count per IP).
   */
  beforeRequest?: (req: { url: string; host: string; ip: string | undefined; hop: number }) => Promise<void> | void;
  /** Called with the result of every request, the first and each redirect hop (the crawler archives them). */
  afterResponse?: (res: FetchResult) => void;
}

export interface RobotsFetchOutcome {
  rules: RobotsRules;
  /** 'ok' | CRAWL_ROBOTS_UNAVAILABLE | CRAWL_ROBOTS_UNREACHABLE | CRAWL_ROBOTS_REDIRECT_LIMIT */
  outcome: string;
  /** Status of the last response, if any. */
  status?: number;
  /** When these rules must be refreshed (ms since epoch). */
  expiresAt: number;
  /** The last fetch (its outcome says why robots was unreachable). */
  fetchResult?: FetchResult;
  /** URLs followed by redirects, in order. */
  redirects: string[];
  sitemaps: string[];
}

function maxAgeMs(raw: string[] | undefined): number | undefined {
  if (raw === undefined) return undefined;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() !== 'cache-control') continue;
    const v = raw[i + 1]!.toLowerCase();
    if (/\b(no-store|no-cache)\b/.test(v)) return 0;
    const m = /\bmax-age\s*=\s*"?(\d+)/.exec(v);
    if (m) return Number(m[1]) * 1000;
  }
  return undefined;
}

function isRedirectStatus(s: number | undefined): boolean {
  return s === 301 || s === 302 || s === 303 || s === 307 || s === 308;
}

/** The response's Location (resolved against its URL) names a URL of the chain so far. */
function loopsBack(res: FetchResult, visited: ReadonlySet<string>): boolean {
  const raw = res.rawHeaders;
  if (raw === undefined) return false;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() !== 'location') continue;
    try {
      return visited.has(new URL(raw[i + 1]!.trim(), res.url).href.replace(/#.*$/, ''));
    } catch {
      return false;
    }
  }
  return false;
}

/**
 * Where a host's robots.txt is (RFC 9309 §2.3: "/robots.txt" at the top level of the service, e.g.
 * https://www.example.com/robots.txt); the port is written only when it is not the scheme's default.
 */
export function robotsUrl(scheme: 'http' | 'https', host: string, port: number): string {
  const defaultPort = scheme === 'https' ? 443 : 80;
  return `${scheme}://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}${port === defaultPort ? '' : `:${port}`}/robots.txt`;
}

/** Fetch, parse and compile robots.txt of `host` (served at `ip`:`port`) for `userAgent`. Never rejects. */
export async function fetchRobots(
  fetcher: Fetcher, host: string, ip: string, port: number, userAgent: string, opts: FetchRobotsOptions = {},
): Promise<RobotsFetchOutcome> {
  const now = opts.now ?? Date.now;
  const scheme = opts.scheme ?? 'http';
  const maxRedirects = opts.maxRedirects ?? 5;
  const maxBytes = opts.maxBytes ?? ROBOTS_DEFAULT_MAX_BYTES;
  const cacheTtl = opts.cacheTtlMs ?? 86_400_000;
  const minTtl = Math.min(opts.minTtlMs ?? 3_600_000, cacheTtl);
  const retryMs = opts.unreachableRetryMs ?? 1_800_000;
  let url = robotsUrl(scheme, host, port);
  let curHost = new URL(url).hostname;
  let curIp: string | undefined = ip;
  let curPort: number | undefined = port;
  const redirects: string[] = [];

  const unreachable = (res: FetchResult | undefined): RobotsFetchOutcome => ({
    rules: opts.previous ?? DISALLOW_ALL, outcome: R.UNREACHABLE, status: res?.status,
    expiresAt: now() + Math.max(retryMs, res?.retryAfterMs ?? 0), fetchResult: res, redirects, sitemaps: [],
  });

  const tooMany = (res: FetchResult): RobotsFetchOutcome =>
    ({ rules: ALLOW_ALL, outcome: R.REDIRECT_LIMIT, status: res.status, expiresAt: now() + cacheTtl, fetchResult: res, redirects, sitemaps: [] });
  const visited = new Set<string>([url]);

  for (let hop = 0; ; hop++) {
    if (opts.beforeRequest !== undefined) await opts.beforeRequest({ url, host: curHost, ip: curIp, hop });
    const res = await fetcher.fetch({ url, ip: curIp, port: curPort, maxBodyBytes: maxBytes, acceptContentTypes: null, robots: true });
    opts.afterResponse?.(res);
    // A redirect to itself (the fetcher reports it as a 3xx without a target): a loop.
    if (res.outcome === F.HTTP_3XX && isRedirectStatus(res.status) && loopsBack(res, visited)) return tooMany(res);
    switch (res.outcome) {
      case F.OK: {
        const txt = parseRobotsTxt(res.decoded, { maxBytes });
        const age = maxAgeMs(res.rawHeaders);
        const ttl = Math.max(minTtl, Math.min(cacheTtl, age ?? cacheTtl));
        return {
          rules: compileRobots(txt, userAgent), outcome: R.OK, status: res.status, expiresAt: now() + ttl,
          fetchResult: res, redirects, sitemaps: txt.sitemaps,
        };
      }
      case F.REDIRECT: {
        if (hop >= maxRedirects) return tooMany(res);
        const next = new URL(res.location!);
        if (visited.has(next.href.replace(/#.*$/, ''))) return tooMany(res);
        visited.add(next.href.replace(/#.*$/, ''));
        redirects.push(next.href);
        url = next.href;
        if (next.hostname !== curHost) {
          curHost = next.hostname;
          if (opts.dns === undefined) {
            curIp = undefined; // the Fetcher resolves it with its own DnsCache (or reports CRAWL_FETCH_DNS)
          } else {
            const d = await opts.dns.resolve(curHost.startsWith('[') ? curHost.slice(1, -1) : curHost);
            if ('error' in d) return unreachable(res);
            curIp = d.ip;
          }
        }
        curPort = undefined; // the redirect URL's own port
        continue;
      }
      case F.HTTP_4XX:
        return { rules: ALLOW_ALL, outcome: R.UNAVAILABLE, status: res.status, expiresAt: now() + cacheTtl, fetchResult: res, redirects, sitemaps: [] };
      default:
        // 5xx, 429, 3xx without Location, timeouts, resets, connect/TLS errors, undecodable body.
        return unreachable(res);
    }
  }
}
