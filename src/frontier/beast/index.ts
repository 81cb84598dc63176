/**
 * src/frontier/beast — BEAST (thesis VII.2): never discards, delays. Queues Q1..Qj and QF on disk
 * (log-queue.ts, disk-store.ts); a URL of a PLD past its budget goes ceil(P/B) queues ahead, what
 * does not fit before Qj to QF, re-spread over 2j queues when Qj is done (beast.ts; the queues and their manifest
 * beast-queues.ts, the re-spread respread.ts, the checkpoint beast-checkpoint.ts). Disk bytes per
 * admitted URL stay bounded as the crawl grows (Theorem 7).
 */
export { Beast, type BeastOptions, type BeastStats } from './beast.js';
export { openDiskQueueStore, type DiskStoreOptions } from './disk-store.js';
export { FileBeastStore, MemoryBeastStore, MemoryBeastQueue, LogQueue, type BeastStore, type BeastQueue, type QueueState } from './log-queue.js';
