/**
 * The estimates behind the frontier's RAM bounds (src/budget/ram-budget.ts): the URL slab is bounded
 * by frontierUrlRamBytes per URL, the host table by HOST_ENTRY_BYTES + origin + address + the
 * compiled rules' ramBytes per host. A bound is only as good as its estimate, so each is held
 * against the V8 heap the structure really takes (heapUsed after a full GC, per object, over tens
 * of thousands of objects): never below it, and not wildly above (which would waste the share).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import vm from 'node:vm';
import { FrontierUrl, decodeFrontierUrl, encodeFrontierUrl, frontierUrlRamBytes } from '../../src/frontier/index.js';
import { Politeness, HOST_ENTRY_BYTES, stringRamBytes } from '../../src/frontier/politeness/politeness.js';
import { compileRobots, parseRobotsTxt } from '../../src/robots/index.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const heap = (): number => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

/** Deterministic pseudo-random (mulberry32). */
function rand(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test('frontierUrlRamBytes covers what a decoded URL takes on the heap (and is within 1.6× of it)', () => {
  const r = rand(1);
  const N = 40_000;
  const recs: Uint8Array[] = [];
  let estimate = 0;
  for (let i = 0; i < N; i++) {
    const host = `h${Math.floor(r() * 50)}.pld${Math.floor(r() * 1e6)}.test:35177`;
    const seg = 'abcdefghij'.repeat(Math.floor(r() * 8));
    const u = new FrontierUrl({
      url: `http://${host}/p/${Math.floor(r() * 1e5)}/${seg}`, hostHi: (r() * 2 ** 32) >>> 0, hostLo: (r() * 2 ** 32) >>> 0,
      pldHi: (r() * 2 ** 32) >>> 0, pldLo: (r() * 2 ** 32) >>> 0, budget: 10, admitted: 1 + Math.floor(r() * 1000),
      via: `http://www.pld${Math.floor(r() * 1e6)}.test:35177/p/${Math.floor(r() * 1e5)}`, path: 'L'.repeat(Math.floor(r() * 50)), discoveredAt: Date.now(),
    });
    recs.push(encodeFrontierUrl(u));
  }
  const h0 = heap();
  const kept: FrontierUrl[] = [];
  for (const rec of recs) {
    const u = decodeFrontierUrl(rec);
    estimate += frontierUrlRamBytes(u);
    kept.push(u);
  }
  const used = heap() - h0 - 8 * N; // less the array holding them
  assert.equal(kept.length, N);
  assert.equal(recs.length, N); // the encoded records stay alive through the measurement (not freed inside it)
  const per = used / N, est = estimate / N;
  assert.ok(est >= per, `estimate ${est.toFixed(0)} B ≥ measured ${per.toFixed(0)} B per URL`);
  assert.ok(est <= 1.6 * per, `estimate ${est.toFixed(0)} B ≤ 1.6 × measured ${per.toFixed(0)} B per URL`);
});

test('the host table\'s estimate (entry + origin + address + rules) covers what its hosts take on the heap', () => {
  const N = 30_000;
  const rulesTexts = [
    'User-agent: *\nDisallow: /private/\n',
    'User-agent: drumcrawl\nDisallow: /p/3\nAllow: /p/35\nDisallow: /*.pdf$\nDisallow: /*?\nDisallow: /cal/\nCrawl-delay: 1\n',
    'User-agent: *\n' + Array.from({ length: 24 }, (_, i) => `Disallow: /${String.fromCharCode(97 + (i % 26))}${i}/x*y\n`).join(''),
  ];
  const h0 = heap();
  const pol = new Politeness({
    hostDelayMs: 0, minHostDelayMs: 0, ipDelayMs: 0, minIpDelayMs: 0, b0: 10, ramUrls: 16, maxUrlsPerHost: 100, maxHosts: N,
    maxConnectionsPerIp: 2, maxCrawlDelayMs: 1e5, maxBackoffMs: 1e6, maxHostErrors: 8, maxAttempts: 3, failedHostTtlMs: 1e6,
  }, () => undefined);
  for (let i = 0; i < N; i++) {
    // Each host is asked for through a URL (its origin kept), then answered: a third each with no
    // rules, small rules, and 24 rules with the per-character index.
    const u = new FrontierUrl({ url: `http://h${i % 9}.pld${i}.test:35177/p/0`, hostHi: i, hostLo: 77, pldHi: i, pldLo: 1, budget: 10, admitted: 1 });
    pol.add(u, 0);
    const k = i % 3;
    const rules = k === 0 ? null : compileRobots(parseRobotsTxt(rulesTexts[k]! + `# ${i}\n`), 'drumcrawl');
    pol.robotsKnown(i, 77, { rules, ip: `127.1.${(i >> 8) & 255}.${i & 255}`, expiresAt: 1e15 }, 0);
  }
  const used = heap() - h0;
  assert.ok(pol.hostBytes >= used, `estimate ${(pol.hostBytes / N).toFixed(0)} B ≥ measured ${(used / N).toFixed(0)} B per host`);
  assert.ok(pol.hostBytes <= 1.6 * used, `estimate ${(pol.hostBytes / N).toFixed(0)} B ≤ 1.6 × measured ${(used / N).toFixed(0)} B per host`);
  assert.ok(HOST_ENTRY_BYTES + stringRamBytes('http://h1.pld1.test:35177') + stringRamBytes('127.1.0.1') <= pol.hostBytes / N);
});

test('the host table stays within maxHostBytes: idle hosts are evicted, new hosts wait (their URLs go to QR)', () => {
  const cap = 2_000_000;
  const pol = new Politeness({
    hostDelayMs: 0, minHostDelayMs: 0, ipDelayMs: 0, minIpDelayMs: 0, b0: 10, ramUrls: 64, maxUrlsPerHost: 100, maxHosts: 1_000_000, maxHostBytes: cap,
    maxConnectionsPerIp: 2, maxCrawlDelayMs: 1e5, maxBackoffMs: 1e6, maxHostErrors: 8, maxAttempts: 3, failedHostTtlMs: 1e6,
  }, () => undefined);
  const big = compileRobots(parseRobotsTxt('User-agent: *\n' + Array.from({ length: 40 }, (_, i) => `Disallow: /${String.fromCharCode(97 + (i % 26))}${i}/\n`).join('')), 'x');
  let waited = 0;
  for (let i = 0; i < 20_000; i++) {
    const u = new FrontierUrl({ url: `http://h.pld${i}.test/p/0`, hostHi: i, hostLo: 5, pldHi: i, pldLo: 1, budget: 10, admitted: 1 });
    pol.add(u, i);
    if (pol.hostWaiting(i, 5)) pol.robotsKnown(i, 5, { rules: big, ip: '10.0.0.1', expiresAt: 1e15 }, i);
    else waited++;
    assert.ok(pol.hostBytes <= cap + big.ramBytes, `host table bytes ${pol.hostBytes} within the bound (${cap})`);
  }
  assert.ok(pol.stats().hosts < 20_000, 'hosts were evicted or refused to stay within the bound');
});
