/**
 * Sitemaps in the crawl: which sitemaps to fetch, and what a fetched one adds to the crawl.
 *
 * Discovery (--sitemaps): when a host's robots.txt has been fetched, the sitemaps its `Sitemap:`
 * lines name (at most MAX_ROBOTS_SITEMAPS) — and with `robots+root` also the host's /sitemap.xml —
 * enter URLseen like any link: deduplicated, budgeted by STAR, queued by BEAST, fetched under the
 * host's robots rules and politeness delays, archived in the WARC files and logged in crawl.log.
 *
 * Provenance (crawl.log's via and hop path): a sitemap named by robots.txt is found `via` that
 * robots.txt, an entry of a sitemap (a page or a nested sitemap) `via` that sitemap; each such hop is
 * `M` in the hop path (Heritrix's manifest hop), after the sitemap's own path.
 *
 * A sitemap URL is told from a page by its hop count (FrontierUrl.hops, carried through URLseen's
 * aux and the frontier's records without any other format change): bit 30 marks a sitemap, bits
 * 24–27 its nesting (0 = named by robots.txt or the root one, 1 = listed by an index, …), bits 0–23
 * the hops. A redirect of a sitemap keeps the mark (the target enters with the same hops).
 *
 * A fetched sitemap (2xx) is read by read.ts/parse.ts, entry by entry:
 *   - an index's sitemaps are queued one nesting deeper, up to MAX_NESTING (deeper:
 *     CRAWL_SITEMAP_DEPTH) — the protocol allows no index inside an index; one more level is
 *     tolerated because sites do it;
 *   - a urlset's (or text sitemap's) URLs are queued at the sitemap's hops + 1, unless --max-depth
 *     says the sitemap's hops are already the last level;
 *   - every entry must pass the protocol's location rule (location.ts; CRAWL_SITEMAP_CROSS_HOST)
 *     and the crawl's own admission filter, the same as parsed links (link-scope.ts:
 *     CRAWL_SCOPE_OUT, CRAWL_SCOPE_EXCLUDED, CRAWL_TRAP_URL).
 * Refused entries are logged in crawl.log (`dropped:<code>`) and sitemaps.log; every entry's
 * `lastmod` goes to sitemaps.log (listing-log.ts).
 *
 * RAM: `announcedBy` maps a sitemap URL to the host whose robots.txt named it (the protocol's
 * cross-submission rule needs it when the entries are read): at most ANNOUNCED_MAX entries, all
 * forgotten when full — a forgotten one only makes the rule stricter (its entries on the announcing
 * host must then also lie under the sitemap's directory). After a resume the map starts empty.
 */
import { canonicalizeUrl, hostOf } from '../url/index.js';
import { extendHopPath } from '../frontier/record.js';
import type { LinkScope } from '../config/link-scope.js';
import type { SitemapDiscovery } from '../config/config.js';
import { allowedInSitemap } from './location.js';
import { readSitemap, type SitemapReadSummary } from './read.js';
import type { SitemapListingLog } from './listing-log.js';

const SITEMAP_BIT = 0x4000_0000;
const NEST_SHIFT = 24;
const HOPS_MASK = 0x00ff_ffff;
/** Sitemaps of an index are read to this nesting (robots.txt → index → sitemap → one more index). */
export const MAX_NESTING = 2;
/** `Sitemap:` lines taken from one robots.txt. */
export const MAX_ROBOTS_SITEMAPS = 64;
const ANNOUNCED_MAX = 65_536;

export const isSitemapHops = (h: number): boolean => (h & SITEMAP_BIT) !== 0;
/** The hop count proper (a sitemap's mark removed): what crawl.log shows and --max-depth judges. */
export const plainHops = (h: number): number => h & HOPS_MASK;
export const sitemapNesting = (h: number): number => (h >>> NEST_SHIFT) & 0xf;
export const sitemapHops = (hops: number, nesting: number): number =>
  (SITEMAP_BIT | ((nesting & 0xf) << NEST_SHIFT) | (hops & HOPS_MASK)) >>> 0;

/** The hop-path letter of a URL found through robots.txt's `Sitemap:` lines or a sitemap (Heritrix: manifest). */
export const SITEMAP_HOP = 'M';

export interface SitemapSink {
  /** into URLseen, as a link (hops as given, mark included), found `via` (robots.txt or a sitemap) with hop path `path` */
  submit(url: string, hops: number, via: string, path: string): void;
  /** a refused URL: crawl.log `dropped:<code>` */
  drop(url: string, hops: number, code: string, via: string, path: string): void;
  /** an outcome counter (summary, /status) */
  count(key: string): void;
}

export interface SitemapReadResult {
  summary: SitemapReadSummary;
  /** entries handed to URLseen (urls and nested sitemaps) */
  queued: number;
}

export class SitemapRouter {
  private readonly announcedBy = new Map<string, string>();

  constructor(
    private readonly mode: SitemapDiscovery,
    private readonly scope: LinkScope,
    private readonly maxDepth: number | null,
    private readonly sink: SitemapSink,
    private readonly log: SitemapListingLog,
  ) {}

  private announce(sitemap: string, host: string): void {
    if (this.announcedBy.size >= ANNOUNCED_MAX) this.announcedBy.clear();
    this.announcedBy.set(sitemap, host);
  }

  /**
   * A host's robots.txt was fetched (`robotsUrl`, its `Sitemap:` lines): the sitemaps to fetch enter
   * URLseen. Returns how many were queued.
   */
  fromRobots(host: string, robotsUrl: string, lines: readonly string[]): number {
    if (this.mode === 'off') return 0;
    const want = lines.slice(0, MAX_ROBOTS_SITEMAPS);
    if (this.mode === 'robots+root') want.push('/sitemap.xml');
    let n = 0;
    const seen = new Set<string>();
    for (const raw of want) {
      const url = canonicalizeUrl(raw.trim(), robotsUrl);
      if (url === null || seen.has(url)) continue;
      seen.add(url);
      this.announce(url, host);
      this.sink.submit(url, sitemapHops(0, 0), robotsUrl, SITEMAP_HOP);
      n++;
    }
    return n;
  }

  /**
   * A fetched sitemap's body (as transferred, or content-decoded): its entries into the crawl, found
   * via the sitemap, their hop path the sitemap's (`hopPath`) + M.
   */
  async read(sitemapUrl: string, hops: number, body: Uint8Array, hopPath = ''): Promise<SitemapReadResult> {
    const entryPath = extendHopPath(hopPath, SITEMAP_HOP);
    const nesting = sitemapNesting(hops);
    const plain = plainHops(hops);
    const announcer = this.announcedBy.get(sitemapUrl) ?? null;
    const follow = this.maxDepth === null || plain < this.maxDepth;
    let queued = 0;
    const summary = await readSitemap(body, (e) => {
      const now = new Date();
      const url = canonicalizeUrl(e.loc, sitemapUrl);
      if (url === null) {
        this.log.write(now, sitemapUrl, e.loc, e.lastmod, 'CRAWL_SITEMAP_BAD_URL');
        return;
      }
      const host = hostOf(url);
      const isIndex = e.index;
      const nextHops = isIndex ? sitemapHops(plain, nesting + 1) : plain + 1;
      let code: string | null = null;
      if (!allowedInSitemap(sitemapUrl, url, host, announcer)) code = 'CRAWL_SITEMAP_CROSS_HOST';
      else if (isIndex && nesting + 1 > MAX_NESTING) code = 'CRAWL_SITEMAP_DEPTH';
      else if (!isIndex && !follow) code = 'CRAWL_SITEMAP_MAX_DEPTH';
      else code = this.scope.check(url, host);
      if (code !== null) {
        this.log.write(now, sitemapUrl, e.loc, e.lastmod, code);
        this.sink.count(`dropped:${code}`);
        this.sink.drop(url, plainHops(nextHops), code, sitemapUrl, entryPath);
        return;
      }
      if (isIndex && announcer !== null) this.announce(url, announcer);
      this.log.write(now, sitemapUrl, e.loc, e.lastmod, isIndex ? 'sitemap' : 'queued');
      this.sink.submit(url, nextHops, sitemapUrl, entryPath);
      queued++;
    });
    if (summary.fault !== null) {
      this.log.write(new Date(), sitemapUrl, null, null, summary.fault);
      this.sink.count(`sitemap:${summary.fault}`);
    }
    this.sink.count(`sitemap:${summary.kind}`);
    return { summary, queued };
  }
}
