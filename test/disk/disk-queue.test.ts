import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { DiskQueue } from '../../src/disk/index.js';
import { isCrawlError } from '../../src/errors.js';

function tmpDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'dq-'));
}

const rec = (i: number, len: number): Uint8Array => {
  const b = new Uint8Array(len + 4);
  new DataView(b.buffer).setUint32(0, i);
  for (let j = 0; j < len; j++) b[4 + j] = (i * 31 + j) & 0xff;
  return b;
};

test('FIFO order, length, and reading records still in the write buffer', async () => {
  const dir = tmpDir();
  const q = await DiskQueue.open(dir, { blockBytes: 100 });
  for (let i = 0; i < 50; i++) q.push(rec(i, i % 7));
  assert.equal(q.length, 50);
  const a = await q.shift(20);
  assert.deepEqual(a, Array.from({ length: 20 }, (_, i) => rec(i, i % 7)));
  assert.equal(q.length, 30);
  for (let i = 50; i < 60; i++) q.push(rec(i, 3));
  const b = await q.shift(100);
  assert.equal(b.length, 40);
  assert.deepEqual(b[0], rec(20, 20 % 7));
  assert.deepEqual(b[39], rec(59, 3));
  assert.deepEqual(await q.shift(5), []);
  assert.equal(q.length, 0);
  await q.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('length and unread records survive reopen; consumed segments are deleted', async () => {
  const dir = tmpDir();
  let q = await DiskQueue.open(dir, { blockBytes: 64, segmentBytes: 300, compression: 'zstd' });
  for (let i = 0; i < 200; i++) q.push(rec(i, 20));
  await q.commit();
  const segsBefore = fs.readdirSync(dir).filter((f) => f.endsWith('.dq')).length;
  assert.ok(segsBefore > 3, `expected several segments, got ${segsBefore}`);
  assert.equal((await q.shift(150)).length, 150);
  await q.close();
  const segsAfter = fs.readdirSync(dir).filter((f) => f.endsWith('.dq')).length;
  assert.ok(segsAfter < segsBefore, 'consumed segments are deleted at commit');
  q = await DiskQueue.open(dir, { blockBytes: 64, segmentBytes: 300, compression: 'zstd' });
  assert.equal(q.length, 50);
  const rest = await q.shift(1000);
  assert.deepEqual(rest, Array.from({ length: 50 }, (_, i) => rec(150 + i, 20)));
  await q.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('corrupted committed block → CRAWL_DISK_CHECKSUM; truncated committed segment → CRAWL_DISK_TRUNCATED', async () => {
  const dir = tmpDir();
  let q = await DiskQueue.open(dir, { blockBytes: 256 });
  for (let i = 0; i < 100; i++) q.push(rec(i, 30));
  await q.close();
  const seg = path.join(dir, fs.readdirSync(dir).find((f) => f.endsWith('.dq'))!);
  const bytes = fs.readFileSync(seg);
  const flipped = Buffer.from(bytes);
  flipped[700] = flipped[700]! ^ 0x10;
  fs.writeFileSync(seg, flipped);
  q = await DiskQueue.open(dir, { blockBytes: 256 });
  await assert.rejects(q.shift(100), (e: unknown) => isCrawlError(e, 'CRAWL_DISK_CHECKSUM'));
  await q.close({ commit: false });
  fs.writeFileSync(seg, bytes.subarray(0, bytes.length - 10));
  await assert.rejects(DiskQueue.open(dir), (e: unknown) => isCrawlError(e, 'CRAWL_DISK_TRUNCATED'));
  fs.rmSync(dir, { recursive: true, force: true });
});

type Op =
  | { t: 'push'; n: number; len: number }
  | { t: 'shift'; n: number }
  | { t: 'commit' }
  | { t: 'reopen' }
  | { t: 'crash'; tear: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ t: fc.constant('push' as const), n: fc.integer({ min: 1, max: 40 }), len: fc.integer({ min: 0, max: 90 }) }) },
  { weight: 4, arbitrary: fc.record({ t: fc.constant('shift' as const), n: fc.integer({ min: 1, max: 50 }) }) },
  { weight: 2, arbitrary: fc.constant({ t: 'commit' as const }) },
  { weight: 1, arbitrary: fc.constant({ t: 'reopen' as const }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('crash' as const), tear: fc.double({ min: 0, max: 1, noNaN: true }) }) },
);

test('property: DiskQueue matches an array model across commits, reopens and crashes (torn tails included)', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(opArb, { minLength: 1, maxLength: 60 }),
      fc.integer({ min: 16, max: 600 }),
      fc.integer({ min: 100, max: 3000 }),
      fc.boolean(),
      async (ops, blockBytes, segmentBytes, zstd) => {
        const dir = tmpDir();
        const opts = { blockBytes, segmentBytes, compression: zstd ? ('zstd' as const) : ('none' as const) };
        let q = await DiskQueue.open(dir, opts);
        let items: Uint8Array[] = []; // every record pushed, in order
        let read = 0; // model read position
        let committedRead = 0;
        let committedPush = 0;
        let serial = 0;
        try {
          for (const op of ops) {
            switch (op.t) {
              case 'push':
                for (let i = 0; i < op.n; i++) {
                  const r = rec(serial++, op.len);
                  items.push(r);
                  q.push(r);
                }
                break;
              case 'shift': {
                const got = await q.shift(op.n);
                const want = items.slice(read, read + op.n);
                assert.deepEqual(got, want);
                read += got.length;
                break;
              }
              case 'commit':
                await q.commit();
                committedRead = read;
                committedPush = items.length;
                break;
              case 'reopen':
                await q.close();
                committedRead = read;
                committedPush = items.length;
                q = await DiskQueue.open(dir, opts);
                break;
              case 'crash': {
                await q.close({ commit: false });
                // Tear the uncommitted tail of the newest segment at a random point.
                const m = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as { writeSeg: number; writeOff: number };
                const segs = fs.readdirSync(dir).filter((f) => f.endsWith('.dq')).sort();
                const last = segs[segs.length - 1]!;
                const segId = Number(last.slice(4, 16));
                const size = fs.statSync(path.join(dir, last)).size;
                const floor = segId === m.writeSeg ? m.writeOff : 0;
                const cut = floor + Math.floor((size - floor) * op.tear);
                fs.truncateSync(path.join(dir, last), cut);
                q = await DiskQueue.open(dir, opts);
                // Survivors: everything committed, plus a prefix of what came after it.
                const x = committedRead + q.length;
                assert.ok(x >= committedPush && x <= items.length, `survivors ${x} not in [${committedPush}, ${items.length}]`);
                items = items.slice(0, x);
                read = committedRead;
                break;
              }
            }
            assert.equal(q.length, items.length - read);
          }
          const rest = await q.shift(1e9);
          assert.deepEqual(rest, items.slice(read));
        } finally {
          await q.close({ commit: false });
          fs.rmSync(dir, { recursive: true, force: true });
        }
      },
    ),
    { numRuns: 150 },
  );
});

test('blocks larger than the read-ahead buffer are read intact (read-ahead growth keeps buffered bytes)', async () => {
  const dir = tmpDir();
  const q = await DiskQueue.open(dir, { blockBytes: 3 << 20 });
  const big = Array.from({ length: 40 }, (_, i) => rec(i, 100_000 + i));
  for (const r of big.slice(0, 20)) q.push(r);
  await q.commit(); // one ~2 MB block
  for (const r of big.slice(20)) q.push(r);
  await q.commit(); // a second one
  await q.close({ commit: false });
  const q2 = await DiskQueue.open(dir, { blockBytes: 3 << 20 });
  assert.deepEqual(await q2.shift(100), big);
  await q2.close();
  fs.rmSync(dir, { recursive: true, force: true });
});
