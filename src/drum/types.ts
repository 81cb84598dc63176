/**
 * DRUM's public types: the tuple operations, the results a merge delivers (as objects or as one
 * struct-of-arrays chunk), the options of Drum.open and the statistics of Drum.stats
 * (thesis IV.3; the cost model behind the statistics is IV.4, model.ts).
 */
import type { Compression, IoCounters } from '../disk/index.js';
import type { BucketPlan } from './model.js';

export type DrumOp = 'check' | 'update' | 'checkUpdate';

export interface DrumResult {
  op: DrumOp;
  keyHi: number;
  keyLo: number;
  /** The key was not in the repository when this tuple was applied. */
  unique: boolean;
  /** The value stored before this tuple was applied (null when unique). */
  value: Uint8Array | null;
  aux: Uint8Array | null;
}

/**
 * Results i = 0 … count−1 of one delivery chunk, as parallel arrays (DrumOptions.onResultChunk).
 * The arrays may be longer than count; entries past count are stale.
 */
export interface DrumResultChunk {
  count: number;
  /** 0 = check, 1 = update, 2 = checkUpdate. */
  readonly op: Uint8Array;
  readonly keyHi: Uint32Array;
  readonly keyLo: Uint32Array;
  /** 1 = the key was not in the repository when this tuple was applied. */
  readonly unique: Uint8Array;
  /** Result i's aux is auxBytes[auxStart[i], auxStart[i + 1]); auxNull[i] = 1 when it had none. */
  auxBytes: Uint8Array;
  readonly auxStart: Uint32Array;
  readonly auxNull: Uint8Array;
  /** Repositories with values: the value stored before the tuple (null when unique). Key-only
   *  repositories: null (a duplicate's stored value is empty). */
  readonly values: (Uint8Array | null)[] | null;
}

export interface DrumOptions {
  /** R: RAM for write buffers, one loaded bucket and the cache (bytes). @default 64 MiB */
  ramBytes?: number;
  /** D: disk for the bucket files (bytes). @default D_opt(R) (Theorem 2, eq. 17) */
  diskBytes?: number;
  /** k, overriding the model (rounded to a power of two, 1..4096). Fixed at creation. */
  buckets?: number;
  /** M: write buffer per bucket file (bytes). @default 262144 (the thesis' 256 KB) */
  bufferBytes?: number;
  /** r, overriding the model: a merge is due when a bucket's key/value file reaches this size. */
  bucketBytes?: number;
  /** Fixed value size in bytes (0 = key only, e.g. URLseen) or 'variable'. Fixed at creation. @default 0 */
  valueBytes?: number | 'variable';
  /** Merges an update into a stored value. @default overwrite (returns incoming) */
  merge?: (old: Uint8Array, incoming: Uint8Array) => Uint8Array;
  /**
   * A key keeps the value it was first stored with: an update of a stored key changes nothing
   * (ContentSeen: a duplicate's revisit record refers to the first capture, not to the last
   * copy). Overrides `merge`; unlike it, crosses to a DRUM thread. @default false
   */
  keepFirst?: boolean;
  /**
   * Repositories with values only: Z_i is settled into the bucket's deep part once it holds this
   * many keys, so that a merge passes over at most about this many keys of Z and looks the others
   * up by one block read each (deep.ts: for a repository merged on time, not when r is reached).
   * A deep key updated to a new value is held in Z_i too until the next settling (counted once:
   * BucketState.zShadows). 0 = no deep part. @default 0
   */
  settleKeys?: number;
  /** CLOCK cache entries in front of check+update (thesis V.2); 0 = off. Key-only repositories
   *  (valueBytes 0) with deliver 'unique' or 'none' only: a hit is a duplicate nobody needs to see. */
  cacheEntries?: number;
  /** Block compression of bucket and cache files. @default 'none' */
  compression?: Compression;
  /** Average aux bytes per tuple, for the model. @default 110 (the thesis' b) */
  auxBytesHint?: number;
  /** Average value bytes for 'variable' values, for the model. @default 32 */
  valueBytesHint?: number;
  /** Which results to hand to onResults. @default 'all' */
  deliver?: 'all' | 'unique' | 'none';
  /** Results per onResults call (bounds RAM during delivery). @default 16384 */
  resultChunk?: number;
  /** Shared I/O counters. @default a fresh IoCounters */
  io?: IoCounters;
  /**
   * Results of a bucket merge, in arrival order, in chunks. The returned promise must resolve only
   * when the consumer has durably committed what it needs; DRUM commits Z only after that.
   * Exactly one of onResults and onResultChunk must be given.
   */
  onResults?: (batch: DrumResult[]) => Promise<void> | void;
  /**
   * The same results as onResults, as one reused struct-of-arrays chunk instead of an object per
   * result (no allocation per result: at 8.7 M unique results per round that was most of the
   * delivery's CPU, docs/drum.md "Delivery in chunks"). The chunk and its arrays are overwritten by
   * the next call: read or copy what you need before the returned promise resolves.
   */
  onResultChunk?: (chunk: DrumResultChunk) => Promise<void> | void;
  /**
   * Called once per bucket merge after its last onResults call (also when it delivered nothing)
   * and before DRUM commits Z. A consumer may acknowledge chunks at once and make them durable
   * here instead — one commit (fsync) per bucket rather than per chunk. A throw commits nothing,
   * like a failing onResults. `bucket`: the bucket about to be committed (0 … k−1).
   */
  beforeCommit?: (bucket: number) => Promise<void> | void;
}

export interface DrumStats {
  /** Keys in the disk cache Z. */
  keys: number;
  /** Keys in Z when this instance was opened (the U of the model). */
  keysAtOpen: number;
  /** Tuples accepted (including cache hits) and tuples merged since open. */
  tuples: number;
  merged: number;
  uniques: number;
  /** Bucket merges (one per non-empty bucket per round) and merge rounds since open. */
  merges: number;
  rounds: number;
  io: IoCounters;
  /** Measured (bytes read + written by DRUM) / (b · n) since open, b = mean aux bytes, n = merged. */
  alpha: number;
  /** drumAlpha() (generalised eq. 14) for the measured n, U, b, p and bucket bytes per round. */
  predictedAlpha: number;
  /** Bytes per key of Z on disk now (8 + value bytes for whole records; ~5 for key-only Z at
   *  U = 10^9, delta-coded), and predictedAlpha evaluated with that Z entry size instead. */
  zBytesPerKey: number;
  predictedAlphaZMeasured: number;
  k: number;
  r: number;
  M: number;
  plan: BucketPlan & { R: number; D: number; H: number; P: number };
  cacheHitRate?: number;
  cacheHits?: number;
  /** CPU time (user + system, ms, whole process) spent in each merge phase since open: reading the
   *  bucket files, sorting, the pass over Z, delivering results (including the consumer's
   *  onResults/beforeCommit), and committing (manifest, fsyncs, deleting old files). */
  mergeCpuMs: { load: number; sort: number; zPass: number; deliver: number; commit: number };
  /** The system-CPU part of mergeCpuMs (page-cache work: reads, writes, fsync, unlink). */
  mergeSysMs: { load: number; sort: number; zPass: number; deliver: number; commit: number };
  /** persist() calls since open. */
  persists: number;
  /** Repositories with a deep part (settleKeys): settlings since open, their CPU (ms), and the keys in deep parts. */
  settlings?: number;
  settleCpuMs?: number;
  deepKeys?: number;
}
