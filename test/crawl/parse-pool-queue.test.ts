import { test } from 'node:test';
import assert from 'node:assert/strict';
import { workerFileFor } from '../../src/threads/worker-file.js';
import { ParsePool, type ParseOutcome } from '../../src/threads/page/parse-pool.js';
import { LinkTable } from '../../src/threads/links-codec.js';
import { until } from './until.js';

// Several pages queue inside one worker (2 batches of up to 4): a crash or hang blames only the page being
// parsed; the pages queued behind it in the dead worker are re-run on the replacement, in order.

const enc = new TextEncoder();
const wd = { images: false, include: [], exclude: [], scope: 'any' as const, scopeHosts: [], scopePlds: [] };
// the real worker wrapped by one that crashes or hangs on marked pages (faulty-parse-worker.ts)
const worker = workerFileFor(new URL('./faulty-parse-worker.ts', import.meta.url).href);


function page(i: number, marker = ''): { url: string; body: Uint8Array; decoded: Uint8Array; html: true; follow: true } {
  const b = enc.encode(`<html><p>${marker}</p><a href="/l/${i}">x</a><a href="http://o${i}.test/">y</a></html>`);
  return { url: `http://p${i}.test/`, body: b, decoded: b, html: true, follow: true };
}

function links(o: ParseOutcome): string[] {
  assert.ok(o.ok, JSON.stringify(o));
  const t = new LinkTable(o.table);
  return Array.from({ length: t.count }, (_, i) => t.url(i));
}

// The crash runs in a pool whose parse timeout is far above any load (a crash noticed after a short
// timeout has fired is reported CRAWL_PARSE_TIMEOUT), the hang in one with a 3 s timeout.
test('parse pool: pages queued behind a crash or a hang in the same worker are re-run, not lost', { timeout: 600_000 }, async () => {
  let pool = new ParsePool(wd, { threads: 1, timeoutMs: 300_000, concurrentTasksPerWorker: 2, batch: 4, worker });
  try {
    await pool.warmup();
    // crash in the 2nd of 4 queued pages
    const a = [pool.run(page(0)), pool.run(page(1, 'CRASH-ME')), pool.run(page(2)), pool.run(page(3)), pool.run(page(4))];
    assert.equal(pool.pending, 5);
    const ra = await Promise.all(a);
    assert.deepEqual(links(ra[0]!), ['http://p0.test/l/0', 'http://o0.test/']);
    assert.equal(ra[1]!.ok ? 'ok' : ra[1]!.code, 'CRAWL_PARSE_CRASH');
    for (const i of [2, 3, 4]) assert.deepEqual(links(ra[i]!), [`http://p${i}.test/l/${i}`, `http://o${i}.test/`]);
    await until(() => pool.replaced === 1, 'one replacement');
    assert.equal(pool.pending, 0);
  } finally {
    await pool.close();
  }
  pool = new ParsePool(wd, { threads: 1, timeoutMs: 3000, concurrentTasksPerWorker: 2, batch: 4, worker });
  try {
    await pool.warmup();
    // a hang in the 2nd of 4
    const b = [pool.run(page(5)), pool.run(page(6, 'HANG-ME')), pool.run(page(7)), pool.run(page(8))];
    const rb = await Promise.all(b);
    assert.deepEqual(links(rb[0]!), ['http://p5.test/l/5', 'http://o5.test/']);
    assert.equal(rb[1]!.ok ? 'ok' : rb[1]!.code, 'CRAWL_PARSE_TIMEOUT');
    for (const i of [2, 3]) assert.deepEqual(links(rb[i]!), [`http://p${i + 5}.test/l/${i + 5}`, `http://o${i + 5}.test/`]);
    await until(() => pool.replaced === 1, 'one replacement');
    assert.equal(pool.pending, 0);
  } finally {
    await pool.close();
  }
});

test('parse pool: close() answers every page still queued or in a worker, each with its one outcome', async () => {
  // one batch per worker, one page per batch: a hung worker holds only its hung page
  const pool = new ParsePool(wd, { threads: 2, timeoutMs: 20_000, concurrentTasksPerWorker: 1, batch: 1, worker });
  await pool.warmup();
  assert.deepEqual(links(await pool.run(page(9))), ['http://p9.test/l/9', 'http://o9.test/']);
  // worker A hangs; every other page is parsed, in turn, by worker B
  const hang = pool.run(page(10, 'HANG-ME'));
  const parsed = await Promise.all([11, 12, 13, 14, 15].map((i) => pool.run(page(i))));
  for (const [k, o] of parsed.entries()) assert.deepEqual(links(o), [`http://p${11 + k}.test/l/${11 + k}`, `http://o${11 + k}.test/`]);
  // worker B hangs too: the next pages wait in the pool, in no worker
  const hang2 = pool.run(page(16, 'HANG-ME'));
  const waiting = [pool.run(page(17)), pool.run(page(18))];
  assert.equal(pool.pending, 4);
  await pool.close();
  const closed = await Promise.all([hang, hang2, ...waiting]);
  for (const o of closed) assert.deepEqual(o.ok ? 'ok' : [o.code, o.message], ['CRAWL_PARSE_ERROR', 'parse pool closed']);
  assert.equal(pool.pending, 0);
  assert.equal(pool.replaced, 0); // workers taken down by close() are not replacements
  const after = await pool.run(page(19));
  assert.deepEqual(after.ok ? 'ok' : [after.code, after.message], ['CRAWL_PARSE_ERROR', 'parse pool closed']);
});

test('parse pool: a worker that dies between pages is replaced every time; the page is given up after 3 re-runs', async () => {
  const pool = new ParsePool(wd, { threads: 1, timeoutMs: 20_000, concurrentTasksPerWorker: 1, batch: 1, worker });
  try {
    await pool.warmup();
    const o = await pool.run(page(20, 'CRASH-BETWEEN'));
    assert.equal(o.ok ? 'ok' : o.code, 'CRAWL_PARSE_CRASH');
    // the first run and 3 re-runs: 4 dead workers, 4 replacements
    await until(() => pool.replaced === 4, 'four replacements');
    await pool.warmup();
    assert.deepEqual(links(await pool.run(page(21))), ['http://p21.test/l/21', 'http://o21.test/']);
    assert.equal(pool.replaced, 4);
  } finally {
    await pool.close();
  }
});

// A supervisor that never found the hang would leave the page unanswered: the test's timeout (far
// above the three re-runs' worker starts on a loaded box) bounds it.
test('parse pool: a worker that hangs outside any page is found stuck, replaced, and the page given up after 3 re-runs', { timeout: 600_000 }, async () => {
  const pool = new ParsePool(wd, { threads: 1, timeoutMs: 20_000, concurrentTasksPerWorker: 1, batch: 1, worker, stuckMs: 400 });
  try {
    await pool.warmup();
    const o = await pool.run(page(23, 'HANG-BETWEEN'));
    assert.equal(o.ok ? 'ok' : o.code, 'CRAWL_PARSE_CRASH');
    await until(() => pool.replaced >= 1, 'a replacement');
    await pool.warmup();
    assert.deepEqual(links(await pool.run(page(24))), ['http://p24.test/l/24', 'http://o24.test/']);
  } finally {
    await pool.close();
  }
});

test('parse pool: an 8 MB page of nested <svg> is CRAWL_PARSE_LIMIT, quickly; no worker dies', async () => {
  // the real worker under a heap cap that a full parse5 tree of this page would exceed many times
  const pool = new ParsePool(wd, { threads: 1, timeoutMs: 20_000, heapMb: 64 });
  try {
    await pool.warmup();
    const b = enc.encode('<html><body>' + '<svg>'.repeat((8 << 20) / 5));
    const o = await pool.run({ url: 'http://deep.test/', body: b, decoded: b, html: true, follow: true });
    // The depth limit, not the 20 s parse timeout (CRAWL_PARSE_TIMEOUT) nor the heap cap (a dead
    // worker: CRAWL_PARSE_CRASH, replaced), ended it: the outcome says which, whatever the load.
    assert.equal(o.ok ? 'ok' : o.code, 'CRAWL_PARSE_LIMIT', JSON.stringify(o.ok ? null : o.message));
    assert.deepEqual(links(await pool.run(page(22))), ['http://p22.test/l/22', 'http://o22.test/']);
    assert.equal(pool.replaced, 0);
  } finally {
    await pool.close();
  }
});
