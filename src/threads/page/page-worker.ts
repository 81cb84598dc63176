/**
 * The page worker thread's entry (page-worker-pool.ts starts it): serves the pool on parentPort
 * (page-worker-serve.ts has the worker's work: fetch, parse, encode).
 */
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { serve } from './page-worker-serve.js';
import type { PageWorkerData } from './page-worker-protocol.js';

if (!isMainThread && parentPort !== null) serve(parentPort, workerData as PageWorkerData);

export default serve;
