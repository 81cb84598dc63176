/** Error codes raised by src/drum/ (docs/drum.md lists them with src/disk's CRAWL_DISK_*). */
export const DrumErrorCode = {
  /** An option is out of range or inconsistent (the message names it). */
  OPTIONS: 'CRAWL_DRUM_OPTIONS',
  /** A value's length differs from the repository's fixed valueBytes (input or merge() output). */
  VALUE_SIZE: 'CRAWL_DRUM_VALUE_SIZE',
  /** The repository manifest is missing pieces, unreadable or from another configuration. */
  MANIFEST: 'CRAWL_DRUM_MANIFEST',
  /** A bucket's key/value file and aux file disagree (block counts) in a way a crash cannot cause. */
  BUCKET_MISMATCH: 'CRAWL_DRUM_BUCKET_MISMATCH',
  /** The disk cache Z is out of order, or does not match the key count in the manifest. */
  CACHE_CORRUPT: 'CRAWL_DRUM_CACHE_CORRUPT',
  /** The repository was written by an older drumcrawl whose on-disk format this one cannot read. */
  FORMAT: 'CRAWL_DRUM_FORMAT',
  /** Used after close(), or after a failed merge left the instance unusable (reopen it). */
  CLOSED: 'CRAWL_DRUM_CLOSED',
} as const;
