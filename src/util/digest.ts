/**
 * src/util/digest.ts — a leaf module (imports only node:crypto) below every folder that needs a
 * content digest: src/html re-exports it for the parse side (ContentSeen keys on payloadDigest)
 * and src/store uses it for WARC record digests, with no import between those two folders.
 *
 * Content digests as WARC uses them (WARC/1.1 §5.8–5.9, and what Heritrix / wget / warcio write):
 * "sha1:" + RFC 4648 base32 (A–Z2–7) of the SHA-1. 20 bytes = 160 bits = exactly 32 base32
 * characters, so there is never padding. Exact-duplicate detection (ContentSeen, revisit records)
 * keys on this string.
 */
import * as crypto from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 §6 base32, upper case, with '=' padding when the input is not a multiple of 5 bytes. */
export function base32Encode(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let acc = 0;
  for (let i = 0; i < bytes.length; i++) {
    acc = ((acc & 0xff) << 8) | bytes[i]!; // keep at most 12 live bits (8 new + < 5 left over)
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(acc >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(acc << (5 - bits)) & 31];
  while (out.length % 8 !== 0) out += '=';
  return out;
}

/**
 * Base32 of the 20 bytes written as 40 hex digits (what the digest functions return as a string:
 * no Buffer, i.e. no ArrayBuffer for the GC's sweeper, per digest).
 */
export function base32FromHex(hex: string): string {
  // Each 5 hex digits are 20 bits = 4 base32 characters: 8 groups, integer arithmetic only, and
  // one string made from the 32 codes at the end.
  const out = b32Codes;
  for (let g = 0; g < 8; g++) {
    let v = 0;
    for (let j = g * 5; j < g * 5 + 5; j++) {
      const c = hex.charCodeAt(j);
      v = (v << 4) | (c <= 57 ? c - 48 : (c | 32) - 87);
    }
    out[g * 4] = ALPHABET_CODES[v >>> 15]!;
    out[g * 4 + 1] = ALPHABET_CODES[(v >>> 10) & 31]!;
    out[g * 4 + 2] = ALPHABET_CODES[(v >>> 5) & 31]!;
    out[g * 4 + 3] = ALPHABET_CODES[v & 31]!;
  }
  return String.fromCharCode.apply(null, out);
}
const b32Codes: number[] = new Array<number>(32).fill(0);
const ALPHABET_CODES = Array.from(ALPHABET, (c) => c.charCodeAt(0));

// `crypto.hash` (Node ≥ 20.12): one call, no Hash object — for a 560-byte record 0.75 µs against
// 2.96 µs for createHash().update().digest() (measured in the parse worker). Older Node: createHash.
const oneShot = (crypto as { hash?: (alg: string, data: Uint8Array, enc: 'hex') => string }).hash;

/** Base32 of the SHA-1 of `bytes` (may be called with several chunks). */
export function sha1Base32(...chunks: Uint8Array[]): string {
  if (chunks.length === 1 && oneShot !== undefined) return base32FromHex(oneShot('sha1', chunks[0]!, 'hex'));
  const h = crypto.createHash('sha1');
  for (const c of chunks) h.update(c);
  return base32FromHex(h.digest('hex'));
}

/** 'sha1:BASE32' — the WARC-Payload-Digest of an HTTP entity body (as transferred). */
export function payloadDigest(bytes: Uint8Array): string {
  return 'sha1:' + sha1Base32(bytes);
}
