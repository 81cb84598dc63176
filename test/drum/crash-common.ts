/**
 * Shared by the crash test and its child process: the deterministic tuple stream a child submits.
 * Epoch e of slot s uses its own key pool, so that the parent can tell epochs apart when it checks
 * the repository after several kills.
 */
export interface CrashChildArgs {
  dir: string;
  sink: string; // unique results the child's consumer committed: 8-byte (hi, lo) records
  markers: string; // "flushed up to tuple j" records: 4-byte j
  seed: number;
  pool: number;
  k: number;
  bufferBytes: number;
  bucketBytes: number;
  maxTuples: number;
  flushEvery: number;
}

import { mulberry32 } from '../../src/simweb/hash.js';

export { mulberry32 };

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
