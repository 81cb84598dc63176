/**
 * A page worker for supervisor tests: the real one (src/threads/page/page-worker-serve.ts with
 * parse-worker.ts's parser), except on pages whose URL contains a marker —
 *   CRASH-ME  the worker exits while that page is being parsed (as an out-of-memory exit does)
 *   HANG-ME   the worker spins forever while that page is being parsed
 *   SLOW-ME   the parse blocks this thread for 500 ms first (the answers of pages fetched meanwhile
 *             wait in the kernel, and are then read in one turn: they queue for their parse together)
 * "Being parsed" is marked in the pool's shared state exactly as for the real parser (serve does it),
 * so the pool sees what it would see if the parser itself crashed or hung on that page.
 */
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { serve } from '../../src/threads/page/page-worker-serve.js';
import { parse, type ParseTask } from '../../src/threads/page/parse-worker.js';
import type { PageWorkerData } from '../../src/threads/page/page-worker-protocol.js';

function faulty(t: ParseTask): Uint8Array {
  if (t.url.includes('CRASH-ME')) process.exit(3);
  if (t.url.includes('HANG-ME')) for (;;);
  if (t.url.includes('SLOW-ME')) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500);
  return parse(t);
}

if (!isMainThread && parentPort !== null) serve(parentPort, workerData as PageWorkerData, faulty);

export default serve;
