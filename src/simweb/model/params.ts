/**
 * The knobs of the simulated web, with units and defaults, and the named presets. Every field is
 * documented in docs/simweb.md; `resolveParams` merges a preset with overrides once and validates.
 */
import { CrawlError } from '../../errors.js';
import { ADVERSARY_PRESETS, type AdversaryPreset } from './adversary-presets.js';

export type SimwebPreset = 'tiny' | 'demo' | 'bench' | 'spam' | 'hostile' | AdversaryPreset;

/** What a host's /robots.txt does. */
export type RobotsVariant =
  | 'allow-all' // 200, comments and an empty Disallow
  | 'absent' // 404
  | 'unauthorized' // 401
  | 'forbidden' // 403
  | 'server-error' // 503
  | 'timeout' // the server never answers the request
  | 'rules' // 200, per-agent groups, Allow/Disallow with * and $, maybe Crawl-delay
  | 'redirect' // 301 to a robots file on another host (www.pld0.test) that serves this host's rules
  | 'huge' // 200, the rules then padding to a body over 500 KiB
  | 'garbage'; // 200, binary junk

/** How a host's pages (everything except /robots.txt) are served. */
export type Behaviour =
  | 'normal'
  | 'trickle' // the response dribbles out a few bytes at a time
  | 'reset' // TCP RST after reading the request
  | 'no-response' // reads the request, never answers
  | 'too-many-requests' // 429 + Retry-After when requests to the host come faster than retryAfterS
  | 'server-error' // 500/502/503
  | 'wrong-type' // HTML served as image/jpeg
  | 'no-type' // HTML with no Content-Type header
  | 'gzip'
  | 'deflate'
  | 'br'
  | 'bomb' // gzip body that inflates to bombDecodedBytes of zeros
  | 'huge-body' // a body of hugeBodyBytes (Content-Length announced)
  | 'redirect-chain' // /p/n → 301 → /rd/k/p/n … → /rd/0/p/n (200)
  | 'redirect-loop' // /p/n → 302 → /loop/p/n → 302 → /p/n
  | 'malformed' // the same links serialized as sloppy (but HTML5-parseable) markup
  | 'charset'; // a single-byte legacy charset (windows-1252, koi8-r, …) with non-ASCII text

/** How the DNS server answers for a host. */
export type DnsVariant = 'ok' | 'nxdomain' | 'servfail' | 'no-answer' | 'drop';

/** Trap a host carries (links from its ordinary pages lead into it). */
export type TrapKind = 'calendar' | 'repeat' | 'session';

export const ROBOTS_VARIANTS: readonly RobotsVariant[] = [
  'allow-all', 'absent', 'unauthorized', 'forbidden', 'server-error', 'timeout', 'rules', 'redirect', 'huge', 'garbage',
];
export const BEHAVIOURS: readonly Behaviour[] = [
  'normal', 'trickle', 'reset', 'no-response', 'too-many-requests', 'server-error', 'wrong-type', 'no-type', 'gzip',
  'deflate', 'br', 'bomb', 'huge-body', 'redirect-chain', 'redirect-loop', 'malformed', 'charset',
];
export const DNS_VARIANTS: readonly DnsVariant[] = ['ok', 'nxdomain', 'servfail', 'no-answer', 'drop'];
export const TRAP_KINDS: readonly TrapKind[] = ['calendar', 'repeat', 'session'];

export interface WebParams {
  /** Number of pay-level domains `pld<i>.test`. */
  plds: number;
  /** Mean hosts per PLD (geometric, ≥ 1; host 0 is `www`, others `h<j>`). */
  hostsPerPldMean: number;
  /** Cap on hosts per PLD. */
  hostsPerPldMax: number;
  /** Pages per host: log-uniform in [min, max]. */
  pagesPerHostMin: number;
  pagesPerHostMax: number;
  /** Mean links per page (IRLbot's l = 59), triangular on [0, 2·mean]. */
  linksPerPageMean: number;
  /** Share of a page's links that repeat an earlier link of the same page (intra-page duplicates). */
  dupLinkShare: number;
  /** Share of links to the same host / another host of the same PLD; the rest go to other PLDs. */
  intraHostShare: number;
  intraPldShare: number;
  /** Exponent of the power law choosing the target PLD of external links (PLD in-degree). */
  pldZipf: number;
  /** Mean page size in bytes (IRLbot: 21.5 KB). */
  pageBytesMean: number;
  /** Share of pages that are not HTML (text/plain, application/pdf, image/png). */
  nonHtmlShare: number;
  /** Share of HTML pages that are framesets (links in <frame>). */
  framesetShare: number;
  /** Share of HTML pages carrying <base href> pointing at another host of the same PLD. */
  baseHrefShare: number;
  /** Number of simulated IPs (listeners), 127.1.0.1 upward. */
  ips: number;
  /** Virtual hosting skew: host → IP index floor(ips · u^ipSkew); 1 = uniform, larger = crowded low IPs. */
  ipSkew: number;
  /** DNS TTL in seconds of A and AAAA answers. */
  dnsTtl: number;
  /**
   * Share of hosts that are IPv6-only: no A record, an AAAA record for ::1, served on ::1 (loopback
   * only; every such host shares that one address). www.pld0.test is never one. @default 0
   */
  v6Share: number;
  /** Seeds: the www home pages of PLDs 0..seedCount-1. */
  seedCount: number;
  /** Rates (per host) of robots variants; the remainder is 'allow-all'. */
  robots: Partial<Record<Exclude<RobotsVariant, 'allow-all'>, number>>;
  /** Share of 'rules' hosts whose group for our agent has a Crawl-delay, and its value (s). */
  crawlDelayShare: number;
  crawlDelaySeconds: number;
  /** The product token the 'rules' robots files address in their specific group. */
  robotsAgent: string;
  /** Rates (per host) of hostile behaviours; the remainder is 'normal'. */
  behaviours: Partial<Record<Exclude<Behaviour, 'normal'>, number>>;
  /** Rates (per host) of DNS failures; the remainder is 'ok'. */
  dns: Partial<Record<Exclude<DnsVariant, 'ok'>, number>>;
  /** Rates (per host) of traps. */
  traps: Partial<Record<TrapKind, number>>;
  /** Give each adversity (robots variant, behaviour, DNS failure, trap) to one www host, in order, from PLD 1. */
  coverAll: boolean;
  /** Spam farms `farm<k>.test`: unbounded hosts × pages linking among themselves. */
  spamFarms: number;
  /** How many home pages of the normal web link into each farm (its tiny in-degree). */
  spamInLinks: number;
  /** Links per spam page. */
  spamLinksPerPage: number;
  /** IPs of their own for farm hosts (after the web's `ips`); 0 = farms share the web's IPs. */
  spamIps: number;
  /** Hosts per farm (h0 = www … h<n-1>); 0 = unbounded (every link mints a fresh host). */
  spamHostsPerFarm: number;
  /** Links per farm page to the home pages of other farms (bought in-degree, link cliques). */
  spamCrossLinks: number;
  /**
   * Links of every ordinary HTML page to the home pages of the next `ringLinks` PLDs (pld<i+1>,
   * pld<i+2>, … mod plds): a web whose sites link to each other from every page, so that trust
   * spreads from a seed through all of it. 0 = none.
   */
  ringLinks: number;
  /** Hostile tuning. */
  trickleBytes: number;
  trickleIntervalMs: number;
  retryAfterS: number;
  bombDecodedBytes: number;
  hugeBodyBytes: number;
  redirectChainLength: number;
  /** Share of ordinary hosts with sitemaps (src/simweb/sitemaps.ts); 0 = none. */
  sitemapShare: number;
  /** Pages per sitemap host that only its sitemaps list (/hidden/<k>). */
  sitemapHiddenPages: number;
  /** Entries of the extra /sm/big.xml a sitemap host's index lists; 0 = no such sitemap. */
  sitemapBigEntries: number;
}

export const DEFAULT_PARAMS: WebParams = {
  plds: 20,
  hostsPerPldMean: 2,
  hostsPerPldMax: 50,
  pagesPerHostMin: 20,
  pagesPerHostMax: 200,
  linksPerPageMean: 59,
  dupLinkShare: 0.1,
  intraHostShare: 0.75,
  intraPldShare: 0.05,
  pldZipf: 1.0,
  pageBytesMean: 22016,
  nonHtmlShare: 0.03,
  framesetShare: 0.01,
  baseHrefShare: 0.03,
  ips: 16,
  ipSkew: 2,
  dnsTtl: 300,
  seedCount: 3,
  robots: {},
  crawlDelayShare: 0,
  v6Share: 0,
  crawlDelaySeconds: 1,
  robotsAgent: 'drumcrawl',
  behaviours: {},
  dns: {},
  traps: {},
  coverAll: false,
  spamFarms: 0,
  spamInLinks: 2,
  spamLinksPerPage: 40,
  spamIps: 0,
  spamHostsPerFarm: 0,
  spamCrossLinks: 0,
  ringLinks: 0,
  trickleBytes: 512,
  trickleIntervalMs: 50,
  retryAfterS: 2,
  bombDecodedBytes: 1 << 30,
  hugeBodyBytes: 1 << 30,
  redirectChainLength: 4,
  sitemapShare: 0,
  sitemapHiddenPages: 12,
  sitemapBigEntries: 0,
};

export const PRESETS: Record<SimwebPreset, Partial<WebParams>> = {
  /** A few hosts, ~100 pages, robots rules: exact-coverage end-to-end tests. */
  tiny: {
    plds: 4, hostsPerPldMean: 2.5, hostsPerPldMax: 4, pagesPerHostMin: 12, pagesPerHostMax: 30,
    linksPerPageMean: 12, ips: 3, ipSkew: 1, seedCount: 1, pageBytesMean: 4096,
    robots: { rules: 0.5, absent: 0.2 }, crawlDelayShare: 0,
  },
  /** A few thousand pages across ~50 hosts: a crawl finishes in a minute or two. */
  demo: {
    plds: 25, hostsPerPldMean: 2, hostsPerPldMax: 6, pagesPerHostMin: 30, pagesPerHostMax: 120, ips: 8,
    robots: { rules: 0.3, absent: 0.2, forbidden: 0.03, 'server-error': 0.03 },
    behaviours: { gzip: 0.05, malformed: 0.05, charset: 0.05 },
  },
  /** Thousands of hosts on hundreds of IPs (server benchmarks, crawl benchmarks). */
  bench: {
    plds: 2000, hostsPerPldMean: 2.5, hostsPerPldMax: 200, pagesPerHostMin: 100, pagesPerHostMax: 100000,
    ips: 256, ipSkew: 2, seedCount: 20, robots: { rules: 0.2, absent: 0.3 },
  },
  /** Spam farms and traps on top of a demo-sized web. */
  spam: {
    plds: 25, hostsPerPldMean: 2, hostsPerPldMax: 6, pagesPerHostMin: 30, pagesPerHostMax: 120, ips: 8,
    spamFarms: 2, spamInLinks: 2, traps: { calendar: 0.08, repeat: 0.05, session: 0.05 },
    robots: { rules: 0.2 },
  },
  /** Every adversity on some host (coverAll) plus a normal backbone. */
  hostile: {
    plds: 48, hostsPerPldMean: 1.5, hostsPerPldMax: 4, pagesPerHostMin: 10, pagesPerHostMax: 40, ips: 16,
    coverAll: true, spamFarms: 1, seedCount: 1,
  },
  /** Adversarial webs (a small good web + one spam adversary each): src/simweb/presets/adversary.ts. */
  ...ADVERSARY_PRESETS,
};

function bad(field: string, why: string): never {
  throw new CrawlError('CRAWL_SIMWEB_BAD_PARAM', `simweb params.${field} ${why}`, { details: { field } });
}

/** Merge defaults ← preset ← overrides and validate. */
export function resolveParams(preset: SimwebPreset | undefined, overrides?: Partial<WebParams>): WebParams {
  if (preset !== undefined && !(preset in PRESETS)) bad('preset', `must be one of ${Object.keys(PRESETS).join(', ')}`);
  const p: WebParams = { ...DEFAULT_PARAMS, ...(preset ? PRESETS[preset] : {}), ...(overrides ?? {}) };
  const posInt = (k: keyof WebParams, max = 2 ** 31) => {
    const v = p[k] as number;
    if (!Number.isInteger(v) || v < 1 || v > max) bad(k, `must be an integer in [1, ${max}]`);
  };
  const nonNeg = (k: keyof WebParams) => {
    const v = p[k] as number;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) bad(k, 'must be a finite number ≥ 0');
  };
  const share = (k: keyof WebParams) => {
    const v = p[k] as number;
    if (typeof v !== 'number' || !(v >= 0 && v <= 1)) bad(k, 'must be in [0, 1]');
  };
  posInt('plds', 1e8);
  posInt('hostsPerPldMax', 1e6);
  posInt('pagesPerHostMin', 2 ** 30);
  posInt('pagesPerHostMax', 2 ** 30);
  posInt('ips', 65000);
  posInt('seedCount');
  posInt('redirectChainLength', 50);
  posInt('trickleBytes');
  if (p.pagesPerHostMax < p.pagesPerHostMin) bad('pagesPerHostMax', 'must be ≥ pagesPerHostMin');
  if (!(p.hostsPerPldMean >= 1)) bad('hostsPerPldMean', 'must be ≥ 1');
  for (const k of ['linksPerPageMean', 'pldZipf', 'pageBytesMean', 'dnsTtl', 'crawlDelaySeconds', 'spamInLinks',
    'spamLinksPerPage', 'spamIps', 'spamHostsPerFarm', 'spamCrossLinks', 'ringLinks', 'trickleIntervalMs', 'retryAfterS', 'bombDecodedBytes', 'hugeBodyBytes', 'spamFarms'] as const) nonNeg(k);
  if (!(p.ipSkew > 0)) bad('ipSkew', 'must be > 0');
  for (const k of ['dupLinkShare', 'intraHostShare', 'intraPldShare', 'nonHtmlShare', 'framesetShare',
    'baseHrefShare', 'crawlDelayShare', 'v6Share', 'sitemapShare'] as const) share(k);
  for (const k of ['sitemapHiddenPages', 'sitemapBigEntries'] as const) {
    if (!Number.isInteger(p[k]) || p[k] < 0 || p[k] > 1e6) bad(k, 'must be an integer in [0, 1000000]');
  }
  if (p.intraHostShare + p.intraPldShare > 1) bad('intraPldShare', 'intraHostShare + intraPldShare must be ≤ 1');
  if (typeof p.robotsAgent !== 'string' || !/^[A-Za-z_-]+$/.test(p.robotsAgent)) bad('robotsAgent', 'must be a product token ([A-Za-z_-]+)');
  if (typeof p.coverAll !== 'boolean') bad('coverAll', 'must be true or false');
  if (p.seedCount > p.plds) p.seedCount = p.plds;
  const sumRates = (name: string, r: Record<string, number | undefined>, allowed: readonly string[]) => {
    if (r === null || typeof r !== 'object' || Array.isArray(r)) bad(name, `must be an object of rates (keys: ${allowed.join(', ')})`);
    let s = 0;
    for (const [k, v] of Object.entries(r)) {
      if (!allowed.includes(k)) bad(name, `has unknown key '${k}'`);
      if (v === undefined) continue;
      if (!(v >= 0 && v <= 1)) bad(`${name}.${k}`, 'must be in [0, 1]');
      s += v;
    }
    if (s > 1 + 1e-9) bad(name, 'rates must sum to ≤ 1');
  };
  sumRates('robots', p.robots, ROBOTS_VARIANTS);
  sumRates('behaviours', p.behaviours, BEHAVIOURS);
  sumRates('dns', p.dns, DNS_VARIANTS);
  sumRates('traps', p.traps, TRAP_KINDS);
  return p;
}
