/**
 * Start-up order (docs/performance.md "Start-up and real pages"): the parse pool's first worker
 * boots once the crawl's first request is on the wire, not during the opening — nothing before
 * that request needs a parse, and its boot is ~0.2 s of CPU that would otherwise come before it.
 * Judged at the 'dispatch' event, which the crawler emits in the same synchronous run as the
 * request's send (crawler-core.ts dispatched): the pool's worker count then, and the crawl's
 * captures at the end (every page parsed: links followed, the same pages as a crawl of the web).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { rm } from 'node:fs/promises';
import { resolveCrawlConfig } from '../../src/config/config.js';
import { Crawler } from '../../src/crawl/pipeline.js';
import { startSimweb } from '../../src/simweb/index.js';
import { tempDir, UA, SIMWEB_NETWORKS } from '../e2e/harness.js';

const dirs: string[] = [];
after(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

test('start-up: no parse worker before the first request; it starts after, and the pages are parsed', { timeout: 900_000 }, async () => {
  const web = await startSimweb({ preset: 'tiny' });
  const dir = await tempDir('startup-order');
  dirs.push(dir);
  try {
    const crawler = await Crawler.open(resolveCrawlConfig({
      seeds: web.seeds, stateDir: path.join(dir, 'state'), outDir: path.join(dir, 'out'), dnsServers: [web.dnsServer], allowNetworks: SIMWEB_NETWORKS,
      userAgent: UA, progress: 'none', workers: 2, ramBytes: 256 * 2 ** 20, hostDelayMs: 0, minHostDelayMs: 0, ipDelayMs: 0, minIpDelayMs: 0,
      maxPages: 30, pageWorkers: 'off',
    }));
    const atDispatch: number[] = [];
    crawler.on('dispatch', () => atDispatch.push(crawler.snapshot().workers.size));
    const atOpen = crawler.snapshot().workers.size;
    const summary = await crawler.run(); // (asserted after it: a crawler left unrun keeps its threads)
    assert.equal(atOpen, 0, 'no parse worker once the crawl is open');
    assert.ok(atDispatch.length >= 10, `requests: ${atDispatch.length}`);
    assert.equal(atDispatch[0], 0, 'no parse worker when the first request goes out');
    assert.ok(atDispatch.some((n) => n >= 1), 'a parse worker once pages came');
    assert.ok(summary.pages - summary.requisites >= 30, `every page up to --max-pages (links were followed): ${summary.pages}`);
  } finally {
    await web.close();
  }
});
