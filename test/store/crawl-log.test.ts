import { test } from 'node:test';
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CrawlLog, parseCrawlLogLine, CRAWL_LOG_COLUMNS, type CrawlLogEntry } from '../../src/store/index.js';

test('crawl log: one TSV line per fetch, buffered until flush, appended on reopen, round-trips', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'drumcrawl-log-'));
  try {
    const file = path.join(dir, 'crawl.log');
    const log = await CrawlLog.open(file, { bufferBytes: 1 << 20 });
    const entries: CrawlLogEntry[] = [
      { time: new Date('2026-11-25T21:00:00.123Z'), status: 200, bytes: 5120, durationMs: 12.6, url: 'http://a.test/', hops: 0, digest: 'sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ', outcome: 'ok', mime: 'text/html', via: null, path: null },
      { time: new Date('2026-11-25T21:00:01Z'), status: null, bytes: 0, durationMs: 5000, url: 'http://b.test/x', hops: 3, digest: null, outcome: 'CRAWL_FETCH_TIMEOUT', mime: null, via: 'http://a.test/p', path: 'LLR' },
    ];
    for (const e of entries) log.write(e);
    assert.equal(readFileSync(file, 'utf8'), '', 'nothing written before flush');
    await log.flush();
    const lines = readFileSync(file, 'utf8').split('\n');
    assert.equal(lines[0], '2026-11-25T21:00:00.123Z\t200\t5120\t13\thttp://a.test/\t0\tsha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ\tok\ttext/html\t-\t-');
    assert.equal(lines[1], '2026-11-25T21:00:01.000Z\t-\t0\t5000\thttp://b.test/x\t3\t-\tCRAWL_FETCH_TIMEOUT\t-\thttp://a.test/p\tLLR');
    // a tab or newline in a field cannot split the record
    log.write({ ...entries[0]!, url: 'http://c.test/a\tb\nc' });
    await log.close();
    const log2 = await CrawlLog.open(file);
    log2.write(entries[1]!);
    await log2.close();
    const all = readFileSync(file, 'utf8').trimEnd().split('\n');
    assert.equal(all.length, 4);
    for (const l of all) assert.equal(l.split('\t').length, CRAWL_LOG_COLUMNS.length);
    assert.deepStrictEqual(parseCrawlLogLine(all[1]!), { ...entries[1]! });
    assert.equal(parseCrawlLogLine(all[2]!).url, 'http://c.test/a b c');
    assert.throws(() => log2.write(entries[0]!), { code: 'CRAWL_STORE_CLOSED' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('crawl log flushes by itself when the buffer fills, keeping line order', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'drumcrawl-log-'));
  try {
    const file = path.join(dir, 'crawl.log');
    const log = await CrawlLog.open(file, { bufferBytes: 1000 });
    let maxBuffered = 0;
    for (let i = 0; i < 500; i++) {
      log.write({ time: new Date(0), status: 200, bytes: i, durationMs: 1, url: `http://h.test/${i}`, hops: 1, digest: null, outcome: 'ok' });
      maxBuffered = Math.max(maxBuffered, log.bufferedBytes);
    }
    assert.ok(maxBuffered < 1000, `RAM buffer stays bounded (${maxBuffered})`);
    await log.flush();
    assert.equal(readFileSync(file, 'utf8').split('\n').length - 1, 500);
    await log.close();
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    assert.deepStrictEqual(lines.map((l) => parseCrawlLogLine(l).bytes), Array.from({ length: 500 }, (_, i) => i));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("crawl log: a page's dropped links written at once are the lines writeDropped writes one by one, in both formats", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'drumcrawl-log-'));
  try {
    const link = fc.record({
      url: fc.oneof(fc.webUrl(), fc.array(fc.constantFrom('a', '/', ':', '%', ' ', '\t', '\n', '\r', 'é'), { maxLength: 30 }).map((c) => c.join(''))),
      reason: fc.constantFrom('CRAWL_TRAP_URL', 'CRAWL_SCOPE_OUT', 'CRAWL_SCOPE_EXCLUDED', 'odd\treason'),
    });
    let run = 0;
    await fc.assert(fc.asyncProperty(fc.array(link, { maxLength: 12 }), fc.integer({ min: 0, max: 1e12 }), fc.nat(50), fc.constantFrom('drumcrawl' as const, 'heritrix' as const),
      async (links, ms, hops, format) => {
        const a = path.join(dir, `a${run}.log`);
        const b = path.join(dir, `b${run++}.log`);
        const la = await CrawlLog.open(a, { format });
        const lb = await CrawlLog.open(b, { format });
        const time = new Date(ms);
        for (const l of links) la.writeDropped({ time, url: l.url, hops, reason: l.reason });
        lb.writeDroppedLinks(time, hops, links);
        await la.close();
        await lb.close();
        assert.equal(readFileSync(b, 'utf8'), readFileSync(a, 'utf8'));
      }), { numRuns: 200 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
