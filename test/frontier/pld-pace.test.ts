/**
 * The low-PLD pace (src/frontier/politeness.ts): while a PLD of budget B > B0 is crawling, a PLD
 * with B ≤ B0 is released at most once per τh across all its hosts (pages and robots.txt fetches),
 * so a farm that mints host names gets one host's pace; with no B > B0 PLD crawling nothing is
 * paced per PLD. Simulated clock, every fetch completes at once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Frontier, FrontierUrl, UrlKind } from '../../src/frontier/index.js';
import { fastOptions } from './fast-options.js';

const TAU_H = 100; // fastOptions' hostDelayMs

interface Site {
  pld: number;
  /** Admitted this many ms after the start (a farm is found after the seeds). */
  at?: number;
  hosts: number;
  urlsPerHost: number;
  budget: number;
}

/**
 * Crawls `sites` for `ms` of simulated time after the last one is admitted; returns the releases
 * (pages + robots.txt) per PLD in that window.
 */
async function crawl(sites: Site[], ms: number): Promise<Map<number, number>> {
  const clock = { now: 1_000_000 };
  const t0 = clock.now;
  const f = await Frontier.open(null, fastOptions({ maxConnectionsPerIp: 4, maxUrlsPerHost: 1000 }), () => clock.now);
  let id = 0;
  const admit = async (s: Site): Promise<void> => {
    const urls: FrontierUrl[] = [];
    for (let h = 0; h < s.hosts; h++) {
      for (let k = 0; k < s.urlsPerHost; k++) {
        urls.push(new FrontierUrl({
          url: `http://h${h}.p${s.pld}.test/${id++}`, hostHi: s.pld * 100_000 + h, hostLo: 7, pldHi: s.pld, pldLo: 9, budget: s.budget, admitted: k + 1,
        }));
      }
    }
    await f.admit(urls, { durable: false });
  };
  const waiting = [...sites].sort((a, b) => (a.at ?? 0) - (b.at ?? 0));
  const start = t0 + Math.max(...sites.map((s) => s.at ?? 0));
  const released = new Map<number, number>();
  const end = start + ms;
  while (clock.now < end) {
    while (waiting.length > 0 && t0 + (waiting[0]!.at ?? 0) <= clock.now) await admit(waiting.shift()!);
    await f.refill();
    for (const q of f.takeRobotsRequests(1000)) f.scheduleRobotsFetch(q.hostHi, q.hostLo, `10.${q.hostHi % 200}.0.${(q.hostHi >>> 8) % 250}`);
    for (const u of f.nextReady(clock.now, 1000)) {
      const pld = Math.floor(u.hostHi / 100_000);
      if (clock.now >= start) released.set(pld, (released.get(pld) ?? 0) + 1);
      if (u.kind === UrlKind.Robots) f.robotsKnown(u.hostHi, u.hostLo, { rules: null, ip: u.ip, expiresAt: Infinity });
      f.fetchDone(u);
    }
    clock.now += 1;
  }
  await f.close();
  return released;
}

test('a minting farm (B0, 300 hosts) gets one host\'s pace while a ranked PLD crawls; the ranked PLD is not slowed', async () => {
  const ms = 3000;
  const farm: Site = { pld: 1, hosts: 300, urlsPerHost: 2, budget: 10 };
  const good: Site = { pld: 2, hosts: 4, urlsPerHost: 200, budget: 1000 };
  const both = await crawl([good, { ...farm, at: 1500 }], ms);
  const goodAlone = await crawl([good, { pld: 3, hosts: 0, urlsPerHost: 0, budget: 10, at: 1500 }], ms); // same window
  const farmAlone = await crawl([farm], ms);
  const farmWith = both.get(1) ?? 0;
  assert.ok(farmWith <= ms / TAU_H + 1, `farm released ${farmWith} in ${ms} ms next to a ranked PLD (≤ ${ms / TAU_H + 1})`);
  assert.ok(farmWith >= ms / TAU_H / 2, `farm still crawled at about one host's pace: ${farmWith}`);
  assert.ok((farmAlone.get(1) ?? 0) > 10 * farmWith, `alone the farm is not paced per PLD: ${farmAlone.get(1)} vs ${farmWith}`);
  assert.ok((both.get(2) ?? 0) >= 0.9 * (goodAlone.get(2) ?? 0), `ranked PLD ${both.get(2)} with the farm vs ${goodAlone.get(2)} alone`);
});

test('without a ranked PLD (e.g. --budget flat) no PLD is paced per PLD', async () => {
  const ms = 2000;
  const a: Site = { pld: 1, hosts: 50, urlsPerHost: 10, budget: 10 };
  const b: Site = { pld: 2, hosts: 50, urlsPerHost: 10, budget: 10 };
  const r = await crawl([a, b], ms);
  for (const pld of [1, 2]) assert.ok((r.get(pld) ?? 0) > 5 * (ms / TAU_H), `PLD ${pld}: ${r.get(pld)} releases`);
});

test('a one-host low PLD keeps its own pace next to a ranked PLD', async () => {
  const ms = 3000;
  const small: Site = { pld: 1, hosts: 1, urlsPerHost: 100, budget: 10 };
  const good: Site = { pld: 2, hosts: 4, urlsPerHost: 200, budget: 1000 };
  const alone = await crawl([small], ms);
  const both = await crawl([good, { ...small, at: 1500 }], ms);
  assert.ok((both.get(1) ?? 0) >= 0.9 * (alone.get(1) ?? 0), `one-host PLD ${both.get(1)} next to a ranked one vs ${alone.get(1)} alone`);
});
