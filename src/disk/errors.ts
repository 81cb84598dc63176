/**
 * Error codes raised by src/disk/. Match on `code`, never on the message (docs/drum.md lists them).
 */
export const DiskErrorCode = {
  /** A block's CRC-32 does not match its bytes: the file was corrupted after it was written. */
  CHECKSUM: 'CRAWL_DISK_CHECKSUM',
  /** A file ends inside a block, or is shorter than its manifest says it must be. */
  TRUNCATED: 'CRAWL_DISK_TRUNCATED',
  /** Not a drumcrawl block (bad magic / unknown version / impossible lengths), or a bad manifest. */
  FORMAT: 'CRAWL_DISK_FORMAT',
  /** The structure was used after close(). */
  CLOSED: 'CRAWL_DISK_CLOSED',
  /** An option is out of range (message names it). */
  OPTIONS: 'CRAWL_DISK_OPTIONS',
} as const;
