import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse, parsePage, MAX_OUTLINKS } from '../../src/threads/page/parse-worker.js';
import { LinkTable, splitParseOutput } from '../../src/threads/links-codec.js';
import { urlFingerprint, hostKeyInto, pldKeyInto, splitKey } from '../../src/url/index.js';

// The parse worker's keys (host/PLD keys are cached per host across pages, bounded) must equal
// src/url's hostKeyInto / pldKeyInto / urlFingerprint on every followed link, also after the
// cache was dropped for being full.
test('parsePage: URL, host and PLD keys equal src/url\'s, across pages and past the host-key cache bound', () => {
  const enc = new TextEncoder();
  const k = new Uint32Array(4);
  // (4,500 pairs: 9,000 hosts, past the cache's 8,192, in fewer links than a page gives: MAX_OUTLINKS)
  for (const [n, hosts] of [[40, 7], [4500, 4500], [50, 30]] as const) {
    let html = '<html><base href="/dir/">';
    for (let i = 0; i < n; i++) html += `<a href="http://h${i % hosts}.s${i % 5}.example.co.uk/p/${i}">x</a><a href="${n > 1000 && i > 0 ? `http://j${i}.example.org/q` : `rel${i}`}">r</a>`;
    const body = enc.encode(html);
    const p = parsePage({ url: 'http://www.page.test/a/b', body, decoded: body, html: true, follow: true });
    const t = new LinkTable(p.table);
    assert.equal(t.count, 2 * n);
    assert.equal(p.urls.length, t.count);
    for (let i = 0; i < t.count; i++) {
      const e = t.entry(i);
      assert.equal(e.url, p.urls[i]);
      assert.deepEqual([e.hi, e.lo], splitKey(urlFingerprint(e.url)));
      hostKeyInto(e.url, k, 0);
      pldKeyInto(e.url, k, 2);
      assert.deepEqual([e.hostHi, e.hostLo, e.pldHi, e.pldLo], [...k], e.url);
    }
    assert.equal(t.url(1), 'http://www.page.test/dir/rel0');
  }
});

// One page's output (parse(): the page workers' path) outgrowing the worker's first output buffer
// (256 KiB) came back cut at that size, without its WARC group: a real manual's table of contents
// (test/realweb) stopped the crawl with "WARC group meta: record id not ASCII".
test('parse(): a page whose table and WARC records outgrow the first output buffer comes back whole', () => {
  let html = '<html>';
  for (let i = 0; i < 12_000; i++) html += `<a href="/section-${i}/page-${i}.html">entry ${i}</a>\n`;
  const body = new TextEncoder().encode(html);
  const head = new TextEncoder().encode('HTTP/1.1 200 OK\r\ncontent-type: text/html\r\n\r\n');
  const out = parse({ url: 'http://www.page.test/contents.html', body, decoded: body, html: true, follow: true,
    exchange: { ip: '127.0.0.2', dateMs: 0, requestHead: head, responseHead: head, truncated: false } });
  assert.ok(out.byteLength > 256 * 1024, `output ${out.byteLength} bytes`);
  const { table, group } = splitParseOutput(out);
  assert.equal(new LinkTable(table).count, MAX_OUTLINKS, 'its first MAX_OUTLINKS links');
  assert.ok(group !== null, 'the WARC group is there');
  assert.deepEqual(group.records.map((r) => r.type), ['response', 'request', 'metadata']);
  for (const r of group.records) assert.match(r.recordId, /^<urn:uuid:[0-9a-f-]{36}>$/);
  assert.equal(group.records.at(-1)!.offset + group.records.at(-1)!.length, group.data.byteLength);
});

// A page takes at most MAX_OUTLINKS links (issue #30: a page of 490,000 links crashed its parse
// worker); the table says how many the page had and that it was capped.
test('parsePage: at most MAX_OUTLINKS links from one page, the first in document order; repeats take no room', () => {
  const enc = new TextEncoder();
  let html = '<html>';
  for (let i = 0; i < 3 * MAX_OUTLINKS; i++) html += `<a href="/same">s</a><a href="/p/${i}">x</a>`;
  const body = enc.encode(html);
  const p = parsePage({ url: 'http://www.page.test/', body, decoded: body, html: true, follow: true });
  const t = new LinkTable(p.table);
  assert.equal(t.count, MAX_OUTLINKS);
  assert.equal(t.url(0), 'http://www.page.test/same');
  assert.equal(t.url(MAX_OUTLINKS - 1), `http://www.page.test/p/${MAX_OUTLINKS - 2}`);
  assert.equal(t.info().extracted, 6 * MAX_OUTLINKS);
  assert.equal(t.capped, true);
  const small = enc.encode('<a href="/a">a</a><a href="/a">a</a>');
  const q = new LinkTable(parsePage({ url: 'http://www.page.test/', body: small, decoded: small, html: true, follow: true }).table);
  assert.equal(q.count, 1);
  assert.equal(q.capped, false);
});
