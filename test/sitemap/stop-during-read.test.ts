/**
 * A stop while a sitemap is being read: the page's job is between its parse and ContentSeen (the
 * sitemap's entries go to URLseen first, src/crawl/content/content-stage.ts), neither in flight nor
 * parsing. The crawl
 * must wait for it like any page in progress, not close its parts under it: run() ends without a
 * failure, and the sitemap's entries and its crawl-log line are written before the parts close.
 * (A big sitemap read when a stop came made the crawl close its WARC first, and the page's
 * ContentSeen answer then failed with CRAWL_STORE_CLOSED.) Both page paths: the main thread's
 * and the page workers'.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { Crawler } from '../../src/crawl/pipeline.js';
import { resolveCrawlConfig } from '../../src/config/config.js';
import { parseCrawlLogLine } from '../../src/store/index.js';
import { SIMWEB_NETWORKS, UA, forkSimweb, tempDir, type SimwebChild } from '../e2e/harness.js';

const webs: SimwebChild[] = [];
const dirs: string[] = [];
after(async () => {
  for (const w of webs) await w.close();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

type Reader = { read: (url: string, ...rest: unknown[]) => Promise<{ queued: number }> };

for (const pageWorkers of ['off', 'on'] as const) {
  test(`a stop during a sitemap's read waits for the page (page workers ${pageWorkers})`, { timeout: 120_000 }, async () => {
    const web = await forkSimweb('tiny', { sitemapShare: 1, seedCount: 1 });
    webs.push(web);
    const dir = await tempDir('sitemap-stop');
    dirs.push(dir);
    const crawler = await Crawler.open(resolveCrawlConfig({
      seeds: web.seeds, stateDir: path.join(dir, 'state'), outDir: path.join(dir, 'out'), dnsServers: [web.dnsServer],
      allowNetworks: SIMWEB_NETWORKS, userAgent: UA, progress: 'none', workers: 1, ramBytes: 256 * 2 ** 20, pageWorkers,
      hostDelayMs: 20, minHostDelayMs: 20, ipDelayMs: 0, minIpDelayMs: 0, fetchTimeoutMs: 5000,
    }));
    const errors: unknown[] = [];
    crawler.on('error-event', (e: unknown) => errors.push(e));
    // The first sitemap read: stop the crawl, then hold the read long enough for every other page
    // in flight to end (the window in which the crawl used to find itself idle).
    const sitemaps = (crawler as unknown as { sitemaps: Reader }).sitemaps;
    const read = sitemaps.read.bind(sitemaps);
    let held: string | null = null;
    sitemaps.read = async (url, ...rest) => {
      if (held === null) {
        held = url;
        crawler.stop('test');
        await new Promise((r) => setTimeout(r, 1500));
      }
      return read(url, ...rest);
    };
    const summary = await crawler.run();
    assert.deepEqual(errors, []);
    assert.equal(summary.stopReason, 'test');
    assert.ok(held !== null, 'a sitemap was read');
    const log = readFileSync(path.join(dir, 'out', 'crawl.log'), 'utf8').split('\n').filter((l) => l !== '').map(parseCrawlLogLine);
    assert.ok(log.some((e) => e.url === held && e.status === 200), `${held} logged`);
    const listing = readFileSync(path.join(dir, 'out', 'sitemaps.log'), 'utf8').split('\n').filter((l) => l.split('\t')[1] === held);
    assert.ok(listing.length > 0, `${held}'s entries listed`);
  });
}
