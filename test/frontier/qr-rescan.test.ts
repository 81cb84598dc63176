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

/**
 * 20,000 URLs of farm hosts asked and never answered, then one URL each of 400 sites (hostHi 7)
 * answered on 10.<net>.x.y: all of them in QR, the farm's hosts outstanding.
 */
async function parkFarmAnswerSites(f: Frontier, net: number): Promise<void> {
  const urls: FrontierUrl[] = [];
  for (let h = 0; h < 20_000; h++) urls.push(new FrontierUrl({ url: `http://h${h}.farm.test/`, hostHi: 100_000 + h, hostLo: 1, pldHi: 1, pldLo: 1, budget: 10, admitted: 1 }));
  for (let h = 0; h < 400; h++) urls.push(new FrontierUrl({ url: `http://www.s${h}.test/`, hostHi: 7, hostLo: h, pldHi: 2, pldLo: h, budget: 10, admitted: 1 }));
  await f.admit(urls, { durable: false });
  while (f.stats().qr < urls.length) await f.refill();
  for (const r of f.takeRobotsRequests(30_000)) {
    if (r.hostHi === 7) f.robotsKnown(r.hostHi, r.hostLo, { rules: null, ip: `10.${net}.${r.hostLo >> 8}.${r.hostLo & 255}`, expiresAt: Infinity });
  }
}

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

test('QR rescans read at most 64 records per robots answer and 4,096 per second, whatever QR\'s length', async () => {
  // 20,000 URLs of hosts whose answers never come sit in QR; a new host is found, asked and answered
  // every 10 ms of simulated time for 20 s. Without refill pacing (refillHorizonMs 0, no low-water
  // mark) the crawl never counts as waiting on QR (starving(), which a busy crawl is not). A pass per
  // QR_RESCAN_MS would read QR whole 80 times (1.6 M records); the paced rescan reads at most the
  // answers' and the seconds' worth, plus QR once.
  const clock = { now: 1_000_000 };
  const parked = 20_000;
  const f = await Frontier.open(null, fastOptions({ qrRescanAnswers: 256, ramUrls: 10_000, maxHosts: 60_000, maxQr: 100_000, refillHorizonMs: 0, minReadyUrls: 0 }), () => clock.now);
  const farm: FrontierUrl[] = [];
  for (let h = 0; h < parked; h++) farm.push(new FrontierUrl({ url: `http://h${h}.farm.test/`, hostHi: 100_000 + h, hostLo: 1, pldHi: 1, pldLo: 1, budget: 10, admitted: 1 }));
  await f.admit(farm, { durable: false });
  while (f.stats().qr < parked) await f.refill();
  assert.equal(f.takeRobotsRequests(parked).length, parked, 'every farm host asked for its robots.txt');
  const start = clock.now;
  const readsBefore = f.stats().qrRescanReads;
  const steps = 2_000;
  const answeredAt = new Map<number, number>();
  let released = 0;
  let longestWait = 0;
  for (let k = 0; k < steps; k++) {
    clock.now += 10;
    await f.admit([new FrontierUrl({ url: `http://www.s${k}.test/`, hostHi: 7, hostLo: k, pldHi: 2, pldLo: k, budget: 10, admitted: 1 })], { durable: false });
    await f.refill();
    for (const r of f.takeRobotsRequests(10)) {
      f.robotsKnown(r.hostHi, r.hostLo, { rules: null, ip: `10.0.${r.hostLo >> 8}.${r.hostLo & 255}`, expiresAt: Infinity });
      if (r.hostHi === 7) answeredAt.set(r.hostLo, clock.now);
    }
    await f.refill();
    for (const u of f.nextReady(clock.now, 100)) {
      if (u.kind === 0 && u.hostHi === 7) {
        released++;
        longestWait = Math.max(longestWait, clock.now - answeredAt.get(u.hostLo)!);
      }
      f.fetchDone(u, {});
    }
  }
  const reads = f.stats().qrRescanReads - readsBefore;
  const seconds = (clock.now - start) / 1000;
  const bound = 64 * answeredAt.size + 4096 * seconds + 2 * parked;
  assert.ok(answeredAt.size >= steps * 0.9, `${answeredAt.size} of ${steps} new hosts answered`);
  assert.ok(reads <= bound, `rescans read ${reads} records; the bound is ${Math.round(bound)} (${answeredAt.size} answers over ${seconds} s)`);
  assert.ok(released >= answeredAt.size - 1_000, `${released} of ${answeredAt.size} answered hosts' URLs left QR`);
  assert.ok(longestWait <= 250 + (1000 * (parked + steps)) / 4096 + 500, `an answered host's URL waited ${longestWait} ms in QR`);
  await f.close();
});

test('a crawl waiting on QR — QR over maxQr, the host table holding only idle hosts — goes on to the end', async () => {
  // BEAST is not read while QR holds more than maxQr URLs, and QR's hosts find the table full: only
  // a rescan (evicting idle hosts, asking for QR's hosts' robots) moves the crawl on. With no answer
  // outstanding, nothing but the starvation trigger starts one.
  const clock = { now: 1_000_000 };
  const f = await Frontier.open(null, fastOptions({ ramUrls: 200, maxHosts: 40, maxQr: 100, refillBatch: 64 }), () => clock.now);
  const urls: FrontierUrl[] = [];
  for (let h = 0; h < 400; h++) {
    for (let k = 0; k < 3; k++) urls.push(new FrontierUrl({ url: `http://h${h}.test/${k}`, hostHi: 50_000 + h, hostLo: 3, pldHi: 3, pldLo: h, budget: 10, admitted: 1 }));
  }
  await f.admit(urls, { durable: false });
  const got = new Set<string>();
  let step = 0;
  for (; step < 20_000 && !f.isEmpty(); step++) {
    clock.now += 20;
    await f.refill();
    for (const r of f.takeRobotsRequests(1000)) f.robotsKnown(r.hostHi, r.hostLo, { rules: null, ip: `10.1.${(r.hostHi >> 8) & 255}.${r.hostHi & 255}`, expiresAt: Infinity });
    for (const u of f.nextReady(clock.now, 100)) {
      got.add(u.url);
      f.fetchDone(u, {});
    }
  }
  assert.equal(got.size, urls.length, `${got.size} of ${urls.length} URLs fetched after ${step} steps of 20 ms (QR ${f.stats().qr}, hosts ${f.stats().hosts})`);
  await f.close();
});

test('a checkpoint that comes while a QR rescan is due does not cost the answers it was due for', async () => {
  // 20,000 URLs wait in QR for answers that never come; 400 other hosts are answered, enough to pay
  // for a pass (400 × 64 ≥ QR). A commit (wantCommit, then commit) stops or skips the pass; the
  // next refill must still run it for those answers, not wait for the time credit (|QR| / 4,096 s).
  const clock = { now: 1_000_000 };
  const f = await Frontier.open(null, fastOptions({ qrRescanAnswers: 256, ramUrls: 30_000, maxHosts: 60_000, maxQr: 100_000, refillHorizonMs: 0, minReadyUrls: 0 }), () => clock.now);
  await parkFarmAnswerSites(f, 0);
  clock.now += 300;
  f.wantCommit();
  await f.refill();
  await f.commit();
  clock.now += 300;
  await f.refill();
  const out = f.nextReady(clock.now, 1000).filter((u) => u.hostHi === 7).length;
  assert.ok(out > 0, `${out} answered hosts' URLs left QR 300 ms after the commit (QR ${f.stats().qr})`);
  await f.close();
});

test('a host answered while the host table is full is asked once: it stays until QR\'s rescan has offered its URLs', async () => {
  // 400 hosts, 3 URLs each, spread through BEAST (every host's first URL, then every second, …) and
  // so through QR; the table holds 40 hosts and RAM 50 URLs. A full RAM cuts a rescan short, so the
  // next one starts mid-QR. An answered host holds no URL in RAM until a rescan reaches its URLs;
  // evicted before that, by a host met earlier in QR that finds the table full, its URLs find it
  // gone and ask again. Without the hold, 248 of the 400 hosts were asked more than once.
  const clock = { now: 1_000_000 };
  const f = await Frontier.open(null, fastOptions({ ramUrls: 50, maxHosts: 40, maxQr: 2_000, refillBatch: 16 }), () => clock.now);
  const urls: FrontierUrl[] = [];
  for (let k = 0; k < 3; k++) {
    for (let h = 0; h < 400; h++) urls.push(new FrontierUrl({ url: `http://h${h}.test/${k}`, hostHi: 60_000 + h, hostLo: 5, pldHi: 5, pldLo: h, budget: 10, admitted: 1 }));
  }
  await f.admit(urls, { durable: false });
  const asks = new Map<number, number>();
  const got = new Set<string>();
  let step = 0;
  for (; step < 20_000 && !f.isEmpty(); step++) {
    clock.now += 20;
    await f.refill();
    for (const r of f.takeRobotsRequests(1000)) {
      asks.set(r.hostHi, (asks.get(r.hostHi) ?? 0) + 1);
      f.robotsKnown(r.hostHi, r.hostLo, { rules: null, ip: `10.2.${(r.hostHi >> 8) & 255}.${r.hostHi & 255}`, expiresAt: Infinity });
    }
    for (const u of f.nextReady(clock.now, 100)) {
      got.add(u.url);
      f.fetchDone(u, {});
    }
  }
  assert.equal(got.size, urls.length, `${got.size} of ${urls.length} URLs fetched after ${step} steps of 20 ms`);
  const again = [...asks.values()].filter((n) => n > 1).length;
  const total = [...asks.values()].reduce((a, b) => a + b, 0);
  assert.equal(again, 0, `${again} of ${asks.size} hosts asked more than once (${total} asks for ${asks.size} hosts)`);
  await f.close();
});

test('a QR pass that changed nothing is not repeated back to back while the crawl waits on QR', async () => {
  // 40 hosts fill the table, each with a URL in flight that never ends; 20,000 URLs of other hosts
  // wait in QR. The crawl starves on QR (nothing dispatchable, BEAST empty, no answer outstanding),
  // and with no answer to trigger one, a rescan starts every qrIdleRescanMs (1 s). Each pass finds
  // the table full and changes nothing; in the crawl such passes, each ~0.5 s over 577,000 URLs,
  // took 85–93 % of the main thread. Without the guard, 10 s read QR 10 times.
  const clock = { now: 1_000_000 };
  const f = await Frontier.open(null, fastOptions({ ramUrls: 30_000, maxHosts: 40, maxQr: 100_000 }), () => clock.now);
  const busy: FrontierUrl[] = [];
  for (let h = 0; h < 40; h++) busy.push(new FrontierUrl({ url: `http://b${h}.test/`, hostHi: 70_000 + h, hostLo: 9, pldHi: 9, pldLo: h, budget: 10, admitted: 1 }));
  await f.admit(busy, { durable: false });
  await f.refill();
  for (const r of f.takeRobotsRequests(100)) f.robotsKnown(r.hostHi, r.hostLo, { rules: null, ip: `10.3.0.${r.hostHi & 255}`, expiresAt: Infinity });
  clock.now += 1_000;
  await f.refill();
  const flying = f.nextReady(clock.now, 100); // in flight for the rest of the test
  assert.equal(flying.length, 40);
  const parked: FrontierUrl[] = [];
  for (let h = 0; h < 20_000; h++) parked.push(new FrontierUrl({ url: `http://p${h}.test/`, hostHi: 80_000 + h, hostLo: 9, pldHi: 10, pldLo: h, budget: 10, admitted: 1 }));
  await f.admit(parked, { durable: false });
  while (f.stats().beastQueued > 0) await f.refill();
  assert.equal(f.stats().qr, 20_000, 'every URL of the other hosts waits in QR');
  const before = f.stats().qrRescanReads;
  for (let k = 0; k < 100; k++) {
    clock.now += 100;
    await f.refill();
  }
  const reads = f.stats().qrRescanReads - before;
  assert.ok(reads <= 2 * 20_000, `100 refills over 10 s read ${reads} QR records (a pass is 20,000; at most one every 10 s after a fruitless one)`);
  await f.close();
});

test('a QR pass stopped by a full RAM goes on as RAM frees, without waiting for new answers', async () => {
  // 20,000 URLs of hosts whose answers never come, then one URL each of 400 answered hosts; RAM
  // holds 50. The pass the 400 answers paid for stops when RAM is full; before, the answers were
  // spent, no new one came, and the other 350 hosts' URLs waited in QR (with their hosts held in the
  // table) until a new pass was paid for — here, never.
  const clock = { now: 1_000_000 };
  const f = await Frontier.open(null, fastOptions({ ramUrls: 50, maxHosts: 30_000, maxQr: 100_000, refillHorizonMs: 0, minReadyUrls: 0, refillBatch: 16 }), () => clock.now);
  await parkFarmAnswerSites(f, 4);
  const got = new Set<number>();
  for (let k = 0; k < 100 && got.size < 400; k++) {
    clock.now += 20;
    await f.refill();
    for (const u of f.nextReady(clock.now, 1000)) {
      if (u.kind === 0 && u.hostHi === 7) got.add(u.hostLo);
      f.fetchDone(u, {});
    }
  }
  assert.equal(got.size, 400, `${got.size} of the 400 answered hosts' URLs left QR in 2 s (QR ${f.stats().qr})`);
  await f.close();
});

test('a QR pass\'s pauses (the crawl\'s other work) do not count as its time: answered hosts\' URLs leave QR within the paid wait', async () => {
  // 20,000 URLs of hosts whose answers never come sit in QR; a new host is answered every 100 ms.
  // Each pause between a pass's batches takes 50 ms of the clock (the crawler's other work runs
  // there), so a pass takes ~4 s of the clock and ~0 of its own. Counted as its time, the ninth
  // rule held the next pass back 8 × 4 s and answered hosts' URLs waited over 30 s.
  const clock = { now: 1_000_000 };
  const pause = async (): Promise<void> => {
    clock.now += 50;
  };
  const parked = 20_000;
  const f = await Frontier.open(null, { ...fastOptions({ ramUrls: 10_000, maxHosts: 60_000, maxQr: 100_000, refillHorizonMs: 0, minReadyUrls: 0, refillBatch: 256 }), pause }, () => clock.now);
  const farm: FrontierUrl[] = [];
  for (let h = 0; h < parked; h++) farm.push(new FrontierUrl({ url: `http://h${h}.farm.test/`, hostHi: 100_000 + h, hostLo: 1, pldHi: 1, pldLo: 1, budget: 10, admitted: 1 }));
  await f.admit(farm, { durable: false });
  while (f.stats().qr < parked) await f.refill();
  f.takeRobotsRequests(parked);
  const answeredAt = new Map<number, number>();
  let longestWait = 0;
  const released = new Set<number>();
  const end = clock.now + 60_000;
  for (let k = 0; clock.now < end; k++) {
    clock.now += 100;
    await f.admit([new FrontierUrl({ url: `http://www.s${k}.test/`, hostHi: 7, hostLo: k, pldHi: 2, pldLo: k, budget: 10, admitted: 1 })], { durable: false });
    await f.refill();
    for (const r of f.takeRobotsRequests(10)) {
      f.robotsKnown(r.hostHi, r.hostLo, { rules: null, ip: `10.0.${r.hostLo >> 8}.${r.hostLo & 255}`, expiresAt: Infinity });
      answeredAt.set(r.hostLo, clock.now);
    }
    await f.refill();
    for (const u of f.nextReady(clock.now, 100)) {
      if (u.kind === 0 && u.hostHi === 7) {
        released.add(u.hostLo);
        longestWait = Math.max(longestWait, clock.now - answeredAt.get(u.hostLo)!);
      }
      f.fetchDone(u, {});
    }
  }
  // Paid for by answers (64 reads each, 10 a second) and time (4,096 a second): a pass over
  // ~20,000 records every ~4 s, and ~4 s of pauses within it.
  assert.ok(released.size >= answeredAt.size - 200, `${released.size} of ${answeredAt.size} answered hosts' URLs left QR`);
  assert.ok(longestWait <= 12_000, `an answered host's URL waited ${longestWait} ms in QR`);
  await f.close();
});
