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

async function farmShare(refillHorizonMs: number): Promise<{ share: number; pages: number; ram: number }> {
  let now = 1_000_000;
  const f = await Frontier.open(
    null,
    {
      preset: 'fast-test',
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
    },
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
