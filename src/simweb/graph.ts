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
 */
import { h2, h3, h4, hashString, unit, below, zipf } from './hash.js';
import {
  type WebParams, type RobotsVariant, type Behaviour, type DnsVariant, type TrapKind,
  ROBOTS_VARIANTS, BEHAVIOURS, DNS_VARIANTS, TRAP_KINDS,
} from './params.js';
import { type RobotsGroup, selectGroups, groupsAllow, groupsCrawlDelay } from './robots-model.js';
import { CrawlError } from '../errors.js';

// Salts separating the independent random streams.
const S_HOSTS = 0x1001, S_PAGES = 0x1002, S_IP = 0x1003, S_ROBOTS = 0x1004, S_BEHAV = 0x1005, S_DNS = 0x1006,
  S_TRAP = 0x1007, S_PAGE = 0x1008, S_RULES = 0x1009, S_FARM = 0x100a, S_CHARSET = 0x100b, S_FILLER = 0x100c,
  S_SID = 0x100d;

export interface HostInfo {
  name: string;
  /** Registrable domain (last two labels). */
  pld: string;
  /** PLD index i for pld<i>.test, or -1 for a spam farm host. */
  pldIndex: number;
  /** Farm index k for farm<k>.test, or -1. */
  farm: number;
  /** Host number j inside its PLD (0 = www). */
  hostIndex: number;
  ip: string;
  ipIndex: number;
  /** Number of pages /p/0../p/(pages-1); Infinity on spam farms. */
  pages: number;
  robots: RobotsVariant;
  behaviour: Behaviour;
  dns: DnsVariant;
  trap: TrapKind | null;
  /** Crawl-delay (s) our agent's group declares, if any. */
  crawlDelay: number | undefined;
  /** Legacy charset of a 'charset' host and where it is declared. */
  charset: { name: string; where: 'header' | 'meta' | 'both' } | null;
}

export type PageKind = 'html' | 'frameset' | 'text' | 'pdf' | 'image';

/** A rendered body: chunks (filler slices are shared, never copied) and metadata. */
export interface RenderedBody {
  contentType: string;
  chunks: Buffer[];
  length: number;
}

/** One outgoing link as the generator knows it (for ground truth). */
export interface LinkTarget { host: string; path: string; }

const ADVERSITIES: ReadonlyArray<readonly ['robots', RobotsVariant] | readonly ['behaviour', Behaviour] |
  readonly ['dns', DnsVariant] | readonly ['trap', TrapKind]> = [
  ...ROBOTS_VARIANTS.filter((v) => v !== 'allow-all').map((v) => ['robots', v] as const),
  ...BEHAVIOURS.filter((v) => v !== 'normal').map((v) => ['behaviour', v] as const),
  ...DNS_VARIANTS.filter((v) => v !== 'ok').map((v) => ['dns', v] as const),
  ...TRAP_KINDS.map((v) => ['trap', v] as const),
];
/** Number of distinct adversities `coverAll` hands out (to www.pld1 … www.pld<N>). */
export const ADVERSITY_COUNT = ADVERSITIES.length;

const CHARSETS = ['windows-1252', 'iso-8859-1', 'koi8-r', 'windows-1251'] as const;
const WORDS = ('lorem ipsum dolor sit amet crawler frontier budget queue politeness robots server domain link page ' +
  'graph index search spider harvest archive record bucket merge sort disk cache batch delay host address ' +
  'network packet socket stream buffer anchor section paragraph table figure chapter theorem model estimate ' +
  'measure result average uniform random power law degree reputation spam trap calendar session redirect').split(' ');

const FILLER_BYTES = 1 << 20;
const CAP_FACTOR = 12; // page sizes are capped at CAP_FACTOR × mean

export function ipString(k: number): string {
  const n = k + 1; // 127.1.0.1 upward; never 127.0.0.x
  return `127.${1 + (n >>> 16)}.${(n >>> 8) & 255}.${n & 255}`;
}

function parseUint(s: string): number {
  // Canonical decimal only (no leading zeros, no sign), so every number has one spelling.
  if (s.length === 0 || s.length > 10 || (s.length > 1 && s.charCodeAt(0) === 48)) return -1;
  let v = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

function hex8(h: number): string {
  return (h >>> 0).toString(16).padStart(8, '0');
}

export class WebGraph {
  readonly params: Readonly<WebParams>;
  readonly seed: number;
  readonly port: number;
  /** Farm k ← home pages of these PLDs (the farm's tiny in-degree). */
  private readonly farmSources = new Map<number, number[]>();
  private readonly filler: Buffer;
  private readonly fillerLatin: Buffer;
  private readonly hostCache = new Map<string, HostInfo | null>();

  constructor(params: WebParams, seed: number, port: number) {
    this.params = Object.freeze({ ...params });
    this.seed = seed | 0;
    this.port = port;
    for (let k = 0; k < params.spamFarms; k++) {
      for (let t = 0; t < params.spamInLinks; t++) {
        // Sources among the first few PLDs, so that a crawl from the seeds finds the farm soon.
        const src = below(h3(this.seed ^ S_FARM, k, t), Math.min(params.plds, 10));
        const list = this.farmSources.get(src) ?? [];
        if (!list.includes(k)) list.push(k);
        this.farmSources.set(src, list);
      }
    }
    this.filler = this.makeFiller(false);
    this.fillerLatin = this.makeFiller(true);
  }

  // ---- hosts ------------------------------------------------------------------------------------

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

  hostCount(pld: number): number {
    const m = this.params.hostsPerPldMean - 1;
    if (m <= 0) return 1;
    const p = 1 / (m + 1);
    const u = unit(h2(this.seed ^ S_HOSTS, pld));
    const extra = Math.floor(Math.log(1 - u) / Math.log(1 - p));
    return Math.min(this.params.hostsPerPldMax, 1 + extra);
  }

  pageCount(pld: number, j: number): number {
    const { pagesPerHostMin: lo, pagesPerHostMax: hi } = this.params;
    const u = unit(h3(this.seed ^ S_PAGES, pld, j));
    return Math.min(hi, Math.floor(lo * Math.pow(hi / lo, u)));
  }

  hostName(pld: number, j: number): string {
    return j === 0 ? `www.pld${pld}.test` : `h${j}.pld${pld}.test`;
  }

  /** Total number of pages of the (non-farm) web — O(hosts), for docs and benches. */
  totalPages(maxPlds = this.params.plds): number {
    let n = 0;
    for (let i = 0; i < Math.min(maxPlds, this.params.plds); i++) {
      const hc = this.hostCount(i);
      for (let j = 0; j < hc; j++) n += this.pageCount(i, j);
    }
    return n;
  }

  /** Everything simweb knows about a host name, or null when the name is not in the zone. */
  hostInfo(name: string): HostInfo | null {
    let info = this.hostCache.get(name);
    if (info !== undefined) return info;
    info = this.computeHostInfo(name);
    if (this.hostCache.size >= 4096) this.hostCache.clear(); // bounded: at most 4096 entries
    this.hostCache.set(name, info);
    return info;
  }

  /** Enumerate the finite (non-farm) hosts in order pld0 www, pld0 h1, …. */
  *hosts(): Generator<HostInfo> {
    for (let i = 0; i < this.params.plds; i++) {
      const hc = this.hostCount(i);
      for (let j = 0; j < hc; j++) yield this.hostInfo(this.hostName(i, j))!;
    }
  }

  /** First host matching `pred` (scans at most `maxScan` hosts), e.g. `h => h.robots === 'server-error'`. */
  findHost(pred: (h: HostInfo) => boolean, maxScan = 1_000_000): HostInfo | null {
    let n = 0;
    for (const h of this.hosts()) {
      if (pred(h)) return h;
      if (++n >= maxScan) break;
    }
    return null;
  }

  private computeHostInfo(raw: string): HostInfo | null {
    const name = raw.toLowerCase();
    if (!name.endsWith('.test')) return null;
    const labels = name.split('.');
    if (labels.length !== 3) return null;
    const [hl, dl] = labels as [string, string, string];
    let j: number;
    if (hl === 'www') j = 0;
    else if (hl.startsWith('h')) {
      j = parseUint(hl.slice(1));
      if (j < 1) return null;
    } else return null;
    const seed = this.seed;
    const p = this.params;
    if (dl.startsWith('farm')) {
      const k = parseUint(dl.slice(4));
      if (k < 0 || k >= p.spamFarms || j >= 2 ** 31) return null;
      const ipIndex = below(h3(seed ^ S_IP ^ S_FARM, k, j), p.ips);
      return {
        name, pld: `farm${k}.test`, pldIndex: -1, farm: k, hostIndex: j, ip: ipString(ipIndex), ipIndex,
        pages: Infinity, robots: 'allow-all', behaviour: 'normal', dns: 'ok', trap: null, crawlDelay: undefined,
        charset: null,
      };
    }
    if (!dl.startsWith('pld')) return null;
    const i = parseUint(dl.slice(3));
    if (i < 0 || i >= p.plds || j >= this.hostCount(i)) return null;
    const ipIndex = Math.min(p.ips - 1, Math.floor(p.ips * Math.pow(unit(h3(seed ^ S_IP, i, j)), p.ipSkew)));
    let robots: RobotsVariant = 'allow-all';
    let behaviour: Behaviour = 'normal';
    let dns: DnsVariant = 'ok';
    let trap: TrapKind | null = null;
    const clean = i === 0 && j === 0; // www.pld0.test is the first seed and the robots-redirect target
    if (!clean) {
      const forced = p.coverAll && j === 0 && i >= 1 && i <= ADVERSITY_COUNT ? ADVERSITIES[i - 1]! : null;
      if (forced) {
        if (forced[0] === 'robots') robots = forced[1];
        else if (forced[0] === 'behaviour') behaviour = forced[1];
        else if (forced[0] === 'dns') dns = forced[1];
        else trap = forced[1];
      } else {
        robots = pickRate(unit(h3(seed ^ S_ROBOTS, i, j)), p.robots, ROBOTS_VARIANTS, 'allow-all');
        behaviour = pickRate(unit(h3(seed ^ S_BEHAV, i, j)), p.behaviours, BEHAVIOURS, 'normal');
        dns = pickRate(unit(h3(seed ^ S_DNS, i, j)), p.dns, DNS_VARIANTS, 'ok');
        const t = pickRate(unit(h3(seed ^ S_TRAP, i, j)), p.traps, TRAP_KINDS, 'none');
        trap = t === 'none' ? null : (t as TrapKind);
      }
    }
    let charset: HostInfo['charset'] = null;
    if (behaviour === 'charset') {
      const hc = h3(seed ^ S_CHARSET, i, j);
      charset = { name: CHARSETS[hc & 3]!, where: (['header', 'meta', 'both'] as const)[((hc >>> 2) & 0xff) % 3]! };
    }
    const info: HostInfo = {
      name, pld: `pld${i}.test`, pldIndex: i, farm: -1, hostIndex: j, ip: ipString(ipIndex), ipIndex,
      pages: this.pageCount(i, j), robots, behaviour, dns, trap, crawlDelay: undefined, charset,
    };
    if (robots === 'rules' || robots === 'huge' || robots === 'redirect') {
      info.crawlDelay = groupsCrawlDelay(selectGroups(this.robotsGroups(info), this.params.robotsAgent));
    }
    return info;
  }

  /** Every simulated IP address (one listener each). */
  ipAddresses(): string[] {
    const out: string[] = [];
    for (let k = 0; k < this.params.ips; k++) out.push(ipString(k));
    return out;
  }

  // ---- robots -----------------------------------------------------------------------------------

  /** The groups of the robots.txt this host's rules come from ('rules', 'huge', 'redirect'); [] otherwise. */
  robotsGroups(info: HostInfo): RobotsGroup[] {
    if (info.robots !== 'rules' && info.robots !== 'huge' && info.robots !== 'redirect') return [];
    const h = h3(this.seed ^ S_RULES, info.pldIndex, info.hostIndex);
    const d1 = 1 + (h % 9), d2 = (h >>> 4) % 10, d3 = (h >>> 8) % 10, d4 = 1 + ((h >>> 12) % 9);
    const withAgent = ((h >>> 16) & 3) !== 0;
    const delay = unit(h3(this.seed ^ S_RULES, info.pldIndex, info.hostIndex + 0x10000)) < this.params.crawlDelayShare
      ? this.params.crawlDelaySeconds : undefined;
    const specific: RobotsGroup['rules'] = [
      { allow: false, pattern: `/p/${d1}` },
      { allow: true, pattern: `/p/${d1}${d2}` },
      { allow: false, pattern: `/*${d3}$` },
      { allow: false, pattern: '/*?' },
      { allow: false, pattern: '/cal/' },
    ];
    const groups: RobotsGroup[] = [{ agents: ['otherbot'], rules: [{ allow: false, pattern: '/' }] }];
    if (withAgent) {
      const g: RobotsGroup = { agents: [this.params.robotsAgent], rules: specific };
      if (delay !== undefined) g.crawlDelay = delay;
      groups.push(g);
      groups.push({ agents: ['*'], rules: [{ allow: false, pattern: `/p/${d4}` }, { allow: false, pattern: '/private/' }] });
    } else {
      const g: RobotsGroup = { agents: ['*'], rules: specific };
      if (delay !== undefined) g.crawlDelay = delay;
      groups.push(g);
    }
    return groups;
  }

  /** The text of the rules this host's robots file carries (for 'rules', 'huge' and the redirect target). */
  robotsRulesText(info: HostInfo): string {
    const h = h3(this.seed ^ S_RULES, info.pldIndex, info.hostIndex + 0x20000);
    const ua = (h & 1) ? 'User-agent' : 'user-agent';
    const dis = (h & 2) ? 'Disallow' : 'DISALLOW';
    let s = `# robots.txt for ${info.name} (simweb seed ${this.seed})\n`;
    for (const g of this.robotsGroups(info)) {
      for (const a of g.agents) s += `${ua}: ${a}\n`;
      for (const r of g.rules) s += `${r.allow ? 'Allow' : dis}: ${r.pattern}\n`;
      if (g.crawlDelay !== undefined) s += `Crawl-delay: ${g.crawlDelay}\n`;
      s += '\n';
    }
    return s;
  }

  /**
   * What the robots oracle says: may `userAgent` fetch `pathAndQuery` on `host`? Policy (the
   * contract's): 4xx/absent/garbage → allow all; 5xx/timeout → disallow all; rules as served
   * (a redirected robots.txt counts with the rules of its target, which are this host's).
   */
  robotsAllows(host: string | HostInfo, pathAndQuery: string, userAgent: string): boolean {
    const info = typeof host === 'string' ? this.hostInfo(host) : host;
    if (!info) return true;
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
    switch (info.robots) {
      case 'rules':
        return Buffer.from(this.robotsRulesText(info), 'latin1');
      case 'huge': {
        const head = this.robotsRulesText(info);
        const line = '# padding padding padding padding padding padding padding padding padding padding\n';
        const n = Math.ceil((600 * 1024) / line.length);
        return Buffer.from(head + line.repeat(n), 'latin1');
      }
      case 'garbage': {
        const b = Buffer.allocUnsafe(4096);
        for (let i = 0; i < b.length; i++) {
          // bytes 0x80–0xff and C0 controls except \n: never an ASCII letter, ':' or '/'
          const v = h3(this.seed ^ S_RULES, hashString(0, info.name), i) & 0xff;
          b[i] = v < 0x80 ? (v & 0x1f) === 10 ? 0 : v & 0x1f : v;
        }
        return b;
      }
      default:
        return Buffer.from(`# robots.txt for ${info.name}: everything allowed\nUser-agent: *\nDisallow:\n`, 'latin1');
    }
  }

  // ---- pages ------------------------------------------------------------------------------------

  /** Kind of page /p/n on a host. */
  pageKind(info: HostInfo, n: number): PageKind {
    const u = unit(h4(this.seed ^ S_PAGE, info.pldIndex ^ (info.farm << 20), info.hostIndex, n));
    if (n === 0 || info.farm >= 0) return 'html';
    if (u < this.params.nonHtmlShare) {
      const r = (u / this.params.nonHtmlShare) * 3;
      return r < 1 ? 'text' : r < 2 ? 'pdf' : 'image';
    }
    if (u < this.params.nonHtmlShare + this.params.framesetShare) return 'frameset';
    return 'html';
  }

  /** Does page n exist on this host? */
  hasPage(info: HostInfo, n: number): boolean {
    return n >= 0 && n < info.pages;
  }

  /**
   * The link targets of /p/n (in document order, duplicates included) and the page's base host.
   * `sid` is the session id of the requested URL on a 'session' trap host (0 otherwise).
   */
  pageLinks(info: HostInfo, n: number, sid = 0): { base: string | null; links: LinkTarget[]; tags: number[] } {
    const p = this.params;
    const seed = this.seed;
    const kind = this.pageKind(info, n);
    const key = info.farm >= 0 ? (info.farm + 1) * -7919 : info.pldIndex;
    const hp = h4(seed ^ S_PAGE, key, info.hostIndex, n ^ 0x5a5a5a5a);
    let count: number;
    if (kind === 'frameset') count = 2 + (hp % 3);
    else if (kind !== 'html') count = 0;
    else if (info.farm >= 0) count = p.spamLinksPerPage;
    else count = Math.round((unit(h2(hp, 1)) + unit(h2(hp, 2))) * p.linksPerPageMean);
    const links: LinkTarget[] = [];
    const tags: number[] = []; // 0 a, 1 area, 2 iframe, 3 link, 4 frame
    let base: string | null = null;
    if (kind === 'html' && info.farm < 0 && unit(h2(hp, 3)) < p.baseHrefShare) {
      const hc = this.hostCount(info.pldIndex);
      base = hc > 1 ? this.hostName(info.pldIndex, (info.hostIndex + 1) % hc) : info.name;
    }
    const sess = info.trap === 'session';
    const pagePath = (m: number) => (sess ? `/p/${m}?sid=${hex8(h3(seed ^ S_SID, sid, m))}` : `/p/${m}`);
    for (let t = 0; t < count; t++) {
      const r = h2(hp, 100 + t);
      const u = unit(r);
      tags.push(kind === 'frameset' ? 4 : (r & 0xff) < 8 ? 1 : (r & 0xff) < 13 ? 2 : (r & 0xff) < 18 ? 3 : 0);
      if (t > 2 && links.length > 0 && unit(h2(r, 1)) < p.dupLinkShare) {
        links.push(links[below(h2(r, 2), links.length)]!);
        continue;
      }
      if (info.farm >= 0) {
        // Spam farm: links to other hosts and pages of the same farm, any of 2^31.
        const j = (h2(r, 3) & 0x7fffffff) % (t < 2 ? 16 : 0x7fffffff);
        const m = h2(r, 4) & 0x7fffffff;
        links.push({ host: j === 0 ? `www.farm${info.farm}.test` : `h${j}.farm${info.farm}.test`, path: `/p/${m}` });
        continue;
      }
      if (t === 0) { links.push({ host: info.name, path: pagePath(0) }); continue; }
      if (t === 1 && n + 1 < info.pages) { links.push({ host: info.name, path: pagePath(n + 1) }); continue; }
      if (t === 2 && n > 0) { links.push({ host: info.name, path: pagePath(n - 1) }); continue; }
      if (u < p.intraHostShare) {
        const near = unit(h2(r, 5)) < 0.5;
        const m = near ? Math.min(info.pages - 1, n + 1 + below(h2(r, 6), 20)) : below(h2(r, 6), info.pages);
        links.push({ host: info.name, path: pagePath(m) });
      } else if (u < p.intraHostShare + p.intraPldShare) {
        const hc = this.hostCount(info.pldIndex);
        const j = below(h2(r, 7), hc);
        links.push({ host: this.hostName(info.pldIndex, j), path: `/p/${below(h2(r, 8), this.pageCount(info.pldIndex, j))}` });
      } else {
        const t2 = zipf(unit(h2(r, 9)), p.plds, p.pldZipf);
        const j = unit(h2(r, 10)) < 0.5 ? 0 : below(h2(r, 11), this.hostCount(t2));
        const m = unit(h2(r, 12)) < 0.4 ? 0 : below(h2(r, 13), this.pageCount(t2, j));
        links.push({ host: this.hostName(t2, j), path: `/p/${m}` });
      }
    }
    if (kind === 'html' && info.farm < 0) {
      if (n === 0) {
        for (const k of this.farmSources.get(info.pldIndex) ?? []) {
          if (info.hostIndex !== 0) break;
          const j = h3(seed ^ S_FARM, k, 1) & 0xffff;
          links.push({ host: `h${j}.farm${k}.test`, path: `/p/${h3(seed ^ S_FARM, k, 2) & 0xffff}` });
          tags.push(0);
        }
      }
      if (info.trap && info.trap !== 'session' && n % 5 === 0) {
        links.push({ host: info.name, path: info.trap === 'calendar' ? '/cal/2026/1' : '/t/a/' });
        tags.push(0);
      }
    }
    return { base, links, tags };
  }

  /** Target page size in bytes for /p/n (mean pageBytesMean, capped at 12× the mean). */
  pageBytes(info: HostInfo, n: number): number {
    const u = unit(h4(this.seed ^ S_FILLER, info.pldIndex ^ (info.farm << 20), info.hostIndex, n));
    const e = -Math.log(1 - u * 0.999999);
    // 0.2 + 0.8·Exp(1) has mean 1; the cap trims < 0.1 % of the mass.
    return Math.min(this.params.pageBytesMean * CAP_FACTOR, Math.round(this.params.pageBytesMean * (0.2 + 0.8 * e)));
  }

  /** Serialize one href so that (with the page's base) it resolves to `target`. */
  private href(from: HostInfo, base: string | null, target: LinkTarget, r: number): string {
    const baseHost = base ?? from.name;
    const abs = this.origin(target.host) + target.path;
    const form = r % 10;
    if (target.host === baseHost) {
      const isPage = target.path.startsWith('/p/');
      switch (form) {
        case 0: case 1: return target.path;
        case 2: return isPage ? target.path.slice(3) : target.path;
        case 3: return isPage ? './' + target.path.slice(3) : target.path;
        case 4: return isPage ? '../p/' + target.path.slice(3) : target.path;
        case 5: return target.path + '#s' + (r % 7);
        case 6: return this.origin(target.host.toUpperCase()) + target.path;
        default: return abs;
      }
    }
    switch (form) {
      case 0: return this.origin(target.host.toUpperCase()) + target.path;
      case 1: return (this.port === 80 ? `//${target.host}` : `//${target.host}:${this.port}`) + target.path;
      case 2: return abs + '#top';
      default: return abs;
    }
  }

  /** Render /p/n (query `sid` only on session-trap hosts). Returns null when the page does not exist. */
  renderPage(info: HostInfo, n: number, sid = 0): RenderedBody | null {
    if (!(n >= 0 && n < info.pages)) return null;
    const kind = this.pageKind(info, n);
    const size = this.pageBytes(info, n);
    const fill = (len: number, salt: number, latin = false): Buffer => {
      const src = latin ? this.fillerLatin : this.filler;
      len = Math.max(0, Math.min(len, src.length >> 1));
      const off = below(h4(this.seed ^ S_FILLER, info.hostIndex, n, salt), src.length - len);
      return src.subarray(off, off + len);
    };
    if (kind === 'text' || kind === 'pdf' || kind === 'image') {
      const chunks: Buffer[] = [];
      if (kind === 'pdf') chunks.push(Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', 'latin1'), fill(size - 24, 1), Buffer.from('\n%%EOF\n'));
      else if (kind === 'image') chunks.push(Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), fill(size - 8, 1, true));
      else chunks.push(fill(size, 1));
      return finish(kind === 'pdf' ? 'application/pdf' : kind === 'image' ? 'image/png' : 'text/plain; charset=utf-8', chunks);
    }
    const { base, links, tags } = this.pageLinks(info, n, sid);
    const malformed = info.behaviour === 'malformed';
    const latin = info.charset !== null;
    const metaCharset = latin && info.charset!.where !== 'header' ? info.charset!.name : latin ? null : 'utf-8';
    const title = `${info.name} page ${n}`;
    let head = '<!DOCTYPE html>\n<html lang="en"><head>';
    if (metaCharset) head += (n & 1) ? `<meta http-equiv="Content-Type" content="text/html; charset=${metaCharset}">` : `<meta charset="${metaCharset}">`;
    head += `<title>${title}</title>\n`;
    if (base) head += `<base href="${this.origin(base)}/p/">\n`;
    const parts = ['', '', ''];
    const third = Math.ceil(links.length / 3) || 1;
    for (let t = 0; t < links.length; t++) {
      const r = h2(h4(this.seed ^ S_PAGE, info.hostIndex, n, t), 77);
      const href = this.href(info, base, links[t]!, r);
      const tag = tags[t]!;
      let el: string;
      if (tag === 3) { head += `<link rel="alternate" href="${href}">\n`; continue; }
      if (tag === 4) el = `<frame src="${href}" name="f${t}">`;
      else if (tag === 2) el = `<iframe src="${href}" width="10" height="10"></iframe>\n`;
      else if (tag === 1) el = `<map name="m${t}"><area shape="rect" coords="0,0,9,9" href="${href}" alt="a${t}"></map>\n`;
      else if (malformed) el = sloppyAnchor(href, r, t);
      else el = `<li><a href="${href}">link ${t}</a></li>\n`;
      parts[Math.min(2, Math.floor(t / third))] += el;
    }
    head += '</head>\n';
    const chunks: Buffer[] = [];
    if (kind === 'frameset') {
      chunks.push(Buffer.from(head + `<frameset cols="50%,*">\n${parts.join('')}<noframes>`, 'latin1'),
        fill(size - 400, 1), Buffer.from('</noframes></frameset></html>\n', 'latin1'));
      return finish(contentTypeHtml(info), chunks);
    }
    const body0 = `<body><h1>${title}</h1>\n`;
    const decoys = malformed
      ? `<!-- <a href="/p/${info.pages + 1000}">commented out</a> -->\n<script>var s='<a href="/p/${info.pages + 1001}">';</script>\n` +
        `<textarea><a href="/p/${info.pages + 1002}"></textarea>\n<DIV><P>unclosed <B>bold <I>italic</B></I>\n</SPAN></TD>\n`
      : '';
    const linkBytes = head.length + body0.length + parts[0]!.length + parts[1]!.length + parts[2]!.length + decoys.length + 80;
    const fl = Math.max(64, size - linkBytes);
    const a = Math.floor(fl / 3);
    chunks.push(
      Buffer.from(head + body0 + decoys + '<p>', 'latin1'), fill(a, 1, latin),
      Buffer.from(`</p>\n<ul>\n${parts[0]}</ul>\n<p>`, 'latin1'), fill(a, 2, latin),
      Buffer.from(`</p>\n<div class="nav">\n${parts[1]}</div>\n<p>`, 'latin1'), fill(fl - 2 * a, 3, latin),
      Buffer.from(`</p>\n${parts[2]}</body></html>\n`, 'latin1'),
    );
    return finish(contentTypeHtml(info), chunks);
  }

  /** Calendar trap page /cal/<y>/<m>: links to the previous and next month and the next year. */
  renderCalendar(info: HostInfo, y: number, m: number): RenderedBody {
    const prev = m === 1 ? `/cal/${y - 1}/12` : `/cal/${y}/${m - 1}`;
    const next = m === 12 ? `/cal/${y + 1}/1` : `/cal/${y}/${m + 1}`;
    const html = `<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Calendar ${y}-${m}</title></head><body>\n` +
      `<h1>${y}-${String(m).padStart(2, '0')}</h1>\n<a href="${prev}">previous</a> <a href="${next}">next</a> ` +
      `<a href="/cal/${y + 1}/${m}">next year</a> <a href="/p/0">home</a>\n<p>No events.</p></body></html>\n`;
    return finish('text/html; charset=utf-8', [Buffer.from(html, 'latin1')]);
  }

  /** Repeated-segment trap page under /t/: relative links that append segments forever. */
  renderRepeat(path: string): RenderedBody {
    const html = `<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>${path}</title></head><body>\n` +
      `<a href="a/">a</a> <a href="b/">b</a> <a href="../">up</a> <a href="/p/0">home</a>\n</body></html>\n`;
    return finish('text/html; charset=utf-8', [Buffer.from(html, 'latin1')]);
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

  // ---- filler -------------------------------------------------------------------------------------

  private makeFiller(latin: boolean): Buffer {
    // Plain words and newlines only — no markup, no '&' or '<' — so any slice is valid HTML text,
    // and single-byte characters only, so a slice never splits a character.
    const b = Buffer.allocUnsafe(FILLER_BYTES);
    let pos = 0, col = 0, w = 0;
    while (pos < FILLER_BYTES) {
      const word = WORDS[h2(this.seed ^ S_FILLER ^ (latin ? 0x77 : 0), w++) % WORDS.length]!;
      for (let i = 0; i < word.length && pos < FILLER_BYTES; i++) {
        const c = word.charCodeAt(i);
        b[pos++] = latin && (w & 3) === 0 ? 0xc0 + (c - 97) : c;
      }
      col += word.length + 1;
      if (pos < FILLER_BYTES) b[pos++] = col > 72 ? 10 : 32;
      if (col > 72) col = 0;
    }
    return b;
  }
}

function contentTypeHtml(info: HostInfo): string {
  if (info.charset && info.charset.where !== 'meta') return `text/html; charset=${info.charset.name}`;
  if (info.charset) return 'text/html';
  return 'text/html; charset=utf-8';
}

function finish(contentType: string, chunks: Buffer[]): RenderedBody {
  let length = 0;
  for (const c of chunks) length += c.length;
  return { contentType, chunks, length };
}

/** Sloppy but HTML5-parseable anchors: the link is still there for a conforming parser. */
function sloppyAnchor(href: string, r: number, t: number): string {
  switch ((r >>> 8) % 6) {
    case 0: return `<A HREF=${href}>link ${t}</A>\n`;
    case 1: return `<a  class=x\thref = '${href}' >link ${t}</a\t>\n`;
    case 2: return `<a href="${href.replace(/\//g, '&#x2F;')}">entity ${t}</a>\n`;
    case 3: return `<li><a title="x > y" href="${href}">gt in attr</a>\n`;
    case 4: return `<p><a\nhref="${href}"\n>newlines</a></p></p>\n`;
    default: return `<a href=" ${href} ">spaces ${t}</a>\n`;
  }
}

/** Walk the rates in the fixed order of `order` (not object key order), so equal params agree. */
function pickRate<T extends string>(u: number, rates: Partial<Record<string, number>>, order: readonly string[], dflt: T): T {
  let acc = 0;
  for (const k of order) {
    acc += rates[k] ?? 0;
    if (u < acc) return k as T;
  }
  return dflt;
}
