/**
 * The untrusted pace (src/frontier/politeness/pld-pace.ts): with STAR ranking by trusted in-degree
 * (trustThreshold > 0), while a PLD trusted through links has pages released, the pages of a PLD
 * whose trusted in-degree is below the threshold go out at 1/32 of one host's pace, and so do its
 * new hosts (robots.txt fetches) after its first — a PLD that mints hosts gets one new host per
 * 32 τh — and all such PLDs together take at most one release per τh plus 1/15 of the trusted
 * PLDs' pages, however many they are. Nothing is
 * slowed for being untrusted while only one seed's PLD (trusted by the operator's vouch) crawls,
 * nor in a crawl that does not rank by trust; a PLD promoted after its URLs were budgeted leaves
 * the pace at once. Simulated clock (pace-sim.ts), every fetch completes at once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TAU_H, crawlCounts, type Site } from './pace-sim.js';

const SLOW = 32; // pld-pace.ts UNTRUSTED_PACE
const TRUST = { frontier: { trustThreshold: 2 } };
/** A ranked PLD, trusted (4 hosts at τh0: done within about 2 s)… */
const good: Site = { pld: 2, hosts: 4, urlsPerHost: 200, budget: 1000, indegree: 8 };
/** …and a trusted PLD of budget B0 with work for the whole window (one page per τh). */
const steady: Site = { pld: 4, hosts: 1, urlsPerHost: 100, budget: 10, indegree: 8 };
const EARNED = [{ pld: 2, at: 0 }, { pld: 4, at: 0 }];
/** A clique of 20 small untrusted PLDs of 3 hosts each, found after 1 s. */
const clique: Site[] = Array.from({ length: 20 }, (_, i) => ({ pld: 10 + i, hosts: 3, urlsPerHost: 40, budget: 10, indegree: i % 2, at: 1000 }));

const sum = (m: Map<number, number>, plds: number[]): number => plds.reduce((a, p) => a + (m.get(p) ?? 0), 0);
const cliquePlds = clique.map((s) => s.pld);

test('next to a PLD trusted through links, an untrusted clique\'s pages and new hosts go at 1/32 of a host\'s pace per PLD', async () => {
  const ms = 6000;
  const r = await crawlCounts([good, steady, ...clique], ms, { ...TRUST, promote: EARNED });
  const pages = sum(r.pages, cliquePlds);
  const robots = sum(r.all, cliquePlds) - pages;
  // Per PLD: its first page and first host at once, then one of each per 32 τh.
  const bound = clique.length * (1 + Math.ceil(ms / (SLOW * TAU_H)));
  assert.ok(pages <= bound, `clique pages ${pages} in ${ms} ms (≤ ${bound})`);
  assert.ok(robots <= bound, `clique robots.txt ${robots} in ${ms} ms (≤ ${bound})`);
  for (const p of cliquePlds) assert.ok((r.pages.get(p) ?? 0) >= 1, `clique PLD ${p} still crawled: ${r.pages.get(p)} pages`);
  assert.ok(robots > clique.length, `clique PLDs' further hosts too: ${robots} robots.txt`);
  const alone = await crawlCounts([good, steady, { pld: 3, hosts: 0, urlsPerHost: 0, budget: 10, at: 1000 }], ms, { ...TRUST, promote: EARNED });
  for (const p of [2, 4]) assert.ok((r.pages.get(p) ?? 0) >= 0.9 * (alone.pages.get(p) ?? 0), `trusted PLD ${p}: ${r.pages.get(p)} pages with the clique vs ${alone.pages.get(p)} alone`);
});

test('however many untrusted PLDs there are, together they take one release per τh plus 1/15 of the trusted pages', async () => {
  const ms = 6000;
  const many: Site[] = Array.from({ length: 300 }, (_, i) => ({ pld: 100 + i, hosts: 3, urlsPerHost: 10, budget: 10, indegree: 0, at: 1000 }));
  const r = await crawlCounts([good, steady, ...many], ms, { ...TRUST, promote: EARNED });
  const spam = sum(r.all, many.map((s) => s.pld));
  const trustedPages = (r.pages.get(2) ?? 0) + (r.pages.get(4) ?? 0);
  const bound = ms / TAU_H + 1 + trustedPages / 15 + 16; // floor + share + what the share saved up (TOKEN_CAP)
  assert.ok(spam <= bound, `300 untrusted PLDs: ${spam} releases in ${ms} ms (≤ ${bound.toFixed(0)}; ${trustedPages} trusted pages)`);
  assert.ok(spam >= ms / TAU_H / 2, `and they are still crawled: ${spam} releases`);
});

test('two seeds\' PLDs (vouched, none promoted) crawling hold it too', async () => {
  const ms = 6000;
  // Two trusted sites of budget B0 with work for the whole window, neither promoted through links.
  const r = await crawlCounts([good, { ...steady, pld: 6 }, { ...steady, pld: 7 }, ...clique], ms, TRUST);
  const bound = clique.length * (1 + Math.ceil(ms / (SLOW * TAU_H)));
  assert.ok(sum(r.pages, cliquePlds) <= bound, `clique pages ${sum(r.pages, cliquePlds)} next to two seeds' PLDs (≤ ${bound})`);
});

test('while only a seed\'s PLD (vouched, not promoted through links) crawls, untrusted PLDs keep one host\'s pace each', async () => {
  const ms = 4000;
  const r = await crawlCounts([good, ...clique], ms, TRUST);
  const pages = sum(r.pages, cliquePlds);
  // One release (page or robots.txt) per τh per PLD, less the robots.txt.
  const perPld = ms / TAU_H;
  assert.ok(pages >= 0.8 * clique.length * perPld - clique.length * 3, `clique pages ${pages}: about one host's pace per PLD (${perPld} releases each)`);
});

test('without trust ranking (trustThreshold 0) an in-degree of 0 slows nothing', async () => {
  const ms = 4000;
  const r = await crawlCounts([good, ...clique], ms, { promote: [{ pld: 2, at: 0 }] });
  assert.ok(sum(r.pages, cliquePlds) >= 0.8 * clique.length * (ms / TAU_H) - clique.length * 3, `clique pages ${sum(r.pages, cliquePlds)}`);
});

test('a PLD promoted after its URLs were budgeted as untrusted leaves the untrusted pace at once', async () => {
  const ms = 4000;
  const late: Site = { pld: 5, hosts: 1, urlsPerHost: 200, budget: 10, indegree: 1, at: 1000 };
  const kept = await crawlCounts([good, steady, late], ms, { ...TRUST, promote: EARNED });
  const promoted = await crawlCounts([good, steady, late], ms, { ...TRUST, promote: [...EARNED, { pld: 5, at: 3000 }] });
  assert.ok((kept.pages.get(5) ?? 0) <= 1 + Math.ceil(ms / (SLOW * TAU_H)), `untrusted all along: ${kept.pages.get(5)} pages`);
  // Promoted 2 s into the 4 s window: one host's pace for the last 2 s.
  assert.ok((promoted.pages.get(5) ?? 0) >= 0.8 * (2000 / TAU_H), `promoted at 3 s: ${promoted.pages.get(5)} pages`);
});
