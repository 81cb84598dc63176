/**
 * src/threads — what every worker thread shares: the entry file of a worker module
 * (worker-file.ts), the thread roles the benches attribute CPU and GC to (thread-role.ts), and the
 * compact binary formats that cross between threads instead of object graphs (STYLE; thesis
 * III.2: parse workers return compact buffers): the link table and WARC group of a page
 * (links-codec.ts), a growable byte buffer. The threads themselves are the rooms below:
 * page/ (page and parse workers), drum/ (the DRUM thread), archive/ (the WARC writer's thread).
 */
export { GrowableBytes } from './growable-bytes.js';
export { LinkTable, encodeLinks, groupMetaSize, readGroupMeta, splitParseOutput, tableSizeAscii, writeGroupMeta, writeLinkTableAscii, type DroppedLinks, type EncodedGroupLike, type LinkEntry, type PageInfo } from './links-codec.js';
export { THREAD_ROLE_CHANNEL, announceThreadRole, watchGc, type ThreadRoleAnnouncement } from './thread-role.js';
export { workerFile, workerFileFor } from './worker-file.js';
