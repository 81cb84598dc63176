/**
 * The capacity gate (src/frontier/capacity.ts) on a virtual clock: a host-minting farm (budget B0,
 * one fresh host per URL, IPs of its own) against a politeness-bound reputable web (budget 2·B0);
 * the farm alone; and two reputable PLDs of equal budget, one held to 1 page/s by Crawl-delay.
 * Fetches take 5 ms; at most 64 are in flight (the crawler's fetch concurrency).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Frontier, FrontierUrl, UrlKind } from '../../src/frontier/index.js';
import { fastOptions } from './fast-options.js';

interface Spec {
  /** Reputable PLDs: hosts per PLD, URLs per host, budget. */
  good?: { plds: number; hosts: number; urls: number; budget: number };
  /** Farm URLs (one fresh host each, budget 10). */
  farmUrls?: number;
  /** A reputable PLD of one host held to 1 page/s (Crawl-delay 1 s), and a fast one of 50 hosts. */
  slowAndFast?: { slow: boolean; fast: boolean };
  capacityShare?: number;
  ms: number;
}

interface Out {
  good: number;
  farm: number;
  fast: number;
  /** Page releases of the farm and of everyone while reputable URLs were still unreleased. */
  farmWhileGood: number;
  allWhileGood: number;
  /** Time (ms) the last reputable URL was released. */
  goodDoneAt: number;
  farmAfter: Array<[number, number]>;
}

const GOOD = 1, FARM = 2, SLOW = 3, FAST = 4;

async function run(s: Spec): Promise<Out> {
  const t0 = 1_000_000;
  let now = t0;
  const f = await Frontier.open(null, fastOptions({
    hostDelayMs: 50, minHostDelayMs: 50, ipDelayMs: 0, minIpDelayMs: 0, ramUrls: 50_000, maxUrlsPerHost: 1000,
    maxConnectionsPerIp: 4, beast: { initialQueues: 2, maxQueues: 64 }, minReadyUrls: 100,
    ...(s.capacityShare === undefined ? {} : { capacityShare: s.capacityShare }),
  }), () => now);
  const P = new Map<number, number>();
  let id = 0;
  const mk = (kind: number, pld: number, host: number, budget: number): FrontierUrl => {
    const key = kind * 1_000_000 + pld;
    const p = (P.get(key) ?? 0) + 1;
    P.set(key, p);
    return new FrontierUrl({ url: `http://h${host}.p${pld}.k${kind}.test/u${id++}`, hostHi: host, hostLo: kind, pldHi: pld, pldLo: kind, budget, admitted: p });
  };
  const urls: FrontierUrl[] = [];
  let goodTotal = 0;
  if (s.good) {
    const g = s.good;
    for (let k = 0; k < g.urls; k++) for (let p = 0; p < g.plds; p++) for (let h = 0; h < g.hosts; h++) urls.push(mk(GOOD, p, p * g.hosts + h, g.budget));
    goodTotal = g.plds * g.hosts * g.urls;
  }
  for (let k = 0; k < (s.farmUrls ?? 0); k++) urls.push(mk(FARM, 0, 100_000 + k, 10));
  if (s.slowAndFast) {
    for (let k = 0; k < 2000; k++) {
      if (s.slowAndFast.slow) urls.push(mk(SLOW, 0, 0, 20));
      if (s.slowAndFast.fast) urls.push(mk(FAST, 0, 1 + (k % 50), 20));
    }
  }
  await f.admit(urls, { durable: false });
  const ipOf = (kind: number, host: number): string => (kind === FARM ? `10.9.0.${host % 200}` : `10.${kind}.0.${host % 4}`);
  const flight: Array<{ u: FrontierUrl; at: number }> = [];
  const out: Out = { good: 0, farm: 0, fast: 0, farmWhileGood: 0, allWhileGood: 0, goodDoneAt: -1, farmAfter: [] };
  for (let tick = 0; tick < s.ms; tick++) {
    await f.refill();
    for (const r of f.takeRobotsRequests(100_000)) f.scheduleRobotsFetch(r.hostHi, r.hostLo, ipOf(r.hostLo, r.hostHi));
    for (let k = flight.length - 1; k >= 0; k--) {
      if (flight[k]!.at > now) continue;
      const u = flight[k]!.u;
      flight.splice(k, 1);
      if (u.kind === UrlKind.Robots) {
        f.robotsKnown(u.hostHi, u.hostLo, { rules: null, ip: u.ip, expiresAt: Infinity, ...(u.hostLo === SLOW ? { crawlDelayMs: 1000 } : {}) });
      }
      f.fetchDone(u);
    }
    for (const u of f.nextReady(now, 64 - flight.length)) {
      flight.push({ u, at: now + 5 });
      if (u.kind === UrlKind.Robots) continue;
      const goodLeft = out.good < goodTotal;
      if (u.pldLo === GOOD) out.good++;
      else if (u.pldLo === FARM) out.farm++;
      else if (u.pldLo === FAST) out.fast++;
      if (goodLeft) {
        out.allWhileGood++;
        if (u.pldLo === FARM) out.farmWhileGood++;
        if (out.good === goodTotal) out.goodDoneAt = now - t0;
      }
    }
    if (tick % 100 === 99) out.farmAfter.push([tick + 1, out.farm]);
    now += 1;
  }
  await f.close();
  return out;
}

const GOOD_WEB = { plds: 20, hosts: 2, urls: 40, budget: 20 }; // 1,600 URLs, 40 hosts at τh = 50 ms: ≥ 2 s

test('a host-minting farm of budget B0 gets ≤ 1/8 of the releases while reputable PLDs have work (and most of them without the gate)', async () => {
  const gated = await run({ good: GOOD_WEB, farmUrls: 20_000, ms: 4000 });
  const off = await run({ good: GOOD_WEB, farmUrls: 20_000, ms: 4000, capacityShare: 1 });
  const alone = await run({ good: GOOD_WEB, ms: 4000 });
  const share = gated.farmWhileGood / gated.allWhileGood;
  assert.ok(gated.goodDoneAt > 0 && alone.goodDoneAt > 0, `good web done: gated ${gated.goodDoneAt} ms, alone ${alone.goodDoneAt} ms`);
  assert.ok(share <= 0.125 + 8 / gated.allWhileGood, `gate on: farm ${gated.farmWhileGood} of ${gated.allWhileGood} releases (${(100 * share).toFixed(1)} %)`);
  // The good web is politeness-bound: the gate costs it nothing (the farm only fills slots it cannot use anyway).
  assert.ok(gated.goodDoneAt <= alone.goodDoneAt * 1.05 + 10, `good web done at ${gated.goodDoneAt} ms vs ${alone.goodDoneAt} ms alone`);
  const offShare = off.farmWhileGood / off.allWhileGood;
  assert.ok(offShare > 0.5, `gate off: farm share ${(100 * offShare).toFixed(1)} % (the farm's fresh hosts are always due)`);
});

test('only the farm left: it is crawled at full speed (the gate lifts once reputable work is gone)', async () => {
  const farmOnlyOn = await run({ farmUrls: 20_000, ms: 1500 });
  const farmOnlyOff = await run({ farmUrls: 20_000, ms: 1500, capacityShare: 1 });
  assert.ok(farmOnlyOn.farm >= 0.99 * farmOnlyOff.farm, `farm alone: ${farmOnlyOn.farm} releases gated vs ${farmOnlyOff.farm} without the gate`);
  // Mixed: after the good web is done (+ the 2 s grace), the farm's rate equals its rate alone.
  const mixed = await run({ good: GOOD_WEB, farmUrls: 40_000, ms: 7000 });
  const at = (o: Out, t: number): number => o.farmAfter.find((p) => p[0] === t)![1];
  const from = Math.ceil((mixed.goodDoneAt + 2000) / 100) * 100 + 100;
  assert.ok(from + 1000 <= 7000, `good web done at ${mixed.goodDoneAt} ms`);
  const mixedRate = at(mixed, from + 1000) - at(mixed, from);
  const aloneRate = at(farmOnlyOff, 1500) - at(farmOnlyOff, 500);
  assert.ok(mixedRate >= 0.9 * aloneRate, `farm after the good web: ${mixedRate} releases/s vs ${aloneRate} alone`);
});

test('two reputable PLDs of equal budget: the fast one keeps ≥ 90 % of its rate beside one held to 1 page/s', async () => {
  const alone = await run({ slowAndFast: { slow: false, fast: true }, ms: 2000 });
  const together = await run({ slowAndFast: { slow: true, fast: true }, ms: 2000 });
  assert.ok(alone.fast > 1000, `fast PLD alone: ${alone.fast} pages in 2 s`);
  assert.ok(together.fast >= 0.9 * alone.fast, `fast PLD: ${together.fast} pages beside the slow one vs ${alone.fast} alone`);
});
