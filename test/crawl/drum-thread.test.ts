/**
 * DrumThread: several DRUM instances in one worker thread (the crawl hosts ContentSeen and STAR's
 * PLD store together). Each instance answers on its own port; closing one leaves the other
 * working; a failed open is reported with the DRUM's error code and leaves the thread usable.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DrumProxy, DrumThread, PldStoreProxy } from '../../src/threads/drum/drum-proxy.js';
import type { DrumResult } from '../../src/drum/index.js';
import { isCrawlError } from '../../src/errors.js';

test('DrumThread: a DRUM and a STAR store share one thread; each works alone after the other closes', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dc-drum-thread-'));
  try {
    const thread = new DrumThread();
    const got: DrumResult[] = [];
    const drum = await DrumProxy.open(path.join(dir, 'content'), { ramBytes: 4 << 20, valueBytes: 'variable', buckets: 2 }, (b) => {
      got.push(...b);
    }, { thread });
    const star = await PldStoreProxy.open(path.join(dir, 'star'), { ramBytes: 4 << 20, drum: { buckets: 1 } }, thread);

    // Interleaved calls on both instances.
    const aux = (i: number): Uint8Array => new Uint8Array([i & 255, i >>> 8]);
    for (let i = 0; i < 500; i++) drum.checkUpdate(i % 300, 7, new Uint8Array([i & 255]), aux(i));
    const degrees: number[] = [];
    const edges = new Uint32Array([1, 1, 2, 2, 1, 1, 3, 3, 3, 3, 4, 4]); // 1→2, 1→3, 3→4
    await Promise.all([drum.merge(), star.addEdges(edges, 3, (from, to) => degrees.push(from, to))]);
    assert.equal(got.length, 500);
    assert.equal(got.filter((r) => r.unique).length, 300, 'keys 0..299 are new once each');
    const dups = got.filter((r) => !r.unique);
    assert.ok(dups.every((r) => r.value !== null && r.value.length === 1), 'a duplicate carries the stored value');
    assert.deepEqual(got.map((r) => r.aux![0]! | (r.aux![1]! << 8)), [...Array(500).keys()], 'results in input order with their aux');
    assert.ok(degrees.length > 0, 'STAR reported in-degree changes');

    // The DRUM closes; STAR in the same thread keeps answering.
    await drum.close();
    const outD = new Float64Array(2);
    const outP = new Float64Array(2);
    await star.admit(new Uint32Array([2, 2, 4, 4]), 2, outD, outP);
    assert.deepEqual([...outD], [1, 1]);
    assert.deepEqual([...outP], [1, 1]);
    await star.close();
    // The last instance closed: the thread is gone, a new instance cannot be hosted in it.
    await assert.rejects(
      PldStoreProxy.open(path.join(dir, 'star2'), { ramBytes: 4 << 20 }, thread),
      (e: unknown) => isCrawlError(e) && e.code === 'CRAWL_DRUM_WORKER_EXIT',
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('DrumThread: an instance that fails to open rejects with its DRUM error code; the thread hosts the next one', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dc-drum-thread-'));
  try {
    const thread = new DrumThread();
    const ok = await DrumProxy.open(path.join(dir, 'a'), { ramBytes: 4 << 20, valueBytes: 0, buckets: 1 }, () => undefined, { thread });
    // A file where the DRUM wants its directory: the open fails inside the thread.
    await mkdir(path.join(dir, 'bad-parent'));
    await writeFile(path.join(dir, 'bad-parent', 'drum'), 'not a directory');
    await assert.rejects(
      DrumProxy.open(path.join(dir, 'bad-parent', 'drum'), { ramBytes: 4 << 20, valueBytes: 0, buckets: 1 }, () => undefined, { thread }),
      (e: unknown) => e instanceof Error && typeof (e as { code?: unknown }).code === 'string',
    );
    const b = await DrumProxy.open(path.join(dir, 'b'), { ramBytes: 4 << 20, valueBytes: 0, buckets: 1 }, () => undefined, { thread });
    ok.checkUpdate(1, 2);
    b.checkUpdate(3, 4);
    await Promise.all([ok.merge(), b.merge()]);
    assert.equal(ok.stats().keys, 1);
    assert.equal(b.stats().keys, 1);
    await ok.close();
    await b.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('DrumProxy: batches written into the buffers the thread gives back — every tuple answered once, in order, with its aux (against a set)', async () => {
  const fc = (await import('fast-check')).default;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dc-drum-spare-'));
  let run = 0;
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ key: fc.integer({ min: 0, max: 200 }), auxLen: fc.integer({ min: 0, max: 90 }), yieldAfter: fc.boolean() }), { minLength: 1, maxLength: 400 }),
        fc.integer({ min: 64, max: 2048 }),
        async (ops, batchBytes) => {
          const got: DrumResult[] = [];
          // a small batchBytes: many batches, so most are written into buffers given back
          const drum = await DrumProxy.open(path.join(dir, String(run++)), { ramBytes: 4 << 20, valueBytes: 0, buckets: 2 }, (b) => {
            got.push(...b);
          }, { batchBytes });
          const seen = new Set<number>();
          const want: { unique: boolean; aux: number[] }[] = [];
          for (const [i, o] of ops.entries()) {
            const aux = Array.from({ length: o.auxLen + 2 }, (_, j) => (j === 0 ? i & 255 : j === 1 ? i >>> 8 : (i + j) & 255));
            drum.checkUpdate(o.key, 3, null, new Uint8Array(aux));
            want.push({ unique: !seen.has(o.key), aux });
            seen.add(o.key);
            // a turn of the event loop: the thread's spare buffers come back meanwhile
            if (o.yieldAfter) await new Promise((r) => setImmediate(r));
          }
          await drum.merge();
          await drum.close();
          assert.deepEqual(got.map((r) => ({ unique: r.unique, aux: [...r.aux!] })), want);
        },
      ),
      { numRuns: 12 },
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
