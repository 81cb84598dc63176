import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BatchWriter, decodeResults, discoverySuffix, encodeAux, encodeResultChunk, forEachResult, forEachTuple } from '../../src/threads/drum/drum-codec.js';
import { encodeLinks, type LinkEntry } from '../../src/threads/links-codec.js';
import type { DrumResult, DrumResultChunk } from '../../src/drum/index.js';

const show = (b: Uint8Array | null): string => (b === null ? 'null' : [...b].join(','));

test('drum-codec: tuples round-trip through one batch (values/aux absent, empty, long; link tables expand to encodeAux tuples)', () => {
  const w = new BatchWriter(16); // starts tiny: the batch grows several times
  const want: string[] = [];
  let count = 0;
  for (let i = 0; i < 2000; i++) {
    const hi = (i * 2654435761) >>> 0;
    const lo = (i * 40503) >>> 0;
    if (i % 4 === 0) {
      // a page's link table (i % 7 links, some with long URLs) and its discovery suffix
      const links: LinkEntry[] = [];
      for (let k = 0; k < i % 7; k++) {
        links.push({ hi: hi + k, lo, hostHi: k, hostLo: 0xffffffff, pldHi: i, pldLo: 7, url: `http://h${k}.test/${'p'.repeat((i * k) % 300)}` });
      }
      const suffix = i % 8 === 0 ? new Uint8Array(0) : discoverySuffix(`http://page${i}.test/`, 'L'.repeat(i % 9));
      w.linkTable(encodeLinks(links), links.length, i % 9, suffix);
      count += links.length;
      for (const l of links) {
        const aux = encodeAux(l.hostHi, l.hostLo, l.pldHi, l.pldLo, i % 9, new Uint8Array([...new TextEncoder().encode(l.url), ...suffix]));
        want.push(`checkUpdate ${(l.hi >>> 0)} ${l.lo} null ${show(aux)}`);
      }
      continue;
    }
    count++;
    const op = i % 3 === 0 ? 'check' : i % 3 === 1 ? 'update' : 'checkUpdate';
    const v = i % 5 === 0 ? null : new Uint8Array(i % 300).fill((i * 7) & 255);
    const a = i % 7 === 0 ? null : new Uint8Array(i % 13).fill((i * 3) & 255);
    w.tuple(op, hi, lo, v, a);
    want.push(`${op} ${hi} ${lo} ${show(v)} ${show(a)}`);
  }
  assert.equal(w.count, count);
  const got: string[] = [];
  forEachTuple(w.take(), (op, hi, lo, v, a) => got.push(`${op} ${hi} ${lo} ${show(v)} ${show(a)}`));
  assert.deepEqual(got, want);
  assert.equal(w.count, 0);
  assert.equal(w.length, 0);
});

test('drum-codec: results round-trip', () => {
  const w = new BatchWriter();
  const rs: DrumResult[] = [];
  for (let i = 0; i < 500; i++) {
    rs.push({
      op: i % 2 ? 'checkUpdate' : 'check', unique: i % 3 === 0, keyHi: i * 3, keyLo: 0xfffffff0 + (i % 16),
      value: i % 4 === 0 ? null : new Uint8Array(i % 17).fill(i & 255), aux: i % 5 === 0 ? null : new Uint8Array(i % 23).fill(1),
    });
  }
  for (const r of rs) w.result(r);
  const buf = w.take();
  const back = decodeResults(buf);
  assert.equal(back.length, rs.length);
  // forEachResult: the same results as offsets into the batch (what URLseen's consumer reads)
  const viaOffsets: string[] = [];
  forEachResult(buf, (op, unique, hi, lo, vo, vl, ao, al) => {
    const v = vl < 0 ? null : buf.subarray(vo, vo + vl);
    const a = al < 0 ? null : buf.subarray(ao, ao + al);
    viaOffsets.push(`${op} ${unique} ${hi} ${lo} ${show(v)} ${show(a)}`);
  });
  assert.deepEqual(viaOffsets, rs.map((e) => `${e.op} ${e.unique} ${e.keyHi} ${e.keyLo} ${show(e.value)} ${show(e.aux)}`));
  back.forEach((r, i) => {
    const e = rs[i]!;
    assert.equal(r.op, e.op);
    assert.equal(r.unique, e.unique);
    assert.equal(r.keyHi, e.keyHi);
    assert.equal(r.keyLo, e.keyLo);
    assert.equal(show(r.value), show(e.value));
    assert.equal(show(r.aux), show(e.aux));
  });
});

test('drum-codec: a struct-of-arrays result chunk encodes to the same bytes as result() per result', () => {
  for (const withValues of [false, true]) {
    const cap = 300; // arrays longer than count: entries past it are stale and must be ignored
    const n = 257;
    const c: DrumResultChunk = {
      count: n, op: new Uint8Array(cap), keyHi: new Uint32Array(cap), keyLo: new Uint32Array(cap), unique: new Uint8Array(cap),
      auxBytes: new Uint8Array(64 * cap), auxStart: new Uint32Array(cap + 1), auxNull: new Uint8Array(cap),
      values: withValues ? [] : null,
    };
    const w = new BatchWriter(8);
    let ap = 5; // the first result's aux need not start at 0
    for (let i = 0; i < cap; i++) {
      c.op[i] = i % 3;
      c.keyHi[i] = (i * 2654435761) >>> 0;
      c.keyLo[i] = 0xffffffff - i;
      c.unique[i] = i % 2;
      c.auxStart[i] = ap;
      const none = i % 11 === 0;
      c.auxNull[i] = none ? 1 : 0;
      const len = none ? 0 : i % 61;
      for (let k = 0; k < len; k++) c.auxBytes[ap + k] = (i + k) & 255;
      const aux = none ? null : c.auxBytes.slice(ap, ap + len);
      ap += len;
      const v = withValues && i % 4 !== 0 ? new Uint8Array(i % 9).fill(i & 255) : null;
      if (withValues) c.values!.push(v);
      if (i < n) w.result({ op: (['check', 'update', 'checkUpdate'] as const)[i % 3]!, unique: i % 2 === 1, keyHi: c.keyHi[i]!, keyLo: c.keyLo[i]!, value: v, aux });
    }
    c.auxStart[cap] = ap;
    assert.deepEqual([...encodeResultChunk(c)], [...w.take()]);
  }
});
