/**
 * The hostile-site suite, crawl level: chunk floods (issue #30, item 1). An ordinary site whose
 * every page links to three flood pages — `1\r\na\r\n` without end, `2\r\nab\r\n` without end, and
 * a gzip stream sent one byte per chunk — on three other servers; the CLI crawls it for 30 s at
 * `--ram 512M`, with the fetches on the main thread and then on page workers. Judged from the
 * servers' request log and crawl.log (src/simweb/hostile-server.ts serves both):
 *
 *   - the crawler lives and exits 0 at --max-time, and every page a server was asked for has its
 *     crawl.log line;
 *   - the floods go on for the run (each flood host is asked again and again: --retry-delay-scale
 *     makes a flood's 10 min host penalty about a second) and every flood fetch ends
 *     CRAWL_FETCH_CHUNK_FLOOD;
 *   - the ordinary host keeps its pace while the floods run: it is asked for pages all through the
 *     flood window (its request log), no pause longer than a third of that window, all of them ok.
 * No wall-clock bound is asserted: the pace is the ordinary host's own, read against the floods'
 * window from the same log. Before the fix the process died of heap exhaustion within seconds.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { startHostileServers } from '../../src/simweb/hostile-server.js';
import { tempDir } from '../e2e/harness.js';
import { crawlLog, hostileRun, ipsOf, unlogged } from './crawl-common.js';

async function floods(run: number, pageWorkers: 'on' | 'off'): Promise<void> {
  const [flood1, flood2, floodGz, normal] = ipsOf(run, 4) as [string, string, string, string];
  let port = 0;
  const srv = await startHostileServers({
    ips: [flood1, flood2, floodGz, normal], floodMs: 30_000, normalPages: 2000,
    extraLinks: (k) => [`http://${flood1}:${port}/flood/1/${k}`, `http://${flood2}:${port}/flood/2/${k}`, `http://${floodGz}:${port}/flood/gzip/${k}`],
  });
  port = srv.port;
  const dir = await tempDir('floods');
  try {
    const { code, log } = await hostileRun({ seeds: [srv.url(normal, '/n/0')], dir, pageWorkers, maxTimeS: 30 });
    assert.equal(code, 0, `the crawler lives and exits 0 at --max-time:\n${log.slice(-3000)}`);
    const lines = crawlLog(path.join(dir, 'out'));
    assert.deepEqual(unlogged(srv, lines), [], 'every fetched page has a crawl.log line');
    const outcomes = new Map<string, string[]>();
    for (const l of lines) if (l.hops !== '-') outcomes.set(l.url, [...(outcomes.get(l.url) ?? []), l.outcome]);

    for (const ip of [flood1, flood2, floodGz]) {
      const reqs = srv.log.filter((e) => e.ip === ip && e.path.startsWith('/flood/'));
      assert.ok(reqs.length >= 3, `${ip}: the flood host was asked ${reqs.length} times`);
      for (const e of reqs) {
        const o = outcomes.get(srv.url(ip, e.path)) ?? [];
        assert.ok(o.length > 0 && o.every((x) => x === 'CRAWL_FETCH_CHUNK_FLOOD' || x === 'CRAWL_FETCH_ABORTED'), `${e.path}: ${o.join(',')}`);
      }
      // Cut by the flood cap, not only by the stop: a flood read on until --max-time aborts it
      // (ABORTED alone) is the defect this guards.
      const cut = reqs.filter((e) => (outcomes.get(srv.url(ip, e.path)) ?? []).includes('CRAWL_FETCH_CHUNK_FLOOD')).length;
      assert.ok(cut > 0, `${ip}: no flood fetch ended CRAWL_FETCH_CHUNK_FLOOD`);
    }
    const flood = srv.log.filter((e) => e.path.startsWith('/flood/')).map((e) => e.start);
    const from = Math.min(...flood);
    const to = Math.max(...flood);
    const ordinary = srv.log.filter((e) => e.ip === normal && e.path.startsWith('/n/')).sort((a, b) => a.start - b.start);
    const during = ordinary.filter((e) => e.start >= from && e.start <= to);
    let gap = 0;
    for (let i = 1; i < during.length; i++) gap = Math.max(gap, during[i]!.start - during[i - 1]!.start);
    gap = Math.max(gap, (during[0]?.start ?? to) - from, to - (during[during.length - 1]?.start ?? from));
    assert.ok(during.length >= 5, `${during.length} ordinary pages while the floods ran (${((to - from) / 1000).toFixed(1)} s)`);
    assert.ok(gap < (to - from) / 3, `the ordinary host's longest pause ${gap.toFixed(0)} ms is under a third of the flood window ${(to - from).toFixed(0)} ms`);
    for (const e of ordinary) {
      const o = outcomes.get(srv.url(normal, e.path)) ?? [];
      assert.ok(o.every((x) => ['ok', 'CRAWL_FETCH_ABORTED', 'CRAWL_PARSE_ABORTED'].includes(x)), `${e.path}: ${o.join(',')}`);
    }
  } finally {
    await srv.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

test('chunk floods beside an ordinary host, fetches on the main thread: the crawl lives, logs every page, the ordinary host keeps its pace', { timeout: 600_000 }, async () => {
  await floods(3, 'off');
});

test('chunk floods beside an ordinary host, fetches on page workers: the same', { timeout: 600_000 }, async () => {
  await floods(4, 'on');
});
