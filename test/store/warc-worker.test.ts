import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { WarcWriter, type EncodedGroup } from '../../src/store/index.js';
import { readWarc, sha1 } from './helpers.js';

test('encodeExchangeRecords runs in a worker thread (gzip, zstd) and the writer appends its bytes', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'drumcrawl-wwarc-'));
  try {
    const enc = new TextEncoder();
    const body = enc.encode('<a href=/x>x</a>'.repeat(100));
    const x = { url: 'http://w.test/', ip: '127.0.0.9', date: Date.UTC(2026, 0, 1), requestHead: enc.encode('GET / HTTP/1.1\r\nHost: w.test\r\n\r\n'),
      responseHead: enc.encode('HTTP/1.1 200 OK\r\n\r\n'), body, outlinks: ['http://w.test/x'] };
    const writers = [await WarcWriter.open({ dir: path.join(dir, 'g'), compression: 'gzip' }), await WarcWriter.open({ dir: path.join(dir, 'z'), compression: 'zstd' })];
    const groups = await new Promise<EncodedGroup[]>((resolve, reject) => {
      // The worker registers tsx itself (a worker's --import loader is not ready for its entry module).
      const entry = new URL('./encode-worker.ts', import.meta.url).href;
      const code = `import('tsx/esm/api').then((t) => { t.register(); return import(${JSON.stringify(entry)}); })`;
      const wk = new Worker(code, { eval: true, workerData: { x, optsList: writers.map((w) => w.encodeOptions) } });
      wk.once('message', resolve);
      wk.once('error', reject);
    });
    for (const [i, w] of writers.entries()) {
      const res = await w.appendEncoded(groups[i]!);
      await w.close();
      const recs = await readWarc(res.file);
      assert.deepStrictEqual(recs.map((r) => r.type), ['warcinfo', 'response', 'request', 'metadata']);
      assert.equal(recs[1]!.headers.get('warc-payload-digest'), sha1(body));
      assert.equal(recs[1]!.headers.get('warc-block-digest'), sha1(recs[1]!.block));
      assert.equal(res.payloadDigest, sha1(body));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
