/**
 * Small state files sealed with a CRC-32, and the error a damaged state file gives.
 *
 * The crawler's small binary state files (admits.bin, pending.bin, STAR's histogram.bin) are
 * replaced whole by rename, so a crash never tears them; what can still happen to them is damage
 * on disk or a hand edit (truncation, flipped bits). Each ends with an 8-byte trailer — u32 LE
 * magic "DCS1", u32 LE CRC-32 of everything before it — so damage is found when the file is read,
 * and refused with CRAWL_CHECKPOINT_CORRUPT naming the file and saying what can be recovered
 * (docs/operations.md, "A damaged state"), instead of being read as data.
 *
 * Files written before the trailer existed have none: `unseal` then returns `sealed: false` and
 * the reader judges the bytes by their own shape (a length that must be a multiple of a record
 * size, a count that must use up the file), which still finds truncation and most length damage.
 * A flipped bit in the magic makes a sealed file look unsealed: its body plus the trailer then
 * fails the same shape check (each file's trailer length breaks its own shape) or, for admits.bin,
 * reads as one extra 8-byte key, which changes nothing (admit-log.ts).
 */
import { crc32 } from 'node:zlib';
import { CrawlError } from '../errors.js';

const MAGIC = 0x31534344; // "DCS1"
export const SEAL_BYTES = 8;

/** `body` followed by its trailer. */
export function seal(body: Uint8Array): Uint8Array {
  const out = new Uint8Array(body.byteLength + SEAL_BYTES);
  out.set(body);
  const dv = new DataView(out.buffer);
  dv.setUint32(body.byteLength, MAGIC, true);
  dv.setUint32(body.byteLength + 4, crc32(body) >>> 0, true);
  return out;
}

/**
 * The body of a sealed file (`sealed: true`), or the bytes as they are when they end without the
 * trailer's magic (`sealed: false`: written before the trailer existed, or damaged there — the
 * caller checks the shape). A trailer whose CRC does not match is `bad` (the body is damaged).
 */
export function unseal(buf: Uint8Array): { body: Uint8Array; sealed: boolean; bad: boolean } {
  if (buf.byteLength >= SEAL_BYTES) {
    const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    const at = buf.byteLength - SEAL_BYTES;
    if (dv.getUint32(at, true) === MAGIC) {
      const body = buf.subarray(0, at);
      return { body, sealed: true, bad: (crc32(body) >>> 0) !== dv.getUint32(at + 4, true) };
    }
  }
  return { body: buf, sealed: false, bad: false };
}

/**
 * The error of a damaged state file: CRAWL_CHECKPOINT_CORRUPT naming `file`, saying what is wrong
 * with it and what can be recovered (`recover`: what to do, and what that costs).
 */
export function damagedFile(file: string, what: string, recover: string, cause?: unknown): CrawlError {
  return new CrawlError('CRAWL_CHECKPOINT_CORRUPT', `${file} is damaged (${what}); nothing was resumed. ${recover}`, cause === undefined ? undefined : { cause });
}
