/**
 * Properties of the streaming sitemap parser: any split of a document into chunks gives the same
 * entries as the whole document (tags, entities, CDATA and UTF-8 sequences cut anywhere), and
 * arbitrary bytes never throw and never yield more than the cap. fast-check prints the seed and
 * the counterexample on failure.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { SitemapParser, parseSitemap, type SitemapEntry } from '../../src/sitemap/parse.js';

function chunked(doc: Uint8Array, cuts: number[]): { entries: SitemapEntry[]; fault: string | null } {
  const entries: SitemapEntry[] = [];
  const p = new SitemapParser((e) => entries.push(e));
  let prev = 0;
  for (const c of [...new Set(cuts.map((x) => x % (doc.byteLength + 1)))].sort((a, b) => a - b)) {
    p.write(doc.subarray(prev, c));
    prev = c;
  }
  p.write(doc.subarray(prev));
  return { entries, fault: p.end().fault };
}

const seg = fc.stringMatching(/^[a-zé0-9]{1,8}$/);
const entry = fc.record({
  path: fc.array(seg, { minLength: 1, maxLength: 3 }),
  amp: fc.boolean(),
  cdata: fc.boolean(),
  lastmod: fc.option(fc.constantFrom('2005-01-01', '2004-12-23T18:00:15+00:00'), { nil: undefined }),
});

test('property: chunk boundaries never change the entries', () => {
  fc.assert(
    fc.property(fc.array(entry, { maxLength: 12 }), fc.boolean(), fc.array(fc.nat(), { maxLength: 12 }), (es, index, cuts) => {
      const root = index ? 'sitemapindex' : 'urlset';
      const item = index ? 'sitemap' : 'url';
      let doc = `<?xml version="1.0" encoding="UTF-8"?>\n<!-- head --><${root} xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`;
      const want: string[] = [];
      for (const e of es) {
        const q = e.amp ? '?a=1&b=2' : '';
        const loc = `http://a.test/${e.path.join('/')}${q}`;
        want.push(loc);
        const text = e.cdata ? `<![CDATA[${loc}]]>` : loc.replace(/&/g, '&amp;');
        doc += `<${item}>\n <loc> ${text} </loc>${e.lastmod ? `<lastmod>${e.lastmod}</lastmod>` : ''}</${item}>`;
      }
      doc += `</${root}>`;
      const bytes = new TextEncoder().encode(doc);
      const whole = parseSitemap(bytes);
      assert.equal(whole.summary.fault, null);
      assert.deepEqual(whole.entries.map((e) => e.loc), want);
      const parts = chunked(bytes, cuts);
      assert.deepEqual(parts.entries, whole.entries);
      assert.equal(parts.fault, null);
    }),
    { numRuns: 300 },
  );
});

test('property: arbitrary bytes never throw; entries never exceed the cap', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 2000 }), fc.array(fc.nat(), { maxLength: 6 }), (b, cuts) => {
      const capped = new SitemapParser(() => undefined, { maxEntries: 3 });
      capped.write(b);
      assert.ok(capped.end().entries <= 3);
      chunked(b, cuts);
    }),
    { numRuns: 500 },
  );
});
