/**
 * The sitemap parser and location rule against the sitemaps.org protocol examples and
 * crawler-commons' sitemap fixtures (test/fixtures/conformance/sitemaps/README.md says where each
 * file comes from and where this parser deliberately differs from crawler-commons).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { parseSitemap, type SitemapEntry } from '../../src/sitemap/parse.js';
import { readSitemap } from '../../src/sitemap/read.js';
import { underSitemap } from '../../src/sitemap/location.js';

const dir = fileURLToPath(new URL('../fixtures/conformance/sitemaps/', import.meta.url));
const file = (f: string): Buffer => readFileSync(dir + f);
interface Case {
  file?: string;
  content?: string;
  sitemap_url?: string;
  expected: Record<string, unknown>;
  source: string;
}
const cases = JSON.parse(readFileSync(dir + 'cases.json', 'utf8')) as {
  parse_cases: Case[];
  location_cases: { sitemap_url: string; url: string; valid: boolean }[];
};
const byFile = (f: string): Case => cases.parse_cases.find((c) => c.file === f)!;
const body = (c: Case): Buffer => (c.file !== undefined ? file(c.file) : Buffer.from(c.content!));

async function read(b: Uint8Array): Promise<{ entries: SitemapEntry[]; s: Awaited<ReturnType<typeof readSitemap>> }> {
  const entries: SitemapEntry[] = [];
  const s = await readSitemap(b, (e) => entries.push(e));
  return { entries, s };
}

test('protocol example urlset: 5 URLs, entities decoded, lastmod kept as written', async () => {
  const c = byFile('inline/urlset-basic.xml');
  const { entries, s } = await read(body(c));
  assert.equal(s.kind, 'urlset');
  assert.equal(s.fault, null);
  assert.deepEqual(entries.map((e) => e.loc), c.expected.urls);
  assert.equal(entries[0]!.lastmod, (c.expected.first as { lastmod: string }).lastmod);
  assert.equal(entries[3]!.lastmod, '2004-12-23T18:00:15+00:00', '&#43; is a character reference');
  assert.equal(entries[1]!.lastmod, null);
});

test('protocol-style sitemap index: 4 sitemaps, CDATA and entities, lastmod per sitemap', async () => {
  const c = byFile('inline/sitemapindex-basic.xml');
  const { entries, s } = await read(body(c));
  assert.equal(s.kind, 'index');
  assert.deepEqual(entries.map((e) => e.loc), c.expected.sitemaps);
  for (const [loc, lm] of Object.entries(c.expected.lastmod as Record<string, string>)) {
    assert.equal(entries.find((e) => e.loc === loc)!.lastmod, lm, loc);
  }
});

test('prefixed namespace and (leniently) a wrong namespace: 2 URLs each, whitespace trimmed', async () => {
  const ns = await read(file('crawler-commons/sitemaps/sitemap.ns.xml'));
  assert.deepEqual(ns.entries.map((e) => e.loc), byFile('crawler-commons/sitemaps/sitemap.ns.xml').expected.urls);
  const bad = await read(file('crawler-commons/sitemaps/sitemap.badns.xml'));
  assert.equal(bad.entries.length, (byFile('crawler-commons/sitemaps/sitemap.badns.xml').expected.lenient as { url_count: number }).url_count);
  for (const e of bad.entries) assert.equal(e.loc, e.loc.trim());
});

test('text sitemaps: one URL per line; a UTF-8 BOM is stripped', async () => {
  for (const f of ['crawler-commons/sitemaps/sitemap.txt', 'crawler-commons/sitemaps/sitemap-with-bom.txt']) {
    const { entries, s } = await read(file(f));
    assert.equal(s.kind, 'text', f);
    assert.deepEqual(entries.map((e) => e.loc), byFile(f).expected.urls, f);
  }
  const inline = cases.parse_cases.find((c) => c.content !== undefined)!;
  assert.equal((await read(body(inline))).entries.length, inline.expected.url_count);
});

test('gzip sitemaps (XML and text) are inflated: 5 URLs each', async () => {
  for (const f of ['crawler-commons/sitemaps/xmlSitemap.gz', 'crawler-commons/sitemaps/sitemap.txt.gz']) {
    const { entries, s } = await read(file(f));
    assert.equal(s.gzip, true, f);
    assert.equal(entries.length, byFile(f).expected.url_count, f);
    assert.equal(s.fault, null, f);
  }
});

test('XXE: a DOCTYPE refuses the whole document; the entity is never resolved', async () => {
  const { entries, s } = await read(file('inline/urlset-xxe.xml'));
  assert.equal(s.fault, 'CRAWL_SITEMAP_DOCTYPE');
  assert.equal(entries.length, 0);
  // Without the DOCTYPE, the undefined entity drops only its own <loc>.
  const noDtd = file('inline/urlset-xxe.xml').toString().replace(/<!DOCTYPE[\s\S]*?\]>/, '');
  const r = await read(Buffer.from(noDtd));
  assert.deepEqual(r.entries.map((e) => e.loc), (byFile('inline/urlset-xxe.xml').expected.doctype_allowed as { urls: string[] }).urls);
  assert.equal(r.s.skipped, 1);
});

test('broken XML stops the parse with CRAWL_SITEMAP_MALFORMED (entries completed before the fault are kept)', async () => {
  const { entries, s } = await read(file('inline/urlset-broken.xml'));
  assert.equal(s.fault, 'CRAWL_SITEMAP_MALFORMED');
  assert.deepEqual(entries.map((e) => e.loc), ['http://cs.harding.edu/fmccown/sitemaps/something.html']);
});

test('a truncated index keeps the sitemap whose <loc> was complete', async () => {
  const { entries, s } = await read(file('inline/sitemapindex-truncated.xml'));
  assert.equal(s.kind, 'index');
  assert.equal(entries.length, byFile('inline/sitemapindex-truncated.xml').expected.sitemap_count);
  assert.equal(s.fault, 'CRAWL_SITEMAP_MALFORMED');
});

test('extension elements (image:loc) are not page URLs', async () => {
  const { entries } = await read(file('crawler-commons/sitemaps/extension/sitemap-images.xml'));
  assert.ok(entries.length > 0);
  for (const e of entries) assert.doesNotMatch(e.loc, /\.jpg$/);
});

test('non-standard index without <loc> and RSS/Atom feeds are not read (stated differences from crawler-commons)', async () => {
  const idx = await read(file('crawler-commons/sitemaps/sitemap.index.xml'));
  assert.equal(idx.entries.length, 0);
  assert.equal(idx.s.skipped, byFile('crawler-commons/sitemaps/sitemap.index.xml').expected.sitemap_count);
  for (const f of ['crawler-commons/sitemaps/atom.xml', 'crawler-commons/rss/feed.rss']) {
    const r = await read(file(f));
    assert.equal(r.s.fault, 'CRAWL_SITEMAP_UNSUPPORTED', f);
    assert.equal(r.entries.length, 0, f);
  }
});

test('location rule: the sitemaps.org examples', () => {
  for (const c of cases.location_cases) assert.equal(underSitemap(c.sitemap_url, c.url), c.valid, `${c.sitemap_url} ${c.url}`);
  // out-of-scope example: http://www.example.com/ is not under /subsection/
  assert.equal(underSitemap('http://www.example.com/subsection/sitemap.xml', 'http://www.example.com/'), false);
});

test('caps: 50,000 entries and 50 MiB uncompressed per file, cut with a CRAWL_SITEMAP_* code', async () => {
  const urls = (n: number): string =>
    `<urlset>${Array.from({ length: n }, (_, i) => `<url><loc>http://a.test/${i}</loc></url>`).join('')}</urlset>`;
  const full = parseSitemap(Buffer.from(urls(50_000)));
  assert.equal(full.entries.length, 50_000);
  assert.equal(full.summary.fault, null);
  const over = parseSitemap(Buffer.from(urls(50_001)));
  assert.equal(over.entries.length, 50_000);
  assert.equal(over.summary.fault, 'CRAWL_SITEMAP_TOO_MANY_URLS');
  // 60 MiB of padding inside one gzip member (a ~60 KB download): inflated only up to the cap.
  const pad = Buffer.alloc(60 * 1024 * 1024, 0x20);
  const bomb = gzipSync(Buffer.concat([Buffer.from('<urlset><url><loc>http://a.test/x</loc></url>'), pad, Buffer.from('</urlset>')]));
  assert.ok(bomb.byteLength < 200_000);
  const r = await read(bomb);
  assert.equal(r.s.fault, 'CRAWL_SITEMAP_TOO_LARGE');
  assert.equal(r.s.bytes, 50 * 1024 * 1024);
  assert.deepEqual(r.entries.map((e) => e.loc), ['http://a.test/x']);
});
