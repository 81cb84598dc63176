/**
 * What a resumed run must not fetch again (src/state/resume-dedup.ts, src/state/admit-log.ts): a
 * done.log URL never gets a request however often the frontier hands it out; a pending.bin URL
 * gets exactly one per hand-out cycle (a retry starts a new one); URLseen's re-delivery of keys
 * the admit log names is dropped until the first merge ends. Property tests print their seed on failure.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { ResumeDedup } from '../../src/state/resume-dedup.js';
import { AdmitLog } from '../../src/state/admit-log.js';

const urls = fc.uniqueArray(fc.integer({ min: 0, max: 50 }).map((i) => `http://h${i % 7}.test/p/${i}`), { maxLength: 30 });

test('dispatch: done.log URLs never fetched, pending.bin URLs fetched once per hand-out cycle, others always', () => {
  fc.assert(
    fc.property(urls, urls, fc.array(fc.tuple(fc.integer({ min: 0, max: 50 }), fc.boolean()), { maxLength: 200 }), (done, pending, handOuts) => {
      const d = new ResumeDedup();
      for (const u of done) d.addDone(u, new Uint8Array([1]));
      const pend = pending.filter((u) => !done.includes(u));
      d.addReadmitted(pend);
      const fetchedSinceRetry = new Map<string, number>();
      for (const [i, retry] of handOuts) {
        const u = `http://h${i % 7}.test/p/${i}`;
        const skip = d.skipAtDispatch(u);
        if (done.includes(u)) {
          assert.equal(skip, 'done-before-crash', u);
          continue;
        }
        if (!pend.includes(u)) {
          assert.equal(skip, null, u);
          continue;
        }
        const n = fetchedSinceRetry.get(u) ?? 0;
        assert.equal(skip, n === 0 ? null : 'handed-out-twice', u);
        if (skip === null) fetchedSinceRetry.set(u, 1);
        if (skip === null && retry) {
          d.retried(u);
          fetchedSinceRetry.set(u, 0);
        }
      }
      // Entries of done.log never handed out stay for the next checkpoint's done.log.
      const left = [...d.doneRecords()].length;
      assert.equal(left, done.filter((u) => !handOuts.some(([i]) => `http://h${i % 7}.test/p/${i}` === u)).length);
    }),
  );
});

test('admits log: a bucket\'s keys are dropped on re-delivery until the first merge ends', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dc-admits-'));
  let mark = 0;
  const commitBeast = async (m?: number): Promise<void> => {
    if (m !== undefined) mark = m;
  };
  const { log } = await AdmitLog.open(dir, mark);
  for (let i = 0; i < 5000; i++) log.add(i, i * 7);
  await log.beforeCommit(0, commitBeast); // bucket 0 committed to BEAST
  log.add(99_999, 1);
  await log.beforeCommit(0, commitBeast); // its next merge: the log names only that merge's keys
  const { redelivered } = await AdmitLog.open(dir, mark);
  assert.equal(redelivered.size, 1);
  const d = new ResumeDedup();
  d.setRedelivered(redelivered);
  assert.equal(d.keepUnique(99_999, 1), false, 're-delivery of a key BEAST holds');
  assert.equal(d.keepUnique(3, 21), true, 'a key of an older (committed) merge of the bucket is not in the log');
  d.mergeEnded();
  assert.equal(d.keepUnique(99_999, 1), true, 'after the first merge nothing is dropped');
  assert.equal((await AdmitLog.open(mkdtempSync(path.join(os.tmpdir(), 'dc-admits-')), 0)).redelivered.size, 0, 'no log: nothing dropped');
});
