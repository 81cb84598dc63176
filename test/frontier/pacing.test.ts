/**
 * Refill pacing (thesis VII.2): BEAST's current queue is read about as fast as it is crawled, so a
 * spam farm's share of the crawl follows its budget per queue pass, not its number of hosts. With
 * ample RAM and no pacing, the whole ring lands in RAM and the politeness heaps (one request per
 * host per τh) hand most fetches to the farm with thousands of hosts — what bench:star measured on
 * the real crawler (farms 44 % of pages with STAR budgets on).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Frontier, FrontierUrl, UrlKind } from '../../src/frontier/index.js';
import { fastOptions } from './fast-options.js';

async function farmShare(refillHorizonMs: number): Promise<{ share: number; pages: number; ram: number }> {
  let now = 1_000_000;
  const f = await Frontier.open(
    null,
    fastOptions({
      hostDelayMs: 1000,
      minHostDelayMs: 1000,
      ipDelayMs: 0,
      minIpDelayMs: 0,
      ramUrls: 100_000,
      maxUrlsPerHost: 1000,
      maxConnectionsPerIp: 4,
      beast: { initialQueues: 2, maxQueues: 64 },
      refillHorizonMs,
      minReadyUrls: 100,
    }),
    () => now,
  );
  // 100 legitimate PLDs (one host each, 200 URLs) and 4 farms (500 hosts each, 2,000 URLs); every
  // PLD has budget B = 10, so a farm gets 10 URLs per queue pass, like any other PLD.
  const P = new Map<number, number>();
  const urls: FrontierUrl[] = [];
  let id = 0;
  const mk = (pld: number, host: number): FrontierUrl => {
    const p = (P.get(pld) ?? 0) + 1;
    P.set(pld, p);
    return new FrontierUrl({ url: `http://h${host}.p${pld}.test/u${id++}`, hostHi: host, hostLo: 7, pldHi: pld, pldLo: 1, budget: 10, admitted: p });
  };
  for (let k = 0; k < 2000; k++) {
    for (let pld = 0; pld < 100; pld++) if (k < 200) urls.push(mk(pld, pld));
    for (let farm = 0; farm < 4; farm++) urls.push(mk(1000 + farm, 10_000 + farm * 1000 + (k % 500)));
  }
  await f.admit(urls, { durable: false });
  let pages = 0;
  let farmPages = 0;
  let maxRam = 0;
  for (let tick = 0; tick < 20_000 && pages < 3000; tick++) {
    await f.refill();
    for (const r of f.takeRobotsRequests(10_000)) f.scheduleRobotsFetch(r.hostHi, r.hostLo, `10.${(r.hostHi >> 16) & 255}.${(r.hostHi >> 8) & 255}.${r.hostHi & 255}`);
    for (const u of f.nextReady(now, 10_000)) {
      if (u.kind === UrlKind.Robots) f.robotsKnown(u.hostHi, u.hostLo, { rules: null, ip: u.ip, expiresAt: Infinity });
      else {
        pages++;
        if (u.pldHi >= 1000) farmPages++;
      }
      f.fetchDone(u);
    }
    maxRam = Math.max(maxRam, f.ramCount);
    now += 10;
  }
  await f.close();
  return { share: farmPages / pages, pages, ram: maxRam };
}

test('with ample RAM, paced refill keeps a many-host spam farm to its budget share; filling RAM does not', async () => {
  const paced = await farmShare(5000);
  const unpaced = await farmShare(0);
  assert.ok(paced.pages >= 3000, `paced: ${paced.pages} pages`);
  // Per queue pass: 100 PLDs × 10 legit URLs vs 4 farms × 10 → about 4 % farm; allow slack for
  // the start (robots, the first passes) and the QF re-spreads.
  assert.ok(paced.share < 0.12, `paced: farm share ${(paced.share * 100).toFixed(1)} % (RAM peak ${paced.ram})`);
  assert.ok(paced.ram < 20_000, `paced: RAM holds a few seconds of work, not the ring (peak ${paced.ram})`);
  // The old behaviour, kept reachable with refillHorizonMs 0: the farms' 2,000 hosts win.
  assert.ok(unpaced.share > 0.5, `unpaced: farm share ${(unpaced.share * 100).toFixed(1)} %`);
});

/**
 * The breadth term (delays 0, one connection per IP). Phase 1: eight deep hosts (popular PLDs,
 * 1,500 URLs each, RAM holds 1,000 per host) on 2 IPs, and 200 other hosts with one URL each (so
 * their IPs are known). The crawl settles on the deep hosts: 2 IPs busy, 400 fetches/s. Phase 2
 * admits 200 URLs for each of the 200 hosts (and, in the farm variant, four farms of 500 hosts on
 * their own IPs, B = 10). The rate-based low-water mark alone never reads that queue: RAM holds
 * "5 s of work at the rate 2 IPs allow" — the fixed point of the e2e bench at delays 0
 * (docs/frontier.md). The breadth term reads it at once; the farms still get only their B per queue.
 */
async function breadthRun(opts: { farms: number; minBusyIps?: number; refillHorizonMs?: number }): Promise<{ ipsPerWindow: number[]; phase2Pages: number; farmShare: number }> {
  let now = 1_000_000;
  const f = await Frontier.open(
    null,
    fastOptions({
      hostDelayMs: 0,
      minHostDelayMs: 0,
      ipDelayMs: 0,
      minIpDelayMs: 0,
      ramUrls: 100_000,
      maxUrlsPerHost: 1000,
      maxConnectionsPerIp: 1,
      beast: { initialQueues: 2, maxQueues: 256 },
      refillHorizonMs: opts.refillHorizonMs ?? 5000,
      minReadyUrls: 100,
      ...(opts.minBusyIps === undefined ? {} : { minBusyIps: opts.minBusyIps }),
    }),
    () => now,
  );
  const P = new Map<number, number>();
  let id = 0;
  const mk = (pld: number, host: number, budget: number): FrontierUrl => {
    const p = (P.get(pld) ?? 0) + 1;
    P.set(pld, p);
    return new FrontierUrl({ url: `http://h${host}.p${pld}.test/u${id++}`, hostHi: host, hostLo: 7, pldHi: pld, pldLo: 1, budget, admitted: p });
  };
  const ipOf = (h: number): string => (h < 10 ? `10.0.0.${h % 2}` : `10.${(h >> 16) & 255}.${(h >> 8) & 255}.${h & 255}`);
  const phase1: FrontierUrl[] = [];
  for (let k = 0; k < 1500; k++) for (let d = 0; d < 8; d++) phase1.push(mk(d, d, 100_000));
  for (let b = 0; b < 200; b++) phase1.push(mk(100 + b, 100 + b, 1000));
  await f.admit(phase1, { durable: false });
  const fetchMs = 5;
  const concurrency = 64;
  const flight: { u: FrontierUrl; at: number }[] = [];
  const ipsPerWindow: number[] = [];
  let win = new Set<string>();
  let phase2Pages = 0;
  let farmPages = 0;
  // 1 ms ticks: 3 s of phase 1, then 2 s of phase 2 (windows of 500 ms).
  for (let tick = 0; tick < 5000; tick++) {
    if (tick === 3000) {
      const p2: FrontierUrl[] = [];
      for (let k = 0; k < 2000; k++) {
        if (k < 200) for (let b = 0; b < 200; b++) p2.push(mk(100 + b, 100 + b, 1000));
        for (let farm = 0; farm < opts.farms; farm++) p2.push(mk(1000 + farm, 10_000 + farm * 1000 + (k % 500), 10));
      }
      await f.admit(p2, { durable: false });
    }
    await f.refill();
    for (const r of f.takeRobotsRequests(10_000)) f.scheduleRobotsFetch(r.hostHi, r.hostLo, ipOf(r.hostHi));
    for (let k = flight.length - 1; k >= 0; k--) {
      if (flight[k]!.at > now) continue;
      const u = flight[k]!.u;
      flight.splice(k, 1);
      if (u.kind === UrlKind.Robots) f.robotsKnown(u.hostHi, u.hostLo, { rules: null, ip: u.ip, expiresAt: Infinity });
      f.fetchDone(u);
    }
    for (const u of f.nextReady(now, concurrency - flight.length)) {
      if (u.kind !== UrlKind.Robots) {
        win.add(u.ip);
        if (tick >= 3000) {
          phase2Pages++;
          if (u.pldHi >= 1000) farmPages++;
        }
      }
      flight.push({ u, at: now + fetchMs });
    }
    if (tick % 500 === 499) {
      ipsPerWindow.push(win.size);
      win = new Set();
    }
    now += 1;
  }
  await f.close();
  return { ipsPerWindow, phase2Pages, farmShare: farmPages / Math.max(1, phase2Pages) };
}

test('at delays 0 the breadth term reads on while the work in RAM sits on a few saturated IPs', async () => {
  const withBreadth = await breadthRun({ farms: 0, minBusyIps: 64 });
  const without = await breadthRun({ farms: 0, minBusyIps: 0 });
  // Phase 1 ends on the two deep IPs (windows 2..5), with and without the term: those hosts'
  // queues are the only work there is.
  assert.ok(withBreadth.ipsPerWindow.slice(2, 6).every((n) => n <= 2), `phase 1: ${withBreadth.ipsPerWindow}`);
  // Phase 2: ≥ 64 IPs busy in every window, and about the concurrency's worth of pages (64 / 5 ms).
  assert.ok(withBreadth.ipsPerWindow.slice(6).every((n) => n >= 64), `breadth: IPs per 500 ms ${withBreadth.ipsPerWindow}`);
  assert.ok(withBreadth.phase2Pages > 15_000, `breadth: ${withBreadth.phase2Pages} pages in phase 2`);
  // The rate-based mark alone stays at its fixed point: 2 IPs, 400 fetches/s.
  assert.ok(without.ipsPerWindow.slice(6).every((n) => n <= 2), `no breadth term: IPs per 500 ms ${without.ipsPerWindow}`);
  assert.ok(without.phase2Pages < 1000, `no breadth term: ${without.phase2Pages} pages in phase 2`);
});

test('the breadth term keeps spam farms (many hosts, one IP each) to their budget share', async () => {
  const paced = await breadthRun({ farms: 4, minBusyIps: 64 });
  const unpaced = await breadthRun({ farms: 4, refillHorizonMs: 0 });
  // Per queue: 200 hosts × 200 URLs (B = 1000) against 4 farms × 10 URLs.
  assert.ok(paced.ipsPerWindow.slice(6).every((n) => n >= 64), `paced: ${paced.ipsPerWindow}`);
  assert.ok(paced.farmShare < 0.02, `paced: farm share ${(paced.farmShare * 100).toFixed(1)} % of phase 2`);
  // Unpaced, the farms' 2,000 IPs take several times their paced share: 1.5 % against 0.16 %.
  // (Their URLs wait as deferrals of the low-PLD pace, and BEAST re-reads deferrals only as fast
  // as the crawl moves, beast.ts; a re-read at every empty wrap of the ring would let B per farm
  // in at each wrap: over 25 %.)
  assert.ok(unpaced.farmShare > 5 * paced.farmShare, `unpaced: farm share ${(unpaced.farmShare * 100).toFixed(2)} % against ${(paced.farmShare * 100).toFixed(2)} % paced`);
});
