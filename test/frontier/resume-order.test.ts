/**
 * At a resume the URLs that were in RAM at the last checkpoint (its RAM snapshot) come back through
 * QR ahead of the URLs QR held (src/frontier/frontier.ts, load): their hosts had their robots
 * answers, QR's were still waiting for theirs, so the resumed run's first QR pass asks for the
 * quick answers first. Behind 40,000 of QR's own URLs the former RAM waited ~10 s for them after a
 * kill over 10^7 hosts (bench:soak). Each URL comes back exactly once either way.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Frontier, FrontierUrl, UrlKind, type RobotsRequest } from '../../src/frontier/index.js';
import { fastOptions } from './fast-options.js';

const WAITING = 3_000; // hosts asked and never answered: their URLs wait in QR
const READY = 200; // hosts answered: their URLs (3 each) are in RAM at the checkpoint

function url(hostHi: number, hostLo: number, page: number): FrontierUrl {
  return new FrontierUrl({ url: `http://h${hostHi}-${hostLo}.test/p${page}`, hostHi, hostLo, pldHi: hostHi, pldLo: hostLo, budget: 10, admitted: 1 });
}

test('a resume offers the URLs that were in RAM before QR\'s own: their hosts are asked first, each URL once', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'resume-order-'));
  try {
    const now = 1_000_000;
    const opts = fastOptions({ ramUrls: 5_000, maxHosts: 20_000, maxQr: 100_000, maxUrlsPerHost: 10 });
    const f = await Frontier.open(dir, opts, () => now);
    const waiting: FrontierUrl[] = [];
    for (let h = 0; h < WAITING; h++) waiting.push(url(1, h, 0));
    await f.admit(waiting, { durable: true });
    while (f.stats().qr < WAITING) await f.refill();
    assert.equal(f.takeRobotsRequests(WAITING).length, WAITING);
    const ready: FrontierUrl[] = [];
    for (let h = 0; h < READY; h++) for (let p = 0; p < 3; p++) ready.push(url(2, h, p));
    await f.admit(ready, { durable: true });
    await f.refill();
    for (const r of f.takeRobotsRequests(READY)) f.robotsKnown(r.hostHi, r.hostLo, { rules: null, ip: `10.0.${r.hostLo >> 8}.${r.hostLo & 255}`, expiresAt: Infinity });
    await f.refill();
    assert.equal(f.stats().qr, WAITING, 'QR holds the waiting hosts\' URLs');
    await f.close(); // its commit snapshots RAM: the ready hosts' 600 URLs

    const g = await Frontier.open(dir, opts, () => now);
    try {
      await g.refill();
      const requests: RobotsRequest[] = [];
      for (let i = 0; i < 100 && requests.length < WAITING + READY; i++) {
        requests.push(...g.takeRobotsRequests(WAITING + READY));
        await g.refill();
      }
      const asked = requests.map((r) => r.hostHi);
      assert.equal(asked.length, WAITING + READY, 'every host asked once');
      const firstWaiting = asked.indexOf(1);
      const lastReady = asked.lastIndexOf(2);
      assert.ok(lastReady < firstWaiting, `the former RAM's hosts are asked first (the last of them ${lastReady}th, the first of QR's ${firstWaiting}th)`);
      // Answered, every URL comes out once.
      const seen = new Map<string, number>();
      for (const r of requests) g.robotsKnown(r.hostHi, r.hostLo, { rules: null, ip: `10.1.${r.hostLo >> 8}.${r.hostLo & 255}`, expiresAt: Infinity });
      for (let i = 0; i < 200 && g.stats().qr + g.stats().ramUrls > 0; i++) {
        for (const r of g.takeRobotsRequests(10_000)) g.robotsKnown(r.hostHi, r.hostLo, { rules: null, ip: `10.1.${r.hostLo >> 8}.${r.hostLo & 255}`, expiresAt: Infinity });
        await g.refill();
        for (const u of g.nextReady(now + i * 1000, 10_000)) {
          if (u.kind === UrlKind.Page) seen.set(u.url, (seen.get(u.url) ?? 0) + 1);
          g.fetchDone(u, {});
        }
      }
      assert.equal(seen.size, WAITING + 3 * READY, 'every URL handed out');
      assert.deepEqual([...seen.values()].filter((n) => n !== 1), [], 'each once');
    } finally {
      await g.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
