/** Unit tests for each documented rule of src/url (docs/url.md), one assertion group per rule. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { CONFORMANCE } from './helpers.js';
import { DAT_PATH, OUT_PATH, renderPslData } from './tools/generate-psl-data.js';
import { isCrawlError } from '../../src/errors.js';
import {
  canonicalizeUrl as c, canonicalizeUrlDetailed as cd, LinkResolver, registrableDomain, pldOrHost, PSL_RULE_COUNTS,
  urlFingerprint, fingerprint64, fingerprintInto, fingerprintManyInto, hostKeyInto, pldKeyInto, splitKey, fingerprint64Reference, NATIVE_FINGERPRINT,
  hostOf, portOf, urlOriginOf, urlPathAndQueryOf, trapCheck,
} from '../../src/url/index.js';

test('scheme and host are lower-cased, IDNA to ASCII, default port removed', () => {
  assert.equal(c('HTTP://WWW.Example.COM/A'), 'http://www.example.com/A');
  assert.equal(c('http://Bücher.DE/'), 'http://xn--bcher-kva.de/');
  assert.equal(c('http://a.test:80/'), 'http://a.test/');
  assert.equal(c('https://a.test:443/'), 'https://a.test/');
  assert.equal(c('http://a.test:443/'), 'http://a.test:443/');
  assert.equal(c('http://a.test:0080/'), 'http://a.test/');
  assert.equal(c('http://a.test:/x'), 'http://a.test/x');
  assert.equal(c('http://a.test'), 'http://a.test/');
});

test('fragment removed, empty query dropped, dot segments resolved', () => {
  assert.equal(c('http://a.test/p#frag'), 'http://a.test/p');
  assert.equal(c('http://a.test/p?#frag'), 'http://a.test/p');
  assert.equal(c('http://a.test/p?'), 'http://a.test/p');
  assert.equal(c('http://a.test/p?&'), 'http://a.test/p?&'); // not empty: kept
  assert.equal(c('http://a.test/a/./b/../c/%2e%2E/d'), 'http://a.test/a/d');
  assert.equal(c('../../x', 'http://a.test/1/2/3'), 'http://a.test/x');
});

test('percent-encoding: hex upper-cased, unreserved decoded, others kept', () => {
  assert.equal(c('http://a.test/%7euser/%41%2d%5f%2E%30?q=%7E%2f%3d'), 'http://a.test/~user/A-_.0?q=~%2F%3D');
  assert.equal(c('http://a.test/%c3%a9'), 'http://a.test/%C3%A9');
  assert.equal(c('http://a.test/é'), 'http://a.test/%C3%A9');
  assert.equal(c('http://a.test/a b'), 'http://a.test/a%20b');
  // A stray '%' blocks decoding in its component (only hex is upper-cased), not in the others.
  assert.equal(c('http://a.test/%zz%41%2f?x=%41'), 'http://a.test/%zz%41%2F?x=A');
  assert.equal(c('http://a.test/%%34%31'), 'http://a.test/%%34%31');
});

test('refusals carry a reason: unparseable, scheme, too-long, empty, host', () => {
  assert.deepEqual(cd('http://[bad'), { url: null, reason: 'unparseable' });
  assert.deepEqual(cd('g'), { url: null, reason: 'unparseable' }); // relative without a base
  assert.deepEqual(cd('mailto:a@b.test'), { url: null, reason: 'scheme' });
  assert.deepEqual(cd('javascript:void(0)', 'http://a.test/'), { url: null, reason: 'scheme' });
  assert.deepEqual(cd('ftp://a.test/'), { url: null, reason: 'scheme' });
  assert.deepEqual(cd('  \t'), { url: null, reason: 'empty' });
  assert.deepEqual(cd(''), { url: null, reason: 'empty' });
  assert.equal(c('', 'http://a.test/p?q#f'), 'http://a.test/p?q'); // empty link = the page itself
  const long = 'http://a.test/' + 'x'.repeat(2048);
  assert.deepEqual(cd(long), { url: null, reason: 'too-long' });
  assert.equal(c('http://a.test/' + 'x'.repeat(2048 - 14)), 'http://a.test/' + 'x'.repeat(2048 - 14));
  assert.deepEqual(cd('http://a.test/abcdef', undefined, { maxLength: 18 }), { url: null, reason: 'too-long' });
  assert.deepEqual(cd('http://' + 'a'.repeat(64) + '.test/'), { url: null, reason: 'host' });
  assert.deepEqual(cd('http://' + 'abcdefghi.'.repeat(26) + 'test/'), { url: null, reason: 'host' });
  assert.equal(c('http://' + 'a'.repeat(63) + '.test/'), 'http://' + 'a'.repeat(63) + '.test/');
});

test('a broken base is ignored for absolute links; relative ones then fail', () => {
  assert.equal(c('http://a.test/x', 'not a base'), 'http://a.test/x');
  assert.deepEqual(cd('x', 'not a base'), { url: null, reason: 'unparseable' });
  const r = new LinkResolver('mailto:x@y.test');
  assert.equal(r.base, null);
  assert.equal(r.baseReason, 'scheme');
  assert.equal(r.resolve('https://b.test'), 'https://b.test/');
});

test('session-id stripping: off by default; path params and query params, case-insensitive', () => {
  const o = { stripSessionIds: true };
  assert.equal(c('http://a.test/p;jsessionid=ABC?x=1&PHPSESSID=2'), 'http://a.test/p;jsessionid=ABC?x=1&PHPSESSID=2');
  assert.equal(c('http://a.test/p;JSESSIONID=ABC?x=1&PHPSESSID=2', undefined, o), 'http://a.test/p?x=1');
  assert.equal(c('http://a.test/p?SID=1', undefined, o), 'http://a.test/p');
  assert.equal(c('http://a.test/p?aspsessionidQWERTYUI=1&a', undefined, o), 'http://a.test/p?a');
  assert.equal(c('http://a.test/p?sidebar=1', undefined, o), 'http://a.test/p?sidebar=1'); // names match whole
  assert.equal(c('http://a.test/(S(abcdefghijklmnopqrstuvwx))/p.aspx', undefined, o), 'http://a.test/p.aspx');
  assert.equal(c('http://a.test/a/..;jsessionid=1/b', undefined, o), 'http://a.test/b');
  const custom = { stripSessionIds: true, sessionIdParams: ['token', 'utm_*'] };
  assert.equal(c('http://a.test/?utm_source=x&token=1&sid=2', undefined, custom), 'http://a.test/?sid=2');
  assert.throws(() => c('http://a.test/', undefined, { sessionIdParams: ['a=b'] }), (e) => isCrawlError(e, 'CRAWL_URL_BAD_OPTION'));
  assert.throws(() => c('http://a.test/', undefined, { maxLength: 3 }), (e) => isCrawlError(e, 'CRAWL_URL_BAD_OPTION'));
});

test('LinkResolver: canonical base and relative forms', () => {
  const r = new LinkResolver('HTTPS://WWW.PLD1.TEST:443/a/b/page.html?x=1#top');
  assert.equal(r.base, 'https://www.pld1.test/a/b/page.html?x=1');
  assert.equal(r.resolve('c.html'), 'https://www.pld1.test/a/b/c.html');
  assert.equal(r.resolve('../c'), 'https://www.pld1.test/a/c');
  assert.equal(r.resolve('/'), 'https://www.pld1.test/');
  assert.equal(r.resolve('?y=2'), 'https://www.pld1.test/a/b/page.html?y=2');
  assert.equal(r.resolve('#x'), 'https://www.pld1.test/a/b/page.html?x=1');
  assert.equal(r.resolve('//cdn.pld2.test/s.js'), 'https://cdn.pld2.test/s.js');
  assert.equal(r.resolve('http://h.pld3.test:8080'), 'http://h.pld3.test:8080/');
  assert.equal(r.resolve('tel:123'), null);
});

test('LinkResolver.resolveWithKeys writes URL, host and PLD keys as the separate functions do', () => {
  const r = new LinkResolver('http://www.pld5.test/a/b');
  const out = new Uint32Array(6);
  const ref = new Uint32Array(6);
  for (const rel of ['x', '/y?z', 'http://h3.pld9.test/q', '//blog.example.co.uk/', 'http://127.0.0.1:8080/', '%41', 'x2']) {
    const url = r.resolveWithKeys(rel, out, 0)!;
    assert.equal(url, r.resolve(rel));
    fingerprintInto(url, ref, 0);
    hostKeyInto(url, ref, 2);
    pldKeyInto(url, ref, 4);
    assert.deepEqual([...out], [...ref], rel);
  }
  out.fill(7);
  assert.equal(r.resolveWithKeys('mailto:x@y.test', out, 0), null);
  assert.deepEqual([...out], [7, 7, 7, 7, 7, 7]);
});

test('LinkResolver.forPage: <base href> resolved against the page, ignored when unusable', () => {
  const page = 'http://www.pld1.test/a/b/page.html';
  assert.equal(LinkResolver.forPage(page, '../c/').resolve('x'), 'http://www.pld1.test/a/c/x');
  assert.equal(LinkResolver.forPage(page, 'https://cdn.pld2.test/s/').resolve('x'), 'https://cdn.pld2.test/s/x');
  assert.equal(LinkResolver.forPage(page, 'javascript:void(0)').resolve('x'), 'http://www.pld1.test/a/b/x');
  assert.equal(LinkResolver.forPage(page, 'http://[bad').resolve('x'), 'http://www.pld1.test/a/b/x');
  assert.equal(LinkResolver.forPage(page, null).resolve('x'), 'http://www.pld1.test/a/b/x');
});

test('registrableDomain: ICANN section only by default (STAR), full list on request', () => {
  // PRIVATE-section suffixes: one PLD per service under the ICANN-only list (thesis Table VIII).
  for (const [host, icann, full] of [
    ['foo.blogspot.com', 'blogspot.com', 'foo.blogspot.com'],
    ['a.b.blogspot.com', 'blogspot.com', 'b.blogspot.com'],
    ['user.github.io', 'github.io', 'user.github.io'],
    ['app.herokuapp.com', 'herokuapp.com', 'app.herokuapp.com'],
    ['x.appspot.com', 'appspot.com', 'x.appspot.com'],
    ['www.example.co.uk', 'example.co.uk', 'example.co.uk'],
  ] as const) {
    assert.equal(registrableDomain(host), icann, host);
    assert.equal(registrableDomain(host, { privateDomains: true }), full, host);
  }
  assert.equal(registrableDomain('blogspot.com', { privateDomains: true }), null);
  assert.equal(registrableDomain('blogspot.com'), 'blogspot.com');
  assert.ok(PSL_RULE_COUNTS.icann > 6000 && PSL_RULE_COUNTS.private > 2000);
});

test('registrableDomain: the memo of recent hosts never mixes hosts or the ICANN/full-list modes', () => {
  // [host, ICANN-only PLD, full-list PLD]
  const table: [string, string | null, string | null][] = [
    ['a.blogspot.com', 'blogspot.com', 'a.blogspot.com'],
    ['b.example.co.uk', 'example.co.uk', 'example.co.uk'],
    ['x.github.io', 'github.io', 'x.github.io'],
    ['www.pld3.test', 'pld3.test', 'pld3.test'],
    ['localhost', null, null],
    ['com', null, null],
  ];
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.nat(table.length - 1), fc.boolean()), { minLength: 1, maxLength: 30 }), (seq) => {
      for (const [i, priv] of seq) {
        const [h, icann, all] = table[i]!;
        // A fresh string object half of the time (memo hits compare by content then, not identity).
        const host = priv ? h : (' ' + h).slice(1);
        assert.equal(registrableDomain(host, priv ? { privateDomains: true } : undefined), priv ? all : icann, `${h} priv=${priv}`);
      }
    }),
    { numRuns: 300 },
  );
});

test('registrableDomain: .test hosts, IPs, case, trailing dot, invalid input', () => {
  assert.equal(registrableDomain('h17.pld42.test'), 'pld42.test'); // not in the PSL: default rule *
  assert.equal(registrableDomain('www.pld42.test'), 'pld42.test');
  assert.equal(registrableDomain('pld42.test'), 'pld42.test');
  assert.equal(registrableDomain('test'), null);
  assert.equal(registrableDomain('127.0.0.1'), '127.0.0.1');
  assert.equal(registrableDomain('[::1]'), '[::1]');
  assert.equal(registrableDomain('WWW.Example.COM.'), 'example.com');
  assert.equal(registrableDomain('.example.com'), null);
  assert.equal(registrableDomain('a..example.com'), null);
  assert.equal(registrableDomain(''), null);
  assert.equal(pldOrHost('localhost'), 'localhost');
  assert.equal(pldOrHost('a.b.pld9.test'), 'pld9.test');
});

test('vendored PSL is the upstream snapshot (SHA-256 in the psl fixture) and matches the generated table', () => {
  const vendored = readFileSync(DAT_PATH, 'utf8');
  const upstream = readFileSync(path.join(CONFORMANCE, 'psl/public_suffix_list.dat.sha256'), 'utf8').trim();
  assert.equal(createHash('sha256').update(readFileSync(DAT_PATH)).digest('hex'), upstream);
  assert.equal(readFileSync(OUT_PATH, 'utf8'), renderPslData(vendored), 'run test/url/tools/generate-psl-data.ts');
});

test('fingerprints: XXH64 seed 0 (known vectors), hi/lo halves, host and PLD keys', () => {
  assert.equal(fingerprint64(''), 0xef46db3751d8e999n);
  assert.equal(fingerprint64('a'), 0xd24ec4f1a98c6e5bn);
  assert.equal(fingerprint64('abc'), 0x44bc2cf5ad770999n);
  const u = 'http://www.pld42.test/a?b=1';
  assert.equal(urlFingerprint(u), fingerprint64(u));
  const out = new Uint32Array(6);
  fingerprintInto('abc', out, 0);
  assert.deepEqual([out[0], out[1]], [0x44bc2cf5, 0xad770999]);
  hostKeyInto(u, out, 2);
  assert.deepEqual([out[2], out[3]], splitKey(fingerprint64('www.pld42.test')));
  pldKeyInto(u, out, 4);
  assert.deepEqual([out[4], out[5]], splitKey(fingerprint64('pld42.test')));
});

test('fingerprint: the no-BigInt wasm path equals xxhash-wasm h64 (ASCII, UTF-8, long inputs)', () => {
  assert.equal(NATIVE_FINGERPRINT, true);
  fc.assert(
    fc.property(fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.array(fc.constantFrom('a', 'Z', '/', '%', 'é', '食', '😀', '\uD800', '\u0000', '~'), { maxLength: 80 }).map((a) => a.join('')),
    ), (s) => {
      assert.equal(fingerprint64(s), fingerprint64Reference(s), JSON.stringify(s));
    }),
    { numRuns: 2000 },
  );
  const big = 'x'.repeat(100_000) + 'é'; // forces the wasm memory to grow
  assert.equal(fingerprint64(big), fingerprint64Reference(big));
  assert.equal(fingerprint64('abc'), fingerprint64Reference('abc'));
});

test('fingerprint: equals xxhash-wasm h64 on every ASCII code, non-ASCII at any position, across memory growth', () => {
  // Edge cases of writing UTF-8 into the wasm memory: 1/2/3-byte sequences and lone surrogates
  // after an ASCII run, flat/sliced/concatenated (cons) strings, lengths around the 64 KiB pages.
  const ascii = fc.integer({ min: 0, max: 127 }).map((c) => String.fromCharCode(c));
  fc.assert(
    fc.property(
      fc.array(ascii, { maxLength: 300 }).map((a) => a.join('')),
      fc.constantFrom('', '\u0080', '\u00ff', 'é', '\u07ff', '\u0800', '食', '😀', '\uD800', '\uDFFF'),
      fc.array(ascii, { maxLength: 20 }).map((a) => a.join('')),
      (head, odd, tail) => {
        for (const s of [head, head + odd + tail, odd + head, ('#' + head + odd + tail).slice(1)]) {
          assert.equal(fingerprint64(s), fingerprint64Reference(s), JSON.stringify(s));
        }
      },
    ),
    { numRuns: 2000 },
  );
  for (const n of [65_527, 65_528, 65_529, 140_000]) {
    const s = 'http://h.test/' + 'a'.repeat(n);
    assert.equal(fingerprint64(s), fingerprint64Reference(s));
    const u = s + '\u00e9';
    assert.equal(fingerprint64(u), fingerprint64Reference(u));
  }
  // A short string after long ones must not hash stale bytes of the earlier input.
  assert.equal(fingerprint64('a'), 0xd24ec4f1a98c6e5bn);
});

test('fingerprintManyInto equals fingerprintInto on each string (ASCII batches, non-ASCII, empty, oversized)', () => {
  const str = fc.oneof(
    fc.string({ maxLength: 80 }),
    fc.array(fc.constantFrom('h', 't', 'p', ':', '/', '.', 'a', '?', '=', 'é', '食', '😀', '\uD800'), { maxLength: 40 }).map((a) => a.join('')),
    fc.constantFrom('', 'http://a.test/', 'x'.repeat(3000)),
  );
  const check = (strings: string[]): void => {
    const many = new Uint32Array(2 * strings.length + 4).fill(0xdeadbeef);
    fingerprintManyInto(strings, many, 2);
    assert.deepEqual([many[0], many[1]], [0xdeadbeef, 0xdeadbeef]); // nothing before offset
    const one = new Uint32Array(2);
    strings.forEach((s, i) => {
      fingerprintInto(s, one, 0);
      assert.deepEqual([many[2 + 2 * i], many[3 + 2 * i]], [one[0], one[1]], JSON.stringify(s));
    });
    assert.deepEqual([many[2 + 2 * strings.length], many[3 + 2 * strings.length]], [0xdeadbeef, 0xdeadbeef]); // nor after
  };
  fc.assert(fc.property(fc.array(str, { maxLength: 70 }), check), { numRuns: 400 });
  check([]);
  check(['abc']);
  check(Array.from({ length: 40 }, (_, i) => 'http://h.test/' + 'y'.repeat(2000) + i)); // > 64 Ki chars: per string
  check(Array.from({ length: 59 }, (_, i) => 'http://h' + i + '.test/p?q=' + i)); // one encodeInto
});

test('hostOf / portOf / urlOriginOf / urlPathAndQueryOf on canonical URLs', () => {
  assert.equal(hostOf('http://www.pld42.test/a'), 'www.pld42.test');
  assert.equal(hostOf('https://h.test:8443/a?b'), 'h.test');
  assert.equal(hostOf('http://u:p@h.test:81/'), 'h.test');
  assert.equal(hostOf('http://[::1]:8080/x'), '[::1]');
  assert.equal(portOf('http://h.test/'), 80);
  assert.equal(portOf('https://h.test/'), 443);
  assert.equal(portOf('http://u:p@h.test:81/'), 81);
  assert.equal(portOf('http://[::1]:8080/x'), 8080);
  assert.equal(portOf('https://[::1]/x'), 443);
  assert.equal(urlOriginOf('https://h.test:8443/a?b'), 'https://h.test:8443');
  assert.equal(urlPathAndQueryOf('https://h.test:8443/a?b'), '/a?b');
  // hostOf agrees with WHATWG's hostname on canonical output.
  for (const x of ['http://A.test:81/x', 'http://user@B.test/', 'https://[0:0::1]/', 'http://0x7f.1/', 'http://bücher.de/']) {
    const canon = c(x)!;
    assert.equal(hostOf(canon), new URL(canon).hostname, x);
  }
});

test('trapCheck: repeated segments (a run of 3), path depth, query params, length — each configurable', () => {
  assert.equal(trapCheck('http://a.test/x/y/x/y/'), null); // twice is fine
  assert.equal(trapCheck('http://a.test/x/y/x/y/x/'), 'repeated-segment');
  assert.equal(trapCheck('http://a.test/a/a/a'), 'repeated-segment');
  assert.equal(trapCheck('http://a.test/p/x/y/z/x/y/z/x/'), 'repeated-segment'); // a block of three, run back to back
  assert.equal(trapCheck('http://a.test/a/a/a', { maxRepeatedSegment: 4 }), null);
  assert.equal(trapCheck('http://a.test/a//b///c'), null); // empty segments are not "repeated"
  assert.equal(trapCheck('http://a.test/a//a///a'), 'repeated-segment'); // … and do not part a run
  // A segment that recurs apart from itself is no loop: repository hosts, documentation trees, archives.
  assert.equal(trapCheck('https://github.com/django/django/blob/main/django/template/context.py'), null);
  assert.equal(trapCheck('https://github.com/numpy/numpy/blob/main/numpy/core/numeric.py'), null);
  assert.equal(trapCheck('https://docs.test/en/latest/en/api/en/index.html'), null);
  assert.equal(trapCheck('https://a.test/docs/v2/docs/v2/api/'), null); // a block twice is no run of three
  // A date repeats a number: one more occurrence is needed for a numeric segment alone.
  assert.equal(trapCheck('https://blog.test/10/10/10/post-title'), null);
  assert.equal(trapCheck('https://blog.test/10/10/10/10/'), 'repeated-segment');
  assert.equal(trapCheck('https://blog.test/1/2/1/2/1/'), 'repeated-segment');
  const deep = 'http://a.test' + Array.from({ length: 21 }, (_, i) => '/s' + i).join('');
  assert.equal(trapCheck(deep), 'path-depth');
  assert.equal(trapCheck(deep, { maxPathDepth: 21 }), null);
  const q = 'http://a.test/?' + Array.from({ length: 17 }, (_, i) => 'p' + i + '=1').join('&');
  assert.equal(trapCheck(q), 'query-params');
  assert.equal(trapCheck(q, { maxQueryParams: 17 }), null);
  assert.equal(trapCheck('http://a.test/?a&&&b'), null);
  assert.equal(trapCheck('http://a.test/' + 'x'.repeat(3000)), 'too-long');
  assert.equal(trapCheck('http://a.test/' + 'x'.repeat(3000), { maxUrlLength: 0 }), null); // 0 = off
  assert.equal(trapCheck('http://a.test/a/b?x=/a/a/a'), null); // the query is not the path
});

test('trapCheck: the in-place run search agrees with the definition (some block of p segments repeated back to back over (maxRep − 1)·p + 1 segments; random paths, depths 0-40, maxRepeatedSegment 1-5)', () => {
  const ref = (url: string, maxRep: number): boolean => {
    const path = url.slice(url.indexOf('/', 8), url.indexOf('?') < 0 ? undefined : url.indexOf('?'));
    const segs = path.split('/').filter((x) => x !== '');
    if (segs.length > 0 && maxRep <= 1) return true;
    for (let p = 1; p <= segs.length; p++) {
      for (let i = 0; i < segs.length; i++) {
        // numeric period-1 runs (dates) need one more occurrence
        const len = (maxRep - 1) * p + 1 + (p === 1 && /^[0-9]+$/.test(segs[i]!) ? 1 : 0);
        if (i + len > segs.length) continue;
        let ok = true;
        for (let k = i + p; k < i + len && ok; k++) ok = segs[k] === segs[k - p];
        if (ok) return true;
      }
    }
    return false;
  };
  const seg = fc.constantFrom('', 'a', 'b', 'ab', 'ba', 'abc', 'x.html', 'a%2F', '1', '11');
  fc.assert(fc.property(fc.array(seg, { maxLength: 40 }), fc.integer({ min: 1, max: 5 }), fc.boolean(), (segs, maxRep, query) => {
    const url = `http://a.test/${segs.join('/')}${query ? '?a/a/a/a' : ''}`;
    const got = trapCheck(url, { maxRepeatedSegment: maxRep, maxPathDepth: 0, maxQueryParams: 0 });
    assert.equal(got === 'repeated-segment', ref(url, maxRep), `${url} ${maxRep}`);
  }), { numRuns: 2000 });
});
