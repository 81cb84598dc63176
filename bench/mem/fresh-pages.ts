/**
 * What writing into memory not yet in use costs against memory in use: 8 KB copies (a page's
 * encoded WARC group on the bench web) into a new buffer per batch, as a batch handed to another
 * thread by transfer is (the next one needs a new buffer), against the same copies into one buffer
 * written again and again. A new buffer's pages are faulted in as they are first written (above
 * glibc's mmap threshold, the launcher's 128 KiB, every buffer is a fresh mapping), which is what
 * the main thread paid per page for its hand-offs to the WARC writer's and DRUM threads
 * (docs/performance.md, "The main thread with page workers").
 *
 *   MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072 node --import tsx bench/mem/fresh-pages.ts [--out fresh-pages]
 *
 * (bin/drumcrawl's malloc settings, which the crawler runs under.) µs per 8 KB copied, per batch
 * size; three rounds, the best kept.
 */
import { args, machineInfo, writeResult } from '../lib/report.js';

const a = args();
const src = new Uint8Array(8000).fill(3);

function run(size: number, fresh: boolean, batches: number): number {
  let buf = new Uint8Array(size);
  // the last few batches stay alive, as batches in flight to another thread do
  const held: Uint8Array[] = [];
  let copies = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < batches; i++) {
    if (fresh) {
      buf = new Uint8Array(size);
      held.push(buf);
      if (held.length > 4) held.shift();
    }
    for (let p = 0; p + src.byteLength <= size; p += src.byteLength) {
      buf.set(src, p);
      copies++;
    }
  }
  return Number(process.hrtime.bigint() - t0) / copies / 1000;
}

const rows: { batchKiB: number; freshUsPer8KB: number; reusedUsPer8KB: number }[] = [];
for (const kib of [64, 256, 1024]) {
  const batches = Math.max(200, (64 << 20) / (kib << 10));
  let fresh = Infinity;
  let reused = Infinity;
  for (let r = 0; r < 3; r++) {
    fresh = Math.min(fresh, run(kib << 10, true, batches));
    reused = Math.min(reused, run(kib << 10, false, batches));
  }
  rows.push({ batchKiB: kib, freshUsPer8KB: Number(fresh.toFixed(3)), reusedUsPer8KB: Number(reused.toFixed(3)) });
}
const out = {
  bench: 'fresh-pages',
  command: `MALLOC_ARENA_MAX=${process.env.MALLOC_ARENA_MAX ?? ''} MALLOC_MMAP_THRESHOLD_=${process.env.MALLOC_MMAP_THRESHOLD_ ?? ''} node --import tsx bench/mem/fresh-pages.ts`,
  machine: machineInfo(),
  rows,
  note: 'µs per 8 KB copy: into a new buffer per batch (fresh) against one buffer reused (reused); best of three rounds. Timing on a shared box: compare the two columns of one run.',
};
process.stdout.write(`${JSON.stringify(rows)}\n`);
if (a.get('out') !== undefined) process.stdout.write(`${writeResult(a.get('out')!, out)}\n`);
