/**
 * URLseen's unique URLs reach BEAST as records written from the result chunk's bytes
 * (drum-codec.ts UniqueUrls, record.ts encodeFrontierRecordBytes). The model: split each aux the way
 * its layout is defined (five u32 words, the URL, then nothing or NUL via NUL path), build the
 * FrontierUrl from strings, and encode it with encodeFrontierUrl. The record written from the bytes
 * must be exactly those bytes, and decode to the same URL.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { BatchWriter, discoverySuffix, encodeAux, scanUniqueUrls, withSuffix } from '../../src/threads/drum/drum-codec.js';
import { FrontierUrl, decodeFrontierUrl, emptyRecordBytes, encodeFrontierRecordBytes, encodeFrontierUrl } from '../../src/frontier/index.js';

const enc = new TextEncoder();

interface Link {
  url: string;
  via: string;
  path: string;
  words: [number, number, number, number, number];
  unique: boolean;
  keep: boolean;
  budget: number;
  admitted: number;
  indegree: number;
}

const ascii = fc.stringMatching(/^[!-~]{0,80}$/);
const anyText = fc.oneof(ascii, fc.string({ maxLength: 40, unit: 'grapheme' }));
const word = fc.integer({ min: 0, max: 0xffffffff });
const link: fc.Arbitrary<Link> = fc.record({
  url: fc.oneof(ascii.map((s) => `http://h.test/${s}`), anyText.map((s) => `http://h.test/${s}`)),
  via: fc.oneof(fc.constant(''), ascii.map((s) => `http://v.test/${s}`), anyText),
  path: fc.oneof(fc.constant(''), fc.stringMatching(/^[LRX]{1,50}$/), fc.stringMatching(/^[0-9]{1,3}\+[LR]{1,49}$/)),
  words: fc.tuple(word, word, word, word, fc.integer({ min: 0, max: 1000 })),
  unique: fc.boolean(),
  keep: fc.boolean(),
  budget: fc.oneof(fc.integer({ min: 0, max: 5000 }), fc.double({ min: 0, max: 5000, noNaN: true })),
  admitted: fc.integer({ min: 1, max: 1e9 }),
  indegree: fc.integer({ min: -1, max: 1e6 }),
});

/** The model: the aux split by its definition, the URL built from strings. */
function model(l: Link, now: number): FrontierUrl {
  const hasSuffix = l.via !== '' || l.path !== '';
  return new FrontierUrl({
    url: l.url,
    via: hasSuffix ? l.via : '',
    path: hasSuffix ? l.path : '',
    hostHi: l.words[0], hostLo: l.words[1], pldHi: l.words[2], pldLo: l.words[3], hops: l.words[4],
    budget: l.budget, admitted: l.admitted, indegree: l.indegree, discoveredAt: now,
  });
}

test('UniqueUrls: the record written from a result chunk\'s bytes equals encodeFrontierUrl of the URL built from strings', () => {
  fc.assert(
    fc.property(fc.array(link, { maxLength: 60 }), fc.integer({ min: 0, max: 2 ** 42 }), (links, now) => {
      // NUL ends the URL and the via in the aux layout; canonical URLs never hold one (percent-encoded).
      links = links.filter((l) => !l.url.includes('\0') && !l.via.includes('\0'));
      const w = new BatchWriter(64);
      links.forEach((l, i) => {
        const aux = encodeAux(...l.words, withSuffix(enc.encode(l.url), discoverySuffix(l.via, l.path)).slice());
        w.result({ op: 'checkUpdate', unique: l.unique, keyHi: i, keyLo: 7, value: null, aux });
      });
      const chunk = w.take();
      const asked: number[] = [];
      const u = scanUniqueUrls(chunk, (hi) => {
        asked.push(hi);
        return links[hi]!.keep;
      });
      const kept = links.filter((l) => l.unique && l.keep);
      assert.deepEqual(asked, links.flatMap((l, i) => (l.unique ? [i] : [])), 'keep is asked for each unique URL, in order');
      assert.equal(u.count, kept.length);
      const f = emptyRecordBytes();
      kept.forEach((l, i) => {
        assert.deepEqual([u.plds[2 * i], u.plds[2 * i + 1]], [l.words[2], l.words[3]], 'PLD key words for STAR');
        const want = encodeFrontierUrl(model(l, now));
        // eslint-disable-next-line no-control-regex -- an all-ASCII test: the range starts at NUL on purpose
        const isAscii = /^[\x00-\x7f]*$/.test(l.url + l.via + l.path);
        assert.equal(u.ascii(i), isAscii);
        if (isAscii) {
          u.fields(i, f);
          Object.assign(f, { budget: l.budget, admitted: l.admitted, indegree: l.indegree, discoveredAt: now });
          assert.deepEqual([...encodeFrontierRecordBytes(f)], [...want]);
        }
        // The string path (every URL may take it) builds the model's URL.
        const s = u.url(i, now);
        Object.assign(s, { budget: l.budget, admitted: l.admitted, indegree: l.indegree });
        assert.deepEqual([...encodeFrontierUrl(s)], [...want]);
        const back = decodeFrontierUrl(want);
        assert.deepEqual([back.url, back.via, back.path, back.hops], [l.url, model(l, now).via, model(l, now).path, l.words[4]]);
      });
    }),
    { numRuns: 300 },
  );
});
