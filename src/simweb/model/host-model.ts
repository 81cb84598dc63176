/**
 * The host model of the simulated web (hosts grouped by pay-level domain as STAR sees them, thesis
 * VI.2; IPs shared by hosts as the politeness of VII.1 sees them; spam farms; per-host
 * adversities — docs/simweb.md, "The model"): which host names exist, their IPs, page counts,
 * page kinds and sizes, robots variant, server behaviour, DNS variant and trap — each a pure
 * function of (seed, params, host) from stateless integer hashes (hash.ts).
 *
 * Invariant: nothing is materialized; the same (seed, params) give the same web on every call.
 * Cost: O(1) per host or page (the host cache bounds repeated work at HOST_CACHE entries).
 */
import { h2, h3, h4, unit, below } from './hash.js';
import {
  type WebParams, type RobotsVariant, type Behaviour, type DnsVariant, type TrapKind,
  ROBOTS_VARIANTS, BEHAVIOURS, DNS_VARIANTS, TRAP_KINDS,
} from './params.js';
import { type RobotsGroup, selectGroups, groupsCrawlDelay } from './robots-model.js';
import { robotsGroups } from './robots-file.js';
import { S_HOSTS, S_PAGES, S_IP, S_ROBOTS, S_BEHAV, S_DNS, S_TRAP, S_PAGE, S_FARM, S_CHARSET, S_FILLER, S_V6, type HostInfo } from './host-info.js';

export { S_HOSTS, S_PAGES, S_IP, S_ROBOTS, S_BEHAV, S_DNS, S_TRAP, S_PAGE, S_RULES, S_FARM, S_CHARSET, S_FILLER, S_SID, S_V6, type HostInfo } from './host-info.js';

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

export class HostModel {
  readonly params: Readonly<WebParams>;
  readonly seed: number;
  /** Farm k ← home pages of these PLDs (the farm's tiny in-degree). */
  readonly farmSources = new Map<number, number[]>();
  private readonly hostCache = new Map<string, HostInfo | null>();
  private readonly rateTables: Record<'robots' | 'behaviours' | 'dns' | 'traps', Array<[string, number]>>;

  constructor(params: WebParams, seed: number) {
    this.params = Object.freeze({ ...params });
    this.seed = seed | 0;
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
      if (p.spamHostsPerFarm >= 1 && j >= Math.floor(p.spamHostsPerFarm)) return null;
      // Farms on IPs of their own (after the web's) when spamIps > 0, else among the web's IPs.
      const ownIps = Math.floor(p.spamIps);
      const ipIndex = ownIps > 0 ? p.ips + below(h3(seed ^ S_IP ^ S_FARM, k, j), ownIps) : below(h3(seed ^ S_IP ^ S_FARM, k, j), p.ips);
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
    // IPv6-only hosts (v6Share): their one address is ::1, the only IPv6 loopback address.
    const v6 = !clean && p.v6Share > 0 && unit(h3(seed ^ S_V6, i, j)) < p.v6Share;
    const info: HostInfo = {
      name, pld: `pld${i}.test`, pldIndex: i, farm: -1, hostIndex: j, ip: v6 ? '::1' : ipString(ipIndex), ipIndex,
      pages: this.pageCount(i, j), robots, behaviour, dns, trap, crawlDelay: undefined, charset,
    };
    if (robots === 'rules' || robots === 'huge' || robots === 'redirect') {
      info.crawlDelay = groupsCrawlDelay(selectGroups(this.robotsGroups(info), this.params.robotsAgent));
    }
    return info;
  }

  /** Every simulated IP address (one listener each); ::1 too when some hosts are IPv6-only. */
  ipAddresses(): string[] {
    const out: string[] = [];
    const n = this.params.ips + (this.params.spamFarms > 0 ? Math.floor(this.params.spamIps) : 0);
    for (let k = 0; k < n; k++) out.push(ipString(k));
    if (this.params.v6Share > 0) out.push('::1');
    return out;
  }

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

  /** Target page size in bytes for /p/n (mean pageBytesMean, capped at 12× the mean). */
  pageBytes(info: HostInfo, n: number): number {
    const u = unit(h4(this.seed ^ S_FILLER, info.pldIndex ^ (info.farm << 20), info.hostIndex, n));
    const e = -Math.log(1 - u * 0.999999);
    // 0.2 + 0.8·Exp(1) has mean 1; the cap trims < 0.1 % of the mass.
    return Math.min(this.params.pageBytesMean * CAP_FACTOR, Math.round(this.params.pageBytesMean * (0.2 + 0.8 * e)));
  }

  /** The groups of the robots.txt this host's rules come from ('rules', 'huge', 'redirect'); [] otherwise. */
  robotsGroups(info: HostInfo): RobotsGroup[] {
    return robotsGroups(this.seed, this.params, info);
  }
}
