/**
 * A stop does not wait for the slowest server: against a web where a third of the hosts trickle
 * their answers (128 bytes every 500 ms, so a page takes ~16 s), a crawl with a 30 s fetch timeout
 * is given a --max-time (a runtime change, as POST /config makes it) of 1 s beyond the moment a page
 * is seen trickling on the server — not a fixed 3 s from the start, which a loaded box can spend
 * before any page request is sent. It ends by that limit with the fetches still trickling aborted
 * (CRAWL_FETCH_ABORTED in the crawl log: cut by the stop after its grace period, not ended by the
 * server or the fetch timeout), after waiting at least the grace period for them; how long the
 * stop took is printed (a speed, on a loaded box mostly the checkpoint's fsyncs, is not judged
 * here). The aborted fetches are not in the WARC, and the resume (on the healed web) asks for
 * their URLs again.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { resolveCrawlConfig } from '../../src/config/config.js';
import { Crawler } from '../../src/crawl/pipeline.js';
import { STOP_GRACE_MS } from '../../src/crawl/ports/stop.js';
import { parseCrawlLogLine } from '../../src/store/index.js';
import { crawlSettings, forkSimweb, tempDir } from './harness.js';
import { readWarcDir, warcProblems } from './warc-read.js';

test('--max-time ends without waiting for trickling servers (aborted after the grace period); aborted fetches are re-asked on resume', { timeout: 900_000 }, async () => {
  // 128 bytes every 500 ms: a robots.txt arrives within a few seconds, a page (~4 KB) takes ~16 s.
  // One IP per host or so, so that no request waits behind another host's trickle.
  const web = await forkSimweb('tiny', { behaviours: { trickle: 0.35 }, trickleBytes: 128, trickleIntervalMs: 500, pagesPerHostMin: 20, pagesPerHostMax: 40, ips: 12 });
  try {
    const dir = await tempDir('e2e-slow');
    const input = crawlSettings(web, {
      stateDir: path.join(dir, 'state'), outDir: path.join(dir, 'warc'),
      hostDelayMs: 40, ipDelayMs: 10, minHostDelayMs: 40, minIpDelayMs: 10,
      workers: 1, ramBytes: 256 * 2 ** 20, fetchTimeoutMs: 30_000,
      // a robots.txt fetch the stop cut short is retried by the resume without minutes of backoff
      retryDelayScale: 1 / 500,
    });
    const crawler = await Crawler.open(resolveCrawlConfig(input));
    const t0 = Date.now();
    let ran = false;
    const run = crawler.run().finally(() => { ran = true; });
    // The time limit is set once a page trickles (the test's timeout bounds a hang); the run's
    // clock starts at or after t0, so it cannot end before t0 + maxTimeMs.
    while (!ran && (await web.pagesUnderway()) === 0) await new Promise((r) => setTimeout(r, 50));
    const maxTimeMs = Date.now() - t0 + 1000;
    crawler.setRuntime({ maxTimeMs });
    const summary = await run;
    const took = Date.now() - t0;
    console.log(`--max-time ${maxTimeMs} ms: run() took ${took} ms (grace ${STOP_GRACE_MS} ms)`);
    assert.equal(summary.stopReason, 'max-time');
    assert.ok(took >= maxTimeMs + STOP_GRACE_MS, `the stop waited the grace period for the fetches under way (run took ${took} ms)`);
    const lines = readFileSync(path.join(dir, 'warc', 'crawl.log'), 'utf8').split('\n').filter((l) => l !== '').map(parseCrawlLogLine);
    const aborted = lines.filter((l) => l.outcome === 'CRAWL_FETCH_ABORTED').map((l) => l.url);
    assert.ok(aborted.length > 0, 'some fetches were still trickling at the stop');
    const recs = await readWarcDir(path.join(dir, 'warc'));
    const archived = new Set(recs.filter((x) => x.type === 'response').map((x) => x.uri));
    assert.deepEqual(aborted.filter((u) => archived.has(u)), [], 'an aborted fetch is not archived');
    assert.deepEqual(warcProblems(recs), []);

    // The web heals (a piece every 5 ms: a page in ~0.2 s), so the resumed run reaches every
    // aborted URL however many other URLs its trickling host has queued before it. The resumed
    // run goes on until every aborted URL has been asked again (or it ends by itself; the test's
    // timeout bounds a hang). simweb logs a request when its answer ends, so a request still under
    // way shows once the stop has ended it: the log is read again after the resumed run has ended.
    // A request counts when it started after the resume began (the first run's aborted requests may
    // reach the log late, when the server notices the closed connection).
    await web.trickle(5);
    const resumedAt = Date.now();
    const again = await Crawler.resume(path.join(dir, 'state'), { progress: 'none' });
    let ended = false;
    const running = again.run().finally(() => { ended = true; });
    const askedNow = async (): Promise<Set<string>> => {
      const r = await web.report({ hostMs: 40, ipMs: 10, reachable: false });
      return new Set(r.pageFetches.filter((_, i) => r.pageStarts[i]! >= resumedAt));
    };
    while (!ended) {
      const asked = await askedNow();
      if (aborted.every((u) => asked.has(u))) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    again.stop();
    await running;
    const asked = await askedNow();
    const missing = aborted.filter((u) => !asked.has(u));
    const log = readFileSync(path.join(dir, 'warc', 'crawl.log'), 'utf8').split('\n');
    const about = missing.flatMap((u) => log.filter((l) => l.includes(new URL(u).host)));
    assert.deepEqual(missing, [], `the resume asks for every aborted URL again; the crawl log of their hosts:\n${about.join('\n')}`);
  } finally {
    await web.close();
  }
});
