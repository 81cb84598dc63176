/**
 * The hand-off batch (src/cluster/engine/batch-codec.ts) against a model: what goes in comes out, URLs in
 * order with their hops and discovery suffix (a page's links share one suffix on the wire), votes
 * word for word; a cut or altered batch is refused, never misread.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { BatchBuilder, decodeBatch } from '../../src/cluster/engine/batch-codec.js';

const bytes = (max: number) => fc.uint8Array({ minLength: 0, maxLength: max });
const entry = fc.record({ url: bytes(300), hops: fc.nat(), suffix: fc.oneof(bytes(80), fc.constant(new Uint8Array(0))) });
const vote = fc.array(fc.nat({ max: 0xffffffff }), { minLength: 4, maxLength: 4 });

test('batch: decode(take()) gives back every URL and vote in order', () => {
  fc.assert(fc.property(fc.array(fc.oneof(entry.map((e) => ({ e })), vote.map((v) => ({ v }))), { maxLength: 200 }), fc.boolean(), (ops, repeatSuffix) => {
    const b = new BatchBuilder();
    const urls: { url: Uint8Array; hops: number; suffix: Uint8Array }[] = [];
    const votes: number[] = [];
    let last: Uint8Array | null = null;
    for (const op of ops) {
      if ('e' in op) {
        const suffix: Uint8Array = repeatSuffix && last !== null ? last.slice() : op.e.suffix;
        assert.equal(b.addUrl(op.e.url, op.e.hops, suffix), true);
        urls.push({ url: op.e.url, hops: op.e.hops, suffix });
        last = suffix;
      } else {
        b.addVote(Uint32Array.from(op.v), 0);
        votes.push(...op.v);
      }
    }
    const size = b.bytes;
    const buf = b.take();
    assert.equal(buf.byteLength, size);
    assert.equal(b.empty, true);
    const d = decodeBatch(buf);
    assert.equal(d.voteCount * 4, votes.length);
    assert.deepEqual([...d.votes], votes);
    assert.equal(d.urls.length, urls.length);
    for (let i = 0; i < urls.length; i++) {
      assert.deepEqual([...d.urls[i]!.url], [...urls[i]!.url]);
      assert.equal(d.urls[i]!.hops, urls[i]!.hops);
      assert.deepEqual([...d.urls[i]!.suffix], [...urls[i]!.suffix]);
    }
  }));
});

test('batch: a page\'s shared suffix is written once', () => {
  const b = new BatchBuilder();
  const suffix = new TextEncoder().encode('\0http://www.example.test/a/page\0L');
  let urlBytes = 0;
  for (let i = 0; i < 50; i++) {
    const u = new TextEncoder().encode(`http://x${i}.test/`);
    urlBytes += u.byteLength;
    b.addUrl(u, 1, suffix.slice());
  }
  assert.equal(b.bytes, 12 + 50 * 8 + urlBytes + suffix.byteLength);
});

test('batch: truncated, padded or foreign bytes are refused', () => {
  const b = new BatchBuilder();
  b.addUrl(new TextEncoder().encode('http://a.test/'), 2, new Uint8Array([0, 1, 2]));
  b.addVote(new Uint32Array([1, 2, 3, 4]), 0);
  const buf = b.take();
  for (let cut = 0; cut < buf.byteLength; cut++) assert.throws(() => decodeBatch(buf.subarray(0, cut)), RangeError);
  const padded = new Uint8Array(buf.byteLength + 1);
  padded.set(buf);
  assert.throws(() => decodeBatch(padded), RangeError);
  const foreign = buf.slice();
  foreign[0] = 0x7b; // '{'
  assert.throws(() => decodeBatch(foreign), RangeError);
  assert.equal(new BatchBuilder().addUrl(new Uint8Array(70_000), 0, new Uint8Array(0)), false, 'a URL longer than the format holds is refused');
});
