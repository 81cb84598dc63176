/**
 * Fuzz: charset detection and decoding (src/html/charset.ts). Any bytes with any header label
 * decode without throwing to a string and a WHATWG encoding name; the BOM wins over the header
 * and the <meta> prescan; decoding is linear in the input, also when the bytes are made of
 * <meta> fragments that the prescan must look through.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decodeHtml, prescanCharset, sniffBom } from '../../src/html/index.js';
import { params, runs, amplified, amplifiedBytes, assertLinear } from './fuzz.js';

const enc = new TextEncoder();
const label = fc.oneof(
  fc.constantFrom(undefined, '', 'utf-8', 'UTF8', 'latin1', 'iso-8859-1', 'windows-1252', 'shift_jis', 'euc-jp', 'gbk', 'gb18030', 'big5',
    'utf-16le', 'utf-16be', 'x-user-defined', 'replacement', 'iso-2022-jp', 'koi8-r', ' utf-8 ', 'bogus', 'utf-7'),
  fc.string({ maxLength: 12 }),
);
const metaPiece = fc.oneof(
  fc.constantFrom('<meta charset=', '<meta charset="', 'utf-8', 'shift_jis', 'utf-16', '">', '>', '<meta http-equiv="Content-Type" content="text/html; charset=',
    '<!--', '-->', '<', '/>', ' ', "'", 'x-user-defined', '<meta', '<META CHARSET=windows-1251>', '\uFEFF', '\xEF\xBB'),
  fc.string({ maxLength: 6 }),
);
const bytes = fc.oneof(amplifiedBytes(), amplified(metaPiece).map((s) => enc.encode(s)),
  fc.tuple(fc.constantFrom([0xef, 0xbb, 0xbf], [0xfe, 0xff], [0xff, 0xfe], []), fc.uint8Array({ maxLength: 200 })).map(([b, r]) => Uint8Array.from([...b, ...r])));

test('charset fuzz: any bytes and header label decode to a string and a WHATWG encoding; a BOM wins', () => {
  fc.assert(fc.property(bytes, label, (b, l) => {
    const r = decodeHtml(b, l);
    assert.equal(typeof r.text, 'string');
    assert.ok(typeof r.charset === 'string' && r.charset.length > 0, r.charset);
    assert.doesNotThrow(() => new TextDecoder(r.charset));
    const bom = sniffBom(b);
    if (bom !== null) assert.equal(r.charset, bom);
    const pre = prescanCharset(b);
    assert.ok(pre === null || typeof pre === 'string');
  }), params('charset', runs(500, 50_000)));
});

// A cost measured in CPU time: on a shared 2-core box its 1 MB and 5 MB figures swing 10× between
// runs (0.001 and 0.017 ms per KB on the same shape), so it runs with the long campaigns only
// (DRUMCRAWL_LONG=1, `npm run test:long`); bench/ is where speeds are judged.
test('charset fuzz: decoding is linear on hostile shapes', { skip: process.env.DRUMCRAWL_LONG !== '1' && 'a CPU-time measurement: DRUMCRAWL_LONG=1' }, () => {
  const shapes: [string, (n: number) => Uint8Array][] = [
    ['unclosed meta tags', (n) => enc.encode('<meta charset='.repeat(n / 14))],
    ['comment starts', (n) => enc.encode('<!--'.repeat(n / 4))],
    ['invalid UTF-8', (n) => new Uint8Array(n).fill(0xc3)],
    ['shift_jis lead bytes', (n) => new Uint8Array(n).fill(0x81)],
  ];
  for (const [name, make] of shapes) {
    for (const l of [undefined, 'shift_jis', 'gb18030']) {
      assertLinear(`charset ${name} (${l ?? 'sniffed'})`, make, (b) => { decodeHtml(b as Uint8Array, l); }, 0.2);
    }
  }
});
