/**
 * The web graph: a pure function of (seed, params, port). Nothing is materialized — every host,
 * page, link list, robots.txt and DNS answer is computed on demand in O(1) (plus O(links) for a
 * page), from stateless integer hashes (hash.ts). That is why a web of 10^9 pages costs no memory.
 *
 * URL space (the port is part of every absolute URL; it is omitted only when it is 80):
 *   hosts   www.pld<i>.test (host 0) and h<j>.pld<i>.test (1 ≤ j < hostCount(i)); PLD = last two labels
 *           spam farms: www.farm<k>.test, h<j>.farm<k>.test for ANY j < 2^31 (unbounded hosts)
 *   pages   /p/<n>, 0 ≤ n < pageCount(host) (farms: any n < 2^31); `/` redirects to /p/0
 *   traps   /cal/<year>/<month> (calendar), /t/(a/|b/)* (repeated segments), /p/<n>?sid=<hex> (session ids)
 *   hostile /rd/<k>/p/<n> (redirect chains), /loop/p/<n> (redirect loops)
 *   robots  /robots.txt; www.pld0.test/robots-for/<host>.txt (target of the 'redirect' variant)
 *
 * The parts, one concept per file: host-model.ts (hosts, IPs, page counts and kinds, adversities),
 * robots-file.ts (robots.txt files), link-plan.ts (the links of a page, as numbers), render.ts
 * (HTML and trap pages). This file: WebGraph, which is the host model plus the robots oracle, the
 * ground truth of links and reachability, and the rendering entry points.
 */
import { CrawlError } from '../../errors.js';
import type { WebParams } from './params.js';
import { selectGroups, groupsAllow, groupsCrawlDelay } from './robots-model.js';
import { HostModel, parseUint, type HostInfo } from './host-model.js';
import { robotsBody, robotsRulesText } from './robots-file.js';
import { hasSitemaps, robotsSitemapLines, sitemapResponse, type SitemapResponse } from './sitemaps.js';
import { planHost, planLinks, planPath, type LinkTarget } from './link-plan.js';
import { PageRenderer, type RenderedBody } from './render.js';

export { ADVERSITY_COUNT, ipString, parseUint, type HostInfo, type PageKind } from './host-model.js';
export type { LinkTarget } from './link-plan.js';
export type { RenderedBody } from './render.js';

export class WebGraph extends HostModel {
  readonly port: number;
  private readonly renderer: PageRenderer;

  constructor(params: WebParams, seed: number, port: number) {
    super(params, seed);
    this.port = port;
    this.renderer = new PageRenderer(this, port, (host) => this.origin(host));
  }

  /** Origin of a host: `http://name:port` (port omitted when 80). */
  origin(host: string): string {
    return this.port === 80 ? `http://${host}` : `http://${host}:${this.port}`;
  }

  /** Seed URLs: the home pages of www.pld0 … www.pld<seedCount-1>. */
  seeds(): string[] {
    const out: string[] = [];
    for (let i = 0; i < this.params.seedCount; i++) out.push(`${this.origin(`www.pld${i}.test`)}/p/0`);
    return out;
  }

  // ---- robots -----------------------------------------------------------------------------------

  /** The text of the rules this host's robots file carries (for 'rules', 'huge' and the redirect target). */
  robotsRulesText(info: HostInfo): string {
    return robotsRulesText(this.seed, this.params, info);
  }

  /**
   * What the robots oracle says: may `userAgent` fetch `pathAndQuery` on `host`? Policy (the
   * contract's): 4xx/absent/garbage → allow all; 5xx/timeout → disallow all; rules as served
   * (a redirected robots.txt counts with the rules of its target, which are this host's).
   * `/robots.txt` itself is always allowed (RFC 9309 §2.2.2: it is implicitly allowed).
   */
  robotsAllows(host: string | HostInfo, pathAndQuery: string, userAgent: string): boolean {
    const info = typeof host === 'string' ? this.hostInfo(host) : host;
    if (!info || pathAndQuery === '/robots.txt') return true;
    switch (info.robots) {
      case 'server-error':
      case 'timeout':
        return false;
      case 'rules':
      case 'huge':
      case 'redirect':
        return groupsAllow(selectGroups(this.robotsGroups(info), userAgent), pathAndQuery);
      default:
        return true;
    }
  }

  /** Crawl-delay (s) that applies to `userAgent` on this host, if any. */
  crawlDelayFor(host: string | HostInfo, userAgent: string): number | undefined {
    const info = typeof host === 'string' ? this.hostInfo(host) : host;
    if (!info) return undefined;
    return groupsCrawlDelay(selectGroups(this.robotsGroups(info), userAgent));
  }

  /** Body of /robots.txt for the 200 variants ('allow-all', 'rules', 'huge', 'garbage'). */
  robotsBody(info: HostInfo): Buffer {
    const b = robotsBody(this.seed, this.params, info);
    // A host with sitemaps names its index (src/simweb/model/sitemaps.ts).
    return hasSitemaps(this.seed, this.params, info) ? Buffer.concat([b, Buffer.from(robotsSitemapLines(this.origin(info.name)), 'latin1')]) : b;
  }

  /** A sitemap or sitemap-only page of `info` at `path`, or null (src/simweb/model/sitemaps.ts). */
  sitemapResponse(info: HostInfo, path: string): SitemapResponse | null {
    return hasSitemaps(this.seed, this.params, info) ? sitemapResponse(this.params, info, this.origin(info.name), path) : null;
  }

  // ---- pages ------------------------------------------------------------------------------------

  /** The link targets of /p/n (document order, duplicates included) and the page's base host. */
  pageLinks(info: HostInfo, n: number, sid = 0): { base: string | null; links: LinkTarget[]; tags: number[] } {
    const plan = this.renderer.plan;
    planLinks(this, info, n, sid, plan);
    const links: LinkTarget[] = [];
    const tags: number[] = [];
    for (let t = 0; t < plan.n; t++) {
      links.push({ host: planHost(this, plan, t), path: planPath(plan, t) });
      tags.push(plan.tag[t]!);
    }
    return { base: plan.baseHost < 0 ? null : this.hostName(info.pldIndex, plan.baseHost), links, tags };
  }

  /** Render /p/n (query `sid` only on session-trap hosts). Returns null when the page does not exist. */
  renderPage(info: HostInfo, n: number, sid = 0): RenderedBody | null {
    return this.renderer.renderPage(info, n, sid);
  }

  /** Calendar trap page /cal/<y>/<m>: links to the previous and next month and the next year. */
  renderCalendar(info: HostInfo, y: number, m: number): RenderedBody {
    return this.renderer.renderCalendar(info, y, m);
  }

  /** Repeated-segment trap page under /t/: relative links that append segments forever. */
  renderRepeat(path: string): RenderedBody {
    return this.renderer.renderRepeat(path);
  }

  /** Parse a session id query (`sid=<8 hex>`); -1 when the query is not exactly that. */
  parseSid(query: string): number {
    if (!/^sid=[0-9a-f]{8}$/.test(query)) return -1;
    return parseInt(query.slice(4), 16) | 0;
  }

  // ---- ground truth -------------------------------------------------------------------------------

  /**
   * Ground truth for small webs: the canonical URLs (lower-case host, port kept unless 80, no
   * fragment) that answer 200 with content, reachable from `seeds` by following links and redirects,
   * for a crawler that resolves names through simweb's DNS and (if `respectRobots`) obeys robots.txt
   * as `userAgent` with the contract's policy (4xx → allow all; 5xx/timeout → disallow all).
   *
   * Excluded by design (they are infinite or give no page): spam farms, trap URLs (/cal/, /t/,
   * ?sid=), hosts whose DNS fails, and hosts whose behaviour never yields a page ('reset',
   * 'no-response', 'too-many-requests', 'server-error', 'bomb', 'huge-body', 'redirect-loop').
   * Pages of 'wrong-type' and 'no-type' hosts are counted (they answer 200) but not expanded.
   * Throws CRAWL_SIMWEB_TOO_BIG beyond `maxPages`.
   */
  reachable(seeds: readonly string[], opts: { userAgent: string; respectRobots?: boolean; maxPages?: number }): Set<string> {
    const respect = opts.respectRobots ?? true;
    const maxPages = opts.maxPages ?? 1_000_000;
    const seen = new Set<string>();
    const out = new Set<string>();
    const queue: Array<[string, string]> = [];
    const push = (host: string, path: string) => {
      const key = host + '\u0000' + path;
      if (seen.has(key)) return;
      seen.add(key);
      queue.push([host, path]);
    };
    for (const s of seeds) {
      const u = new URL(s);
      push(u.hostname.toLowerCase(), u.pathname + u.search);
    }
    while (queue.length > 0) {
      const [host, path] = queue.pop()!;
      const info = this.hostInfo(host);
      if (!info || info.farm >= 0 || info.dns !== 'ok') continue;
      if (path.startsWith('/cal/') || path.startsWith('/t/') || path.includes('?')) continue;
      if (respect && !this.robotsAllows(info, path, opts.userAgent)) continue;
      const b = info.behaviour;
      if (b === 'reset' || b === 'no-response' || b === 'too-many-requests' || b === 'server-error' || b === 'bomb' ||
        b === 'huge-body' || b === 'redirect-loop') continue;
      if (info.trap === 'session') continue;
      let n: number;
      if (b === 'redirect-chain') {
        const m = /^\/rd\/(\d+)\/p\/(\d+)$/.exec(path);
        if (path.startsWith('/p/')) { push(host, `/rd/${this.params.redirectChainLength - 1}${path}`); continue; }
        if (!m) continue;
        const k = Number(m[1]);
        if (k > 0) { push(host, `/rd/${k - 1}/p/${m[2]}`); continue; }
        n = parseUint(m[2]!);
      } else {
        if (!path.startsWith('/p/')) continue;
        n = parseUint(path.slice(3));
      }
      if (!this.hasPage(info, n)) continue;
      out.add(this.origin(host) + path);
      if (out.size > maxPages) throw new CrawlError('CRAWL_SIMWEB_TOO_BIG', `reachable() exceeded maxPages=${maxPages}`);
      if (b === 'wrong-type' || b === 'no-type') continue;
      for (const l of this.pageLinks(info, n).links) push(l.host, l.path);
    }
    return out;
  }
}
