/**
 * STAR's trusted in-degree (src/frontier/star/star.ts): links count only from trusted source PLDs (the
 * seeds' PLDs, vouched for by the operator, and PLDs whose trusted in-degree reached the threshold),
 * up to `votesPerSource` page slots per source. Checked against a plain model with fast-check, on
 * both stores (RAM and DRUM) — with the PLDs promoted through links, which the frontier is told
 * of (takePromoted) — and on the spam shapes of issue #18: a host-minting farm, bought
 * in-degree and a clique, each linked once from the real web.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { Star, MemoryPldStore, DrumPldStore, crawlBudget, type PldStore, pathSlot } from '../../src/frontier/index.js';

const LO = 77; // every test PLD's low key word; PLD i is (i + 1, LO)

/**
 * The model: replay link batches in order. A source's trust is read once per batch, as STAR does;
 * a vote of a source not trusted then waits, and counts once a later round finds its source
 * trusted (rounds run while a PLD crossed the threshold, at most 8 per batch, as star.ts does).
 */
function model(seeds: number[], batches: Array<Array<[number, number, number]>>, threshold: number, votes: number): { d: Map<number, number>; promoted: Set<number> } {
  const d = new Map<number, number>();
  const promotedByLinks = new Set<number>(); // crossed the threshold through links (not a seed's vouch)
  const seen = new Set<string>();
  const pending = new Map<string, number>(); // vote key → source
  let promoted = false;
  const vote = (s: number, t: number, k: string): void => {
    if (seen.has(k)) return;
    seen.add(k);
    const from = d.get(t) ?? 0;
    d.set(t, from + 1);
    if (from < threshold && from + 1 >= threshold) {
      promoted = true;
      if (s >= 0) promotedByLinks.add(t);
    }
  };
  for (const s of seeds) for (let v = 0; v < threshold; v++) vote(-1, s, `seed:${v}>${s}`);
  for (const batch of batches) {
    const trusted = new Set([...new Set(batch.map(([s]) => s))].filter((s) => (d.get(s) ?? 0) >= threshold));
    for (const [s, t, slot] of batch) {
      if (s === t) continue;
      const k = `${s}:${slot % votes}>${t}`;
      if (trusted.has(s)) vote(s, t, k);
      else if (!pending.has(k)) pending.set(k, s);
    }
    for (let round = 0; round < 8 && promoted && pending.size > 0; round++) {
      promoted = false;
      const now = [...pending].filter(([, s]) => (d.get(s) ?? 0) >= threshold);
      if (now.length === 0) break;
      for (const [k] of now) pending.delete(k);
      for (const [k, s] of now) vote(s, Number(k.split('>')[1]), k);
    }
  }
  return { d, promoted: promotedByLinks };
}

async function feed(star: Star, seeds: number[], batches: Array<Array<[number, number, number]>>): Promise<void> {
  const keys = new Uint32Array(seeds.length * 2);
  seeds.forEach((s, i) => keys.set([s + 1, LO], 2 * i));
  await star.vouch(keys, seeds.length);
  for (const batch of batches) {
    const pairs = new Uint32Array(batch.length * 4);
    const slots = new Uint8Array(batch.length);
    batch.forEach(([s, t, slot], i) => {
      pairs.set([s + 1, LO, t + 1, LO], 4 * i);
      slots[i] = slot;
    });
    await star.addLinks(pairs, batch.length, slots);
  }
}

async function degrees(store: PldStore, n: number): Promise<number[]> {
  const keys = new Uint32Array(n * 2);
  for (let i = 0; i < n; i++) keys.set([i + 1, LO], 2 * i);
  const out = new Float64Array(n);
  await store.indegrees(keys, n, out);
  return [...out];
}

const link = (n: number) => fc.tuple(fc.nat(n - 1), fc.nat(n - 1), fc.nat(255));

test('trusted in-degree equals the model on random link batches (RAM store)', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 2, max: 12 }).chain((n) =>
        fc.record({
          n: fc.constant(n),
          seeds: fc.uniqueArray(fc.nat(n - 1), { minLength: 1, maxLength: 3 }),
          batches: fc.array(fc.array(link(n), { maxLength: 30 }), { maxLength: 8 }),
          threshold: fc.integer({ min: 1, max: 4 }),
          votes: fc.integer({ min: 1, max: 5 }),
        })),
      async ({ n, seeds, batches, threshold, votes }) => {
        const store = new MemoryPldStore();
        const star = new Star(store, crawlBudget(), undefined, { threshold, votesPerSource: votes });
        await feed(star, seeds, batches);
        const want = model(seeds, batches, threshold, votes);
        assert.deepEqual(await degrees(store, n), Array.from({ length: n }, (_, i) => want.d.get(i) ?? 0));
        // The PLDs promoted through links, each reported once (a seed's vouch is not a promotion).
        const got = star.takePromoted();
        const keys: number[] = [];
        for (let i = 0; i < got.length; i += 2) {
          assert.equal(got[i + 1], LO);
          keys.push(got[i]! - 1);
        }
        assert.deepEqual(keys.sort((a, b) => a - b), [...want.promoted].sort((a, b) => a - b));
        assert.equal(star.takePromoted().length, 0, 'taken once');
      },
    ),
    { numRuns: 300 },
  );
});

test('trusted in-degree on the DRUM store equals the RAM store', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'star-trust-'));
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.nat(9), { minLength: 1, maxLength: 2 }),
        fc.array(fc.array(link(10), { maxLength: 40 }), { minLength: 1, maxLength: 6 }),
        async (seeds, batches) => {
          const drum = await DrumPldStore.open(await mkdtemp(path.join(dir, 'r-')));
          try {
            const a = new Star(new MemoryPldStore(), crawlBudget(), undefined, {});
            const b = new Star(drum, crawlBudget(), undefined, {});
            await feed(a, seeds, batches);
            await feed(b, seeds, batches);
            assert.deepEqual(await degrees(drum, 10), await degrees(a.store, 10));
            const pairsOf = (k: Uint32Array): string[] => Array.from({ length: k.length / 2 }, (_, i) => `${k[2 * i]}:${k[2 * i + 1]}`).sort();
            assert.deepEqual(pairsOf(b.takePromoted()), pairsOf(a.takePromoted()), 'the same PLDs promoted, with their keys');
          } finally {
            await drum.close();
          }
        },
      ),
      { numRuns: 25 },
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

/**
 * A good web of `good` PLDs in a ring (PLD i links to i+1 and i+2 from many pages, seed 0) plus an
 * adversary: `farms` spam PLDs, each linked from one page of good PLD (k mod good), linking to each
 * other from every page (`cross` targets a page) and crawled as much as the good web.
 */
async function spamWeb(farms: number, cross: number, reputation: boolean): Promise<{ good: number[]; spam: number[] }> {
  const good = 10;
  const store = new MemoryPldStore();
  const star = new Star(store, crawlBudget(), undefined, reputation ? {} : undefined);
  const seeds = [0];
  const rounds: Array<Array<[number, number, number]>> = [];
  for (let r = 0; r < 12; r++) {
    const batch: Array<[number, number, number]> = [];
    for (let i = 0; i < good; i++) {
      batch.push([i, (i + 1) % good, r], [i, (i + 2) % good, r + 1]);
    }
    for (let k = 0; k < farms; k++) {
      if (r === 0) batch.push([k % good, good + k, 0]); // the one link the real web gives the farm
      for (let page = 0; page < 4; page++) {
        for (let c = 1; c <= cross; c++) batch.push([good + k, good + ((k + c * (page + 1)) % farms), r * 4 + page]);
      }
    }
    rounds.push(batch);
  }
  if (reputation) await feed(star, seeds, rounds);
  else {
    for (const batch of rounds) {
      const pairs = new Uint32Array(batch.length * 4);
      batch.forEach(([s, t], i) => pairs.set([s + 1, LO, t + 1, LO], 4 * i));
      await star.addLinks(pairs, batch.length);
    }
  }
  const d = await degrees(store, good + farms);
  return { good: d.slice(0, good), spam: d.slice(good) };
}

test('farms with bought in-degree or a clique stay below the threshold; the real web rises above it', async () => {
  for (const [farms, cross] of [[1, 0], [6, 3], [60, 6]] as const) {
    const { good, spam } = await spamWeb(farms, cross, true);
    assert.ok(Math.min(...good.slice(1)) >= 2, `good web trusted (farms ${farms}): ${good.join(',')}`);
    assert.ok(Math.max(...spam) <= 1, `spam d ≤ 1 (farms ${farms}, cross ${cross}): ${spam.join(',')}`);
    const B = crawlBudget({ minIndegree: 2 });
    const ctx = { rankAbove: () => 0, plds: good.length + spam.length };
    assert.ok(good.slice(1).every((d) => B.budget(d, ctx) > 10));
    assert.ok(spam.every((d) => B.budget(d, ctx) === 10));
  }
  // Plain in-degree (the thesis' STAR) ranks the clique above the real web: the reason for trust.
  const plain = await spamWeb(60, 6, false);
  assert.ok(Math.min(...plain.spam) > Math.max(...plain.good), `plain: spam ${Math.min(...plain.spam)} vs good ${Math.max(...plain.good)}`);
});

test('budgets early in a crawl: B ≤ B0 · d, so a PLD is not a top site only because few PLDs are known', () => {
  const F = crawlBudget();
  const few = { rankAbove: () => 0, plds: 10 };
  assert.equal(F.budget(1, few), 10);
  assert.equal(F.budget(3, few), 30);
  assert.equal(F.budget(50, few), 500);
  assert.equal(F.budget(5000, few), 10_000);
});

test('vote slot: a page\'s path, query and fragment left out — session-id copies of one page are one slot', () => {
  const a = pathSlot('http://www.site.test/p/0');
  assert.equal(pathSlot('http://www.site.test/p/0?sid=1a2b3c4d'), a);
  assert.equal(pathSlot('https://WWW.SITE.TEST:8443/p/0#top'), a);
  assert.equal(pathSlot('http://www.site.test'), pathSlot('http://other.test'));
  const slots = new Set<number>();
  for (let n = 0; n < 64; n++) slots.add(pathSlot(`http://www.site.test/p/${n}`) % 4);
  assert.equal(slots.size, 4, 'distinct pages fill the four vote slots');
});
