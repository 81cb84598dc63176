/**
 * A simulated crawl for the low-PLD pace's tests (pld-pace.ts): sites of many hosts admitted into a
 * Frontier on a simulated clock, robots.txt answered and every fetch done at once; counts releases
 * per PLD in a window.
 */
import { Frontier, FrontierUrl, UrlKind, type FrontierOptions } from '../../src/frontier/index.js';
import { fastOptions } from './fast-options.js';

export const TAU_H = 100; // fastOptions' hostDelayMs

export interface Site {
  pld: number;
  /** Admitted this many ms after the start (a farm is found after the seeds). */
  at?: number;
  hosts: number;
  urlsPerHost: number;
  budget: number;
  /** The PLD's (trusted) in-degree STAR gave its URLs (default: not known). */
  indegree?: number;
  /** Admitted counts P run on across hosts (1 … hosts·urlsPerHost) rather than per host (1 … urlsPerHost). */
  spread?: boolean;
}

export interface CrawlOptions {
  /** Frontier options over fastOptions' (e.g. trustThreshold). */
  frontier?: FrontierOptions;
  /** PLDs STAR promotes to trusted through links (Frontier.trustPromoted), and when (ms after the start). */
  promote?: Array<{ pld: number; at: number }>;
}

/**
 * Crawls `sites` for `ms` of simulated time after the last one is admitted; returns the releases
 * (pages + robots.txt) per PLD in that window, and the pages alone.
 */
export async function crawl(sites: Site[], ms: number, o: CrawlOptions = {}): Promise<Map<number, number>> {
  return (await crawlCounts(sites, ms, o)).all;
}

export async function crawlCounts(sites: Site[], ms: number, o: CrawlOptions = {}): Promise<{ all: Map<number, number>; pages: Map<number, number> }> {
  const clock = { now: 1_000_000 };
  const t0 = clock.now;
  const f = await Frontier.open(null, fastOptions({ maxConnectionsPerIp: 4, maxUrlsPerHost: 1000, ...o.frontier }), () => clock.now);
  let id = 0;
  const admit = async (s: Site): Promise<void> => {
    const urls: FrontierUrl[] = [];
    for (let h = 0; h < s.hosts; h++) {
      for (let k = 0; k < s.urlsPerHost; k++) {
        urls.push(new FrontierUrl({
          url: `http://h${h}.p${s.pld}.test/${id++}`, hostHi: s.pld * 100_000 + h, hostLo: 7, pldHi: s.pld, pldLo: 9, budget: s.budget,
          admitted: s.spread ? h * s.urlsPerHost + k + 1 : k + 1, ...(s.indegree === undefined ? {} : { indegree: s.indegree }),
        }));
      }
    }
    await f.admit(urls, { durable: false });
  };
  const waiting = [...sites].sort((a, b) => (a.at ?? 0) - (b.at ?? 0));
  const promote = [...(o.promote ?? [])].sort((a, b) => a.at - b.at);
  const start = t0 + Math.max(...sites.map((s) => s.at ?? 0));
  const all = new Map<number, number>();
  const pages = new Map<number, number>();
  const end = start + ms;
  while (clock.now < end) {
    while (waiting.length > 0 && t0 + (waiting[0]!.at ?? 0) <= clock.now) await admit(waiting.shift()!);
    while (promote.length > 0 && t0 + promote[0]!.at <= clock.now) f.trustPromoted(Uint32Array.from([promote.shift()!.pld, 9]));
    await f.refill();
    for (const q of f.takeRobotsRequests(1000)) f.scheduleRobotsFetch(q.hostHi, q.hostLo, `10.${q.hostHi % 200}.0.${(q.hostHi >>> 8) % 250}`);
    for (const u of f.nextReady(clock.now, 1000)) {
      const pld = Math.floor(u.hostHi / 100_000);
      if (clock.now >= start) {
        all.set(pld, (all.get(pld) ?? 0) + 1);
        if (u.kind === UrlKind.Page) pages.set(pld, (pages.get(pld) ?? 0) + 1);
      }
      if (u.kind === UrlKind.Robots) f.robotsKnown(u.hostHi, u.hostLo, { rules: null, ip: u.ip, expiresAt: Infinity });
      f.fetchDone(u);
    }
    clock.now += 1;
  }
  await f.close();
  return { all, pages };
}
