/**
 * The capacity gate (src/frontier/capacity.ts; thesis VI.2 budgets per unit of time): while PLDs
 * with B > B0 have work, PLDs with B ≤ B0 get at most share/(1 − share) × the high class's
 * releases (+ burst), pages and robots.txt fetches alike, in per-PLD turns; with no high work the
 * low class runs at full speed; inside a class the gate adds no limit; a PLD whose B rises is
 * promoted at once; the low class holds at most its share of RAM (+ QR) while gated, and nothing
 * is discarded. Runs on the frontier's own clock (capacity-sim.ts), each bounded in ticks.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { simCrawl, type SimPld, type SimRun } from './capacity-sim.js';

const RATIO = 0.125 / (1 - 0.125);
const BURST = 4;
const HIGH = 1000;
const LOW = 10;

/** Releases (pages + robots) of the high / low PLDs in [from, to). */
function count(r: SimRun, isHigh: (pld: number) => boolean, from: number, to: number): { high: number; low: number } {
  let high = 0;
  let low = 0;
  for (const x of r.releases) {
    if (x.t < from || x.t >= to) continue;
    if (isHigh(x.pld)) high++;
    else low++;
  }
  return { high, low };
}

const pagesIn = (r: SimRun, pld: number, from: number, to: number): number => r.releases.filter((x) => x.pld === pld && !x.robots && x.t >= from && x.t < to).length;

test('share bound: with 1 to 60 low PLDs and minted hosts, the low class gets ≤ 1/7 of the high releases + burst while the high class has work', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 60 }), // low PLDs
      fc.integer({ min: 1, max: 300 }), // hosts per low PLD (one URL each when minted)
      fc.boolean(), // minted: one URL per host on its own IP, else 20 URLs per host on 4 IPs
      fc.integer({ min: 2, max: 8 }), // fetch time (ms)
      async (lowPlds, hosts, minted, fetchMs) => {
        const plds: SimPld[] = [
          { id: 1, budget: HIGH, hosts: 6, urlsPerHost: 200, ips: 3 },
          { id: 2, budget: HIGH * 5, hosts: 4, urlsPerHost: 200, ips: 2 },
        ];
        for (let k = 0; k < lowPlds; k++) plds.push({ id: 100 + k, budget: LOW, hosts, urlsPerHost: minted ? 1 : 20, ...(minted ? {} : { ips: 4 }) });
        const r = await simCrawl(plds, { ms: 1200, fetchMs });
        const highEnd = Math.max(...r.releases.filter((x) => x.pld < 100).map((x) => x.t));
        assert.ok(highEnd >= 1100, `the high class has work for the whole run (last release at ${highEnd} ms)`);
        const c = count(r, (p) => p < 100, 0, highEnd + 1);
        assert.ok(c.low <= RATIO * c.high + BURST, `low ${c.low} > ${RATIO.toFixed(3)} × high ${c.high} + ${BURST}`);
        // …and a minted farm (always due) uses the share: the low class is not starved.
        if (minted) assert.ok(c.low >= RATIO * c.high * 0.5 || c.low >= lowPlds * hosts * 2, `low ${c.low} vs high ${c.high}`);
        // RAM share of the low class (RAM + QR) while gated.
        assert.ok(r.lowHeld.every((n) => n <= r.lowCap), `low class held ${Math.max(...r.lowHeld)} > cap ${r.lowCap}`);
      },
    ),
    // Always also: one farm minting 300 hosts, 60 farms minting hosts, 60 low PLDs of deep hosts.
    { numRuns: 6, examples: [[1, 300, true, 5], [60, 20, true, 5], [60, 5, false, 3]] },
  );
});

test('per-PLD turns: a farm minting 2,000 hosts gets one PLD turn, like a four-host low PLD beside it', async () => {
  const plds: SimPld[] = [
    { id: 1, budget: HIGH, hosts: 8, urlsPerHost: 200, ips: 4 },
    { id: 100, budget: LOW, hosts: 2000, urlsPerHost: 1, oneQueue: true }, // minted hosts, one IP each
    { id: 101, budget: LOW, hosts: 4, urlsPerHost: 50, oneQueue: true },
  ];
  const r = await simCrawl(plds, { ms: 1200, fetchMs: 4, frontier: { hostDelayMs: 20 } });
  const farm = r.releases.filter((x) => x.pld === 100 && x.t < 1200).length;
  const small = r.releases.filter((x) => x.pld === 101 && x.t < 1200).length;
  // Turns alternate between the two PLDs with parked hosts: the farm gets no more releases than
  // the small PLD (+ the burst), however many hosts it mints; without per-PLD turns it would get
  // them in proportion to its due hosts.
  assert.ok(farm <= small + 2 + BURST, `farm ${farm} vs four-host PLD ${small}`);
  assert.ok(small > 20, `four-host PLD ${small} releases`);
});

test('work-conserving: the low class alone runs at full speed (same pages as with the gate off)', async () => {
  const plds: SimPld[] = [
    { id: 100, budget: LOW, hosts: 1000, urlsPerHost: 1 },
    { id: 101, budget: LOW, hosts: 20, urlsPerHost: 50, ips: 5 },
  ];
  const gated = await simCrawl(plds, { ms: 1000 });
  const off = await simCrawl(plds, { ms: 1000, frontier: { capacityShare: 1 } });
  const g = gated.releases.length;
  const o = off.releases.length;
  assert.ok(o > 300, `gate off: ${o} releases`);
  assert.ok(g >= 0.99 * o, `gated ${g} vs off ${o} releases in 1 s`);
});

test('work-conserving: once the high class is done, the low class runs at full speed after the grace', async () => {
  const plds: SimPld[] = [
    { id: 1, budget: HIGH, hosts: 4, urlsPerHost: 10, ips: 2 },
    { id: 100, budget: LOW, hosts: 3000, urlsPerHost: 1, at: 20 },
  ];
  const r = await simCrawl(plds, { ms: 2500, frontier: { capacityGraceMs: 300 } });
  const highEnd = Math.max(...r.releases.filter((x) => x.pld === 1).map((x) => x.t));
  const from = highEnd + 400;
  const rate = r.releases.filter((x) => x.pld === 100 && x.t >= from && x.t < from + 300).length / 300;
  // Alone, with 32 fetches of 5 ms in flight, a minted-host farm does ≈ 6.4 releases per ms.
  const alone = await simCrawl([{ id: 100, budget: LOW, hosts: 3000, urlsPerHost: 1 }], { ms: 600 });
  const aloneRate = alone.releases.filter((x) => x.t >= 100 && x.t < 400).length / 300;
  assert.ok(rate >= 0.9 * aloneRate, `farm after the good web: ${rate.toFixed(2)}/ms vs alone ${aloneRate.toFixed(2)}/ms`);
});

for (const [name, budget] of [['high', HIGH], ['low', LOW]] as const) {
  test(`equal class (${name}): a fast PLD beside a 1 page/s PLD keeps ≥ 90 % of its rate alone`, async () => {
    const fast: SimPld = { id: 10, budget, hosts: 8, urlsPerHost: 400 };
    const slow: SimPld = { id: 11, budget, hosts: 1, urlsPerHost: 50, crawlDelayMs: 1000 };
    const alone = await simCrawl([fast], { ms: 2000 });
    const both = await simCrawl([fast, slow], { ms: 2000 });
    const a = pagesIn(alone, 10, 0, 2000);
    const b = pagesIn(both, 10, 0, 2000);
    assert.ok(a > 100, `fast PLD alone: ${a} pages`);
    assert.ok(b >= 0.9 * a, `fast PLD beside the slow one: ${b} vs ${a} pages alone`);
    const s = pagesIn(both, 11, 0, 2000);
    assert.ok(s >= 1 && s <= 3, `slow PLD: ${s} pages in 2 s at 1 page/s`);
  });
}

test('promotion: a PLD whose B rises above B0 leaves the low class at once, hosts already in RAM included', async () => {
  const plds: SimPld[] = [
    { id: 1, budget: HIGH, hosts: 8, urlsPerHost: 200, ips: 4 },
    { id: 50, budget: LOW, hosts: 40, urlsPerHost: 50, ips: 10, oneQueue: true },
    // One URL of PLD 50 with a high budget (its in-degree grew), on a host of its own.
    { id: 50, budget: HIGH, hosts: 1, urlsPerHost: 1, at: 700 },
  ];
  const r = await simCrawl(plds, { ms: 1400, frontier: { hostDelayMs: 100 } });
  const before = pagesIn(r, 50, 200, 700);
  const after = pagesIn(r, 50, 800, 1300);
  // Low: ≤ 1/7 of the high class's ≈ 400 pages/s; promoted: its 40 hosts at τh = 100 ms ≈ 400/s.
  assert.ok(before <= RATIO * pagesIn(r, 1, 200, 700) + 2 * BURST, `before: ${before} pages in 500 ms`);
  assert.ok(after >= 3 * before && after >= 150, `after promotion: ${after} pages in 500 ms (before ${before})`);
});

test('nothing is discarded: every URL of both classes is released once the high class is done', async () => {
  const plds: SimPld[] = [
    { id: 1, budget: HIGH, hosts: 4, urlsPerHost: 30, ips: 2 },
    { id: 100, budget: LOW, hosts: 3000, urlsPerHost: 1, at: 10 },
    { id: 101, budget: LOW, hosts: 10, urlsPerHost: 40, ips: 2, at: 10 },
  ];
  const r = await simCrawl(plds, { ms: 20_000, frontier: { ramUrls: 4000, capacityGraceMs: 200 } });
  assert.ok(r.empty, `frontier not empty after ${r.end} ms`);
  assert.equal(r.pages.get(1), 120);
  assert.equal(r.pages.get(100), 3000);
  assert.equal(r.pages.get(101), 400);
});
