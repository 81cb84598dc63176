/**
 * Adversarial webs for spam-resistance measurements (thesis VI–VII: a spammer controls unbounded
 * hosts and pages, and as many PLDs as it pays for). Every preset is a small good web — the ground
 * truth is `WebGraph.reachable(seeds)`, which never counts a farm page — plus one adversary. The
 * same preset with `spamFarms: 0` is the same good web without the adversary (farm links are
 * appended to a page's own links, so removing them changes nothing else), which is what
 * bench/adversary compares against.
 *
 * Farms are `farm<k>.test` (hosts `www`/`h<j>`); the good web is `pld<i>.test`.
 */
import type { WebParams } from './web-params.js';

export type AdversaryPreset = 'adv-mint' | 'adv-bought' | 'adv-clique' | 'adv-deep';

/**
 * The good web of the measurements, the issue's: 20 PLDs of two hosts (www and one more) of 40
 * pages, a few links per page (each page links to the next one, so hosts are deep chains), and
 * every page links to the home pages of the next two PLDs, so that the sites vouch for each other
 * and trust spreads from the seed through all of them; on 8 IPs, some robots rules and calendar
 * and session-id traps. About a thousand good pages, found from one seed.
 */
const GOOD_WEB: Partial<WebParams> = {
  plds: 20, hostsPerPldMean: 2, hostsPerPldMax: 2, pagesPerHostMin: 40, pagesPerHostMax: 40,
  linksPerPageMean: 4, intraHostShare: 0.7, intraPldShare: 0.1, pldZipf: 0.5, pageBytesMean: 4096,
  ringLinks: 2, ips: 8, ipSkew: 1, seedCount: 1, robots: { rules: 0.15, absent: 0.2 },
  traps: { calendar: 0.1, session: 0.1 },
};

export const ADVERSARY_PRESETS: Record<AdversaryPreset, Partial<WebParams>> = {
  /**
   * Host-minting farm: one farm PLD linked once from the good web (in-degree 1); every farm page
   * links to 20 pages on freshly minted hosts of the farm, spread over 200 IPs of its own.
   */
  'adv-mint': { ...GOOD_WEB, spamFarms: 1, spamInLinks: 1, spamLinksPerPage: 20, spamIps: 200 },
  /**
   * Bought in-degree: 6 farm PLDs (one operator) each linked once from the good web, whose pages
   * link to each other's home pages (in-degree 6 each) and mint hosts, on 200 IPs.
   */
  'adv-bought': { ...GOOD_WEB, spamFarms: 6, spamInLinks: 1, spamLinksPerPage: 20, spamCrossLinks: 3, spamIps: 200 },
  /**
   * Link clique: 60 small spam PLDs (3 hosts each, unbounded pages) linking to each other's home
   * pages, so every one of them soon has an in-degree in the tens; on 100 IPs.
   */
  'adv-clique': {
    ...GOOD_WEB, spamFarms: 60, spamInLinks: 1, spamLinksPerPage: 20, spamCrossLinks: 6, spamHostsPerFarm: 3, spamIps: 100,
  },
  /**
   * A small, deep, politeness-bound good web — 4 PLDs of two hosts of 250 pages on 2 IPs, so the
   * good web can only be crawled at a few hosts' pace — against the host-minting farm.
   */
  'adv-deep': {
    ...GOOD_WEB, plds: 4, pagesPerHostMin: 250, pagesPerHostMax: 250, linksPerPageMean: 3, ips: 2,
    robots: { absent: 0.25 }, spamFarms: 1, spamInLinks: 1, spamLinksPerPage: 20, spamIps: 200,
  },
};

export const ADVERSARY_PRESET_NAMES = Object.keys(ADVERSARY_PRESETS) as AdversaryPreset[];
