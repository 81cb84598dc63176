import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as turn } from 'node:timers/promises';
import { ParsePool, type ParseOutcome } from '../../src/threads/page/parse-pool.js';
import { LinkTable } from '../../src/threads/links-codec.js';

// The parse pool's hold (ParsePoolOptions.holdMs): pages that come in separate turns of the event
// loop share one batch (one piscina task) until it is full; an under-full batch goes when the hold
// ends; a page held when the pool closes is answered at once. No assertion depends on how long a
// turn or a parse takes: the holds are far longer than the test, or only their end is awaited.

const enc = new TextEncoder();
const wd = { images: false, include: [], exclude: [], scope: 'any' as const, scopeHosts: [], scopePlds: [] };

function page(i: number): { url: string; body: Uint8Array; decoded: Uint8Array; html: true; follow: true } {
  const b = enc.encode(`<html><a href="/l/${i}">x</a></html>`);
  return { url: `http://p${i}.test/`, body: b, decoded: b, html: true, follow: true };
}

function links(o: ParseOutcome): string[] {
  assert.ok(o.ok, JSON.stringify(o));
  const t = new LinkTable(o.table);
  return Array.from({ length: t.count }, (_, i) => t.url(i));
}

test('parse pool hold: pages of separate turns go as one batch once it is full, each with its own answer', async () => {
  const pool = new ParsePool(wd, { threads: 2, timeoutMs: 60_000, batch: 4, holdMs: 3_600_000 });
  try {
    await pool.warmup();
    const out: Promise<ParseOutcome>[] = [];
    for (let i = 0; i < 4; i++) {
      out.push(pool.run(page(i)));
      await turn();
    }
    const r = await Promise.all(out);
    r.forEach((o, i) => assert.deepEqual(links(o), [`http://p${i}.test/l/${i}`]));
    assert.equal(pool.launched, 1, 'four pages, one batch');
  } finally {
    await pool.close();
  }
});

test('parse pool hold: an under-full batch goes when the hold ends', async () => {
  const pool = new ParsePool(wd, { threads: 1, timeoutMs: 60_000, batch: 8, holdMs: 50 });
  try {
    await pool.warmup();
    const a = pool.run(page(1));
    await turn();
    const b = pool.run(page(2));
    assert.deepEqual(links(await a), ['http://p1.test/l/1']);
    assert.deepEqual(links(await b), ['http://p2.test/l/2']);
    assert.equal(pool.launched, 1);
    assert.equal(pool.pending, 0);
  } finally {
    await pool.close();
  }
});

test('parse pool hold: a page held when the pool closes or the crawl abandons it is answered at once', async () => {
  const pool = new ParsePool(wd, { threads: 1, timeoutMs: 60_000, batch: 8, holdMs: 3_600_000 });
  await pool.warmup();
  const a = pool.run(page(1));
  assert.equal(pool.abandonWaiting(), 1);
  assert.equal((await a).ok ? 'ok' : (await a as { code: string }).code, 'CRAWL_PARSE_ABORTED');
  const b = pool.run(page(2));
  await pool.close();
  const rb = await b;
  assert.equal(rb.ok ? 'ok' : rb.code, 'CRAWL_PARSE_ERROR');
  assert.equal(pool.launched, 0);
});
