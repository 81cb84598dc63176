/**
 * The parameters of a simulated web (WebParams) and the variants a host can take: what params.ts
 * fills in from defaults and presets, and what each preset (adversary-presets.ts) overrides.
 */
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
  /** Share of ordinary hosts with sitemaps (src/simweb/model/sitemaps.ts); 0 = none. */
  sitemapShare: number;
  /** Pages per sitemap host that only its sitemaps list (/hidden/<k>). */
  sitemapHiddenPages: number;
  /** Entries of the extra /sm/big.xml a sitemap host's index lists; 0 = no such sitemap. */
  sitemapBigEntries: number;
}
