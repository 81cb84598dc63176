/**
 * Per-PLD pacing (src/frontier/capacity.ts; thesis VI.2: a budget is pages per unit of time): a
 * PLD that mints host names cannot take the crawl's fetches while other PLDs have work, yet a crawl
 * left with only that PLD runs at full speed, and a fast site is not slowed to a slow one's pace.
 * Virtual clock, the real Frontier in RAM, every fetch takes 5 ms.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Frontier, FrontierUrl, UrlKind, type FrontierOptions } from '../../src/frontier/index.js';
import { fastOptions } from './fast-options.js';

const TAU_H = 50;
const FETCH_MS = 5;

interface Site {
  pld: number;
  hosts: number;
  urls: number;
  budget: number;
  /** Crawl-delay of its hosts (ms), 0 = none. */
  crawlDelayMs?: number;
}

interface Run {
  pages: Map<number, number>;
  robots: Map<number, number>;
  /** Virtual ms at which each PLD fetched its last page. */
  lastAt: Map<number, number>;
  ms: number;
}

/** Crawls `sites` (every site's URLs admitted at once) for at most `maxMs` virtual ms. */
async function crawl(sites: Site[], maxMs: number, pacing: FrontierOptions['pldPacing'], stopAtPages?: (pages: Map<number, number>) => boolean): Promise<Run> {
  let now = 1_000_000;
  const t0 = now;
  const f = await Frontier.open(null, fastOptions({
    hostDelayMs: TAU_H, minHostDelayMs: TAU_H, ipDelayMs: 0, minIpDelayMs: 0, ramUrls: 100_000, maxUrlsPerHost: 1000,
    maxConnectionsPerIp: 8, beast: { initialQueues: 2, maxQueues: 64 }, pldPacing: pacing,
  }), () => now);
  const delay = new Map<number, number>();
  const urls: FrontierUrl[] = [];
  for (const s of sites) {
    for (let k = 0; k < s.urls; k++) {
      const host = s.pld * 100_000 + (k % s.hosts);
      delay.set(host, s.crawlDelayMs ?? 0);
      urls.push(new FrontierUrl({ url: `http://h${k % s.hosts}.p${s.pld}.test/u${k}`, hostHi: host, hostLo: 7, pldHi: s.pld, pldLo: 1, budget: s.budget, admitted: k + 1 }));
    }
  }
  await f.admit(urls, { durable: false });
  const pages = new Map<number, number>();
  const robots = new Map<number, number>();
  const lastAt = new Map<number, number>();
  const inFlight: Array<{ u: FrontierUrl; done: number }> = [];
  while (now - t0 < maxMs) {
    await f.refill();
    for (const r of f.takeRobotsRequests(10_000)) f.scheduleRobotsFetch(r.hostHi, r.hostLo, `10.0.${(r.hostHi >> 8) & 255}.${r.hostHi & 255}`);
    for (const u of f.nextReady(now, 10_000)) {
      const pld = Math.floor(u.hostHi / 100_000);
      if (u.kind === UrlKind.Robots) robots.set(pld, (robots.get(pld) ?? 0) + 1);
      else {
        pages.set(pld, (pages.get(pld) ?? 0) + 1);
        lastAt.set(pld, now - t0);
      }
      inFlight.push({ u, done: now + FETCH_MS });
    }
    for (let i = inFlight.length - 1; i >= 0; i--) {
      const x = inFlight[i]!;
      if (x.done > now) continue;
      inFlight.splice(i, 1);
      if (x.u.kind === UrlKind.Robots) {
        const cd = delay.get(x.u.hostHi) ?? 0;
        f.robotsKnown(x.u.hostHi, x.u.hostLo, { rules: null, ip: x.u.ip, expiresAt: Infinity, ...(cd > 0 ? { crawlDelayMs: cd } : {}) });
      }
      f.fetchDone(x.u);
    }
    if ((f.isEmpty() && inFlight.length === 0) || stopAtPages?.(pages)) break;
    now += 1;
  }
  await f.close({ commit: false });
  return { pages, robots, lastAt, ms: now - t0 };
}

const FARM = 9;
/** 20 reputable PLDs (budget 1,000, 2 hosts of 40 URLs each) and one farm of B0 with 2,000 hosts. */
const web = (farm: boolean): Site[] => [
  ...Array.from({ length: 20 }, (_, i) => ({ pld: 10 + i, hosts: 2, urls: 80, budget: 1000 })),
  ...(farm ? [{ pld: FARM, hosts: 2000, urls: 6000, budget: 10 }] : []),
];
const sum = (m: Map<number, number>, keep: (pld: number) => boolean): number => [...m].filter(([p]) => keep(p)).reduce((a, [, n]) => a + n, 0);

test('a host-minting farm of B0 takes at most its pace while reputable PLDs have work; without pacing it takes most fetches', async () => {
  // Both runs stop when the good web is crawled: the farm's share is the share before that point.
  const goodAll = (m: Map<number, number>): boolean => sum(m, (p) => p !== FARM) >= 1600;
  const paced = await crawl(web(true), 30_000, undefined, goodAll);
  const open = await crawl(web(true), 30_000, false, goodAll);
  const share = (r: Run): number => {
    const farm = sum(r.pages, (p) => p === FARM) + sum(r.robots, (p) => p === FARM);
    return farm / (farm + sum(r.pages, (p) => p !== FARM) + sum(r.robots, (p) => p !== FARM));
  };
  assert.equal(sum(paced.pages, (p) => p !== FARM), 1600, 'every good page is fetched');
  const sp = share(paced);
  const so = share(open);
  console.log(`farm share of fetches until the good web is crawled: paced ${sp.toFixed(3)} in ${paced.ms} ms, unpaced ${so.toFixed(3)} in ${open.ms} ms`);
  assert.ok(sp <= 0.25, `paced: farm share ${sp.toFixed(3)} ≤ 0.25`);
  assert.ok(so > 0.5, `unpaced: farm share ${so.toFixed(3)} > 0.5 (the failure the pacing prevents)`);
});

test('with only the farm left, pacing costs nothing: its rate is ≥ 90 % of the unpaced rate', async () => {
  const farmOnly = [{ pld: FARM, hosts: 2000, urls: 4000, budget: 10 }];
  const paced = await crawl(farmOnly, 3000, undefined);
  const open = await crawl(farmOnly, 3000, false);
  const p = sum(paced.pages, () => true);
  const o = sum(open.pages, () => true);
  assert.ok(o > 1000, `unpaced farm pages in 3 s: ${o}`);
  assert.ok(p >= 0.9 * o, `paced ${p} ≥ 0.9 × unpaced ${o}`);
});

test('a fast PLD beside a politeness-bound one of equal budget (1 page/s) keeps ≥ 90 % of its rate alone', async () => {
  const fast = { pld: 1, hosts: 1, urls: 150, budget: 10 };
  const slow = { pld: 2, hosts: 1, urls: 150, budget: 10, crawlDelayMs: 1000 };
  const alone = await crawl([fast], 10_000, undefined);
  const both = await crawl([fast, slow], 10_000, undefined);
  const rate = (r: Run): number => (r.pages.get(1) ?? 0) / (r.lastAt.get(1)! / 1000);
  console.log(`fast PLD alone ${rate(alone).toFixed(1)}/s, beside the slow one ${rate(both).toFixed(1)}/s; slow PLD ${both.pages.get(2)} pages`);
  assert.equal(both.pages.get(1), 150);
  assert.ok((both.pages.get(2) ?? 0) >= 5 && (both.pages.get(2) ?? 0) <= 12, `slow PLD at ~1 page/s: ${both.pages.get(2)}`);
  assert.ok(rate(both) >= 0.9 * rate(alone), `fast PLD together ${rate(both).toFixed(1)}/s ≥ 0.9 × alone ${rate(alone).toFixed(1)}/s`);
});
