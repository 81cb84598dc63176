/**
 * The hostile-site suite, crawl level (issue #30): the CLI crawls a web of hostile servers on
 * loopback (src/simweb/hostile-server.ts) for 30 s at `--ram 512M`, with the fetches on the main
 * thread and then on page workers; judged from the servers' request log, crawl.log and the WARC
 * files (the chunk floods and the ordinary host's pace are floods.test.ts):
 *
 *   - the process lives and exits 0 at --max-time; every page a server was asked for has its
 *     crawl.log line (nothing lost in flight or in the parse queue when the stop comes);
 *   - `Transfer-Encoding: gzip, chunked` (and deflate, and gzip read to the close) is archived
 *     decoded, an unknown transfer-coding is refused; a flood of 103 Early Hints is
 *     CRAWL_FETCH_INTERIM_LIMIT;
 *   - the 490,000-link page is parsed (not CRAWL_PARSE_CRASH) and gives 10,000 links; no page is
 *     CRAWL_PARSE_CRASH; the 15 MiB-decoding gzip pages are parsed;
 *   - robots.txt that redirects to itself is treated as a chain of six (allow all); a chain of five
 *     is followed to its rules;
 *   - endless heads and trailers, a chunk size past 64 bits end with their codes; slow 8 MiB
 *     bodies (with a Content-Length and chunked) get their lines;
 *   - the body budget (GET /status) is never held past its size.
 * VmHWM against --ram at full scale is `npm run bench:hostile`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { startHostileServers } from '../../src/simweb/hostile-server.js';
import { tempDir } from '../e2e/harness.js';
import { MiB, crawlLog, hostileRun, ipsOf, responses, unlogged, type LogLine } from './crawl-common.js';

async function hostileCrawl(run: number, pageWorkers: 'on' | 'off'): Promise<void> {
  const ips = ipsOf(run, 12);
  const [normal, te, hints, links, gzip, self, chain6, chain5, slow1, slow2, heads, slow3] = ips as [string, string, string, string, string, string, string, string, string, string, string, string];
  const srv = await startHostileServers({
    ips, slowMs: 8000, bigBytes: 8 * MiB, normalPages: 2000,
    robots: { [self]: 'self', [chain6]: 'chain:6', [chain5]: 'chain:5' },
  });
  const dir = await tempDir('hostile');
  const out = path.join(dir, 'out');
  try {
    const u = srv.url;
    const seeds = [
      u(normal, '/n/0'),
      u(te, '/te/gzip/0'), u(te, '/te/deflate/0'), u(te, '/te/unknown/0'), u(te, '/te/gzip-close/0'),
      u(hints, '/hints/flood/0'), u(hints, '/hints/3/0'),
      u(links, '/links/0'),
      u(gzip, '/gzip-big/0'), u(gzip, '/gzip-big/1'),
      u(self, '/n/0'), u(chain6, '/n/0'), u(chain5, '/n/0'),
      u(slow1, '/slow-big/0'), u(slow2, '/slow-big/0'), u(slow3, '/slow-chunked/0'),
      u(heads, '/head/huge/0'), u(heads, '/trailers/0'), u(heads, '/chunk/huge-size/0'),
    ];
    const { code, log, budgets } = await hostileRun({
      seeds, dir, pageWorkers, maxTimeS: 30,
      // the links taken from the 490,000-link page and the 15 MiB pages are then dropped (and
      // logged): thousands of 404s of two more hosts are not what these cases are about
      extra: ['--exclude', `^http://127\\.89\\.${run}\\.(4|5):[0-9]+/(g/|[0-9]{6}$)`],
    });
    assert.equal(code, 0, `the crawler lives and exits 0 at --max-time:\n${log.slice(-3000)}`);

    const lines = crawlLog(out);
    assert.deepEqual(unlogged(srv, lines), [], 'every fetched page has a crawl.log line');
    const byUrl = new Map<string, LogLine[]>();
    for (const l of lines) byUrl.set(l.url, [...(byUrl.get(l.url) ?? []), l]);
    const outcome = (p: string, ip: string): string[] => (byUrl.get(u(ip, p)) ?? []).filter((l) => l.hops !== '-').map((l) => l.outcome);
    for (const l of lines) assert.notEqual(l.outcome, 'CRAWL_PARSE_CRASH', `${l.url}: no page crashed its parser`);
    // A case the crawl reached before --max-time ends with its code. Which cases it reaches in 30 s
    // depends on the box's load (the slow and 15 MiB bodies hold the body budget, and dispatch waits
    // while it is tight): one not reached is counted, not judged (each case's code is also judged
    // fetch by fetch in fetch.test.ts, where nothing races a time limit).
    let notReached = 0;
    const judged = (p: string, ip: string, want: string[]): boolean => {
      // (a fetch or parse the stop cut short at --max-time was not reached either: stop.ts)
      const got = outcome(p, ip).filter((x) => x !== 'CRAWL_FETCH_ABORTED' && x !== 'CRAWL_PARSE_ABORTED');
      if (got.length === 0) {
        notReached++;
        return false;
      }
      assert.deepEqual(got, want, p);
      return true;
    };

    // transfer-codings and interim heads
    const warc = await responses(out);
    for (const p of ['/te/gzip/0', '/te/deflate/0', '/te/gzip-close/0']) {
      if (!judged(p, te, ['ok'])) continue;
      const block = warc.get(`response ${u(te, p)}`);
      assert.ok(block !== undefined, `${p} archived`);
      const head = block.subarray(0, block.indexOf('\r\n\r\n')).toString('latin1');
      const body = block.subarray(block.indexOf('\r\n\r\n') + 4).toString('latin1');
      assert.match(body, /^<!DOCTYPE html>/, `${p}: the archived payload is the page, transfer-decoded`);
      assert.match(head, /\r\nX-Crawler-Transfer-Encoding: /, `${p}: the archived head does not claim a coding the payload no longer has`);
    }
    if (judged('/te/unknown/0', te, ['CRAWL_FETCH_TRANSFER_CODING'])) assert.equal(warc.has(`response ${u(te, '/te/unknown/0')}`), false, 'a body it could not decode is not archived');
    judged('/hints/flood/0', hints, ['CRAWL_FETCH_INTERIM_LIMIT']);
    judged('/hints/3/0', hints, ['ok']);

    // the 490,000-link page is parsed and gives its first 10,000 links; the 15 MiB pages are parsed
    const lp = outcome('/links/0', links);
    assert.ok(lp.length === 1 && ['ok', 'CRAWL_PARSE_ABORTED'].includes(lp[0]!), `links page: ${lp.join(',')}`);
    if (lp[0] === 'ok') {
      const taken = lines.filter((l) => l.url.startsWith(`http://${links}:`) && l.outcome === 'dropped:CRAWL_SCOPE_EXCLUDED').length;
      assert.equal(taken, 10_000, 'the first 10,000 of its 490,000 links were taken');
    }
    // (the second one waits for the first: its decode may wait for large room behind the other large bodies)
    assert.ok(outcome('/gzip-big/0', gzip).length > 0, 'the first 15 MiB page was fetched');
    for (const p of ['/gzip-big/0', '/gzip-big/1']) {
      assert.ok(outcome(p, gzip).every((x) => ['ok', 'duplicate', 'CRAWL_FETCH_ABORTED', 'CRAWL_PARSE_ABORTED'].includes(x)), `${p}: ${outcome(p, gzip).join(',')}`);
    }
    // the ordinary pages parsed beside them are all ok
    for (const l of lines) if (l.url.startsWith(`http://${normal}:`) && l.hops !== '-') assert.ok(['ok', 'CRAWL_FETCH_ABORTED', 'CRAWL_PARSE_ABORTED'].includes(l.outcome), `${l.url}: ${l.outcome}`);

    // robots.txt: a loop means what a chain of six means (allow all); a chain of five is followed
    const robotsOf = (ip: string): string[] => lines.filter((l) => l.hops === '-' && l.url.startsWith(`http://${ip}:`)).map((l) => l.outcome);
    for (const ip of [self, chain6]) if (robotsOf(ip).length > 0) assert.ok(robotsOf(ip).includes('CRAWL_ROBOTS_REDIRECT_LIMIT'), `${ip}: ${robotsOf(ip).join(',')}`);
    judged('/n/0', self, ['ok']); // a robots.txt loop allows all
    judged('/n/0', chain6, ['ok']);
    judged('/n/0', chain5, ['dropped:robots']); // the rules at the end of five redirects apply

    // hostile heads and framing end with their codes; the slow 8 MiB bodies get their lines
    judged('/head/huge/0', heads, ['CRAWL_FETCH_TOO_LARGE']);
    judged('/trailers/0', heads, ['CRAWL_FETCH_TOO_LARGE']);
    // (malformed HTTP is asked once more: error-policy.ts)
    const bad = outcome('/chunk/huge-size/0', heads);
    assert.ok(bad.every((x) => x === 'CRAWL_FETCH_BAD_RESPONSE'), bad.join(','));
    if (bad.length === 0) notReached++;
    // (the slow 8 MiB bodies, with a Content-Length and chunked: their lines are judged by unlogged() above)
    console.log(`hostile cases not reached before --max-time: ${notReached}`);
    assert.ok(notReached < 12, 'the crawl reached some of the hostile cases');

    // the body budget held: never more than its size (a socket read past the room may be kept: 2 MiB of slack)
    assert.ok(budgets.length > 0, 'GET /status reports the body budget');
    for (const b of budgets) assert.ok(b.usedBytes <= b.capacityBytes && b.peakBytes <= b.capacityBytes + 2 * MiB, `budget ${JSON.stringify(b)}`);
    assert.ok(budgets.some((b) => b.peakBytes >= 8 * MiB), 'the large bodies were counted');
  } finally {
    await srv.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

test('hostile web, fetches on the main thread: the crawl lives, logs every page, and each hostile answer ends with its code', { timeout: 600_000 }, async () => {
  await hostileCrawl(1, 'off');
});

test('hostile web, fetches on page workers: the same', { timeout: 600_000 }, async () => {
  await hostileCrawl(2, 'on');
});
