import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  FrontierUrl,
  IdHeap,
  IndegreeHistogram,
  U64Map,
  crawlBudget,
  decodeFrontierUrl,
  encodeFrontierUrl,
  flatBudget,
  hostDelayFor,
  ipDelayFor,
  pathAndQueryOf,
  hostNameOf,
  originOf,
  proportionalBudget,
  popularOnlyBudget,
} from '../../src/frontier/index.js';
import { isCrawlError } from '../../src/errors.js';

test('IdHeap pops in (key, id) order and supports update/remove, like a sorted model', () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.constantFrom('set', 'pop', 'remove'), fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 50 })), { maxLength: 400 }),
      (ops) => {
        const h = new IdHeap(4);
        const model = new Map<number, number>();
        for (const [op, id, key] of ops) {
          if (op === 'set') {
            h.set(id, key);
            model.set(id, key);
          } else if (op === 'remove') {
            assert.equal(h.remove(id), model.delete(id));
          } else {
            const got = h.pop();
            if (model.size === 0) assert.equal(got, -1);
            else {
              const best = [...model].sort((a, b) => a[1] - b[1] || a[0] - b[0])[0]!;
              assert.equal(got, best[0]);
              model.delete(best[0]);
            }
          }
          assert.equal(h.size, model.size);
          for (const [k] of model) assert.ok(h.has(k));
        }
      },
    ),
    { numRuns: 200 },
  );
});

test('U64Map behaves like a Map on random insert/delete sequences (backward-shift deletion)', () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 1000 })), { maxLength: 500 }),
      (ops) => {
        const m = new U64Map(2);
        const model = new Map<string, number>();
        for (const [ins, lo, hi, v] of ops) {
          // Colliding keys on purpose: small lo/hi ranges.
          const k = `${hi}:${lo}`;
          if (ins) {
            m.set(hi, lo * 0x1000000, v);
            model.set(k, v);
          } else assert.equal(m.delete(hi, lo * 0x1000000), model.delete(k));
        }
        assert.equal(m.size, model.size);
        for (const [k, v] of model) {
          const [hi, lo] = k.split(':').map(Number) as [number, number];
          assert.equal(m.get(hi, lo * 0x1000000), v);
        }
      },
    ),
    { numRuns: 200 },
  );
});

test('FrontierUrl codec round-trips every field, including non-ASCII URLs and 2^53-range times', () => {
  fc.assert(
    fc.property(
      fc.string({ maxLength: 300, unit: 'grapheme' }),
      fc.nat(1000),
      fc.array(fc.nat({ max: 0xffffffff }), { minLength: 4, maxLength: 4 }),
      fc.nat(1_000_000),
      fc.nat(1 << 30),
      fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
      fc.nat(20),
      (path, hops, k, budget, admitted, discoveredAt, attempts) => {
        const u = new FrontierUrl({ url: `http://h.test/${path}`, hops, hostHi: k[0]!, hostLo: k[1]!, pldHi: k[2]!, pldLo: k[3]!, budget, admitted, discoveredAt, attempts });
        const d = decodeFrontierUrl(encodeFrontierUrl(u));
        assert.deepEqual(
          [d.url, d.hops, d.hostHi, d.hostLo, d.pldHi, d.pldLo, d.budget, d.admitted, d.discoveredAt, d.attempts],
          [u.url, hops, k[0], k[1], k[2], k[3], budget, admitted, discoveredAt, attempts],
        );
      },
    ),
    { numRuns: 300 },
  );
});

test('codec is compact and rejects garbage with CRAWL_FRONTIER_BAD_RECORD', () => {
  const u = new FrontierUrl({ url: 'http://www.example.com/some/page.html', hops: 3, hostHi: 1, hostLo: 2, pldHi: 3, pldLo: 4, budget: 10, admitted: 42, discoveredAt: Date.now() });
  const b = encodeFrontierUrl(u);
  assert.ok(b.length <= u.url.length + 32, `${b.length} bytes`);
  for (const bad of [new Uint8Array(0), b.subarray(0, b.length - 1), Uint8Array.from([...b, 0]), Uint8Array.from([4, ...b.subarray(1)])]) {
    assert.throws(() => decodeFrontierUrl(bad), (e) => isCrawlError(e, 'CRAWL_FRONTIER_BAD_RECORD'));
  }
});

test('URL helpers: path+query for robots, origin, host name', () => {
  assert.equal(pathAndQueryOf('http://a.test:81/x/y?q=1#f'), '/x/y?q=1');
  assert.equal(pathAndQueryOf('http://a.test'), '/');
  assert.equal(pathAndQueryOf('http://a.test?x'), '/?x');
  assert.equal(originOf('https://u@A.test:8080/p'), 'https://u@A.test:8080');
  assert.equal(hostNameOf('https://u@A.test:8080/p'), 'a.test');
  assert.equal(hostNameOf('http://[::1]:80/'), '[::1]');
});

test('budget presets: crawl interpolates the top by rank, flat is constant, proportional/inverse/popular-only', () => {
  const h = new IndegreeHistogram();
  // 100 PLDs with in-degree 1..100.
  for (let d = 1; d <= 100; d++) for (let k = 1; k <= d; k++) h.move(k - 1, k);
  assert.equal(h.plds, 100);
  assert.equal(h.rankAbove(100), 0);
  assert.equal(h.rankAbove(50), 50);
  const F = crawlBudget({ b0: 10, floor: 10, ceiling: 1000, top: 11 });
  assert.equal(F.budget(100, h), 1000); // rank 0
  assert.equal(F.budget(90, h), 10); // rank 10 = last of the top
  assert.equal(F.budget(95, h), 505); // rank 5: halfway
  assert.equal(F.budget(50, h), 10); // outside the top: B0
  assert.equal(F.budget(1, h), 10); // below minIndegree
  assert.equal(flatBudget(7).budget(1e6, h), 7);
  assert.equal(proportionalBudget({ b0: 10, perIndegree: 2 }).budget(5, h), 20);
  assert.ok(proportionalBudget({ b0: 10, inverse: true }).budget(100, h) < proportionalBudget({ b0: 10, inverse: true }).budget(1, h));
  assert.equal(popularOnlyBudget(10, 500).budget(3, h), 0);
  assert.equal(popularOnlyBudget(10, 500).budget(30, h), 500);
});

test('IndegreeHistogram ranks large in-degrees approximately (log bins)', () => {
  const h = new IndegreeHistogram();
  const degs = [5000, 9000, 20000, 1e6];
  for (const d of degs) h.move(0, d);
  assert.equal(h.rankAbove(1e7), 0);
  assert.ok(Math.abs(h.rankAbove(6000) - 2.5) <= 0.5);
  assert.equal(h.rankAbove(100), 4);
});

test('delays scale down with the budget and never cross the floors τh0, τs0', () => {
  const o = { hostDelayMs: 40_000, minHostDelayMs: 2_000, ipDelayMs: 1_000, minIpDelayMs: 50, b0: 10 };
  assert.equal(hostDelayFor(10, o), 40_000);
  assert.equal(hostDelayFor(0, o), 40_000);
  assert.equal(hostDelayFor(100, o), 4_000);
  assert.equal(hostDelayFor(10_000, o), 2_000);
  assert.equal(ipDelayFor(10, o), 1_000);
  assert.equal(ipDelayFor(100, o), 100);
  assert.equal(ipDelayFor(1e6, o), 50);
  fc.assert(
    fc.property(fc.double({ min: 0, max: 1e9, noNaN: true }), (b) => {
      const t = hostDelayFor(b, o);
      const s = ipDelayFor(b, o);
      return t >= 2_000 && t <= 40_000 && s >= 50 && s <= 1_000;
    }),
  );
});
