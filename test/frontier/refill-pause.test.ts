/**
 * The frontier's disk work runs in batches with the caller's pause between them
 * (FrontierOptions.pause, src/frontier/frontier.ts and beast.ts): a re-spread of QF reads all of
 * it — QF grows with the crawl (thesis VII.2) — and while it runs, the crawler keeps releasing the
 * URLs it has in RAM (src/crawl/ports/frontier-port.ts, DispatchWindow). Judged by event order, not time:
 * between two batches of one refill() the frontier hands out URLs from RAM.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Frontier, FrontierUrl } from '../../src/frontier/index.js';
import { fastOptions } from './fast-options.js';

test('a re-spread of a large QF pauses between batches, and URLs in RAM are released meanwhile', async () => {
  const clock = { now: 1_000_000 };
  let pauses = 0;
  let refillPending = false;
  const releasedDuring: number[] = [];
  let f: Frontier | null = null;
  let released = 0;
  const pause = async (): Promise<void> => {
    // Pauses before the refill has read any farm URL into RAM fall inside the re-spread.
    const farmInRam = f === null ? 0 : f.stats().ramUrls - (20 - released);
    if (farmInRam === 0) pauses++;
    if (refillPending && f !== null && farmInRam === 0) {
      const out = f.nextReady(clock.now, 2);
      released += out.length;
      for (const u of out) {
        releasedDuring.push(u.hostLo);
        f.fetchDone(u);
      }
    }
    await new Promise<void>((r) => setImmediate(r));
  };
  f = await Frontier.open(null, fastOptions({ ramUrls: 2000, hostDelayMs: 0, minHostDelayMs: 0, ipDelayMs: 0, minIpDelayMs: 0, refillHorizonMs: 0, pause }), () => clock.now);
  // A site with 20 URLs within its budget: read from the ring into RAM once its robots answer is in.
  const site: FrontierUrl[] = [];
  for (let i = 0; i < 20; i++) site.push(new FrontierUrl({ url: `http://www.site.test/p/${i}`, hostHi: 7, hostLo: 7, pldHi: 2, pldLo: 2, budget: 100, admitted: 1 + i }));
  await f.admit(site, { durable: false });
  await f.refill();
  for (const r of f.takeRobotsRequests(10)) f.robotsKnown(r.hostHi, r.hostLo, { rules: null, ip: '10.0.0.7', expiresAt: Infinity });
  await f.refill();
  assert.equal(f.stats().ramUrls, 20, 'the site\'s URLs are in RAM');
  // 40,000 URLs of a farm PLD far over its budget B = 1: all in QF.
  const farm: FrontierUrl[] = [];
  for (let i = 0; i < 40_000; i++) farm.push(new FrontierUrl({ url: `http://h${i % 500}.farm.test/p/${i}`, hostHi: 1000 + (i % 500), hostLo: 1, pldHi: 3, pldLo: 3, budget: 1, admitted: 100 + i }));
  await f.admit(farm, { durable: false });
  assert.ok(f.stats().qf >= 40_000, `QF holds the farm (${f.stats().qf})`);
  // The ring is empty: this refill re-spreads QF (≈ 10 batches of 4,096 records).
  pauses = 0;
  refillPending = true;
  const run = f.refill();
  await run;
  refillPending = false;
  assert.ok(pauses >= 9, `the re-spread paused between its batches (${pauses} pauses before any farm URL reached RAM)`);
  assert.ok(releasedDuring.length >= 10, `URLs were released from RAM while the re-spread ran (${releasedDuring.length})`);
  assert.ok(releasedDuring.every((h) => h === 7), 'the released URLs are the site\'s (in RAM before the refill)');
  await f.close();
});
