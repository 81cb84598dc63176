/**
 * Fuzz: the link extractor (src/html/links.ts). Any text up to 5 MB gives a well-formed result or
 * CrawlError CRAWL_PARSE_LIMIT, nothing else; on small pages the fast scanner's answer equals the
 * parse5 reference's (links-reference.ts); and the cost per KB stays bounded on hostile shapes
 * (unclosed comments, quotes, tags, scripts, CDATA, entity runs, deep foreign content).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { extractLinks, extractLinksReference } from '../../src/html/index.js';
import { isCrawlError } from '../../src/errors.js';
import { params, runs, amplified, assertLinear, LONG } from './fuzz.js';

const piece = fc.oneof(
  fc.constantFrom(
    '<a href=/x>', '<a href="/q?a=1&amp;b=2">', "<a href='y' rel=nofollow>", '</a>', '<area href=/ar>', '<link rel=next href=/n>',
    '<img src=/i.png>', '<iframe src=/f>', '</iframe>', '<frame src=/fr>', '<frameset>', '<base href=/b/>',
    '<meta http-equiv=refresh content="0; url=/r">', '<meta name=robots content=nofollow>', '<svg>', '</svg>', '<svg/>',
    '<math>', '</math>', '<template>', '</template>', '<select>', '</select>', '<option>', '<table>', '<td>', '<p>', '<div>',
    '<foreignObject>', '<desc>', '<title>', '</title>', '<textarea>', '</textarea>', '<script>', '</script>', '<!--', '-->',
    '--!>', '<![CDATA[', ']]>', '<!DOCTYPE html>', '<?x>', '</', '<', '>', '"', "'", '=', '&', '&amp;', '&#x41;', '&#0;',
    '&notit;', '\0', '\r\n', '<plaintext>', '<noscript>', '</noscript>', '<style>', '</style>', '<xmp>', '<body>', '<html>',
  ),
  fc.string({ maxLength: 8 }),
);
const page = amplified(piece, 40);

function extract(s: string): ReturnType<typeof extractLinks> | 'limit' {
  try {
    return extractLinks(s, { images: true });
  } catch (e) {
    assert.ok(isCrawlError(e, 'CRAWL_PARSE_LIMIT'), `unexpected ${String(e)}`);
    return 'limit';
  }
}

test('links fuzz: any text gives a well-formed result or CRAWL_PARSE_LIMIT', () => {
  fc.assert(fc.property(page, (s) => {
    const r = extract(s);
    if (r === 'limit') return;
    for (const l of r.links) {
      assert.equal(typeof l.value, 'string');
      assert.ok(['a', 'area', 'link', 'frame', 'iframe', 'img', 'meta'].includes(l.tag), l.tag);
    }
    assert.ok(r.baseHref === null || typeof r.baseHref === 'string');
  }), params('links', runs(300, 20_000)));
});

test('links fuzz: on small pages the fast scanner answers exactly as the parse5 reference', () => {
  fc.assert(fc.property(fc.array(piece, { maxLength: 40 }).map((a) => a.join('')), (s) => {
    const r = extract(s);
    if (r === 'limit') return;
    assert.deepEqual(r, extractLinksReference(s, { images: true }));
  }), params('links vs reference', runs(1000, 100_000)));
});

// A CPU-time measurement (fuzz.ts assertLinear): under load its ratios swing, so it runs in
// `npm run test:long` (DRUMCRAWL_LONG=1); bench/ is where speeds are judged.
test('links fuzz: linear on hostile shapes', { skip: !LONG && 'a CPU-time measurement: DRUMCRAWL_LONG=1' }, () => {
  const shapes: [string, (n: number) => string][] = [
    ['unclosed comments', (n) => '<!--'.repeat(n / 4)],
    ['comment-like runs', (n) => '<!-- --!'.repeat(n / 8)],
    ['unclosed attribute quote', (n) => '<a href="' + 'x'.repeat(n)],
    ['many attributes', (n) => '<a ' + 'h=1 '.repeat(n / 4) + '>'],
    ['script escapes', (n) => '<script>' + '<!--<script>'.repeat(n / 12)],
    ['end-tag starts', (n) => '</'.repeat(n / 2)],
    ['unclosed CDATA in svg', (n) => '<svg><![CDATA[' + ']]'.repeat(n / 2)],
    ['entity runs in href', (n) => '<a href="' + '&amp'.repeat(n / 4) + '">'],
    ['nested svg', (n) => '<svg>'.repeat(n / 5)],
    ['select with options', (n) => '<select>' + '<option><a href=x>'.repeat(n / 18)],
  ];
  for (const [name, make] of shapes) assertLinear(`links ${name}`, make, (s) => { extract(s as string); }, 0.2);
});
