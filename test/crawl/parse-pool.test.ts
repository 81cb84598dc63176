import { test } from 'node:test';
import assert from 'node:assert/strict';
import { workerFileFor } from '../../src/threads/worker-file.js';
import { ParsePool } from '../../src/threads/page/parse-pool.js';
import { LinkTable } from '../../src/threads/links-codec.js';
import { payloadDigest } from '../../src/html/index.js';
import { urlFingerprint, splitKey } from '../../src/url/index.js';
import { until } from './until.js';

const enc = new TextEncoder();
const wd = { images: false, include: [], exclude: ['/private/'], scope: 'any' as const, scopeHosts: [], scopePlds: [] };
// the real worker wrapped by one that crashes or hangs on marked pages (faulty-parse-worker.ts)
const worker = workerFileFor(new URL('./faulty-parse-worker.ts', import.meta.url).href);


// The crash runs in a pool whose parse timeout is far above any load (a crash noticed after a short
// timeout has fired is reported CRAWL_PARSE_TIMEOUT), the hang in one with a 3 s timeout.
test('parse pool: links resolved, canonicalized, fingerprinted, filtered; crash and hang are replaced and reported', { timeout: 600_000 }, async () => {
  const html = enc.encode('<html><head><base href="/d/"></head><a href="x.html">x</a><a href="x.html#frag">dup</a>' +
    '<a href="HTTP://Other.Test:80/a/../b">b</a><a rel="nofollow" href="/n">n</a><a href="/private/p">p</a>' +
    '<a href="/a/a/a/a/a/a/a/a/a/">trap</a><a href="mailto:x@y">m</a></html>');
  let pool = new ParsePool(wd, { threads: 2, timeoutMs: 300_000, worker });
  try {
    await pool.warmup();
    const r = await pool.run({ url: 'http://www.a.test/p/q.html', body: html, decoded: html, html: true, follow: true });
    assert.ok(r.ok, JSON.stringify(r));
    const t = new LinkTable(r.table);
    const urls = Array.from({ length: t.count }, (_, i) => t.url(i));
    assert.deepEqual(urls, ['http://www.a.test/d/x.html', 'http://other.test/b']);
    const [hi, lo] = splitKey(urlFingerprint(urls[0]!));
    assert.equal(t.hi(0), hi);
    assert.equal(t.lo(0), lo);
    assert.equal(t.info().digest, payloadDigest(html));
    assert.ok(t.info().extracted >= 7);
    // not followed past max depth: digest only
    const r2 = await pool.run({ url: 'http://www.a.test/', body: html, decoded: html, html: true, follow: false });
    assert.ok(r2.ok && new LinkTable(r2.table).count === 0);

    const crash = enc.encode('<p>CRASH-ME</p>');
    const c = await pool.run({ url: 'http://a.test/c', body: crash, decoded: crash, html: true, follow: true });
    assert.equal(c.ok ? 'ok' : c.code, 'CRAWL_PARSE_CRASH');
    await until(() => pool.replaced === 1, 'a replacement');
  } finally {
    await pool.close();
  }
  pool = new ParsePool(wd, { threads: 2, timeoutMs: 3000, worker });
  try {
    await pool.warmup();
    const hang = enc.encode('<p>HANG-ME</p>');
    const h = await pool.run({ url: 'http://a.test/h', body: hang, decoded: hang, html: true, follow: true });
    assert.equal(h.ok ? 'ok' : h.code, 'CRAWL_PARSE_TIMEOUT');
    await until(() => pool.replaced === 1, 'a replacement');
    // the pool still works after it (once the replacement thread has loaded the worker module:
    // under tsx on a loaded box that alone can take seconds)
    await pool.warmup();
    const again = await pool.run({ url: 'http://www.a.test/p/q.html', body: html, decoded: html, html: true, follow: true });
    assert.ok(again.ok && new LinkTable(again.table).count === 2);
  } finally {
    await pool.close();
  }
});

// The pool starts one worker and adds one only when pages wait for a full batch while every slot
// of the started ones is taken (parse-pool.ts pump): pages handed over one at a time never start a
// second; a burst does, up to `threads`, and every page is answered either way.
test('parse pool: one worker while it keeps up, a second for a burst, never more than threads', { timeout: 600_000 }, async () => {
  const page = enc.encode('<a href="/x">x</a><a href="/y">y</a>');
  const pool = new ParsePool(wd, { threads: 2, timeoutMs: 300_000, worker });
  try {
    await pool.warmup();
    for (let i = 0; i < 40; i++) {
      const r = await pool.run({ url: `http://www.a.test/${i}`, body: page, decoded: page, html: true, follow: true });
      assert.ok(r.ok);
    }
    assert.equal(pool.threads, 1, 'one page at a time: the first worker keeps up');
    const burst = await Promise.all(Array.from({ length: 200 }, (_, i) =>
      pool.run({ url: `http://www.a.test/b${i}`, body: page, decoded: page, html: true, follow: true })));
    assert.ok(burst.every((r) => r.ok && new LinkTable(r.table).count === 2));
    assert.equal(pool.threads, 2, 'a burst: a second worker, and no third');
  } finally {
    await pool.close();
  }
});

test('parse pool: deferStart — no worker until the first warmup or run; closed before then, it never starts one', { timeout: 600_000 }, async () => {
  const page = enc.encode('<a href="/x">x</a>');
  const pool = new ParsePool(wd, { threads: 2, timeoutMs: 300_000, worker, deferStart: true });
  try {
    assert.equal(pool.threads, 0, 'no worker at construction');
    // a page before any warmup: the pool starts a worker for it
    const r = await pool.run({ url: 'http://www.a.test/', body: page, decoded: page, html: true, follow: true });
    assert.ok(r.ok && new LinkTable(r.table).count === 1);
    assert.equal(pool.threads, 1);
    await pool.warmup();
    assert.equal(pool.threads, 1, 'warmup after a run starts no second worker');
  } finally {
    await pool.close();
  }
  const idle = new ParsePool(wd, { threads: 2, timeoutMs: 300_000, worker, deferStart: true });
  await idle.close();
  await idle.warmup(); // after close: nothing, no error
  assert.equal(idle.threads, 0);
  // without deferStart: one worker from construction on (the cluster's shared pools)
  const eager = new ParsePool(wd, { threads: 2, timeoutMs: 300_000, worker });
  try {
    assert.equal(eager.threads, 1);
  } finally {
    await eager.close();
  }
});
