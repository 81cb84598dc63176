/**
 * `--crawl-log-format heritrix`: lines exactly as Heritrix 3's UriProcessingFormatter lays them out
 * (status padded to 5, size to 10, 17-digit fetch start + duration, `-` for empty fields), and the
 * Heritrix fetch-status codes for drumcrawl's outcomes and dropped URLs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { CrawlLog, formatHeritrixLine, parseHeritrixLine, heritrixStatus, heritrixMime, type CrawlLogEntry } from '../../src/store/index.js';

const T = new Date('2026-11-25T21:00:00.123Z');

test('heritrix crawl.log: the 12 fields of a page, a transport failure, robots.txt and dropped URLs', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'drumcrawl-hlog-'));
  try {
    const file = path.join(dir, 'crawl.log');
    const log = await CrawlLog.open(file, { format: 'heritrix' });
    log.write({ time: T, status: 200, bytes: 5120, durationMs: 13, url: 'http://a.test/p', hops: 1, digest: 'sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ', outcome: 'ok',
      mime: 'text/html; charset=utf-8', via: 'http://a.test/', path: 'L' });
    log.write({ time: T, status: null, bytes: 0, durationMs: 1500, url: 'http://b.test/x', hops: 2, digest: null, outcome: 'CRAWL_FETCH_TOTAL_TIMEOUT',
      mime: null, via: 'http://a.test/p', path: 'LR' });
    log.writeRobots({ time: T, status: 404, bytes: 9, durationMs: 4, url: 'http://a.test/robots.txt', outcome: 'ok', mime: 'text/plain' });
    log.writeDropped({ time: T, url: 'http://a.test/private/x', hops: 2, reason: 'robots', via: 'http://a.test/p', path: 'LL' });
    log.writeDropped({ time: T, url: 'http://gone.test/', hops: 1, reason: 'CRAWL_DNS_NXDOMAIN', via: 'http://a.test/', path: 'L' });
    log.writeDropped({ time: T, url: 'http://c.test/', hops: 0, reason: 'max-attempts' });
    await log.close();
    assert.deepEqual(readFileSync(file, 'utf8').split('\n'), [
      '2026-11-25T21:00:00.123Z   200       5120 http://a.test/p L http://a.test/ text/html #000 20261125210000110+13 sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ - -',
      '2026-11-25T21:00:00.123Z    -4          - http://b.test/x LR http://a.test/p no-type #000 20261125205958623+1500 - - CRAWL_FETCH_TOTAL_TIMEOUT',
      '2026-11-25T21:00:00.123Z   404          9 http://a.test/robots.txt P - text/plain #000 20261125210000119+4 - - -',
      '2026-11-25T21:00:00.123Z -9998          - http://a.test/private/x LL http://a.test/p no-type #000 - - - dropped:robots',
      '2026-11-25T21:00:00.123Z    -6          - http://gone.test/ L http://a.test/ no-type #000 - - - dropped:CRAWL_DNS_NXDOMAIN',
      '2026-11-25T21:00:00.123Z    -8          - http://c.test/ - - no-type #000 - - - dropped:max-attempts',
      '',
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('heritrix status codes (FetchStatusCodes.java) and MIME truncation (MimetypeUtils.truncate)', () => {
  const cases: [number | null, string, number][] = [
    [301, 'CRAWL_FETCH_REDIRECT', 301], [null, 'dropped:robots', -9998], [null, 'dropped:CRAWL_DNS_SERVFAIL', -6],
    [null, 'dropped:scope', -5000], [null, 'dropped:trap', -4000], [null, 'dropped:host-errors', -8], [null, 'dropped:host-failed', -8],
    [null, 'CRAWL_FETCH_DNS', -1], [null, 'CRAWL_DNS_NXDOMAIN', -1], [null, 'CRAWL_FETCH_CONNECT_REFUSED', -2], [null, 'CRAWL_FETCH_RESET', -3],
    [null, 'CRAWL_FETCH_HEADERS_TIMEOUT', -4], [null, 'CRAWL_FETCH_BLOCKED_ADDRESS', -5001], [null, 'CRAWL_ROBOTS_UNREACHABLE', -61],
    [null, 'CRAWL_FETCH_ABORTED', -7000], [null, 'CRAWL_FETCH_BAD_RESPONSE', -5],
  ];
  for (const [status, outcome, want] of cases) assert.equal(heritrixStatus(status, outcome), want, outcome);
  assert.equal(heritrixMime('text/html; charset=UTF-8'), 'text/html');
  assert.equal(heritrixMime('text/html,application/xhtml+xml'), 'text/html');
  assert.equal(heritrixMime(' text/html'), 'no-type');
  assert.equal(heritrixMime(''), 'no-type');
  assert.equal(heritrixMime(null), 'no-type');
});

test('heritrix lines always have 12 blank-separated fields and read back (fast-check)', () => {
  const text = fc.option(fc.string({ maxLength: 40 }), { nil: null });
  const entry = fc.record({
    status: fc.option(fc.integer({ min: 100, max: 599 }), { nil: null }), bytes: fc.nat(1e9), durationMs: fc.nat(1e6),
    url: fc.string({ minLength: 1, maxLength: 60 }), hops: fc.nat(60), digest: text, outcome: fc.constantFrom('ok', 'dropped:robots', 'CRAWL_FETCH_RESET', 'dropped:x y'),
    mime: text, via: text, path: text,
  });
  fc.assert(fc.property(entry, (e) => {
    const line = formatHeritrixLine({ ...e, time: T } as CrawlLogEntry);
    assert.ok(line.endsWith('\n') && line.indexOf('\n') === line.length - 1, JSON.stringify(line));
    const h = parseHeritrixLine(line);
    assert.equal(h.logTime, T.toISOString());
    assert.equal(h.thread, '#000');
    assert.equal(h.status, heritrixStatus(e.status, e.outcome));
  }), { seed: Number(process.env.FC_SEED ?? Date.now() % 2 ** 31), verbose: true });
});
