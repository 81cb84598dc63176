/**
 * QR's rescan cadence (src/frontier/frontier.ts, refillRun): URLs parked in QR for their host's
 * robots answer come back into RAM once that answer has waited QR_RESCAN_MS, even while many other
 * answers are outstanding (a farm's hosts, paced to one robots.txt fetch per τh, keep hundreds
 * outstanding and take seconds to reach qrRescanAnswers). Simulated clock.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Frontier, FrontierUrl } from '../../src/frontier/index.js';
import { fastOptions } from './fast-options.js';

test('a host\'s URLs leave QR within 250 ms of its robots answer while other answers are outstanding', async () => {
  const clock = { now: 1_000_000 };
  const f = await Frontier.open(null, fastOptions({ qrRescanAnswers: 256 }), () => clock.now);
  const urls: FrontierUrl[] = [];
  for (let h = 0; h < 100; h++) urls.push(new FrontierUrl({ url: `http://h${h}.farm.test/`, hostHi: 1000 + h, hostLo: 1, pldHi: 1, pldLo: 1, budget: 10, admitted: 1 }));
  urls.push(new FrontierUrl({ url: 'http://www.site.test/', hostHi: 7, hostLo: 7, pldHi: 2, pldLo: 2, budget: 10, admitted: 1 }));
  await f.admit(urls, { durable: false });
  await f.refill();
  const asked = f.takeRobotsRequests(1000);
  assert.equal(asked.length, 101, 'every host asked for its robots.txt');
  assert.equal(f.stats().qr, 101, 'every URL parked in QR');
  // Only the site answers; the farm's 100 answers stay outstanding.
  f.robotsKnown(7, 7, { rules: null, ip: '10.0.0.7', expiresAt: Infinity });
  const releasedBy = async (ms: number): Promise<boolean> => {
    clock.now += ms;
    await f.refill();
    return f.nextReady(clock.now, 100).some((u) => u.hostHi === 7);
  };
  let t = 0;
  let out = false;
  while (!out && t < 2000) {
    out = await releasedBy(50);
    t += 50;
  }
  assert.ok(out && t <= 300, `the site's URL left QR after ${t} ms of simulated time (≤ 300)`);
  await f.close();
});
