/**
 * The frontier's RAM snapshot written copy-on-free (src/frontier/politeness/ram-snapshot.ts): a
 * checkpoint holds the crawl only for the turn of its instant, and what it writes is RAM as it was
 * at that instant, whatever is released, finished, retried, dropped or taken into RAM meanwhile —
 * checked against a model of the slots (fast-check), and through a frontier on disk that is
 * reopened from the snapshot.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { Frontier, FrontierUrl, UrlKind } from '../../src/frontier/index.js';
import { RamSnapshot } from '../../src/frontier/politeness/ram-snapshot.js';
import { fastOptions } from './fast-options.js';

type Op = { t: 'take' } | { t: 'free'; k: number } | { t: 'step'; n: number };

test('RAM snapshot: every URL in a slot at the instant is emitted once, and no other, however slots are freed and taken meanwhile (model)', () => {
  const opArb: fc.Arbitrary<Op> = fc.oneof(
    fc.constant({ t: 'take' as const }),
    fc.record({ t: fc.constant('free' as const), k: fc.nat() }),
    fc.record({ t: fc.constant('step' as const), n: fc.integer({ min: 1, max: 40 }) }),
  );
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 120 }), fc.integer({ min: 0, max: 60 }), fc.array(opArb, { maxLength: 400 }), (cap, used, ops) => {
      // Slots as the host table keeps them: a URL or null, a free list (here: any null slot).
      const slots: (FrontierUrl | null)[] = [];
      let next = 0;
      const url = (): FrontierUrl => new FrontierUrl({ url: `http://h.test/${next++}`, hostHi: 1, hostLo: 1, pldHi: 1, pldLo: 1, budget: 5, admitted: 1 });
      for (let s = 0; s < cap; s++) slots.push(s < used ? url() : null);
      const atInstant = new Set(slots.filter((u) => u !== null).map((u) => u!.url));
      const emitted: string[] = [];
      const snap = new RamSnapshot(slots, slots.length, (u) => emitted.push(u.url));
      let done = false;
      for (const op of ops) {
        if (op.t === 'take') {
          let s = slots.indexOf(null);
          if (s < 0) s = slots.push(null) - 1; // the slab grows past the instant's end
          slots[s] = url();
          snap.born(s);
        } else if (op.t === 'free') {
          const held = slots.flatMap((u, s) => (u === null ? [] : [s]));
          if (held.length === 0) continue;
          const s = held[op.k % held.length]!;
          snap.leaving(s, slots[s]!);
          slots[s] = null;
        } else done = snap.step(op.n);
      }
      while (!done) done = snap.step(7);
      assert.equal(emitted.length, new Set(emitted).size, 'no URL twice');
      assert.deepEqual(new Set(emitted), atInstant);
    }),
    { numRuns: 400 },
  );
});

test('RAM snapshot: an emit that throws fails the snapshot at its next step, not the slot being freed', () => {
  const u = new FrontierUrl({ url: 'http://h.test/1', hostHi: 1, hostLo: 1, pldHi: 1, pldLo: 1, budget: 5, admitted: 1 });
  const snap = new RamSnapshot([u, null], 2, () => {
    throw new Error('disk full');
  });
  snap.leaving(0, u); // must not throw into the caller's bookkeeping
  assert.throws(() => snap.step(10), /disk full/);
});

/** One round of a crawl at `now`: a refill, robots asked and answered (allow all), every due page fetched (`page`). */
async function crawlRound(f: Frontier, now: number, page: (u: FrontierUrl) => void): Promise<void> {
  await f.refill();
  for (const r of f.takeRobotsRequests(10_000)) f.scheduleRobotsFetch(r.hostHi, r.hostLo, `10.0.0.${r.hostLo % 50}`);
  for (const u of f.nextReady(now, 10_000)) {
    if (u.kind === UrlKind.Robots) f.robotsKnown(u.hostHi, u.hostLo, { rules: null, ip: u.ip, expiresAt: Infinity });
    else page(u);
    f.fetchDone(u);
  }
}

test('a checkpoint holds the crawl only for its instant; the frontier reopened from it holds RAM as it was then', { timeout: 120_000 }, async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'ram-snapshot-'));
  try {
    let now = 1_000;
    const opts = fastOptions({ ramUrls: 40_000, maxUrlsPerHost: 100, hostDelayMs: 0, minHostDelayMs: 0, ipDelayMs: 0, minIpDelayMs: 0, maxConnectionsPerIp: 1000 });
    const f = await Frontier.open(dir, opts, () => now);
    const N = 24_000;
    const idOf = (u: FrontierUrl): number => Number(u.url.slice(u.url.lastIndexOf('/u') + 2));
    const batch: FrontierUrl[] = [];
    for (let id = 0; id < N; id++) {
      const h = id % 600;
      batch.push(new FrontierUrl({ url: `http://h${h}.p${h % 50}.test/u${id}`, hostHi: 0x10000 + h, hostLo: h, pldHi: h % 50, pldLo: 1, budget: 5, admitted: 1 }));
    }
    await f.admit(batch);
    // Robots for every host, then everything into RAM.
    const fetched = new Set<number>();
    const inFlight: FrontierUrl[] = [];
    for (let round = 0; round < 200 && f.stats().ramUrls < N - fetched.size; round++) {
      await crawlRound(f, now, (u) => fetched.add(idOf(u)));
      now += 10;
    }
    assert.equal(f.stats().ramUrls, N - fetched.size, 'every URL not fetched in RAM');
    assert.ok(N - fetched.size > 3 * 4096, `${N - fetched.size} URLs in RAM`);
    // Some fetched before the instant (gone from RAM), some in flight at it (in RAM: in the snapshot).
    for (const u of f.nextReady(now, 3_000)) {
      fetched.add(idOf(u));
      f.fetchDone(u);
    }
    now += 10;
    for (const u of f.nextReady(now, 600)) inFlight.push(u);

    let atInstant: Set<number> | null = null;
    let turnsAfter = 0;
    const written0 = f.io().other.bytesWritten;
    let writtenAtInstant = -1;
    let ramAtEnd = -1;
    const commit = f
      .commit({
        snapshotTaken: () => {
          writtenAtInstant = f.io().other.bytesWritten - written0;
          atInstant = new Set([...Array(N).keys()].filter((id) => !fetched.has(id)));
        },
      })
      .then(() => {
        ramAtEnd = turnsAfter;
      });
    // While the snapshot is written: the in-flight pages end (ok, retry, drop), more are released
    // and finished, and some stay in flight past the commit.
    let k = 0;
    const after: number[] = [];
    while (ramAtEnd < 0) {
      await new Promise((r) => setImmediate(r));
      if (atInstant === null) continue;
      turnsAfter++;
      for (const u of inFlight.splice(0, 60)) {
        const o = k++ % 3;
        f.fetchDone(u, o === 0 ? undefined : o === 1 ? { retry: true } : { drop: 'test' as never });
      }
      now += 10;
      for (const u of f.nextReady(now, 200)) {
        after.push(idOf(u));
        if (after.length % 2 === 0) f.fetchDone(u);
      }
    }
    await commit;
    assert.ok(atInstant !== null);
    // The instant's turn wrote none of the snapshot: before, every URL in RAM was encoded and
    // written within it (the crawl's hold grew with RAM: ~1 s at the default --ram).
    const snapBytes = f.io().other.bytesWritten - written0;
    assert.ok(snapBytes > 100 * 1024, `${snapBytes} bytes written by the commit`);
    assert.ok(writtenAtInstant < snapBytes / 10, `${writtenAtInstant} of ${snapBytes} bytes written in the instant's turn`);
    assert.ok(after.length > 0 && turnsAfter >= Math.ceil(N / 4096), `${turnsAfter} turns and ${after.length} releases while the snapshot was written`);
    await f.close({ commit: false });

    // Reopened: the snapshot's URLs (through QR) and nothing else.
    const g = await Frontier.open(dir, opts, () => now);
    const got: number[] = [];
    for (let round = 0; round < 2_000 && !g.isEmpty(); round++) {
      await crawlRound(g, now, (u) => got.push(idOf(u)));
      now += 10;
    }
    assert.ok(g.isEmpty(), 'drained');
    await g.close();
    assert.equal(got.length, new Set(got).size, 'no URL twice');
    assert.deepEqual(new Set(got), atInstant!);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
