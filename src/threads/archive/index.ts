/**
 * src/threads/archive — the WARC writer's thread: ArchiveThread (archive-thread.ts) sends pages'
 * pre-encoded WARC groups (packed by archive-pack.ts) and whole exchanges to the writer running in
 * archive-host.ts, with back-pressure on the bytes in flight; archive-hooks.ts archives robots.txt
 * and DNS answers as captures; archive-zstd.ts chooses the zstd dictionary options.
 */
export { archiveRobots, dnsArchiver } from './archive-hooks.js';
export { ArchiveThread } from './archive-thread.js';
export { TRAIN_DICT_BYTES, TRAIN_SAMPLE_BYTES, zstdArchiveOptions } from './archive-zstd.js';
