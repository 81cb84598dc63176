import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { decodeHtml, prescanCharset, payloadDigest, base32Encode } from '../../src/html/index.js';

const enc = (s: string) => new TextEncoder().encode(s);
const latin1 = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));

test('BOM wins over header and meta', () => {
  const body = latin1('\xef\xbb\xbf<meta charset=windows-1252>caf\xc3\xa9');
  assert.deepStrictEqual(decodeHtml(body, 'iso-8859-1'), { text: '<meta charset=windows-1252>café', charset: 'utf-8' });
  const le = Uint8Array.from([0xff, 0xfe, 0x68, 0x00, 0x69, 0x00]);
  assert.deepStrictEqual(decodeHtml(le, 'utf-8'), { text: 'hi', charset: 'utf-16le' });
  const be = Uint8Array.from([0xfe, 0xff, 0x00, 0x68, 0x00, 0x69]);
  assert.deepStrictEqual(decodeHtml(be), { text: 'hi', charset: 'utf-16be' });
});

test('header charset beats meta; labels resolved per WHATWG (latin1 → windows-1252)', () => {
  const body = latin1('<meta charset=utf-8>caf\xe9 \x80');
  assert.deepStrictEqual(decodeHtml(body, 'ISO-8859-1'), { text: '<meta charset=utf-8>café €', charset: 'windows-1252' });
  // an unknown header label is ignored and the prescan decides
  assert.equal(decodeHtml(latin1('<meta charset="shift_jis">\x82\xa0'), 'no-such-charset').text, '<meta charset="shift_jis">あ');
});

test('meta prescan: charset attribute, http-equiv pragma, comments, first 1024 bytes only', () => {
  assert.equal(prescanCharset(enc('<html><head><META CHARSET="Windows-1251">')), 'windows-1251');
  assert.equal(prescanCharset(enc('<meta http-equiv="Content-Type" content="text/html; charset=koi8-r">')), 'koi8-r');
  // content= charset without the http-equiv pragma does not count
  assert.equal(prescanCharset(enc('<meta content="text/html; charset=koi8-r">')), null);
  // inside a comment it does not count; after "<!-->" it does
  assert.equal(prescanCharset(enc('<!-- <meta charset=koi8-r> -->')), null);
  assert.equal(prescanCharset(enc('<!--><meta charset=koi8-r>')), 'koi8-r');
  // a quoted '>' in another tag's attribute does not end that tag early
  assert.equal(prescanCharset(enc('<div title="<meta charset=koi8-r>"><meta charset=gbk>')), 'gbk');
  // utf-16 from a meta means utf-8 (the bytes are ASCII-compatible if we could read the meta)
  assert.equal(prescanCharset(enc('<meta charset=utf-16>')), 'utf-8');
  assert.equal(prescanCharset(enc('<meta charset=x-user-defined>')), 'windows-1252');
  assert.equal(prescanCharset(enc(' '.repeat(1020) + '<meta charset=koi8-r>')), null);
  assert.equal(prescanCharset(enc('<meta charset=bogus><meta charset=big5>')), 'big5');
});

test('default utf-8; malformed bytes become U+FFFD', () => {
  assert.deepStrictEqual(decodeHtml(latin1('a\xffb')), { text: 'a\ufffdb', charset: 'utf-8' });
});

test('payloadDigest = sha1 base32 as in WARC files (warcio sample)', () => {
  // The empty payload's digest, as written by every WARC tool.
  assert.equal(payloadDigest(new Uint8Array(0)), 'sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ');
  assert.equal(base32Encode(enc('foobar')), 'MZXW6YTBOI======'); // RFC 4648 §10 test vector
  assert.equal(base32Encode(enc('fooba')), 'MZXW6YTB');
  assert.equal(base32Encode(enc('f')), 'MY======');
});

test('property: base32 of sha1 round-trips through a reference decoder', () => {
  const decode = (s: string) => {
    const A = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
    let bits = '';
    for (const ch of s.replace(/=+$/, '')) bits += A.indexOf(ch).toString(2).padStart(5, '0');
    const out: number[] = [];
    for (let i = 0; i + 8 <= bits.length; i += 8) out.push(parseInt(bits.slice(i, i + 8), 2));
    return Buffer.from(out);
  };
  fc.assert(fc.property(fc.uint8Array({ maxLength: 200 }), (b) => {
    const d = payloadDigest(b);
    assert.ok(d.startsWith('sha1:') && d.length === 37);
    assert.deepStrictEqual(decode(d.slice(5)), createHash('sha1').update(b).digest());
    assert.deepStrictEqual(decode(base32Encode(b)), Buffer.from(b));
  }), { numRuns: 300 });
});
