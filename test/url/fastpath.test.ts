/**
 * The fast path (LinkResolver string code) must equal the WHATWG reference path exactly — URL and
 * reason — on generated URL-ish strings (nasty ones included) and on every conformance input.
 * Also: canonicalization is idempotent, and fingerprints are equal exactly when canonical strings are.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { loadJson } from './helpers.js';
import { lastWhatwgPath } from '../../src/url/canonicalize.js';
import {
  LinkResolver, hostOf, canonicalizeUrl, canonicalizeUrlReference, urlFingerprint, fingerprintInto, splitKey,
  type CanonicalizeOptions,
} from '../../src/url/index.js';

const LONG = process.env.DRUMCRAWL_LONG !== undefined;
const RUNS = LONG ? 50_000 : 2_500;

const BASES = [
  'http://a/b/c/d;p?q',
  'https://Example.COM:443/dir/sub/page.html?x=1#frag',
  'http://www.pld42.test:8080/a/b/',
  'http://h.test/%7Euser/%41b/p%2fq',
  'http://h.test/a%zz/b/c', // stray '%' in the base path: relative links take the reference path
  'http://u:p@h.test:81/x/y',
  'http://h.test/x;jsessionid=ABC/y;sid=1/page',
  'http://h.test/(S(abcdefghijklmnopqrstuvwx))/p/q',
  'http://1.2.3.4/a/',
  'http://[::1]:8080/a/b',
  'http://xn--bcher-kva.de/',
  'http://h.test',
  'http://h.test//.b/..', // Node 20 (ada) leaves these base paths' dot segments unresolved: relative
  'http://h.test/a/.a/.', // links must then resolve as the reference does (found by a property test)
  'mailto:someone@example.com',
  'ftp://f.test/a/',
  'not a url',
  '',
];

const OPTIONS: (CanonicalizeOptions | undefined)[] = [undefined, { stripSessionIds: true }, { maxLength: 40 }];

// Pieces chosen to hit every branch of the fast path and its bail-outs.
const PIECES = [
  'a', 'B', 'z9', '/', '/', '/', '.', '..', './', '../', '?', '#', '&', '=', ';', ':', '@', '%', '%41', '%2e', '%2E',
  '%7e', '%zz', '%2f', '\\', ' ', '\t', '\n', 'http:', 'https:', 'HTTP:', '//', '///', 'http://', 'https://',
  'xn--', 'xn--bcher-kva', '1', '0x', '09', '[', ']', '::1', 'é', '食', '%C3%A9', 'jsessionid=1', ';jsessionid=X',
  'PHPSESSID=2', 'sid', '(S(abcdefghijklmnopqrstuvwx))', 'mailto:', 'javascript:', 'ftp:', 'file:', 'g:', 'ws:',
  '~', '-', '_', '(', ')', "'", '"', '<', '>', '^', '|', '`', '{', '}', '!', '$', '*', '+', ',', '8080', ':80',
  ':443', ':0', ':65536', 'www.', '.com', '.test', 'EXAMPLE', 'h.test', '\u0000', '\u00a0', '\uFFFD', '..%2e', '//.', '/.b/',
];

const urlish = fc.array(fc.constantFrom(...PIECES), { maxLength: 14 }).map((p) => p.join(''));

const host = fc.array(fc.constantFrom('a', 'b', 'www', 'x-y', 'A1', 'xn--bcher-kva', '1', '0x1f', 'test', 'com', ''), { minLength: 1, maxLength: 4 })
  .map((l) => l.join('.'));
const absolute = fc.tuple(
  fc.constantFrom('http://', 'https://', 'HTTP://', 'Https://', '//', 'http:', 'http:///'),
  host,
  fc.constantFrom('', ':80', ':443', ':8080', ':', ':00080', ':99999', ':1a'),
  fc.array(fc.constantFrom('/a', '/.', '/..', '/b;x=1', '/%41', '/c d', '//', '/;jsessionid=1'), { maxLength: 5 }),
  fc.constantFrom('', '?', '?a=1', '?a=1&sid=2', '?%7e', "?'", '#x', '?q#', '?a=1&PHPSESSID=3&b'),
).map(([s, h, p, segs, q]) => s + h + p + segs.join('') + q);

function checkSame(r: LinkResolver, rel: string, label: string): void {
  const got = r.resolveDetailed(rel);
  assert.deepEqual(got, r.resolveReference(rel), `${label}: ${JSON.stringify(rel)}`);
  if (got.url !== null) assert.equal(r.lastHost, hostOf(got.url), `lastHost for ${JSON.stringify(rel)}`);
}

test('fast path equals the WHATWG reference path on generated strings', () => {
  for (const opts of OPTIONS) {
    const resolvers = BASES.map((b) => new LinkResolver(b === '' ? undefined : b, opts));
    fc.assert(
      fc.property(fc.nat(resolvers.length - 1), fc.oneof(urlish, absolute), (i, rel) => {
        checkSame(resolvers[i]!, rel, `base ${BASES[i]} opts ${JSON.stringify(opts)}`);
      }),
      { numRuns: RUNS },
    );
  }
});

// Links with well-formed escapes and surrounding spaces/controls, which the fast path now takes
// (percent-escapes normalized by finish; C0/space trimmed first), mixed with the cases it must not
// take ('%2e' in the path, stray '%', inner whitespace).
const escaped = fc.tuple(
  fc.constantFrom('', ' ', '  ', '\u0001', '\t', '\n ', 'http://h.test', 'HTTP://H.test:80', '//x.test', '/', '?', '../', './'),
  fc.array(fc.constantFrom('a', 'B', '/', '..', '.', '?', '=', '&', ':', '%41', '%7e', '%7E', '%2f', '%2F', '%C3%A9', '%25', '%2e',
    '%2E', '%20', '%3A', '%3f', '%23', 'b.html', '#', '#%zz', '%z', '%', ' ', '~', ';sid=1', 'jsessionid=2'), { maxLength: 10 }),
  fc.constantFrom('', ' ', '\u0000', '\t', '  \r\n'),
).map(([a, mid, z]) => a + mid.join('') + z);

test('fast path equals the reference path on escaped and space-padded links', () => {
  let viaFast = 0;
  let total = 0;
  const Real = globalThis.URL;
  for (const opts of OPTIONS) {
    const resolvers = BASES.map((b) => new LinkResolver(b === '' ? undefined : b, opts));
    fc.assert(
      fc.property(fc.nat(resolvers.length - 1), escaped, (i, rel) => {
        let constructed = 0;
        globalThis.URL = class extends Real {
          constructor(input: string | URL, base?: string | URL) {
            super(input, base);
            constructed++;
          }
        } as typeof URL;
        let got;
        try {
          got = resolvers[i]!.resolveDetailed(rel);
        } finally {
          globalThis.URL = Real;
        }
        total++;
        if (constructed === 0 && got.url !== null) viaFast++;
        checkSame(resolvers[i]!, rel, `escaped, base ${BASES[i]} opts ${JSON.stringify(opts)}`);
      }),
      { numRuns: RUNS },
    );
  }
  // The generator must really exercise the new fast cases, not only the fallback.
  assert.ok(viaFast > total / 5, `only ${viaFast} of ${total} escaped links took the fast path`);
});

test('a base parsed by the fast path gives the same resolver as the reference parse', () => {
  // LinkResolver's constructor takes plain absolute bases through the base-less fast path; the
  // canonical base, the refusal reason and every link resolved against it must equal the reference.
  const relGen = fc.oneof(urlish, absolute, fc.constantFrom('', '#f', '?q', '../x', './y/', '/r', 'z?', '//h.test/p'));
  for (const opts of OPTIONS) {
    fc.assert(
      fc.property(fc.oneof(absolute, fc.webUrl(), urlish.map((u) => 'http://h.test/' + u)), fc.array(relGen, { maxLength: 6 }), (base, rels) => {
        const r = new LinkResolver(base, opts);
        const ref = canonicalizeUrlReference(base, undefined, opts);
        assert.equal(r.base, ref.url, `base ${JSON.stringify(base)}`);
        assert.equal(r.baseReason, ref.reason, `base reason ${JSON.stringify(base)}`);
        for (const rel of rels) checkSame(r, rel, `base ${JSON.stringify(base)} opts ${JSON.stringify(opts)}`);
      }),
      { numRuns: LONG ? RUNS : 800 }, // a new resolver per run (and fc.webUrl) is the slow part
    );
  }
});

test('the accepted-host cache gives reference results across many hosts (slot reuse)', () => {
  // Thousands of distinct hosts (more than the cache's 1,024 slots), revisited in random order and
  // mixed case, against bases on some of them: every result must equal the reference path.
  const hosts = Array.from({ length: 3000 }, (_, i) => `h${i % 37}-${i}.p${i % 11}.test`);
  const resolvers = ['http://h0-0.p0.test/a/b', 'https://H5-5.P5.test:8443/x/', 'http://other.test/'].map((b) => new LinkResolver(b));
  fc.assert(
    fc.property(fc.nat(hosts.length - 1), fc.nat(resolvers.length - 1), fc.boolean(), fc.constantFrom('http://', 'https://', '//', 'HTTP://'),
      fc.constantFrom('/', '/a', ':8080/b', ':80/', '?q', '/p?x=1#f', ''), (hi, ri, upper, scheme, tail) => {
        const h = upper ? hosts[hi]!.toUpperCase() : hosts[hi]!;
        checkSame(resolvers[ri]!, scheme + h + tail, 'host cache');
      }),
    { numRuns: RUNS * 4 },
  );
  for (let i = 0; i < hosts.length; i += 7) checkSame(resolvers[0]!, 'http://' + hosts[i] + '/z', 'host sweep');
});

test('lastWhatwgPath after a successful reference parse is new URL(x).pathname (LinkResolver base)', () => {
  // The LinkResolver constructor takes the base's raw WHATWG path from canonicalizeSlow instead of
  // parsing the base a second time; its fast-relative decision depends on that path.
  const check = (x: string): void => {
    const r = canonicalizeUrlReference(x);
    if (r.url === null) return;
    assert.equal(lastWhatwgPath(), new URL(x).pathname, JSON.stringify(x));
  };
  for (const b of BASES) check(b);
  fc.assert(fc.property(fc.oneof(absolute, fc.webUrl(), urlish.map((u) => 'http://h.test/' + u)), check), { numRuns: RUNS });
});

test('fast path equals the reference path on all conformance inputs', () => {
  const inputs = new Set<string>();
  for (const t of loadJson<({ input: string } | string)[]>('whatwg-url/urltestdata.json')) if (typeof t !== 'string') inputs.add(t.input);
  for (const t of loadJson<{ ref: string }[]>('urlresolve/rfc3986.json')) inputs.add(t.ref);
  for (const t of loadJson<{ input: string }[]>('urlcanon/crawler-commons/basic_url_normalizer.json')) inputs.add(t.input);
  for (const t of loadJson<{ ref: string }[]>('urlcanon/crawler-commons/url_resolve.json')) inputs.add(t.ref);
  for (const k of Object.keys(loadJson<Record<string, string>>('urlcanon/iipc-urlcanon/semantic_precise.json'))) inputs.add(k);
  let fastHits = 0;
  // All bases in the long run; a representative third otherwise (test budget).
  const bases = LONG ? BASES : BASES.filter((_, i) => i % 3 === 0);
  for (const opts of OPTIONS) {
    for (const b of bases) {
      const r = new LinkResolver(b === '' ? undefined : b, opts);
      for (const rel of inputs) checkSame(r, rel, `base ${b}`);
    }
  }
  // The set must exercise the fast path, not only the fallback.
  const r = new LinkResolver('http://a/b/c/d;p?q');
  for (const rel of inputs) if (r.resolve(rel) !== null) fastHits++;
  assert.ok(inputs.size > 1000 && fastHits > 500, `${inputs.size} inputs, ${fastHits} resolved`);
});

test('canonicalization is idempotent: c(c(x)) === c(x)', () => {
  for (const opts of OPTIONS) {
    fc.assert(
      fc.property(fc.constantFrom(...BASES), fc.oneof(urlish, absolute), (base, rel) => {
        const c = canonicalizeUrl(rel, base === '' ? undefined : base, opts);
        if (c === null) return;
        assert.equal(canonicalizeUrl(c, undefined, opts), c, `${JSON.stringify(rel)} → ${c}`);
        assert.equal(canonicalizeUrlReference(c, undefined, opts).url, c);
      }),
      { numRuns: RUNS },
    );
  }
});

test('fingerprints are equal exactly when canonical strings are equal', () => {
  // A small alphabet so that distinct inputs often share a canonical form (%41 vs A, ports, case).
  const small = fc.tuple(
    fc.constantFrom('http://a', 'HTTP://A', 'http://a:80', 'https://a', 'https://a:443', 'http://b'),
    fc.array(fc.constantFrom('/A', '/%41', '/%61', '/a', '/./x', '/../', '/x/..'), { maxLength: 3 }),
    fc.constantFrom('', '?', '#f', '?q=%7e', '?q=~'),
  ).map(([h, p, q]) => h + p.join('') + q);
  const out = new Uint32Array(4);
  let equalPairs = 0;
  fc.assert(
    fc.property(small, small, (x, y) => {
      const cx = canonicalizeUrl(x)!;
      const cy = canonicalizeUrl(y)!;
      const fx = urlFingerprint(cx);
      const fy = urlFingerprint(cy);
      assert.equal(fx === fy, cx === cy, `${x} / ${y}`);
      if (cx === cy) equalPairs++;
      fingerprintInto(cx, out, 0);
      fingerprintInto(cy, out, 2);
      assert.deepEqual([out[0], out[1]], splitKey(fx));
      assert.equal(out[0] === out[2] && out[1] === out[3], cx === cy);
    }),
    { numRuns: RUNS },
  );
  assert.ok(equalPairs > 10, `only ${equalPairs} equal pairs generated`);
});

test('plain links never reach new URL (the fast path really takes them)', () => {
  // (Each of these is also covered by the fast ≡ reference properties above.)
  const r = new LinkResolver('https://www.pld7.test/dir/page.html?x=1');
  const plain = ['g', '../up/x.html', '/root?a=1&b=2', '?page=2', '#top', '', 'https://other.pld9.test/a/b', '//cdn.pld3.test/s.js',
    'HTTP://WWW.PLD7.TEST:80/X', 'a/./b/../c', 'mailto:x@y.test', 'javascript:void(0)', 'tel:+1234',
    '%41b/%7Ec?q=%2f%41', '/a%2Fb/../c', 'http://h.test/%7e?x=%20', ' padded.html\n', '\t/root '];
  const Real = globalThis.URL;
  let constructed = 0;
  const Counting = class extends Real {
    constructor(input: string | URL, base?: string | URL) {
      super(input, base);
      constructed++;
    }
  };
  globalThis.URL = Counting as typeof URL;
  try {
    for (const rel of plain) r.resolve(rel);
    assert.equal(constructed, 0);
    r.resolve('%zz'); // a stray '%' takes the reference path
    assert.equal(constructed, 1);
    r.resolve('/%2e%2E/x'); // so does '%2e' in the path (a dot segment for WHATWG)
    assert.equal(constructed, 2);
    r.resolve('a b'); // and a space inside
    assert.equal(constructed, 3);
  } finally {
    globalThis.URL = Real;
  }
});
