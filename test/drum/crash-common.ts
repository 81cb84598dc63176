/**
 * Shared by the crash test and its child process: the deterministic tuple stream a child submits,
 * and the invariant check that runs after every crash. Epoch e of a repository uses its own key
 * pool, so that the checker can tell epochs apart after several kills.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { Drum, type DrumResult } from '../../src/drum/index.js';
import { mulberry32 } from '../../src/simweb/model/hash.js';

export { mulberry32 };

/** Buckets of every crash-test repository (keys' top 2 bits). */
export const K = 4;

export interface CrashEpochArgs {
  sink: string; // unique results the child's consumer committed: 8-byte (hi, lo) records
  markers: string; // "durable up to tuple j" records (after flush() or persist()): 4-byte j
  seed: number;
  pool: number;
  bufferBytes: number;
  bucketBytes: number;
  maxTuples: number;
  flushEvery: number;
  /** > 0: the child also calls persist() every persistEvery tuples (a "durable up to j" marker, as
   *  after a flush), with its merges running beside the ingest as in the DRUM thread: results are
   *  acknowledged a macrotask later, so a persist() lands between a merge's buckets. */
  persistEvery: number;
  /** > 0: the repository keeps first values with a deep part settled at this many keys per bucket
   *  (src/drum/deep.ts), every epoch alike; counts are then not kept (invariants 3–4 not checked). */
  settleKeys: number;
}

/** The options of a crash-test repository (the child's and the verifier's). */
export function crashRepoOptions(settleKeys: number): { buckets: number; valueBytes: 4 | 'variable'; merge?: typeof addLE; keepFirst?: boolean; settleKeys?: number } {
  return settleKeys > 0 ? { buckets: K, valueBytes: 'variable', keepFirst: true, settleKeys } : { buckets: K, valueBytes: 4, merge: addLE };
}

export interface CrashChildArgs extends CrashEpochArgs {
  dir: string;
}

/** A request to the verifier thread: check the crash state copied to `copy` (then delete it). */
export interface VerifyRequest {
  id: number;
  slot: number;
  copy: string;
  epochs: CrashEpochArgs[];
}

/** The key pool ([hi, lo] pairs) and the sequence of pool indexes of one epoch. */
export function epochStream(seed: number, pool: number, n: number): { keys: Uint32Array; seq: Uint32Array } {
  const rnd = mulberry32(seed);
  const keys = new Uint32Array(pool * 2);
  for (let i = 0; i < keys.length; i++) keys[i] = Math.floor(rnd() * 4294967296) >>> 0;
  const seq = new Uint32Array(n);
  for (let j = 0; j < n; j++) {
    const u = rnd();
    seq[j] = Math.floor(pool * u * u); // skewed: some keys repeat often
  }
  return { keys, seq };
}

export function readRecords(file: string, size: number): Buffer[] {
  if (!fs.existsSync(file)) return [];
  const b = fs.readFileSync(file);
  const out: Buffer[] = [];
  for (let p = 0; p + size <= b.length; p += size) out.push(b.subarray(p, p + size));
  return out;
}

/** Add-merge of 4-byte little-endian counts: the stored value of a key is how often it was merged. */
export const addLE = (x: Uint8Array, y: Uint8Array): Uint8Array => {
  const v = (x[0]! | (x[1]! << 8) | (x[2]! << 16) | (x[3]! << 24)) + (y[0]! | (y[1]! << 8) | (y[2]! << 16) | (y[3]! << 24));
  return new Uint8Array([v, v >>> 8, v >>> 16, v >>> 24]);
};

/**
 * Checks the invariants of a crashed repository on a COPY of it, `copy`, which it deletes (the
 * next child carries on from the exact crash state: pending generations, orphaned files and torn
 * tails included):
 *
 *   1. every key any sink committed as unique is in the repository (no reported-unique key lost);
 *   2. every key in the repository was reported unique to some sink (no unique result lost);
 *   3. (without a deep part) per bucket and epoch, the stored counts equal the counts of a PREFIX of that bucket's
 *      tuple stream (add-merge values: nothing merged twice, nothing skipped in the middle);
 *   4. that prefix covers everything before the epoch's last completed flush() or persist().
 *
 * The copy is reopened (recovery), flushed (pending tuples merged; their unique results count as
 * reported), and every pool key of every epoch is checked once.
 */
export async function verifyCrashed(slot: number, copy: string, epochs: CrashEpochArgs[]): Promise<void> {
  // (Assertions are written `if (!ok) assert.fail(msg)`: thousands of checks per crash, and a
  // template-string message built for every passing one costs more than the check.)
  const uniques2: DrumResult[] = [];
  const checks: DrumResult[] = [];
  const deep = epochs[0]!.settleKeys > 0;
  const drum = await Drum.open(copy, {
    ...crashRepoOptions(epochs[0]!.settleKeys),
    onResults: (b) => {
      for (const r of b) (r.op === 'check' ? checks : uniques2).push(r);
    },
  });
  await drum.flush();
  const reported = new Set<string>();
  for (const r of uniques2) if (r.unique) reported.add(`${r.keyHi}:${r.keyLo}`);
  for (const a of epochs) for (const rec of readRecords(a.sink, 8)) reported.add(`${rec.readUInt32LE(0)}:${rec.readUInt32LE(4)}`);
  const streams = epochs.map((a) => epochStream(a.seed, a.pool, a.maxTuples));
  // One check per pool key (aux = epoch, pool index): its stored value is the key's merged count.
  streams.forEach((st, e) => {
    for (let i = 0; i < st.keys.length / 2; i++) {
      const aux = new Uint8Array(8);
      const dv = new DataView(aux.buffer);
      dv.setUint32(0, e);
      dv.setUint32(4, i);
      drum.check(st.keys[2 * i]!, st.keys[2 * i + 1]!, aux);
    }
  });
  await drum.merge();
  const count = streams.map((st) => new Int32Array(st.keys.length / 2));
  let inRepo = 0;
  for (const r of checks) {
    const rv = new DataView(r.aux!.buffer, r.aux!.byteOffset);
    const e = rv.getUint32(0);
    const i = rv.getUint32(4);
    const key = `${r.keyHi}:${r.keyLo}`;
    if (r.unique) {
      if (reported.has(key)) assert.fail(`slot ${slot}: key ${key} was reported unique but is not in the repository`);
    } else {
      if (!reported.has(key)) assert.fail(`slot ${slot}: key ${key} is in the repository but no unique result for it was committed`);
      count[e]![i] = new DataView(r.value!.buffer, r.value!.byteOffset).getUint32(0, true);
      inRepo++;
    }
  }
  assert.equal(drum.stats().keys, inRepo, `slot ${slot}: repository holds keys outside the streams`);
  // Invariants 3 and 4, per epoch and bucket (first values kept: no counts to check).
  if (!deep) streams.forEach((st, e) => {
    const markers = readRecords(epochs[e]!.markers, 4).map((m) => m.readUInt32LE(0));
    const flushed = markers.length > 0 ? markers[markers.length - 1]! : 0;
    for (let b = 0; b < K; b++) {
      const inB = (i: number): boolean => st.keys[2 * i]! >>> 30 === b;
      let L = 0;
      for (let i = 0; i < count[e]!.length; i++) if (inB(i)) L += count[e]![i]!;
      const want = new Int32Array(count[e]!.length);
      let seen = 0;
      let beforeFlush = 0;
      for (let j = 0; j < st.seq.length && seen < L; j++) {
        const i = st.seq[j]!;
        if (!inB(i)) continue;
        want[i]!++;
        seen++;
      }
      for (let j = 0; j < flushed; j++) if (inB(st.seq[j]!)) beforeFlush++;
      assert.equal(seen, L, `slot ${slot} epoch ${e} bucket ${b}: more merged tuples than submitted`);
      for (let i = 0; i < want.length; i++) {
        if (inB(i) && count[e]![i] !== want[i]) assert.fail(`slot ${slot} epoch ${e} bucket ${b}: count of key ${i} is ${count[e]![i]}, not the prefix count ${want[i]}`);
      }
      assert.ok(L >= beforeFlush, `slot ${slot} epoch ${e} bucket ${b}: ${L} tuples merged but ${beforeFlush} were flushed`);
    }
  });
  await drum.close();
  fs.rmSync(copy, { recursive: true, force: true });
}
