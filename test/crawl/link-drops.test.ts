/**
 * Links a page had but the crawl did not follow — trap URLs, links out of --scope, links refused
 * by --include/--exclude — come back from the parse worker with their CRAWL_* code (the link
 * table's drop trailer), so the crawl log can record every one of them. The same filter
 * (link-scope.ts) admits sitemap entries.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ParsePool } from '../../src/threads/page/parse-pool.js';
import { LinkTable } from '../../src/threads/links-codec.js';
import { DROP_CODES, LinkScope } from '../../src/config/link-scope.js';

const enc = new TextEncoder();

test('parse worker: trap, out-of-scope and excluded links are returned with their codes; followed links unchanged', async () => {
  const pool = new ParsePool(
    { images: false, include: [], exclude: ['/private/'], scope: 'pld', scopeHosts: ['www.a.test'], scopePlds: ['a.test'] },
    { threads: 1, timeoutMs: 5000 },
  );
  try {
    await pool.warmup();
    const html = enc.encode('<html><a href="/x.html">x</a><a href="http://h2.a.test/y">same pld</a><a href="http://other.test/b">b</a>' +
      '<a href="/private/p">p</a><a href="/a/a/a/a/a/a/a/a/a/">trap</a><a href="http://other.test/b">dup</a>' +
      '<a href="http://other.test/c/c/c/">trap out of scope</a></html>');
    const r = await pool.run({ url: 'http://www.a.test/p', body: html, decoded: html, html: true, follow: true });
    assert.ok(r.ok, JSON.stringify(r));
    const t = new LinkTable(r.table);
    assert.deepEqual(Array.from({ length: t.count }, (_, i) => t.url(i)), ['http://www.a.test/x.html', 'http://h2.a.test/y']);
    assert.deepEqual(
      t.dropped().map((d) => [d.url, DROP_CODES[d.code]]),
      [
        ['http://other.test/b', 'CRAWL_SCOPE_OUT'],
        ['http://www.a.test/private/p', 'CRAWL_SCOPE_EXCLUDED'],
        ['http://www.a.test/a/a/a/a/a/a/a/a/a/', 'CRAWL_TRAP_URL'],
        ['http://other.test/c/c/c/', 'CRAWL_SCOPE_OUT'],
      ],
    );
  } finally {
    await pool.close();
  }
});

test('LinkScope: host, pld and any scopes; include/exclude; traps only in scope', () => {
  const s = (scope: 'any' | 'pld' | 'host', o: { include?: string[]; exclude?: string[] } = {}) =>
    new LinkScope({ scope, scopeHosts: ['www.a.test'], scopePlds: ['a.test'], include: o.include ?? [], exclude: o.exclude ?? [] });
  assert.equal(s('host').check('http://h2.a.test/', 'h2.a.test'), 'CRAWL_SCOPE_OUT');
  assert.equal(s('pld').check('http://h2.a.test/', 'h2.a.test'), null);
  assert.equal(s('pld').check('http://b.test/', 'b.test'), 'CRAWL_SCOPE_OUT');
  assert.equal(s('any').check('http://b.test/', 'b.test'), null);
  assert.equal(s('any', { include: ['/keep/'] }).check('http://b.test/x', 'b.test'), 'CRAWL_SCOPE_EXCLUDED');
  assert.equal(s('any', { exclude: ['x$'] }).check('http://b.test/x', 'b.test'), 'CRAWL_SCOPE_EXCLUDED');
  assert.equal(s('any').check('http://b.test/a/a/a/a/', 'b.test'), 'CRAWL_TRAP_URL');
  // A trap out of scope is out of scope (the crawl would not follow it whatever its path).
  assert.equal(s('pld').check('http://b.test/a/a/a/a/', 'b.test'), 'CRAWL_SCOPE_OUT');
  assert.equal(s('any', { exclude: ['/a/'] }).check('http://b.test/a/a/a/a/', 'b.test'), 'CRAWL_SCOPE_EXCLUDED');
});
