/**
 * Content digests as WARC uses them (WARC/1.1 §5.8–5.9, and what Heritrix / wget / warcio write):
 * "sha1:" + RFC 4648 base32 (A–Z2–7) of the SHA-1. 20 bytes = 160 bits = exactly 32 base32
 * characters, so there is never padding. Exact-duplicate detection (ContentSeen, revisit records)
 * keys on this string.
 */
import { createHash } from 'node:crypto';

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

/** Base32 of the SHA-1 of `bytes` (may be called with several chunks). */
export function sha1Base32(...chunks: Uint8Array[]): string {
  const h = createHash('sha1');
  for (const c of chunks) h.update(c);
  return base32Encode(h.digest());
}

/** 'sha1:BASE32' — the WARC-Payload-Digest of an HTTP entity body (as transferred). */
export function payloadDigest(bytes: Uint8Array): string {
  return 'sha1:' + sha1Base32(bytes);
}
