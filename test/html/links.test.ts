import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { extractLinks, extractLinksReference, parseMetaRefresh } from '../../src/html/index.js';
import { scan } from '../../src/html/links.js';
import type { ExtractResult } from '../../src/html/index.js';
import { htmlish, chaos, framesetDoc } from './arbitrary.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');
const conformance = path.resolve(repoRoot, 'test/fixtures/conformance/linkextract');
const fixtures = path.resolve(repoRoot, 'test/fixtures/html');
const LONG = process.env.DRUMCRAWL_LONG !== undefined;

/** fast == reference for every option setting; also checks the scanner alone (no fallback) when it answers. */
function assertSame(html: string, label: string): void {
  for (const o of [{ images: false }, { images: true }, { requisites: true }, { images: true, requisites: true }]) {
    const ref = extractLinksReference(html, o);
    assert.deepStrictEqual(extractLinks(html, o), ref, `${label} (${JSON.stringify(o)})`);
    const s = scan(html, o);
    if (s !== null) assert.deepStrictEqual(s, ref, `${label} scanner (${JSON.stringify(o)})`);
  }
}

function hrefs(r: ExtractResult): string[] {
  return r.links.map((l) => `${l.tag}:${l.value}${l.nofollow ? ':nofollow' : ''}`);
}

test('conformance linkextract pages: fast == reference', () => {
  let pages = 0;
  for (const f of ['nutch_dom_content_utils.json', 'heritrix_extractor_html.json', 'scrapy_linkextractor.json']) {
    const data = JSON.parse(readFileSync(path.join(conformance, f), 'utf8')) as { cases: { html?: string; html_file?: string }[] };
    for (const [i, c] of data.cases.entries()) {
      const html = c.html ?? readFileSync(path.join(conformance, c.html_file!), 'utf8');
      assertSame(html, `${f}#${i}`);
      pages++;
    }
  }
  assert.ok(pages >= 50, `only ${pages} pages`);
});

test('scrapy sample page: a/area links, base href, nofollow flagged, resolved as Scrapy expects', () => {
  const data = JSON.parse(readFileSync(path.join(conformance, 'scrapy_linkextractor.json'), 'utf8')) as {
    cases: { test: string; base_url: string; html_file?: string; expected_links: { url: string; nofollow: boolean }[] }[];
  };
  const c = data.cases.find((x) => x.test === 'test_extract_all_links')!;
  const html = readFileSync(path.join(conformance, c.html_file!), 'utf8');
  const r = extractLinks(html);
  const base = r.baseHref !== null ? new URL(r.baseHref, c.base_url).href : c.base_url;
  const got: { url: string; nofollow: boolean }[] = [];
  for (const l of r.links) {
    if (l.tag !== 'a' && l.tag !== 'area') continue;
    let url: string;
    try {
      url = new URL(l.value.trim(), base).href;
    } catch {
      continue; // Scrapy skips unparseable URLs too
    }
    if (!got.some((g) => g.url === url)) got.push({ url, nofollow: l.nofollow });
  }
  assert.deepStrictEqual(got, c.expected_links.map((e) => ({ url: e.url, nofollow: e.nofollow })));
});

/**
 * Nutch also emits form GET actions and <source src> as outlinks; drumcrawl extracts neither (they
 * are not documents to crawl). The URLs those tags carry on a page, resolved against its base.
 */
function nutchOnlyUrls(html: string, base: string): Set<string> {
  const out = new Set<string>();
  for (const m of html.matchAll(/<(?:form\b[^>]*?\baction|source\b[^>]*?\bsrc)\s*=\s*(?:'([^']*)'|"([^"]*)")/gi)) {
    out.add(new URL((m[1] ?? m[2]!).trim(), base).href);
  }
  return out;
}

test('nutch pages: every expected a/area/frame/iframe/img outlink is found, form actions and <source> are not (images on)', () => {
  const data = JSON.parse(readFileSync(path.join(conformance, 'nutch_dom_content_utils.json'), 'utf8')) as {
    cases: { html: string; base_url: string; expected_outlinks: { url: string }[] }[];
  };
  let found = 0;
  let excluded = 0;
  for (const [i, c] of data.cases.entries()) {
    const r = extractLinks(c.html, { images: true });
    const base = r.baseHref !== null ? new URL(r.baseHref, c.base_url).href : c.base_url;
    const got = new Set(r.links.filter((l) => !l.nofollow).map((l) => { try { return new URL(l.value.trim(), base).href; } catch { return ''; } }));
    const nutchOnly = nutchOnlyUrls(c.html, base);
    for (const u of nutchOnly) assert.ok(!got.has(u), `page ${i}: ${u} (form action or <source>) extracted`);
    for (const e of c.expected_outlinks) {
      const want = new URL(e.url).href;
      if (nutchOnly.has(want)) {
        excluded++;
        continue;
      }
      assert.ok(got.has(want), `page ${i}: ${want} missing from ${[...got].join(' ')}`);
      found++;
    }
  }
  // 32 expected outlinks: 30 from a/area/frame/iframe/img, 2 (a form GET action, a <source>) Nutch-only.
  assert.deepEqual({ found, excluded }, { found: 30, excluded: 2 });
});

test('malformed HTML corpus: fast == reference, and the hand-checked expectations hold', () => {
  const expected = JSON.parse(readFileSync(path.join(fixtures, 'expected.json'), 'utf8')) as Record<string, {
    links: string[]; baseHref?: string | null; metaRobots?: { noindex: boolean; nofollow: boolean }; metaRefresh?: string | null }>;
  const files = readdirSync(fixtures).filter((f) => f.endsWith('.html')).sort();
  assert.ok(files.length >= 20, `corpus has ${files.length} files`);
  for (const f of files) {
    const html = readFileSync(path.join(fixtures, f), 'utf8');
    assertSame(html, f);
    const e = expected[f];
    assert.ok(e !== undefined, `no expectation for ${f}`);
    const r = extractLinks(html, { images: true });
    assert.deepStrictEqual(hrefs(r), e.links, f);
    if (e.baseHref !== undefined) assert.equal(r.baseHref, e.baseHref, `${f} baseHref`);
    if (e.metaRobots !== undefined) assert.deepStrictEqual(r.metaRobots, e.metaRobots, `${f} metaRobots`);
    if (e.metaRefresh !== undefined) assert.equal(r.metaRefresh, e.metaRefresh, `${f} metaRefresh`);
  }
});

test('property: fast == reference on random HTML-ish strings', () => {
  fc.assert(fc.property(htmlish, (h) => assertSame(h, JSON.stringify(h))), { numRuns: LONG ? 100_000 : 2500 });
});

test('property: fast == reference on random tokenizer-alphabet strings', () => {
  fc.assert(fc.property(chaos, (h) => assertSame(h, JSON.stringify(h))), { numRuns: LONG ? 100_000 : 2500 });
});

test('property: fast == reference on random frameset documents', () => {
  fc.assert(fc.property(framesetDoc, (h) => assertSame(h, JSON.stringify(h))), { numRuns: LONG ? 50_000 : 1500 });
});

test('entity decoding in attributes follows the HTML5 attribute rules', () => {
  const r = extractLinks('<a href="?a=1&amp;b=2&copy=3&copy;&notin;&noti&#x41;&#0;&lt">');
  assert.equal(r.links[0]!.value, '?a=1&b=2&copy=3\u00a9\u2209&notiA\uFFFD<');
});

test('meta refresh parsing (HTML shared declarative refresh steps)', () => {
  assert.equal(parseMetaRefresh('5; url=/next'), '/next');
  assert.equal(parseMetaRefresh('0;URL=\'/q\'x'), '/q');
  assert.equal(parseMetaRefresh('3'), '');
  assert.equal(parseMetaRefresh('url=/x'), null);
  assert.equal(parseMetaRefresh('1.5, /plain'), '/plain');
  assert.equal(parseMetaRefresh('1x'), null);
});

test('maxLinks: the first N distinct targets, a #fragment not making another; past N only counted', () => {
  // A table of contents: 12,000 links to 100 pages' sections, then one more page.
  const toc = Array.from({ length: 12_000 }, (_, i) => `<a href="p${i % 100}.html#s${i}">s</a>`).join('') + '<a href="last.html">l</a>';
  const r = extractLinks(toc, { maxLinks: 10_000 });
  assert.deepEqual(r.links.map((l) => l.value), [...Array.from({ length: 100 }, (_, i) => `p${i}.html#s${i}`), 'last.html']);
  assert.equal(r.notKept, 11_900);
  // 12,000 distinct pages: the first 10,000 kept.
  const many = Array.from({ length: 12_000 }, (_, i) => `<a href="q${i}.html">q</a>`).join('');
  const m = extractLinks(many, { maxLinks: 10_000 });
  assert.equal(m.links.length, 10_000);
  assert.equal(m.links.at(-1)!.value, 'q9999.html');
  assert.equal(m.notKept, 2_000);
});
