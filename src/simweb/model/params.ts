/**
 * The knobs of the simulated web, with units and defaults, and the named presets. Every field is
 * documented in docs/simweb.md; `resolveParams` merges a preset with overrides once and validates.
 */
import { CrawlError } from '../../errors.js';
import { ADVERSARY_PRESETS, type AdversaryPreset } from './adversary-presets.js';
import { ROBOTS_VARIANTS, BEHAVIOURS, DNS_VARIANTS, TRAP_KINDS, type WebParams } from './web-params.js';


export type SimwebPreset = 'tiny' | 'demo' | 'bench' | 'spam' | 'hostile' | AdversaryPreset;

export { ROBOTS_VARIANTS, BEHAVIOURS, DNS_VARIANTS, TRAP_KINDS, type RobotsVariant, type Behaviour, type DnsVariant, type TrapKind, type WebParams } from './web-params.js';

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
