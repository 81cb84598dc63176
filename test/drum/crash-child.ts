/**
 * Child process of the crash test: tells the parent 'ready' (before Drum.open, so that kills
 * timed from it land inside recovery), then runs DRUM on its epoch's deterministic
 * stream until it is SIGKILLed (or finishes). Its consumer "commits" unique results by appending
 * them to a sink file before onResults resolves — the contract that gates DRUM's commit of Z.
 * Every 64 tuples it sends the parent the index of the tuple it has reached.
 */
import * as fs from 'node:fs';
import { Drum } from '../../src/drum/index.js';
import { crashRepoOptions, epochStream, type CrashChildArgs } from './crash-common.js';

const a = JSON.parse(process.argv[2]!) as CrashChildArgs;
const one = new Uint8Array([1, 0, 0, 0]);
process.send?.('ready');
const drum = await Drum.open(a.dir, {
  ...crashRepoOptions(a.settleKeys),
  bufferBytes: a.bufferBytes,
  bucketBytes: a.bucketBytes,
  deliver: 'unique',
  resultChunk: 97,
  onResults: (batch) => {
    const buf = Buffer.allocUnsafe(batch.length * 8);
    batch.forEach((r, i) => {
      buf.writeUInt32LE(r.keyHi, i * 8);
      buf.writeUInt32LE(r.keyLo, i * 8 + 4);
    });
    fs.appendFileSync(a.sink, buf);
    // (persist epochs: the answer comes a macrotask later, as the DRUM thread's proxy acks a chunk)
    return a.persistEvery > 0 ? new Promise<void>((r) => setImmediate(r)) : undefined;
  },
});
const marker = (j: number): void => {
  const m = Buffer.alloc(4);
  m.writeUInt32LE(j);
  fs.appendFileSync(a.markers, m);
};
// persist epochs: one merge at a time runs beside the ingest (drum-host.ts), not awaited here.
let merging: Promise<void> | null = null;
const { keys, seq } = epochStream(a.seed, a.pool, a.maxTuples);
const aux = new Uint8Array(4);
for (let j = 0; j < a.maxTuples; j++) {
  const i = seq[j]!;
  aux[0] = j;
  aux[1] = j >>> 8;
  aux[2] = j >>> 16;
  drum.checkUpdate(keys[2 * i]!, keys[2 * i + 1]!, one, aux);
  if (drum.needsMerge) {
    if (a.persistEvery === 0) await drum.merge();
    else merging ??= drum.merge().finally(() => { merging = null; });
  }
  if (a.persistEvery > 0 && (j + 1) % a.persistEvery === 0) {
    await drum.persist();
    marker(j + 1);
  }
  if ((j + 1) % a.flushEvery === 0) {
    await drum.flush();
    marker(j + 1);
  }
  if (j % 64 === 0) {
    process.send?.(j); // progress: the parent's kill instant is counted in tuples (crash.test.ts)
    await new Promise((r) => setImmediate(r));
  }
}
await drum.close();
process.exit(0);
