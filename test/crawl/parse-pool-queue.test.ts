import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ParsePool, type ParseOutcome } from '../../src/crawl/parse-pool.js';
import { LinkTable } from '../../src/crawl/links-codec.js';

// Several pages queue inside one worker (2 batches of up to 4): a crash or hang blames only the page being
// parsed; the pages queued behind it in the dead worker are re-run on the replacement, in order.

const enc = new TextEncoder();
const wd = { images: false, include: [], exclude: [], scope: 'any' as const, scopeHosts: [], scopePlds: [], fault: { crashOn: 'CRASH-ME', hangOn: 'HANG-ME' } };

function page(i: number, marker = ''): { url: string; body: Uint8Array; decoded: Uint8Array; html: true; follow: true } {
  const b = enc.encode(`<html><p>${marker}</p><a href="/l/${i}">x</a><a href="http://o${i}.test/">y</a></html>`);
  return { url: `http://p${i}.test/`, body: b, decoded: b, html: true, follow: true };
}

function links(o: ParseOutcome): string[] {
  assert.ok(o.ok, JSON.stringify(o));
  const t = new LinkTable(o.table);
  return Array.from({ length: t.count }, (_, i) => t.url(i));
}

test('parse pool: pages queued behind a crash or a hang in the same worker are re-run, not lost', async () => {
  const pool = new ParsePool(wd, { threads: 1, timeoutMs: 1500, concurrentTasksPerWorker: 2, batch: 4 });
  try {
    await pool.warmup();
    // crash in the 2nd of 4 queued pages, then a hang in the 2nd of the next 4
    const a = [pool.run(page(0)), pool.run(page(1, 'CRASH-ME')), pool.run(page(2)), pool.run(page(3)), pool.run(page(4))];
    assert.equal(pool.pending, 5);
    const ra = await Promise.all(a);
    assert.deepEqual(links(ra[0]!), ['http://p0.test/l/0', 'http://o0.test/']);
    assert.equal(ra[1]!.ok ? 'ok' : ra[1]!.code, 'CRAWL_PARSE_CRASH');
    for (const i of [2, 3, 4]) assert.deepEqual(links(ra[i]!), [`http://p${i}.test/l/${i}`, `http://o${i}.test/`]);
    assert.equal(pool.replaced, 1);

    const b = [pool.run(page(5)), pool.run(page(6, 'HANG-ME')), pool.run(page(7)), pool.run(page(8))];
    const rb = await Promise.all(b);
    assert.deepEqual(links(rb[0]!), ['http://p5.test/l/5', 'http://o5.test/']);
    assert.equal(rb[1]!.ok ? 'ok' : rb[1]!.code, 'CRAWL_PARSE_TIMEOUT');
    for (const i of [2, 3]) assert.deepEqual(links(rb[i]!), [`http://p${i + 5}.test/l/${i + 5}`, `http://o${i + 5}.test/`]);
    assert.equal(pool.replaced, 2);
    assert.equal(pool.pending, 0);
  } finally {
    await pool.close();
  }
});

test('parse pool: close() answers every page still queued or in a worker', async () => {
  const pool = new ParsePool(wd, { threads: 2, timeoutMs: 5000, concurrentTasksPerWorker: 2, batch: 2 });
  await pool.warmup();
  assert.deepEqual(links(await pool.run(page(9))), ['http://p9.test/l/9', 'http://o9.test/']);
  const hang = pool.run(page(10, 'HANG-ME'));
  const queued = [pool.run(page(11)), pool.run(page(12)), pool.run(page(13)), pool.run(page(14)), pool.run(page(15))];
  await new Promise((r) => setTimeout(r, 50));
  await pool.close();
  const all = await Promise.all([hang, ...queued]);
  assert.equal(pool.pending, 0);
  // the hung page never answers: close() does, with an error; the others either finished or not
  assert.equal(all[0]!.ok ? 'ok' : all[0]!.code, 'CRAWL_PARSE_ERROR');
  for (const o of all.slice(1)) assert.ok(o.ok || o.code === 'CRAWL_PARSE_ERROR', JSON.stringify(o));
  const after = await pool.run(page(16));
  assert.equal(after.ok ? 'ok' : after.code, 'CRAWL_PARSE_ERROR');
});
