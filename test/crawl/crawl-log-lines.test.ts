/**
 * What a real crawl writes to crawl.log (docs/output-format.md): the time column is when the fetch
 * finished (Heritrix's convention: dispatch + duration), robots.txt fetches have lines of their
 * own (hops `-`), and URLs the crawl gave up on without a fetch (robots.txt disallow, a host whose
 * name does not resolve) have `dropped:<reason>` lines. Real parts: simweb's tiny web in a child
 * process (its DNS server answers NXDOMAIN for some hosts, some pages trickle), the crawler.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readFile, rm } from 'node:fs/promises';
import { resolveCrawlConfig } from '../../src/config/config.js';
import { Crawler } from '../../src/crawl/pipeline.js';
import { CrawlLog, parseCrawlLogLine, type CrawlLogEntry } from '../../src/store/index.js';
import { forkSimweb, tempDir, UA, SIMWEB_NETWORKS } from '../e2e/harness.js';

test('crawl log: robots.txt and dropped-URL lines keep the 11 columns and read back', async () => {
  const dir = await tempDir('crawl-log-kinds');
  try {
    const file = path.join(dir, 'crawl.log');
    const log = await CrawlLog.open(file);
    const t = new Date('2026-11-25T21:00:00.123Z');
    log.writeRobots({ time: t, status: 200, bytes: 120, durationMs: 7, url: 'http://a.test/robots.txt', outcome: 'ok' });
    log.writeRobots({ time: t, status: null, bytes: 0, durationMs: 1500, url: 'http://b.test/robots.txt', outcome: 'CRAWL_ROBOTS_UNREACHABLE' });
    log.writeDropped({ time: t, url: 'http://a.test/private/x', hops: 2, reason: 'robots', via: 'http://a.test/p', path: 'LL' });
    log.writeDropped({ time: t, url: 'http://gone.test/', hops: 1, reason: 'CRAWL_DNS_NXDOMAIN' });
    await log.close();
    const lines = (await readFile(file, 'utf8')).split('\n').filter((l) => l !== '');
    assert.deepEqual(lines, [
      '2026-11-25T21:00:00.123Z\t200\t120\t7\thttp://a.test/robots.txt\t-\t-\tok\t-\t-\tP',
      '2026-11-25T21:00:00.123Z\t-\t0\t1500\thttp://b.test/robots.txt\t-\t-\tCRAWL_ROBOTS_UNREACHABLE\t-\t-\tP',
      '2026-11-25T21:00:00.123Z\t-\t0\t0\thttp://a.test/private/x\t2\t-\tdropped:robots\t-\thttp://a.test/p\tLL',
      '2026-11-25T21:00:00.123Z\t-\t0\t0\thttp://gone.test/\t1\t-\tdropped:CRAWL_DNS_NXDOMAIN\t-\t-\t-',
    ]);
    assert.equal(parseCrawlLogLine(lines[0]!).hops, null);
    assert.equal(parseCrawlLogLine(lines[3]!).outcome, 'dropped:CRAWL_DNS_NXDOMAIN');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('crawl.log: finish time, robots.txt lines, dropped URLs with their reasons', { timeout: 900_000 }, async () => {
  const web = await forkSimweb('tiny', { dns: { nxdomain: 0.3 }, behaviours: { trickle: 0.3 }, trickleIntervalMs: 100, trickleBytes: 64 });
  const dir = await tempDir('crawl-log-lines');
  try {
    const crawler = await Crawler.open(resolveCrawlConfig({
      seeds: web.seeds, stateDir: path.join(dir, 'state'), outDir: path.join(dir, 'warc'), dnsServers: [web.dnsServer], allowNetworks: SIMWEB_NETWORKS,
      scope: 'any', // the simulated web spans many PLDs; every one is crawled
      userAgent: UA, hostDelayMs: 20, minHostDelayMs: 10, ipDelayMs: 0, minIpDelayMs: 0, progress: 'none', workers: 1,
      ramBytes: 256 * 2 ** 20, fetchTimeoutMs: 1500, retryDelayScale: 1 / 500,
    }));
    const dispatched = new Map<string, number[]>();
    crawler.on('dispatch', (e: { at: number; url: string; robots: boolean }) => {
      if (e.robots) return;
      const list = dispatched.get(e.url) ?? [];
      list.push(e.at);
      dispatched.set(e.url, list);
    });
    await crawler.run();
    const lines = (await readFile(path.join(dir, 'warc', 'crawl.log'), 'utf8')).split('\n').filter((l) => l !== '');
    const entries: CrawlLogEntry[] = lines.map((l) => parseCrawlLogLine(l));

    // robots.txt fetches: one line each, hops '-'.
    const robots = entries.filter((e) => e.hops === null);
    assert.ok(robots.length > 0, 'robots.txt fetches are logged');
    for (const e of robots) {
      assert.match(e.url, /^http:\/\/[^/]+\/robots\.txt$/, e.url);
      assert.match(e.outcome, /^(ok|CRAWL_ROBOTS_[A-Z_]+)$/, e.outcome);
    }

    // Dropped URLs: disallowed by robots.txt, and on hosts whose names did not resolve.
    const dropped = entries.filter((e) => e.outcome.startsWith('dropped:'));
    const reasons = new Set(dropped.map((e) => e.outcome));
    assert.ok(reasons.has('dropped:robots'), `robots drops logged: ${[...reasons].join(' ')}`);
    assert.ok([...reasons].some((r) => r.startsWith('dropped:CRAWL_DNS_')), `DNS drops logged: ${[...reasons].join(' ')}`);
    for (const e of dropped) {
      assert.equal(e.status, null);
      assert.equal(e.bytes, 0);
      assert.ok(e.hops !== null && e.hops >= 0);
      assert.ok(!dispatched.has(e.url) || e.outcome !== 'dropped:robots', `${e.url} was dropped for robots.txt, never fetched`);
    }

    // Page lines: time = dispatch + duration (the finish), checked where the duration is long
    // enough to tell the two apart (trickling pages, timeouts): the time is nearer the finish than
    // the dispatch. No tighter bound: the line's start (fetch-stage.ts job.date) and the 'dispatch'
    // event's stamp are two reads of the clock in one synchronous run, which a scavenge or a
    // descheduled process can put tens of ms apart on a loaded box.
    let judged = 0;
    for (const e of entries) {
      if (e.hops === null || e.outcome.startsWith('dropped:') || e.outcome.startsWith('skipped:') || e.durationMs < 200) continue;
      const starts = dispatched.get(e.url);
      assert.ok(starts !== undefined, `${e.url} was dispatched`);
      const t = e.time.getTime();
      const best = Math.min(...starts.map((at) => Math.abs(t - (at + e.durationMs))));
      assert.ok(best < e.durationMs / 2, `${e.url}: logged at ${e.time.toISOString()}, ${e.durationMs} ms after a dispatch? off by ${best.toFixed(0)} ms`);
      judged++;
    }
    assert.ok(judged >= 3, `enough long fetches to judge the time column (${judged})`);
  } finally {
    await web.close();
    await rm(dir, { recursive: true, force: true });
  }
});
