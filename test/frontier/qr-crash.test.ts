/**
 * QR across a crash. QR (the frontier's robots-wait queue, a DiskQueue) commits its cursor and its
 * appends only at a checkpoint, but between checkpoints it is read and appended to all the time:
 * each rescan shifts the URLs still waiting for a robots answer and pushes them back, and the
 * refill moves URLs from BEAST into it. After a SIGKILL the cursor is the checkpoint's, so all of
 * those come back from where they were; had the blocks written since (page cache) been kept at
 * reopen, every re-push would be a second copy — a URL fetched twice, or more, in the resumed run.
 * So the frontier opens its queues with `uncommittedTail: 'cut'`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DiskQueue } from '../../src/disk/index.js';
import { openDiskQueueStore } from '../../src/frontier/beast/disk-store.js';

const rec = (i: number): Uint8Array => {
  const b = new Uint8Array(40);
  new DataView(b.buffer).setUint32(0, i);
  return b;
};
const idOf = (b: Uint8Array): number => new DataView(b.buffer, b.byteOffset, b.byteLength).getUint32(0);

async function drain(q: { shift(n: number): Promise<Uint8Array[]> }): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < 10_000; i++) {
    const got = await q.shift(64);
    if (got.length === 0) return out;
    for (const r of got) out.push(idOf(r));
  }
  throw new Error('queue did not run dry');
}

test('QR after a crash: rescans since the checkpoint (shift, push back) leave each URL once', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'qr-crash-'));
  try {
    const store = openDiskQueueStore(dir, { blockBytes: 512, compression: 'none' });
    const qr = await store.open('qr');
    for (let i = 0; i < 300; i++) qr.push(rec(i));
    await qr.commit(); // the checkpoint
    // Three rescans: every URL still waits for its robots answer, so each goes back to the tail.
    for (let k = 0; k < 3; k++) for (const r of await qr.shift(300)) qr.push(r);
    // SIGKILL: nothing more is written; the blocks written so far are in the page cache.
    const again = await openDiskQueueStore(dir, { blockBytes: 512, compression: 'none' }).open('qr');
    const out = await drain(again);
    assert.equal(out.length, 300, `${out.length} records for 300 URLs`);
    assert.deepEqual([...out].sort((a, b) => a - b), Array.from({ length: 300 }, (_, i) => i));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('DiskQueue: uncommittedTail \'cut\' drops what was pushed after the last commit; \'keep\' (the default) keeps intact blocks', async () => {
  for (const tail of ['cut', 'keep'] as const) {
    const dir = await mkdtemp(path.join(tmpdir(), 'dq-tail-'));
    try {
      const q = await DiskQueue.open(dir, { blockBytes: 256, uncommittedTail: tail });
      for (let i = 0; i < 50; i++) q.push(rec(i));
      await q.commit();
      for (let i = 50; i < 200; i++) q.push(rec(i)); // several blocks written, no commit
      const r = await DiskQueue.open(dir, { blockBytes: 256, uncommittedTail: tail });
      const n = (await drain(r)).length;
      if (tail === 'cut') assert.equal(n, 50);
      else assert.ok(n > 50 && n <= 200, `kept the intact uncommitted blocks (${n})`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
});
