/**
 * Periodic checkpoints run beside the scheduler (src/crawl/checkpoint-stage.ts): while one is
 * under way — waiting for a URLseen merge, committing the frontier — pages keep being dispatched.
 * A checkpoint that held the scheduler stopped every fetch for its whole length, which grows with
 * the crawl (a URLseen merge of seconds on a large one: issue #31, eight 5-second windows without a
 * page). Judged by event order, not time: the crawler's 'dispatch' events between a periodic
 * checkpoint's 'checkpoint-start' and its 'checkpoint' event.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { resolveCrawlConfig } from '../../src/crawl/config.js';
import { Crawler } from '../../src/crawl/pipeline.js';
import { crawlSettings, forkSimweb, tempDir } from './harness.js';

test('pages are dispatched while a periodic checkpoint is under way', { timeout: 600_000 }, async () => {
  const web = await forkSimweb('demo', { ips: 8 }, { log: false });
  try {
    const dir = await tempDir('e2e-ckpt-beside');
    const cfg = resolveCrawlConfig(crawlSettings(web, {
      stateDir: path.join(dir, 'state'), outDir: path.join(dir, 'out'),
      hostDelayMs: 0, ipDelayMs: 0, minHostDelayMs: 0, minIpDelayMs: 0,
      checkpointIntervalMs: 150, maxPages: 1500, workers: 1,
    }));
    const crawler = await Crawler.open(cfg);
    let open = 0;
    let periodic = 0;
    let beside = 0;
    crawler.on('checkpoint-start', (e: { reason: string }) => {
      if (e.reason !== 'periodic') return;
      open++;
      periodic++;
    });
    crawler.on('checkpoint', (m: { reason: string }) => {
      if (m.reason === 'periodic') open--;
    });
    crawler.on('dispatch', (d: { robots: boolean }) => {
      if (open > 0 && !d.robots) beside++;
    });
    const summary = await crawler.run();
    assert.ok(summary.pages >= 200, `a crawl long enough for several checkpoints (${summary.pages} pages)`);
    assert.ok(periodic >= 3, `periodic checkpoints ran (${periodic})`);
    assert.ok(beside > 0, `pages dispatched during periodic checkpoints: ${beside} (over ${periodic} checkpoints)`);
  } finally {
    await web.close();
  }
});
