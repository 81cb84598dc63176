/**
 * The two "never held back for nothing" measurements of issue #18, as real crawls (the crawler in
 * its own process, flags from config.ts) against simweb over loopback, counted by the server:
 *
 *   farmAloneRate  the host-minting farm of `adv-mint` found from a one-page seed that links to it,
 *                  nothing else in the crawl: its fetches per second over a steady window. bench:adversary
 *                  compares it with the farm's rate in the tail of a crawl of adv-mint with traps
 *                  off (measure.ts `tailS`), when only the farm has work left.
 *   pairRates      two legitimate PLDs of equal budget (both seeds, so the operator vouches for both):
 *                  one politeness-bound by Crawl-delay: 1 (1 page/s), one fast; the fast one's
 *                  pages/s crawled alone and crawled together with the slow one.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isRobotsPath, startSimweb, type RequestLogEntry, type WebParams } from '../../src/simweb/index.js';
import { startCrawlChild } from '../lib/crawl-child.js';
import { ADVERSARY_UA, adversaryCrawlArgs } from './config.js';

interface WindowCount {
  /** Fetches (2xx, non-robots) per host-matching predicate between warm-up end and the end. */
  rate(match: (host: string) => boolean): number;
}

/** Crawls `seeds` of a simweb for warmS + windowS seconds from the first request; counts per host. */
async function crawlWindow(
  preset: 'adv-mint' | undefined, params: Partial<WebParams>, seeds: (web: { seeds: string[]; httpPort: number }) => string[],
  o: { seed?: number; warmS: number; windowS: number; scratch: string; root?: string },
): Promise<WindowCount> {
  const sim = await startSimweb({ ...(preset ? { preset } : {}), seed: o.seed ?? 1, params, logCapacity: 1000 });
  let t0 = 0;
  const counted: Array<{ t: number; host: string }> = [];
  const origAdd = sim.log.add.bind(sim.log);
  sim.log.add = (e: RequestLogEntry): void => {
    origAdd(e);
    if (t0 === 0) t0 = e.start;
    if (isRobotsPath(e.path) || e.status < 200 || e.status > 299) return;
    const t = (e.start - t0) / 1000;
    if (t >= o.warmS && t <= o.warmS + o.windowS) counted.push({ t, host: e.host.toLowerCase().replace(/:\d+$/, '') });
  };
  const dir = fs.mkdtempSync(path.join(o.scratch, 'rate-'));
  const child = startCrawlChild(adversaryCrawlArgs({ seeds: seeds({ seeds: sim.seeds, httpPort: sim.httpPort }), dnsServer: sim.dnsServer, dir }), { root: o.root });
  const startWall = Date.now();
  try {
    while (child.isRunning()) {
      await new Promise((r) => setTimeout(r, 250));
      const t = t0 === 0 ? 0 : (performance.timeOrigin + performance.now() - t0) / 1000;
      if (t > o.warmS + o.windowS + 0.5 || (t0 === 0 && Date.now() - startWall > 120_000)) break;
    }
  } finally {
    await child.stop(10_000);
    await sim.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return { rate: (match) => counted.filter((c) => match(c.host)).length / o.windowS };
}

const FARM = /(^|\.)farm\d+\.test$/;

/**
 * adv-mint's farm with a good web of one page that links to it, seeded there: the farm is found as
 * in adv-mint (not a seed, so its budget is B0, not a vouched seed's) and is alone once that page
 * is fetched.
 */
const FARM_ONLY: Partial<WebParams> = {
  plds: 1, hostsPerPldMean: 1, hostsPerPldMax: 1, pagesPerHostMin: 1, pagesPerHostMax: 1, seedCount: 1, traps: {}, robots: {},
};

/** The adv-mint farm crawled alone (found from a one-page seed, see FARM_ONLY): farm fetches per second. */
export async function farmAloneRate(o: { seed?: number; warmS: number; windowS: number; scratch: string; root?: string }): Promise<number> {
  const w = await crawlWindow('adv-mint', FARM_ONLY, ({ seeds }) => seeds, o);
  return w.rate((h) => FARM.test(h));
}

/**
 * Two PLDs of one 400-page host each, links only within the host, each on its own IP, robots.txt
 * with rules; the simweb seed is searched (deterministically, from `seed`) for one where exactly
 * one of the two hosts declares Crawl-delay: 1 for our agent and both have ≥ 200 pages we may fetch.
 */
const PAIR_WEB: Partial<WebParams> = {
  plds: 2, hostsPerPldMean: 1, hostsPerPldMax: 1, pagesPerHostMin: 400, pagesPerHostMax: 400, linksPerPageMean: 4,
  intraHostShare: 1, intraPldShare: 0, ips: 2, ipSkew: 1, seedCount: 2, robots: { rules: 1 }, crawlDelayShare: 0.5,
  crawlDelaySeconds: 1, traps: {}, spamFarms: 0,
};

async function pairSeed(from: number): Promise<{ seed: number; slow: string; fast: string }> {
  for (let s = from; s < from + 200; s++) {
    const sim = await startSimweb({ seed: s, params: PAIR_WEB, log: false });
    try {
      const hosts = sim.seeds.map((u) => new URL(u).hostname);
      const delays = hosts.map((h) => sim.web.crawlDelayFor(h, ADVERSARY_UA));
      const slow = delays.findIndex((d) => d === 1);
      // Both hosts must have most of their pages open to us (a rules variant may disallow much).
      const reach = [...sim.web.reachable(sim.seeds, { userAgent: ADVERSARY_UA })].map((u) => new URL(u).hostname);
      const open = hosts.every((h) => reach.filter((x) => x === h).length >= 200);
      if (open && slow >= 0 && delays.filter((d) => d === undefined).length === 1) return { seed: s, slow: hosts[slow]!, fast: hosts[1 - slow]! };
    } finally {
      await sim.close();
    }
  }
  throw new Error('pairRates: no simweb seed with exactly one Crawl-delay host in 200 tries');
}

export interface PairRates {
  seed: number;
  fastAlone: number;
  fastTogether: number;
  slowTogether: number;
  /** fastTogether / fastAlone: the issue asks ≥ 0.9. */
  ratio: number;
}

export async function pairRates(o: { seed?: number; warmS: number; windowS: number; scratch: string; root?: string }): Promise<PairRates> {
  const { seed, slow, fast } = await pairSeed(o.seed ?? 1);
  const pick = (host: string) => ({ seeds }: { seeds: string[] }) => seeds.filter((u) => new URL(u).hostname === host);
  const alone = await crawlWindow(undefined, PAIR_WEB, pick(fast), { ...o, seed });
  const both = await crawlWindow(undefined, PAIR_WEB, ({ seeds }) => seeds, { ...o, seed });
  const fastAlone = alone.rate((h) => h === fast);
  const fastTogether = both.rate((h) => h === fast);
  return { seed, fastAlone, fastTogether, slowTogether: both.rate((h) => h === slow), ratio: fastAlone > 0 ? fastTogether / fastAlone : 0 };
}
