/**
 * Fuzz: the URL resolver and canonicalizer (src/url). Any link text against any base gives a
 * canonical http(s) URL or null, never an exception; a canonical URL is ASCII, at most 2048
 * characters and its own canonical form; LinkResolver (the parse worker's per-page resolver with
 * its fast path) answers as canonicalizeUrl; cost per KB bounded on hostile shapes up to 5 MB.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { canonicalizeUrl, LinkResolver } from '../../src/url/index.js';
import { params, runs, amplified, assertLinear, LONG } from './fuzz.js';

const piece = fc.oneof(
  fc.constantFrom('http://', 'https://', 'HTTP://', '//', '/', '\\', '.', '..', '../', './', '?', '#', '&', '=', ';', ':', '@', '%', '%2e', '%2E%2E',
    '%00', '%zz', '%41', 'a', 'Z', '0', '8080', ':80', ':443', '[::1]', '127.0.0.1', '0x7f.1', 'xn--', 'ß', 'ﬀ', 'ツ', '\u200b', ' ', '\t', '\n',
    'example.com', 'EXAMPLE.test', 'user:pw@', 'javascript:', 'mailto:', 'data:', 'ftp://', '*', '$', '~', '+', '%u0041', '\u0000', '..%2f'),
  fc.string({ maxLength: 6 }),
  fc.string({ unit: 'grapheme', maxLength: 3 }),
);
const link = amplified(piece, 20);
const base = fc.oneof(
  fc.constantFrom(undefined, 'http://www.a.test/p/q.html', 'https://b.test:8443/d/e/', 'http://[::1]/x', 'http://c.test', 'http://d.test/a?b#c', 'not a url'),
  fc.array(piece, { maxLength: 12 }).map((a) => 'http://h.test/' + a.join('')),
);

test('url fuzz: any link text against any base → canonical URL or null; canonical is a fixed point', () => {
  fc.assert(fc.property(link, base, (s, b) => {
    const r = canonicalizeUrl(s, b);
    if (r === null) return;
    assert.match(r, /^https?:\/\/[\x21-\x7e]+$/, `not a canonical URL: ${JSON.stringify(r)}`);
    assert.ok(r.length <= 2048, `${r.length} chars`);
    assert.equal(canonicalizeUrl(r), r, `not idempotent: ${JSON.stringify(s)} against ${JSON.stringify(b)} → ${r}`);
  }), params('url canonicalize', runs(1000, 100_000)));
});

test('url fuzz: LinkResolver (per-page fast path) answers as canonicalizeUrl', () => {
  fc.assert(fc.property(base, fc.array(link, { minLength: 1, maxLength: 8 }), (b, links) => {
    const res = new LinkResolver(b);
    for (const s of links) assert.equal(res.resolve(s), canonicalizeUrl(s, b), `${JSON.stringify(s)} against ${JSON.stringify(b)}`);
  }), params('url resolver', runs(500, 50_000)));
});

// A CPU-time measurement (fuzz.ts assertLinear): under load its ratios swing, so it runs in
// `npm run test:long` (DRUMCRAWL_LONG=1); bench/ is where speeds are judged.
test('url fuzz: linear on hostile shapes', { skip: !LONG && 'a CPU-time measurement: DRUMCRAWL_LONG=1' }, () => {
  const shapes: [string, (n: number) => string][] = [
    ['dot segments', (n) => 'http://h.test/' + '../'.repeat(n / 3)],
    ['percent runs', (n) => 'http://h.test/' + '%2e%2E/'.repeat(n / 7)],
    ['long host labels', (n) => 'http://' + 'a.'.repeat(n / 2) + 'test/'],
    ['whitespace and controls', (n) => ' \t\n'.repeat(n / 3) + 'http://h.test/'],
    ['relative path soup', (n) => './a/../'.repeat(n / 7)],
    ['backslashes', (n) => 'http:' + '\\'.repeat(n)],
  ];
  const res = new LinkResolver('http://www.a.test/p/q.html');
  for (const [name, make] of shapes) {
    assertLinear(`url ${name}`, make, (s) => { res.resolve(s as string); canonicalizeUrl(s as string); }, 0.2);
  }
});
