import { test } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import fc from 'fast-check';
import { decodeContent } from '../../src/fetch/index.js';

// The crawler's main thread decodes a coded body of more than a few KiB on the libuv pool
// (decodeContent's syncMax, Fetcher syncDecodeBytes; src/crawl/fetch/fetch-stage.ts): whichever
// thread decodes, the result is the same — payload, decode error, bomb, a cut body decoded as far
// as it goes, bytes after the end of the stream.

const codings = ['gzip', 'deflate', 'deflate-raw', 'br'] as const;
function encode(c: (typeof codings)[number], b: Buffer): { enc: string; data: Buffer } {
  switch (c) {
    case 'gzip': return { enc: 'gzip', data: zlib.gzipSync(b) };
    case 'deflate': return { enc: 'deflate', data: zlib.deflateSync(b) };
    case 'deflate-raw': return { enc: 'deflate', data: zlib.deflateRawSync(b) };
    case 'br': return { enc: 'br', data: zlib.brotliCompressSync(b) };
  }
}

test('decodeContent: on the calling thread and on the libuv pool, the same outcome for every body', async () => {
  const body = fc.oneof(
    fc.uint8Array({ maxLength: 4096 }).map((a) => Buffer.from(a)),
    fc.tuple(fc.string({ maxLength: 64 }), fc.integer({ min: 1, max: 3000 })).map(([s, n]) => Buffer.from(s.repeat(n))),
  );
  await fc.assert(fc.asyncProperty(body, fc.constantFrom(...codings), fc.constantFrom('whole', 'cut', 'trailing', 'corrupt'), fc.integer({ min: 1024, max: 1 << 20 }),
    async (b, c, shape, cap) => {
      const { enc, data: whole } = encode(c, b);
      let data = whole;
      if (shape === 'cut') data = whole.subarray(0, Math.max(1, whole.length >> 1));
      else if (shape === 'trailing') data = Buffer.concat([whole, Buffer.from('xyz')]);
      else if (shape === 'corrupt') data = Buffer.from(whole.map((x, i) => (i === whole.length >> 1 ? x ^ 0x5a : x)));
      const truncated = shape === 'cut';
      const onThread = await decodeContent(data, [enc], cap, truncated, undefined, Infinity);
      const onPool = await decodeContent(data, [enc], cap, truncated, undefined, 0);
      const view = (d: typeof onThread): unknown => (d.ok ? { ok: true, decoded: Buffer.from(d.decoded).toString('base64') } : { ok: false, reason: d.reason });
      assert.deepEqual(view(onPool), view(onThread));
      if (shape === 'whole' && b.length <= cap && onThread.ok) assert.ok(Buffer.from(onThread.decoded).equals(b));
    }), { numRuns: 300 });
});
