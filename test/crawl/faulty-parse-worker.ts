/**
 * A parse worker for supervisor tests: the real one (src/threads/page/parse-worker.ts), except on pages
 * whose bytes contain a marker —
 *   CRASH-ME       the worker exits while that page is in progress (as an out-of-memory exit does)
 *   HANG-ME        the worker spins forever while that page is in progress
 *   CRASH-BETWEEN  the worker exits before starting that page (no page in progress)
 *   HANG-BETWEEN   the worker spins forever before starting that page (no page in progress)
 * The pages of the batch before the marked one are parsed by the real worker first, and "in
 * progress" is written to the pool's shared progress array exactly as the real worker writes it,
 * so the pool sees what it would see if the parser itself crashed or hung on that page.
 */
import { workerData } from 'node:worker_threads';
import run, { PROGRESS_MASK, type WireBatch, type ParseTask, type WireTask, type ParseWorkerData } from '../../src/threads/page/parse-worker.js';

const data = (workerData ?? {}) as Partial<ParseWorkerData>;
const progress = data.progress !== undefined ? new Int32Array(data.progress) : null;
const startedAt = data.startedAt !== undefined ? new Float64Array(data.startedAt) : null;

const MARKERS = ['CRASH-ME', 'HANG-ME', 'CRASH-BETWEEN', 'HANG-BETWEEN'] as const;

function markerOf(bytes: Uint8Array): (typeof MARKERS)[number] | null {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  for (const m of MARKERS) if (text.includes(m)) return m;
  return null;
}

export default function faultyRun(input: WireBatch | ParseTask | WireTask): Uint8Array {
  if (!('batch' in input)) return run(input);
  for (let i = 0; i < input.pages.length; i++) {
    const body = input.buf.subarray(input.offsets[i]!, input.offsets[i]! + input.pages[i]!.lens[0]);
    const m = markerOf(body);
    if (m === null) continue;
    if (i > 0) {
      // the pages before it, by the real worker (their answers die with this worker)
      run({ batch: 1, seqs: input.seqs.slice(0, i), pages: input.pages.slice(0, i), offsets: input.offsets.slice(0, i), buf: input.buf.subarray(0, input.offsets[i]!) });
    }
    if (m === 'CRASH-BETWEEN') process.exit(70);
    if (m === 'HANG-BETWEEN') for (;;) { /* the supervisor must find this batch stuck */ }
    const seq = input.seqs[i]!;
    if (progress !== null) {
      startedAt![seq & PROGRESS_MASK] = Date.now();
      Atomics.store(progress, seq & PROGRESS_MASK, seq);
    }
    if (m === 'CRASH-ME') process.exit(70);
    for (;;) { /* HANG-ME: the supervisor must terminate and replace this worker */ }
  }
  return run(input);
}
