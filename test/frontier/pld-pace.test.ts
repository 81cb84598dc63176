/**
 * The low-PLD pace (src/frontier/politeness/politeness.ts): once the crawl has ranked PLDs (B > B0), a PLD
 * with B ≤ B0 is released at most once per τh across all its hosts (pages and robots.txt fetches)
 * while another PLD has URLs queued, so a farm that mints host names gets one host's pace; a crawl
 * left with the farm alone, or one with no ranked PLD (--budget flat), is not paced per PLD. The
 * refill counts a paced PLD's work as one host's (Politeness.dispatchable), so a farm in RAM does
 * not hold BEAST on its current queue. Simulated clock, every fetch completes at once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Frontier, FrontierUrl, UrlKind } from '../../src/frontier/index.js';
import { AddResult, Politeness } from '../../src/frontier/politeness/politeness.js';
import { resolveFrontierOptions } from '../../src/frontier/options.js';
import { fastOptions } from './fast-options.js';

import { TAU_H, crawl, type Site } from './pace-sim.js';

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


test('with a ranked crawl, a farm is paced while another low PLD has work, and not once it is alone', async () => {
  const ms = 3000;
  const ranked: Site = { pld: 3, hosts: 1, urlsPerHost: 3, budget: 1000 }; // crawled within the first 300 ms
  const farm: Site = { pld: 1, hosts: 300, urlsPerHost: 3, budget: 10, at: 2500 };
  const small: Site = { pld: 2, hosts: 1, urlsPerHost: 100, budget: 10, at: 2500 };
  const both = await crawl([ranked, farm, small], ms);
  const farmOnly = await crawl([ranked, farm], ms);
  assert.ok((both.get(1) ?? 0) <= ms / TAU_H + 1, `farm next to a low PLD with work: ${both.get(1)} releases (≤ ${ms / TAU_H + 1})`);
  assert.ok((both.get(2) ?? 0) >= 0.9 * (ms / TAU_H), `the one-host PLD keeps its pace: ${both.get(2)}`);
  assert.ok((farmOnly.get(1) ?? 0) > 10 * (ms / TAU_H), `the farm alone is not paced per PLD: ${farmOnly.get(1)}`);
});

/** Puts `urls` URLs on each of `hosts` hosts of PLD `pld` into RAM (robots known at once). */
function fill(pol: Politeness, now: number, pld: number, hosts: number, urls: number, budget: number): void {
  for (let h = 0; h < hosts; h++) {
    for (let k = 0; k < urls; k++) {
      const u = new FrontierUrl({ url: `http://h${h}.p${pld}.test/${k}`, hostHi: pld * 100_000 + h, hostLo: 7, pldHi: pld, pldLo: 9, budget, admitted: k + 1 });
      if (pol.add(u, now) === AddResult.NeedRobots) {
        pol.robotsKnown(u.hostHi, u.hostLo, { rules: null, ip: `10.${h % 200}.0.${pld}`, expiresAt: Infinity }, now);
        assert.equal(pol.add(u, now), AddResult.Added);
      }
    }
  }
}

test('the refill does not count a paced farm\'s work: dispatchable = potential less the low PLDs\' part while the pace holds', () => {
  const pol = new Politeness(resolveFrontierOptions(fastOptions({ maxUrlsPerHost: 1000 })), () => {});
  pol.setHorizon(5000);
  const now = 1_000_000;
  const put = (pld: number, hosts: number, urls: number, budget: number): void => fill(pol, now, pld, hosts, urls, budget);
  put(2, 2, 100, 1000); // ranked: 2 hosts of 100 URLs
  const ranked = pol.potential;
  put(1, 300, 20, 10); // the farm: 300 hosts × 20 URLs, each host 20 ≤ W/τh
  assert.equal(pol.potential, ranked + 300 * 20, 'every host counted on its own');
  assert.equal(pol.dispatchable(now), ranked, 'the paced farm not counted');
  assert.equal(pol.dispatchable(now + 10_000), pol.potential, 'no other PLD active any more: no pace, nothing capped');
});

test('readyRanked (the pipeline\'s work on hand): hosts with URLs queued, every host until a ranked PLD is seen, then only ranked PLDs\' hosts', () => {
  const pol = new Politeness(resolveFrontierOptions(fastOptions({ maxUrlsPerHost: 1000 })), () => {});
  const now = 1_000_000;
  const put = (pld: number, hosts: number, urls: number, budget: number): void => fill(pol, now, pld, hosts, urls, budget);
  put(1, 50, 20, 10);
  assert.equal(pol.readyRanked(), 50, 'no ranked PLD yet (a flat crawl): every host with URLs counts, once');
  put(2, 2, 30, 1000);
  assert.equal(pol.readyRanked(), 2, 'the farm\'s 50 hosts no longer count; each ranked host counts once, whatever its queue');
  const out: FrontierUrl[] = [];
  const n = pol.nextReady(now, 1000, out);
  const ranked = out.slice(0, n).filter((u) => u.budget > 10).length;
  assert.ok(ranked > 0 && n > ranked, `released ${ranked} ranked of ${n}`);
  assert.equal(pol.readyRanked(), 2, 'a host in flight with more URLs queued still counts');
});

test('a paced PLD holds at most two horizons of its pace in RAM + QR; the rest waits in BEAST', async () => {
  const clock = { now: 1_000_000 };
  const f = await Frontier.open(null, fastOptions({ refillHorizonMs: 5000 }), () => clock.now);
  const site = (pld: number, host: number, k: number, budget: number): FrontierUrl =>
    new FrontierUrl({ url: `http://h${host}.p${pld}.test/${k}`, hostHi: pld * 100_000 + host, hostLo: 7, pldHi: pld, pldLo: 9, budget, admitted: 1 });
  const farm: FrontierUrl[] = [];
  for (let h = 0; h < 2000; h++) farm.push(site(1, h, 0, 10)); // minted hosts, one URL each
  await f.admit([site(3, 0, 0, 1000), site(2, 0, 0, 10), site(2, 0, 1, 10)], { durable: false });
  await f.admit(farm, { durable: false });
  for (let i = 0; i < 20; i++) {
    await f.refill();
    clock.now += 10;
  }
  const st = f.stats();
  const cap = 2 * (5000 / TAU_H);
  assert.ok(st.qr + st.ramUrls <= cap + 3, `in RAM + QR: ${st.qr + st.ramUrls} (farm cap ${cap}, plus 3 other URLs)`);
  assert.ok(st.beastQueued + st.qf >= 2000 - cap, `the rest of the farm waits in BEAST (its queues, QF and QH): ${st.beastQueued + st.qf}`);
  await f.close();
});


test('a robots.txt fetch the pace holds does not hold up its IP\'s other hosts', () => {
  const pol = new Politeness(resolveFrontierOptions(fastOptions({ maxUrlsPerHost: 1000, maxConnectionsPerIp: 8 })), () => {});
  const t0 = 1_000_000;
  fill(pol, t0, 2, 1, 400, 1000); // a ranked host on 10.0.0.2, one URL per 20 ms (τh0)
  // A low PLD's 20 new hosts on the same IP, all waiting for their robots.txt.
  for (let h = 0; h < 20; h++) {
    const u = new FrontierUrl({ url: `http://h${h}.p1.test/`, hostHi: 100_000 + h, hostLo: 7, pldHi: 1, pldLo: 9, budget: 10, admitted: 1 });
    assert.equal(pol.add(u, t0), AddResult.NeedRobots);
  }
  for (const q of pol.takeRobotsRequests(100)) assert.ok(pol.scheduleRobotsFetch(q.hostHi, q.hostLo, '10.0.0.2', t0));
  let ranked = 0;
  let robots = 0;
  const out: FrontierUrl[] = [];
  for (let now = t0; now < t0 + 2000; now++) {
    const n = pol.nextReady(now, 100, out);
    for (const u of out.slice(0, n)) {
      if (u.kind === UrlKind.Robots) robots++;
      else if (u.pldHi === 2) ranked++;
      pol.fetchDone(u, undefined, now);
    }
  }
  assert.ok(robots >= 15 && robots <= 2000 / TAU_H + 1, `the low PLD's robots.txt at one host's pace: ${robots}`);
  assert.ok(ranked >= 0.9 * (2000 / 20), `the ranked host on the same IP kept its pace: ${ranked} releases (of ${2000 / 20})`);
});
