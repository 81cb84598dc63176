/**
 * src/drum — DRUM, the disk repository with update management (thesis IV.3–IV.4), its cost model
 * (Theorem 2) and the CLOCK cache (thesis V.2). docs/drum.md describes formats, the merge, the
 * crash-safety argument and how to choose R and D.
 *
 * API (docs/drum.md, "API"), including DrumOptions.deliver ('all' | 'unique' | 'none'),
 * resultChunk, auxBytesHint, valueBytesHint, io; Drum.persist() (durable without a merge); Drum.close({ flush: false }) (release without merging);
 * DrumResult.value is the value stored BEFORE the tuple was applied (also for update).
 * onResults may be called several times per merge (chunks of at most resultChunk results — fewer when
 * their aux bytes fill the 2 MiB chunk arena —, in arrival order within a bucket; buckets in
 * key-prefix order). DrumOptions.onResultChunk: the same
 * results as one reused struct-of-arrays DrumResultChunk per call (give exactly one of the two).
 */
export { Drum, type DrumOp, type DrumOptions, type DrumResult, type DrumResultChunk, type DrumStats } from './drum.js';
export { DrumErrorCode } from './errors.js';
export { ClockCache } from './clock-cache.js';
export { radixSortKeys, type SortedKeys } from './radix-sort.js';
export {
  THESIS,
  theorem2Alpha,
  dOpt,
  lambda,
  planBuckets,
  bucketBytesFor,
  drumAlpha,
  type Theorem2Params,
  type BucketPlan,
  type BucketPlanInput,
  type DrumAlphaInput,
} from './model.js';
