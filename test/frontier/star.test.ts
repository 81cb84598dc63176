import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DrumPldStore, FrontierUrl, MemoryPldStore, Star, crawlBudget, flatBudget, type PldStore } from '../../src/frontier/index.js';
import { rng } from './sim.js';

const url = (pld: number): FrontierUrl => new FrontierUrl({ url: `http://a.p${pld}.test/`, hostHi: pld, hostLo: 0, pldHi: pld, pldLo: 99, budget: 0, admitted: 0 });

async function script(store: PldStore, seed: number): Promise<number[][]> {
  const r = rng(seed);
  const star = new Star(store, crawlBudget({ b0: 10, floor: 20, ceiling: 500, top: 5, minIndegree: 1 }));
  const trace: number[][] = [];
  for (let round = 0; round < 12; round++) {
    const m = 1 + Math.floor(r() * 60);
    const pairs = new Uint32Array(m * 4);
    for (let i = 0; i < m; i++) {
      const s = Math.floor(r() * 30);
      const t = Math.floor(Math.sqrt(r()) * 30);
      pairs.set([s, 99, t, 99], i * 4);
    }
    await star.addLinks(pairs, m);
    const urls = Array.from({ length: 1 + Math.floor(r() * 80) }, () => url(Math.floor(r() * 30)));
    await star.assign(urls);
    trace.push(urls.flatMap((u) => [u.pldHi, u.budget, u.admitted]));
    const waiting = urls.slice(0, 5).map((u) => url(u.pldHi));
    await star.rebudget(waiting);
    trace.push(waiting.map((u) => u.budget));
  }
  return trace;
}

test('STAR: P counts per PLD, in-degree counts distinct source PLDs, self-links ignored', async () => {
  const star = new Star(new MemoryPldStore(), flatBudget(10));
  // PLD 1 → 2 twice (one edge), 3 → 2, 2 → 2 (self): in-degree of 2 is 2.
  await star.addLinks(Uint32Array.from([1, 99, 2, 99, 1, 99, 2, 99, 3, 99, 2, 99, 2, 99, 2, 99]), 4);
  assert.equal(star.histogram.rankAbove(1), 1);
  assert.equal(star.histogram.rankAbove(2), 0);
  const us = [url(2), url(5), url(2), url(2)];
  await star.assign(us);
  assert.deepEqual(us.map((u) => u.admitted), [1, 1, 2, 3]);
  assert.ok(us.every((u) => u.budget === 10));
});

test('STAR on DRUM (PLDedges + PLDindegree) gives exactly what the in-memory store gives', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'star-'));
  try {
    for (const seed of [1, 2]) {
      const mem = await script(new MemoryPldStore(), seed);
      const store = await DrumPldStore.open(path.join(dir, String(seed)), { ramBytes: 1 << 20 });
      const drum = await script(store, seed);
      await store.commit();
      await store.close();
      assert.deepEqual(drum, mem);
    }
    // The rank histogram survives a restart with the tables.
    const hf = path.join(dir, 'hist.bin');
    const st = await DrumPldStore.open(path.join(dir, 'h'));
    const a = await Star.open(st, flatBudget(10), hf);
    await a.addLinks(Uint32Array.from([1, 99, 2, 99, 3, 99, 2, 99, 4, 99, 5, 99]), 3);
    await a.commit();
    await a.close();
    const b = await Star.open(await DrumPldStore.open(path.join(dir, 'h')), flatBudget(10), hf);
    assert.equal(b.histogram.plds, 2);
    assert.equal(b.histogram.rankAbove(1), 1);
    await b.close();
    {
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
