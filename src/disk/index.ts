/**
 * src/disk — disk primitives shared by DRUM (src/drum) and the frontier's queues. Leaf module: it
 * imports no domain code. Everything is written sequentially in large checksummed blocks.
 *
 *   block.ts       the block format (magic, counts, CRC-32, optional zstd), BlockWriter/BlockReader
 *   disk-queue.ts  DiskQueue: FIFO of byte records, at-least-once, durable cursor
 *   sorted-file.ts sorted-run files of (64-bit key, value) records (DRUM's disk cache Z)
 *   atomic.ts      crash-safe replacement of small files (temp, fsync, rename, fsync dir)
 *   sealed.ts      the CRC-32 trailer of small state files, and the error of a damaged one
 *   io-counters.ts bytes / operations read and written per file kind
 */
/*
 * DiskQueue API: open(dir, { blockBytes, compression, segmentBytes,
 * io }); push; pushMany; shift(max) (+ shiftSync); length; commit() (+ commitSync); close({ commit
 * = true }) (commit false: release the handles without writing or committing, as a crash leaves
 * them); io. Records returned by shift() may be views into a read block: copy them if you keep
 * many for long.
 */
export { DiskQueue, type DiskQueueOptions } from './disk-queue.js';
export { IoCounters, type IoKindCounters } from './io-counters.js';
export {
  BlockReader,
  BlockWriter,
  frameBlock,
  scanValidPrefix,
  BLOCK_HEADER_BYTES,
  type Compression,
  type DecodedBlock,
} from './block.js';
export { writeFileAtomic, writeFileAtomicSync, fsyncDir } from './atomic.js';
export { seal, unseal, damagedFile, SEAL_BYTES } from './sealed.js';
export { varintSize, writeVarint, readVarint, compareKey, putByteKey } from './codec.js';
export { DiskErrorCode } from './errors.js';
export { SortedRunReader, SortedRunWriter } from './sorted-file.js';
export { CRAWL_STATE_LINK, checkOwnTree, checkOwnDir, mkdirOwn, openOwnFile, openOwnFileSync, createOwnFileSync } from './safe-fs.js';
