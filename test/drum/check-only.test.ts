/**
 * A bucket whose batch holds checks only is answered from a read of Z_i (src/drum/merge.ts checkZ):
 * the answers are a merge's, Z_i is not rewritten (its generation stays, no cache byte is written),
 * and the repository reads back the same after a reopen. Checked against the in-memory model with
 * batches of checks only between mixed ones, with and without a deep part, fixed and variable values.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { Drum, type DrumOp, type DrumResult } from '../../src/drum/index.js';
import { IoCounters } from '../../src/disk/index.js';
import { DrumModel, addU32, concatTail } from './model.js';


/** The manifest's Z generation per bucket (drum.json). */
function zgens(dir: string): number[] {
  const m = JSON.parse(fs.readFileSync(path.join(dir, 'drum.json'), 'utf8')) as { buckets: { zgen: number }[] };
  return m.buckets.map((b) => b.zgen);
}

type Batch = { checksOnly: boolean; tuples: { op: DrumOp; key: number; v: number }[]; reopen: boolean };

const batchArb = (keys: number): fc.Arbitrary<Batch> =>
  fc.record({
    checksOnly: fc.boolean(),
    tuples: fc.array(fc.record({ op: fc.constantFrom<DrumOp>('check', 'update', 'checkUpdate'), key: fc.nat({ max: keys - 1 }), v: fc.nat({ max: 1000 }) }), { minLength: 1, maxLength: 30 }),
    reopen: fc.boolean(),
  });

test('property: a batch of checks only gets a merge\'s answers and leaves Z as it was', { timeout: 300_000 }, async () => {
  let readOnlyMerges = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(batchArb(24), { minLength: 1, maxLength: 12 }),
      fc.constantFrom<4 | 'variable'>(4, 'variable'),
      fc.constantFrom(1, 2, 4),
      fc.constantFrom(0, 0, 2, 5),
      fc.array(fc.tuple(fc.nat({ max: 0xffffffff }), fc.nat({ max: 0xffffffff })), { minLength: 24, maxLength: 24 }),
      async (batches, valueBytes, buckets, settleKeys, keyPool) => {
        const merge = valueBytes === 4 ? addU32 : concatTail;
        const model = new DrumModel(valueBytes, merge);
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drum-checks-'));
        const got: DrumResult[] = [];
        const io = new IoCounters();
        const opts = { buckets, valueBytes, merge, io, ramBytes: 1 << 20, bufferBytes: 256, bucketBytes: 2000, ...(settleKeys > 0 ? { settleKeys } : {}), onResults: (b: DrumResult[]) => void got.push(...b) };
        let drum = await Drum.open(dir, opts);
        try {
          for (const b of batches) {
            const want: { unique: boolean; value: Uint8Array | null }[] = [];
            for (const [i, t0] of b.tuples.entries()) {
              const op: DrumOp = b.checksOnly ? 'check' : t0.op;
              const [hi, lo] = keyPool[t0.key]!;
              const value = op === 'check' ? null : valueBytes === 4 ? Uint8Array.of(0, 0, t0.v >>> 8, t0.v & 0xff) : new Uint8Array(t0.v % 7).fill(t0.v & 0xff);
              want.push(model.apply({ op, hi, lo, value }));
              const aux = Uint8Array.of(i);
              if (op === 'check') drum.check(hi, lo, aux);
              else if (op === 'update') drum.update(hi, lo, value!, aux);
              else drum.checkUpdate(hi, lo, value, aux);
            }
            const gensBefore = zgens(dir);
            const cacheBytesBefore = io.kinds.cache?.bytesWritten ?? 0;
            const settlingsBefore = drum.stats().settlings ?? 0;
            await drum.merge();
            assert.equal(got.length, b.tuples.length);
            for (const r of got) {
              const w = want[r.aux![0]!]!;
              assert.equal(r.unique, w.unique);
              assert.deepEqual(r.value, w.unique ? null : w.value);
            }
            got.length = 0;
            // (A round may also settle a bucket whose Z reached settleKeys before: that rewrites its Z.)
            if (b.checksOnly && (drum.stats().settlings ?? 0) === settlingsBefore) {
              readOnlyMerges++;
              assert.deepEqual(zgens(dir), gensBefore, 'a batch of checks rewrote Z');
              assert.equal(io.kinds.cache?.bytesWritten ?? 0, cacheBytesBefore, 'a batch of checks wrote cache bytes');
            }
            if (b.reopen) {
              await drum.close();
              drum = await Drum.open(dir, opts);
            }
          }
          assert.equal(drum.stats().keys, model.map.size);
          // Every key reads back with the model's value.
          for (const [hi, lo] of keyPool) drum.check(hi, lo, Uint8Array.of(0));
          await drum.merge();
          for (const r of got) {
            const v = model.map.get(`${r.keyHi}:${r.keyLo}`);
            assert.equal(r.unique, v === undefined);
            assert.deepEqual(r.value, v ?? null);
          }
        } finally {
          await drum.close({ flush: false });
          fs.rmSync(dir, { recursive: true, force: true });
        }
      },
    ),
    { numRuns: Number(process.env.DRUM_RUNS ?? 60) },
  );
  assert.ok(readOnlyMerges > 0);
});
