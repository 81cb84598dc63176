/**
 * Live politeness change: `POST /config {"hostDelayMs": …}` on the status server of a running crawl
 * changes the delays the frontier's heaps and the pipeline's last-step floor guard use, without a
 * restart. Real parts: simweb (tiny preset) in a child process, the crawler, its status server.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { rm } from 'node:fs/promises';
import { resolveCrawlConfig } from '../../src/config/config.js';
import { Crawler } from '../../src/crawl/pipeline.js';
import { forkSimweb, tempDir, UA, SIMWEB_NETWORKS } from '../e2e/harness.js';

const OLD_MS = 30;
const NEW_MS = 400;
// As in test/e2e: the crawler adds a margin to every floor. Its own dispatch log can no longer show a
// gap below the floor (the guard counts from the dispatch stamp itself, d2e6cbd); the margin is what
// keeps the server's view above τ when the send is late after the stamp.
const MARGIN = 40;

// No clock decides: the change is made once the old delay has shown (a same-host gap below the new
// one), and the crawl is stopped once the new delay has had 6 same-host gaps to show in.
test('POST /config changes host delays of a running crawl (heaps and floor guard)', { timeout: 900_000 }, async () => {
  const web = await forkSimweb('tiny');
  const dir = await tempDir('live-delays');
  try {
    const crawler = await Crawler.open(resolveCrawlConfig({
      seeds: web.seeds, stateDir: path.join(dir, 'state'), outDir: path.join(dir, 'warc'), dnsServers: [web.dnsServer], allowNetworks: SIMWEB_NETWORKS,
      scope: 'any', // the simulated web spans many PLDs; every one is crawled
      userAgent: UA, hostDelayMs: OLD_MS, minHostDelayMs: OLD_MS, ipDelayMs: 0, minIpDelayMs: 0, politenessMarginMs: MARGIN,
      progress: 'none', workers: 1, ramBytes: 256 * 2 ** 20, fetchTimeoutMs: 5000, statusPort: 0,
    }));
    const ev: { at: number; host: string }[] = [];
    let changedAt = Infinity;
    let statusUrl = '';
    let auth = {};
    crawler.on('status-server', (u: string, token: string) => { statusUrl = u; auth = { authorization: `Bearer ${token}` }; });
    const lastAt = new Map<string, number>();
    let oldShown = false;
    let changing = false;
    let gapsAfter = 0;
    let stopping = false;
    const changed = new Promise<void>((resolve, reject) => {
      crawler.on('dispatch', (e: { at: number; url: string; robots: boolean }) => {
        if (e.robots) return;
        const host = new URL(e.url).hostname;
        ev.push({ at: e.at, host });
        const p = lastAt.get(host);
        lastAt.set(host, e.at);
        if (p !== undefined && p < changedAt && e.at - p < NEW_MS) oldShown = true;
        if (p !== undefined && p >= changedAt && ++gapsAfter >= 6 && !stopping) {
          stopping = true;
          crawler.stop('test');
        }
        if (ev.length >= 25 && oldShown && !changing) {
          changing = true;
          // The request is sent from this handler; the change applies while dispatching goes on.
          void (async () => {
            const res = await fetch(statusUrl + '/config', { method: 'POST', headers: auth, body: JSON.stringify({ hostDelayMs: NEW_MS, minHostDelayMs: NEW_MS }) });
            changedAt = performance.timeOrigin + performance.now();
            const body = (await res.json()) as { ok: boolean; runtime: Record<string, unknown> };
            assert.equal(res.status, 200);
            assert.equal(body.runtime.hostDelayMs, NEW_MS);
            assert.equal(body.runtime.minHostDelayMs, NEW_MS);
            // An invalid change (floor above the delay) is refused and changes nothing.
            const bad = await fetch(statusUrl + '/config', { method: 'POST', headers: auth, body: JSON.stringify({ minHostDelayMs: NEW_MS * 2 }) });
            assert.equal(bad.status, 400);
            assert.equal(crawler.config.minHostDelayMs, NEW_MS);
          })().then(resolve, reject);
        }
      });
    });
    const run = crawler.run();
    await Promise.race([changed, run.then(() => assert.fail('the crawl ended before 25 page dispatches and a gap of the old delay'))]);
    const summary = await run;
    assert.equal(summary.stopReason, 'test', 'stopped once 6 same-host gaps followed the change (the web did not run dry first)');

    // Gaps between consecutive page dispatches to one host, split by when the earlier one started.
    const last = new Map<string, number>();
    const before: number[] = [];
    const after: number[] = [];
    for (const e of ev) {
      const p = last.get(e.host);
      if (p !== undefined) (p >= changedAt ? after : before).push(e.at - p);
      last.set(e.host, e.at);
    }
    // Before: the old delay was in force (some host was fetched again within the new delay).
    assert.ok(before.some((g) => g < NEW_MS), `gaps before the change: ${before.map((g) => g.toFixed(0)).join(' ')}`);
    // After: enough same-host pairs to judge, and none closer than the new delay.
    assert.ok(after.length >= 3, `only ${after.length} same-host gaps after the change`);
    const short = after.filter((g) => g < NEW_MS);
    assert.deepEqual(short.map((g) => g.toFixed(1)), [], `host gaps after the change below ${NEW_MS} ms`);
  } finally {
    await web.close();
    await rm(dir, { recursive: true, force: true });
  }
});
