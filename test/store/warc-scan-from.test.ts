/**
 * scanWarc(path, { fromOffset }): a scan that starts at a record / compression-unit boundary (the
 * offset a checkpoint recorded) finds exactly the records after it, with the same offsets as a
 * scan from 0, and a torn tail after it is found as from 0.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { WarcWriter, scanWarc } from '../../src/store/index.js';

const enc = new TextEncoder();

function exchange(i: number) {
  const body = new Uint8Array(100 + ((i * 977) % 2000)).fill(0x61 + (i % 26));
  return {
    url: `http://h${i % 3}.test/p/${i}`,
    ip: '127.0.0.1',
    date: new Date(Date.UTC(2026, 10, 25, 12, 0, i % 60)),
    requestHead: enc.encode(`GET /p/${i} HTTP/1.1\r\nHost: h${i % 3}.test\r\n\r\n`),
    responseHead: enc.encode(`HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: ${body.length}\r\n\r\n`),
    body,
  };
}

for (const compression of ['gzip', 'zstd', 'none'] as const) {
  test(`scanWarc fromOffset (${compression}): from every record boundary, the tail's records and a torn tail`, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'drumcrawl-warc-from-'));
    try {
      const w = await WarcWriter.open({ dir, compression });
      for (let i = 0; i < 12; i++) await w.writeExchange(exchange(i));
      await w.close();
      const file = w.position().file;
      const all = await scanWarc(file, { collect: true });
      assert.equal(all.error, undefined);
      const list = all.list!;
      assert.ok(list.length >= 24);
      for (let k = 0; k < list.length; k++) {
        const from = list[k]!.offset;
        // several records in one unit share its offset: the tail starts at the first of them
        const first = list.findIndex((r) => r.offset === from);
        const r = await scanWarc(file, { collect: true, fromOffset: from });
        assert.equal(r.error, undefined, `from ${from}`);
        assert.equal(r.validLength, all.fileLength);
        assert.equal(r.records, list.length - first);
        assert.deepStrictEqual(r.list, list.slice(first));
      }
      const end = await scanWarc(file, { fromOffset: all.fileLength });
      assert.deepStrictEqual([end.records, end.validLength, end.error], [0, all.fileLength, undefined]);
      const past = await scanWarc(file, { fromOffset: all.fileLength + 1 });
      assert.match(past.error ?? '', /past the end/);
      await assert.rejects(scanWarc(file, { fromOffset: -1 }), RangeError);
      // a torn tail: the scan from a checkpointed boundary stops at the last whole record
      const whole = readFileSync(file);
      const torn = path.join(dir, 'torn' + path.extname(file));
      const mid = list[list.length - 3]!;
      writeFileSync(torn, whole.subarray(0, mid.offset + Math.floor(mid.length / 2)));
      const t = await scanWarc(torn, { fromOffset: list[4]!.offset });
      assert.equal(t.validLength, mid.offset);
      assert.ok(t.error !== undefined);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
