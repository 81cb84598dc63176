import { test } from 'node:test';
import assert from 'node:assert/strict';
import { extractLinks, extractLinksReference, decodeHtml } from '../../src/html/index.js';
import { simwebPages, charsetOf } from '../../bench/html/corpus.js';

const LONG = process.env.DRUMCRAWL_LONG !== undefined;

for (const preset of ['demo', 'hostile'] as const) {
  test(`simweb ${preset} pages: fast == reference, and every generated link is found`, () => {
    const pages = simwebPages(preset, 42, LONG ? 5000 : 80, Infinity, 11, LONG ? Infinity : 1);
    assert.ok(pages.length >= 50, `${pages.length} pages`);
    let links = 0;
    let legacy = 0;
    for (const p of pages) {
      const { text, charset } = decodeHtml(p.bytes, charsetOf(p.contentType));
      // the generator declares a legacy charset in the header, a <meta>, or both: we must find it
      const wantCharset = p.info.charset === null ? 'utf-8' : new TextDecoder(p.info.charset.name).encoding;
      assert.equal(charset, wantCharset, `${p.url} charset (${p.info.charset?.where ?? 'utf-8'})`);
      if (p.info.charset !== null) legacy++;
      const ref = extractLinksReference(text);
      assert.deepStrictEqual(extractLinks(text), ref, p.url);
      // Ground truth from the generator (tag codes: 0 a, 1 area, 2 iframe, 3 link, 4 frame). The HTML
      // parser drops <frame> outside a frameset, and everything but frames inside one.
      const t = p.truth.tags;
      const want = p.kind === 'frameset' ? t.filter((x) => x === 4 || x === 3).length : t.filter((x) => x !== 4).length;
      assert.equal(ref.links.length, want, `${p.url} (${p.kind}, ${p.info.behaviour})`);
      links += ref.links.length;
    }
    assert.ok(links > pages.length, `${links} links`);
    if (preset === 'demo') assert.ok(legacy > 0, 'the sample includes legacy-charset hosts');
  });
}
