/**
 * src/util — small leaves the rooms build on: the SHA-1 base32 content digest (digest.ts), a map
 * keyed by 64-bit hashes held as pairs of 32-bit words (u64-map.ts), a fixed-capacity table from
 * such keys to slots (key-slot-table.ts: DRUM's CLOCK cache, the cache bench's LRU), a sleep that a kick cuts
 * short (wakeup.ts, the crawl's scheduler loop), and the authority a robots.txt governs
 * (authority.ts: scheme://host[:port], RFC 9309 §2.3).
 */
export { base32Encode, sha1Base32 } from './digest.js';
export { U64Map } from './u64-map.js';
export { KeySlotTable } from './key-slot-table.js';
export { Wakeup } from './wakeup.js';
export { robotsAuthorityOf } from './authority.js';
