/**
 * bench/star/indegree-checks — what one batch of in-degree checks costs STAR's PLDindegree DRUM
 * (src/frontier/star/star-drum.ts `indegrees`: the trust checks of a PLDedges flush and of
 * promotions, BEAST's re-budgeting) as the PLDs known grow, next to one batch of admissions
 * (check+update) of the same size. Since a batch of checks only is answered from a read of Z
 * (src/drum/merge.ts checkZ), a check costs a read of Z where an admission reads and rewrites it.
 *
 *   node --import tsx bench/star/indegree-checks.ts [--plds 2000000] [--batch 5000] [--reps 20] [--out <name>]
 *
 * The table is filled with `plds` PLD keys by admissions; then, at each quarter of that size, `reps`
 * batches of `batch` random known keys are timed, alternating indegrees and admit.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execSync } from 'node:child_process';
import { DrumPldStore } from '../../src/frontier/star/star-drum.js';
import { args, machineInfo, SHARED_MACHINE_NOTE, writeResult } from '../lib/report.js';

const a = args();
const PLDS = a.num('plds', 2_000_000);
const BATCH = a.num('batch', 5000);
const REPS = a.num('reps', 20);

/** PLD number r's key words (a mix of r: spread over the key space like fingerprints). */
function keyOf(r: number, out: Uint32Array, at: number): void {
  const h = Math.imul(r ^ 0x9e3779b9, 0x85ebca6b) >>> 0;
  out[at] = (h ^ (h >>> 13)) >>> 0;
  out[at + 1] = Math.imul(r + 0x632be5ab, 0x165667b1) >>> 0;
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dc-indeg-checks-'));
const store = await DrumPldStore.open(dir, { ramBytes: 32 << 20, drum: { buckets: 1 } });
const outD = new Float64Array(Math.max(BATCH, 65536));
const outP = new Float64Array(outD.length);
let seed = 7;
const rnd = (): number => {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return seed / 2 ** 32;
};
const rows: { plds: number; checkMs: number; admitMs: number }[] = [];
try {
  let known = 0;
  const fill = new Uint32Array(2 * 65536);
  for (const q of [0.25, 0.5, 0.75, 1]) {
    const target = Math.floor(PLDS * q);
    while (known < target) {
      const n = Math.min(65536, target - known);
      for (let i = 0; i < n; i++) keyOf(known + i, fill, 2 * i);
      await store.admit(fill, n, outD, outP);
      known += n;
    }
    const keys = new Uint32Array(2 * BATCH);
    let checkMs = 0;
    let admitMs = 0;
    for (let r = 0; r < REPS; r++) {
      for (let i = 0; i < BATCH; i++) keyOf(Math.floor(rnd() * known), keys, 2 * i);
      let t0 = performance.now();
      await store.indegrees(keys, BATCH, outD);
      checkMs += performance.now() - t0;
      t0 = performance.now();
      await store.admit(keys, BATCH, outD, outP);
      admitMs += performance.now() - t0;
    }
    const row = { plds: known, checkMs: Math.round((checkMs / REPS) * 100) / 100, admitMs: Math.round((admitMs / REPS) * 100) / 100 };
    console.log(JSON.stringify(row));
    rows.push(row);
  }
} finally {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
const out = a.get('out');
if (out !== undefined) {
  console.log(writeResult(out, {
    bench: 'star-indegree-checks',
    command: `node --import tsx bench/star/indegree-checks.ts ${process.argv.slice(2).join(' ')}`.trim(),
    commit: execSync('git rev-parse --short HEAD').toString().trim(),
    machine: machineInfo(),
    note: SHARED_MACHINE_NOTE,
    params: { plds: PLDS, batch: BATCH, reps: REPS },
    msPerBatch: rows,
  }));
}
