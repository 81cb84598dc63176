/**
 * The parse5 fallback is bounded (src/html/fallback-limit.ts): pages of nested <svg>, <math> or
 * <template> cost time linear in their size and end as CRAWL_PARSE_LIMIT past the documented
 * bounds; pages within them still get exactly the reference's answer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { extractLinks, extractLinksReference, FALLBACK_MAX_CHARS, FALLBACK_MAX_DEPTH, nestingEstimate } from '../../src/html/index.js';
import { isCrawlError } from '../../src/errors.js';

const KB = 1024;

/** CPU ms of one extractLinks call, and its outcome (link count or error code). */
function run(s: string): { ms: number; out: number | string } {
  const t0 = process.cpuUsage();
  let out: number | string;
  try {
    out = extractLinks(s).links.length;
  } catch (e) {
    assert.ok(isCrawlError(e, 'CRAWL_PARSE_LIMIT'), String(e));
    out = 'CRAWL_PARSE_LIMIT';
  }
  const t = process.cpuUsage(t0);
  return { ms: (t.user + t.system) / 1000, out };
}

const shapes: [string, (n: number) => string][] = [
  ['nested svg', (n) => '<a href=/0>0</a>' + '<svg>'.repeat(n / 5)],
  ['nested math', (n) => '<a href=/0>0</a>' + '<math><mi>'.repeat(n / 10)],
  ['nested template', (n) => '<a href=/0>0</a>' + '<template><div>'.repeat(n / 15)],
  ['svg breaking out into nested divs', (n) => '<svg><p>' + '<div><svg>'.repeat(n / 10)],
  ['flat math with links', (n) => '<math></math><a href=/x>x</a>'.repeat(n / 30)],
];

for (const [name, make] of shapes) {
  test(`extractLinks on ${name}: time per KB bounded at 64 KB / 1 MB / 5 MB, CRAWL_PARSE_LIMIT past the bounds`, () => {
    const perKb: number[] = [];
    for (const size of [64 * KB, 1024 * KB, 5 * 1024 * KB]) {
      const s = make(size);
      let best = Infinity;
      let out: number | string = 0;
      for (let k = 0; k < 2; k++) {
        const r = run(s);
        best = Math.min(best, r.ms);
        out = r.out;
      }
      perKb.push(best / (s.length / KB));
      if (s.length > FALLBACK_MAX_CHARS) assert.equal(out, 'CRAWL_PARSE_LIMIT', `${name} at ${size}`);
    }
    const msg = `${name}: ms per KB at 64 KB / 1 MB / 5 MB: ${perKb.map((x) => x.toFixed(4)).join(' / ')}`;
    // the parse5 reference alone costs ~1 ms per KB; past the bounds no page reaches it
    assert.ok(perKb[1]! < 0.1 && perKb[2]! < 0.1, msg);
    assert.ok(perKb[2]! <= 4 * Math.max(perKb[0]!, 0.002), msg);
  });
}

test('within the bounds the fallback answers as the reference; one level deeper or one character longer is CRAWL_PARSE_LIMIT', () => {
  const deep = (d: number) => '<math>' + '<mrow>'.repeat(d - 1) + '<a href=/in>x</a>';
  assert.equal(nestingEstimate(deep(FALLBACK_MAX_DEPTH)), FALLBACK_MAX_DEPTH + 1); // + the <a>
  const ok = deep(FALLBACK_MAX_DEPTH - 1);
  assert.deepEqual(extractLinks(ok), extractLinksReference(ok));
  assert.throws(() => extractLinks(deep(FALLBACK_MAX_DEPTH + 1)), (e) => isCrawlError(e, 'CRAWL_PARSE_LIMIT'));
  const pad = (n: number) => '<template></template><a href=/l>l</a>' + ' '.repeat(n - 37);
  assert.equal(pad(FALLBACK_MAX_CHARS).length, FALLBACK_MAX_CHARS);
  assert.deepEqual(extractLinks(pad(FALLBACK_MAX_CHARS)), extractLinksReference(pad(FALLBACK_MAX_CHARS)));
  assert.throws(() => extractLinks(pad(FALLBACK_MAX_CHARS + 1)), (e) => isCrawlError(e, 'CRAWL_PARSE_LIMIT'));
  // void and implied-end elements do not count as nesting; ordinary closed markup stays shallow
  assert.equal(nestingEstimate('<ul>' + '<li><img src=x><br>'.repeat(5000) + '</ul>'), 1);
  assert.equal(nestingEstimate('<div><span>x</span></div>'.repeat(1000)), 2);
});
