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
import { ByteWriter, L } from './byte-writer.js';
import { mix32 } from './hash.js';

const KIND_PLD = 0, KIND_FARM = 1, KIND_SPECIAL = 2;
const B_WWW = L('www.'), B_H = L('h'), B_DOT = L('.'), B_PLD = L('pld'), B_FARM = L('farm'), B_TEST = L('.test');
const B_HTTP = L('http://'), B_SLASH2 = L('//'), B_P = L('/p/'), B_DOTSLASH = L('./'), B_UP_P = L('../p/'), B_SID = L('?sid=');
const B_HASH_S = L('#s'), B_HASH_TOP = L('#top');
const B_DOCTYPE = L('<!DOCTYPE html>\n<html lang="en"><head>'), B_TITLE = L('<title>'), B_PAGE = L(' page '), B_TITLE_END = L('</title>\n');
const B_BASE = L('<base href="'), B_BASE_END = L('/p/">\n'), B_LINK = L('<link rel="alternate" href="'), B_LINK_END = L('">\n');
const B_HEAD_END = L('</head>\n'), B_BODY = L('<body><h1>'), B_H1_END = L('</h1>\n'), B_P_OPEN = L('<p>');
const B_UL = L('</p>\n<ul>\n'), B_UL_END = L('</ul>\n<p>'), B_DIV = L('</p>\n<div class="nav">\n'), B_DIV_END = L('</div>\n<p>');
const B_P_CLOSE = L('</p>\n'), B_END = L('</body></html>\n');
const B_FRAMESET = L('<frameset cols="50%,*">\n'), B_NOFRAMES = L('<noframes>');
// Per tag (0 a, 1 area, 2 iframe, 3 link, 4 frame): before the href, after it, after the number.
const TAG_OPEN = [L('<li><a href="'), L('<map><area shape="rect" coords="0,0,9,9" href="'), L('<iframe src="'), L(''), L('<frame src="')];
const TAG_MID = [L('">link '), L('" alt="a'), L('" width="10" height="10"></iframe>\n'), L(''), L('" name="f')];
const TAG_END = [L('</a></li>\n'), L('"></map>\n'), L(''), L(''), L('">')];

/** The numeric link list of one page (reused scratch; bound: the largest page's link count). */
class LinkPlan {
  n = 0;
  baseHost = -1;
  kind = new Uint8Array(256);
  a = new Int32Array(256);
  b = new Int32Array(256);
  page = new Int32Array(256);
  sid = new Float64Array(256); // -1 = none, else a uint32 session id
  tag = new Uint8Array(256);
  r = new Uint32Array(256);
  special: (string | null)[] = [];

  ensure(n: number): void {
    if (this.n + n <= this.kind.length) return;
    const size = Math.max(this.kind.length * 2, this.n + n);
    const grow = <T extends Uint8Array | Int32Array | Uint32Array | Float64Array>(x: T, make: (k: number) => T): T => { const y = make(size); y.set(x); return y; };
    this.kind = grow(this.kind, (k) => new Uint8Array(k));
    this.a = grow(this.a, (k) => new Int32Array(k));
    this.b = grow(this.b, (k) => new Int32Array(k));
    this.page = grow(this.page, (k) => new Int32Array(k));
    this.sid = grow(this.sid, (k) => new Float64Array(k));
    this.tag = grow(this.tag, (k) => new Uint8Array(k));
    this.r = grow(this.r, (k) => new Uint32Array(k));
  }

  push(kind: number, a: number, b: number, page: number, sid: number, tag: number, r: number): void {
    const i = this.n++;
    this.kind[i] = kind; this.a[i] = a; this.b[i] = b; this.page[i] = page; this.sid[i] = sid; this.tag[i] = tag; this.r[i] = r;
    this.special[i] = null;
  }

  pushSpecial(a: number, b: number, path: string, tag: number, r: number): void {
    this.ensure(1);
    this.push(KIND_SPECIAL, a, b, 0, -1, tag, r);
    this.special[this.n - 1] = path;
  }

  /** Repeat entry `from` (an intra-page duplicate) with a new tag and href form. */
  copy(from: number, tag: number, r: number): void {
    this.push(this.kind[from]!, this.a[from]!, this.b[from]!, this.page[from]!, this.sid[from]!, tag, r);
    this.special[this.n - 1] = this.special[from]!;
  }
}

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
/** hostInfo cache entries: the hosts of a busy crawl's working set fit; cleared when full. */
const HOST_CACHE = 32768;
const CAP_FACTOR = 12; // page sizes are capped at CAP_FACTOR × mean

export function ipString(k: number): string {
  const n = k + 1; // 127.1.0.1 upward; never 127.0.0.x
  return `127.${1 + (n >>> 16)}.${(n >>> 8) & 255}.${n & 255}`;
}

export function parseUint(s: string): number {
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
  private readonly rateTables: Record<'robots' | 'behaviours' | 'dns' | 'traps', Array<[string, number]>>;
  /** Scratch state for rendering (one page at a time; rendering is synchronous). */
  private readonly plan = new LinkPlan();
  private readonly writer = new ByteWriter();
  private readonly slowWriter = new ByteWriter();
  private readonly portBytes: Buffer;
  /** The host of the page being rendered, and its encoded origin (see wOrigin). */
  private curKind = -1;
  private curA = -1;
  private curB = -1;
  private curOrigin: Buffer = Buffer.alloc(0);
  /** Encoded origins of recently rendered hosts (bounded: cleared at 4096 entries). */
  private readonly originCache = new Map<string, Buffer>();

  constructor(params: WebParams, seed: number, port: number) {
    this.params = Object.freeze({ ...params });
    this.seed = seed | 0;
    this.port = port;
    this.portBytes = L(port === 80 ? '' : `:${port}`);
    this.rateTables = {
      robots: rateTable(params.robots, ROBOTS_VARIANTS), behaviours: rateTable(params.behaviours, BEHAVIOURS),
      dns: rateTable(params.dns, DNS_VARIANTS), traps: rateTable(params.traps, TRAP_KINDS),
    };
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
    if (this.hostCache.size >= HOST_CACHE) this.hostCache.clear(); // bounded: at most HOST_CACHE entries (~15 MB)
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
        const rt = this.rateTables;
        if (rt.robots.length) robots = pickRate(unit(h3(seed ^ S_ROBOTS, i, j)), rt.robots, 'allow-all');
        if (rt.behaviours.length) behaviour = pickRate(unit(h3(seed ^ S_BEHAV, i, j)), rt.behaviours, 'normal');
        if (rt.dns.length) dns = pickRate(unit(h3(seed ^ S_DNS, i, j)), rt.dns, 'ok');
        if (rt.traps.length) {
          const t = pickRate(unit(h3(seed ^ S_TRAP, i, j)), rt.traps, 'none');
          trap = t === 'none' ? null : (t as TrapKind);
        }
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
   * Fill `plan` with the link targets of /p/n in document order (duplicates included) and its base
   * host. `sid` is the session id of the requested URL on a 'session' trap host (0 otherwise).
   * The plan is numeric (kind, PLD/farm, host, page) so rendering never builds URL strings.
   */
  private planLinks(info: HostInfo, n: number, sid: number, plan: LinkPlan): void {
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
    plan.n = 0;
    plan.baseHost = -1;
    if (kind === 'html' && info.farm < 0 && unit(h2(hp, 3)) < p.baseHrefShare) {
      const hc = this.hostCount(info.pldIndex);
      plan.baseHost = hc > 1 ? (info.hostIndex + 1) % hc : info.hostIndex;
    }
    const sess = info.trap === 'session';
    const sidSeed = h2(seed ^ S_SID, sid);
    plan.ensure(count + 8);
    for (let t = 0; t < count; t++) {
      const r = h2(hp, 100 + t);
      const r2 = mix32(r + 0x3c6ef372);
      const u = unit(r);
      const tb = r & 0xff;
      const tag = kind === 'frameset' ? 4 : tb < 8 ? 1 : tb < 13 ? 2 : tb < 18 ? 3 : 0;
      if (t > 2 && plan.n > 0 && unit(r2) < p.dupLinkShare) {
        plan.copy(below(mix32(r2 ^ 0x1234567), plan.n), tag, r2);
        continue;
      }
      if (info.farm >= 0) {
        // Spam farm: links to other hosts and pages of the same farm, any of 2^31.
        const j = (mix32(r2 + 3) & 0x7fffffff) % (t < 2 ? 16 : 0x7fffffff);
        plan.push(KIND_FARM, info.farm, j, mix32(r2 + 4) & 0x7fffffff, -1, tag, r2);
        continue;
      }
      let self = -1;
      if (t === 0) self = 0;
      else if (t === 1 && n + 1 < info.pages) self = n + 1;
      else if (t === 2 && n > 0) self = n - 1;
      else if (u < p.intraHostShare) {
        const v = mix32(r2 + 5);
        self = (v & 1) === 0 ? Math.min(info.pages - 1, n + 1 + ((v >>> 1) % 20)) : below(mix32(r2 + 6), info.pages);
      }
      if (self >= 0) {
        plan.push(KIND_PLD, info.pldIndex, info.hostIndex, self, sess ? h2(sidSeed, self) : -1, tag, r2);
      } else if (u < p.intraHostShare + p.intraPldShare) {
        const j = below(mix32(r2 + 7), this.hostCount(info.pldIndex));
        plan.push(KIND_PLD, info.pldIndex, j, below(mix32(r2 + 8), this.pageCount(info.pldIndex, j)), -1, tag, r2);
      } else {
        const t2 = zipf(unit(mix32(r2 + 9)), p.plds, p.pldZipf);
        const v = mix32(r2 + 10);
        const j = (v & 1) === 0 ? 0 : below(mix32(r2 + 11), this.hostCount(t2));
        const m = unit(mix32(r2 + 12)) < 0.4 ? 0 : below(mix32(r2 + 13), this.pageCount(t2, j));
        plan.push(KIND_PLD, t2, j, m, -1, tag, r2);
      }
    }
    if (kind === 'html' && info.farm < 0) {
      if (n === 0 && info.hostIndex === 0) {
        for (const k of this.farmSources.get(info.pldIndex) ?? []) {
          plan.ensure(1);
          plan.push(KIND_FARM, k, h3(seed ^ S_FARM, k, 1) & 0xffff, h3(seed ^ S_FARM, k, 2) & 0xffff, -1, 0, h3(seed, k, 3));
        }
      }
      if (info.trap && info.trap !== 'session' && n % 5 === 0) {
        plan.pushSpecial(info.pldIndex, info.hostIndex, info.trap === 'calendar' ? '/cal/2026/1' : '/t/a/', 0, h2(hp, 99));
      }
    }
  }

  /** The link targets of /p/n (document order, duplicates included) and the page's base host. */
  pageLinks(info: HostInfo, n: number, sid = 0): { base: string | null; links: LinkTarget[]; tags: number[] } {
    const plan = this.plan;
    this.planLinks(info, n, sid, plan);
    const links: LinkTarget[] = [];
    const tags: number[] = [];
    for (let t = 0; t < plan.n; t++) {
      links.push({ host: this.planHost(plan, t), path: this.planPath(plan, t) });
      tags.push(plan.tag[t]!);
    }
    return { base: plan.baseHost < 0 ? null : this.hostName(info.pldIndex, plan.baseHost), links, tags };
  }

  private planHost(plan: LinkPlan, t: number): string {
    const a = plan.a[t]!, b = plan.b[t]!;
    if (plan.kind[t] === KIND_FARM) return b === 0 ? `www.farm${a}.test` : `h${b}.farm${a}.test`;
    return this.hostName(a, b);
  }

  private planPath(plan: LinkPlan, t: number): string {
    if (plan.kind[t] === KIND_SPECIAL) return plan.special[t]!;
    const sid = plan.sid[t]!;
    return sid < 0 ? `/p/${plan.page[t]}` : `/p/${plan.page[t]}?sid=${hex8(sid)}`;
  }

  /** Target page size in bytes for /p/n (mean pageBytesMean, capped at 12× the mean). */
  pageBytes(info: HostInfo, n: number): number {
    const u = unit(h4(this.seed ^ S_FILLER, info.pldIndex ^ (info.farm << 20), info.hostIndex, n));
    const e = -Math.log(1 - u * 0.999999);
    // 0.2 + 0.8·Exp(1) has mean 1; the cap trims < 0.1 % of the mass.
    return Math.min(this.params.pageBytesMean * CAP_FACTOR, Math.round(this.params.pageBytesMean * (0.2 + 0.8 * e)));
  }

  private originBytes(host: string): Buffer {
    let b = this.originCache.get(host);
    if (!b) {
      if (this.originCache.size >= 4096) this.originCache.clear();
      b = L(this.origin(host));
      this.originCache.set(host, b);
    }
    return b;
  }

  /** Write a host name (lower- or upper-case) for plan entry t. */
  private wHost(w: ByteWriter, kind: number, a: number, b: number, upper: boolean): void {
    if (upper) {
      w.litUpper(b === 0 ? B_WWW : B_H);
      if (b !== 0) { w.uint(b); w.lit(B_DOT); }
      w.litUpper(kind === KIND_FARM ? B_FARM : B_PLD);
      w.uint(a);
      w.litUpper(B_TEST);
      return;
    }
    if (b === 0) w.lit(B_WWW); else { w.buf[w.pos++] = 104 /* h */; w.uint(b); w.buf[w.pos++] = 46 /* . */; }
    w.lit(kind === KIND_FARM ? B_FARM : B_PLD);
    w.uint(a);
    w.lit(B_TEST);
  }

  /** Write "http://host:port" for a plan target. */
  private wOrigin(w: ByteWriter, kind: number, a: number, b: number, upper: boolean): void {
    if (!upper && b === this.curB && a === this.curA && kind === this.curKind) {
      // Most absolute links point at the page's own host: copy its pre-encoded origin.
      w.lit(this.curOrigin);
      return;
    }
    w.lit(B_HTTP);
    this.wHost(w, kind, a, b, upper);
    w.lit(this.portBytes);
  }

  private wPath(w: ByteWriter, plan: LinkPlan, t: number, relative: 0 | 1 | 2 | 3): void {
    // relative: 0 '/p/m', 1 'm', 2 './m', 3 '../p/m'
    if (plan.kind[t] === KIND_SPECIAL) { w.str(plan.special[t]!); return; }
    if (relative === 0) w.lit(B_P); else if (relative === 2) w.lit(B_DOTSLASH); else if (relative === 3) w.lit(B_UP_P);
    w.uint(plan.page[t]!);
    const sid = plan.sid[t]!;
    if (sid >= 0) { w.lit(B_SID); w.hex8(sid); }
  }

  /** Serialize entry t's href so that (with the page's base) it resolves to the target. */
  private wHref(w: ByteWriter, plan: LinkPlan, t: number, baseKind: number, baseA: number, baseB: number): void {
    const kind = plan.kind[t]!, a = plan.a[t]!, b = plan.b[t]!, r = plan.r[t]!;
    const form = r % 10;
    const special = kind === KIND_SPECIAL;
    const tk = special ? KIND_PLD : kind;
    if (tk === baseKind && a === baseA && b === baseB) {
      switch (form) {
        case 0: case 1: this.wPath(w, plan, t, 0); return;
        case 2: this.wPath(w, plan, t, special ? 0 : 1); return;
        case 3: this.wPath(w, plan, t, special ? 0 : 2); return;
        case 4: this.wPath(w, plan, t, special ? 0 : 3); return;
        case 5: this.wPath(w, plan, t, 0); w.lit(B_HASH_S); w.uint(r % 7); return;
        case 6: this.wOrigin(w, tk, a, b, true); this.wPath(w, plan, t, 0); return;
        default: this.wOrigin(w, tk, a, b, false); this.wPath(w, plan, t, 0); return;
      }
    }
    switch (form) {
      case 0: this.wOrigin(w, tk, a, b, true); this.wPath(w, plan, t, 0); return;
      case 1: w.lit(B_SLASH2); this.wHost(w, tk, a, b, false); w.lit(this.portBytes); this.wPath(w, plan, t, 0); return;
      case 2: this.wOrigin(w, tk, a, b, false); this.wPath(w, plan, t, 0); w.lit(B_HASH_TOP); return;
      default: this.wOrigin(w, tk, a, b, false); this.wPath(w, plan, t, 0); return;
    }
  }

  /** A filler slice of `len` bytes for (host, n, salt). */
  private fill(info: HostInfo, n: number, len: number, salt: number, latin: boolean): Buffer {
    const src = latin ? this.fillerLatin : this.filler;
    len = Math.max(0, Math.min(len, src.length >> 1));
    const off = below(h4(this.seed ^ S_FILLER, info.hostIndex ^ (info.pldIndex << 8), n, salt), src.length - len);
    return src.subarray(off, off + len);
  }

  /** Render /p/n (query `sid` only on session-trap hosts). Returns null when the page does not exist. */
  renderPage(info: HostInfo, n: number, sid = 0): RenderedBody | null {
    if (!(n >= 0 && n < info.pages)) return null;
    const kind = this.pageKind(info, n);
    const size = this.pageBytes(info, n);
    if (kind === 'text' || kind === 'pdf' || kind === 'image') {
      const chunks: Buffer[] = [];
      if (kind === 'pdf') chunks.push(L('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n'), this.fill(info, n, size - 24, 1, false), L('\n%%EOF\n'));
      else if (kind === 'image') chunks.push(L('\x89PNG\r\n\x1a\n'), this.fill(info, n, size - 8, 1, true));
      else chunks.push(this.fill(info, n, size, 1, false));
      return finish(kind === 'pdf' ? 'application/pdf' : kind === 'image' ? 'image/png' : 'text/plain; charset=utf-8', chunks);
    }
    const plan = this.plan;
    this.planLinks(info, n, sid, plan);
    const w = this.writer;
    w.reset();
    const malformed = info.behaviour === 'malformed';
    const latin = info.charset !== null;
    const metaCharset = latin && info.charset!.where !== 'header' ? info.charset!.name : latin ? null : 'utf-8';
    const selfKind = info.farm >= 0 ? KIND_FARM : KIND_PLD;
    const selfA = info.farm >= 0 ? info.farm : info.pldIndex;
    const baseB = plan.baseHost < 0 ? info.hostIndex : plan.baseHost;
    this.curKind = selfKind;
    this.curA = selfA;
    this.curB = info.hostIndex;
    this.curOrigin = this.originBytes(info.name);
    // Part A: head (+ <link> elements) and the top of the body.
    w.ensure(4096 + plan.n * 400);
    w.lit(B_DOCTYPE);
    if (metaCharset) w.str((n & 1) ? `<meta http-equiv="Content-Type" content="text/html; charset=${metaCharset}">` : `<meta charset="${metaCharset}">`);
    w.lit(B_TITLE); w.str(info.name); w.lit(B_PAGE); w.uint(n); w.lit(B_TITLE_END);
    if (plan.baseHost >= 0) { w.lit(B_BASE); this.wOrigin(w, KIND_PLD, info.pldIndex, plan.baseHost, false); w.lit(B_BASE_END); }
    for (let t = 0; t < plan.n; t++) {
      if (plan.tag[t] !== 3) continue;
      w.lit(B_LINK); this.wHref(w, plan, t, selfKind, selfA, baseB); w.lit(B_LINK_END);
    }
    w.lit(B_HEAD_END);
    const third = Math.ceil(plan.n / 3) || 1;
    if (kind === 'frameset') {
      w.lit(B_FRAMESET);
      this.wLinks(w, plan, 0, plan.n, malformed, selfKind, selfA, baseB);
      w.lit(B_NOFRAMES);
      const a = w.take();
      return finish(contentTypeHtml(info), [a, this.fill(info, n, size - 400, 1, false), L('</noframes></frameset></html>\n')]);
    }
    w.lit(B_BODY); w.str(info.name); w.lit(B_PAGE); w.uint(n); w.lit(B_H1_END);
    if (malformed) {
      w.str(`<!-- <a href="/p/${info.pages + 1000}">commented out</a> -->\n<script>var s='<a href="/p/${info.pages + 1001}">';</script>\n` +
        `<textarea><a href="/p/${info.pages + 1002}"></textarea>\n<DIV><P>unclosed <B>bold <I>italic</B></I>\n</SPAN></TD>\n`);
    }
    w.lit(B_P_OPEN);
    const endA = w.pos;
    w.lit(B_UL); this.wLinks(w, plan, 0, third, malformed, selfKind, selfA, baseB); w.lit(B_UL_END);
    const endB = w.pos;
    w.lit(B_DIV); this.wLinks(w, plan, third, 2 * third, malformed, selfKind, selfA, baseB); w.lit(B_DIV_END);
    const endC = w.pos;
    w.lit(B_P_CLOSE); this.wLinks(w, plan, 2 * third, plan.n, malformed, selfKind, selfA, baseB); w.lit(B_END);
    const all = w.take();
    const fl = Math.max(64, size - all.length);
    const a = Math.floor(fl / 3);
    return finish(contentTypeHtml(info), [
      all.subarray(0, endA), this.fill(info, n, a, 1, latin),
      all.subarray(endA, endB), this.fill(info, n, a, 2, latin),
      all.subarray(endB, endC), this.fill(info, n, fl - 2 * a, 3, latin),
      all.subarray(endC),
    ]);
  }

  /** Write the body elements (all tags but <link>) of plan entries [from, to). */
  private wLinks(w: ByteWriter, plan: LinkPlan, from: number, to: number, malformed: boolean, selfKind: number, selfA: number, baseB: number): void {
    for (let t = from; t < to; t++) {
      const tag = plan.tag[t]!;
      if (tag === 3) continue;
      if (tag === 0 && malformed) {
        w.str(sloppyAnchor(this.hrefString(plan, t, selfKind, selfA, baseB), plan.r[t]!, t));
        continue;
      }
      w.lit(TAG_OPEN[tag]!);
      this.wHref(w, plan, t, selfKind, selfA, baseB);
      w.lit(TAG_MID[tag]!);
      if (tag !== 2) { w.uint(t); w.lit(TAG_END[tag]!); }
    }
  }

  /** The href of plan entry t as a string (slow path, for the sloppy serializations). */
  private hrefString(plan: LinkPlan, t: number, baseKind: number, baseA: number, baseB: number): string {
    const w = this.slowWriter;
    w.reset();
    w.ensure(1024);
    this.wHref(w, plan, t, baseKind, baseA, baseB);
    return w.buf.toString('latin1', 0, w.pos);
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

/**
 * Cumulative rate table in the fixed order of `order` (not object key order, so equal params agree);
 * zero rates are dropped, so an empty table means "always the default".
 */
function rateTable(rates: Partial<Record<string, number>>, order: readonly string[]): Array<[string, number]> {
  const out: Array<[string, number]> = [];
  let acc = 0;
  for (const k of order) {
    const v = rates[k] ?? 0;
    if (v <= 0) continue;
    acc += v;
    out.push([k, acc]);
  }
  return out;
}

function pickRate<T extends string>(u: number, table: ReadonlyArray<[string, number]>, dflt: T): T {
  for (const [k, acc] of table) if (u < acc) return k as T;
  return dflt;
}
