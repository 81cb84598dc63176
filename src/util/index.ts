/**
 * src/util — small leaves shared by several rooms: the SHA-1 base32 content digest (digest.ts) and
 * a map keyed by 64-bit hashes held as pairs of 32-bit words (u64-map.ts).
 */
export { base32Encode, sha1Base32 } from './digest.js';
export { U64Map } from './u64-map.js';
