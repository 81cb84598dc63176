/**
 * Small binary helpers shared by the record formats: unsigned LEB128 varints (lengths, at most
 * 2^32-1 here) written into / read from plain Uint8Arrays without allocation.
 */

/** Bytes needed for `v` as a varint (v < 2^32). */
export function varintSize(v: number): number {
  if (v < 0x80) return 1;
  if (v < 0x4000) return 2;
  if (v < 0x200000) return 3;
  if (v < 0x10000000) return 4;
  return 5;
}

/** Writes `v` at `buf[pos]`, returns the position after it. */
export function writeVarint(buf: Uint8Array, pos: number, v: number): number {
  while (v >= 0x80) {
    buf[pos++] = (v & 0x7f) | 0x80;
    v = Math.floor(v / 128);
  }
  buf[pos++] = v;
  return pos;
}

/**
 * Reads a varint at `buf[pos]`. Returns the value and stores the next position in `out[0]`
 * (an out-parameter keeps the hot path free of tuple allocations). Returns -1 when the varint runs
 * past `end` or is longer than 5 bytes (corrupt input).
 */
export function readVarint(buf: Uint8Array, pos: number, end: number, out: Int32Array | number[]): number {
  let v = 0;
  let mul = 1;
  for (let i = 0; i < 5; i++) {
    if (pos >= end) return -1;
    const b = buf[pos++]!;
    v += (b & 0x7f) * mul;
    if (b < 0x80) {
      out[0] = pos;
      return v;
    }
    mul *= 128;
  }
  return -1;
}

/** Compares two 64-bit keys given as (hi, lo) uint32 pairs: negative, 0 or positive. */
export function compareKey(ah: number, al: number, bh: number, bl: number): number {
  return ah !== bh ? (ah < bh ? -1 : 1) : al !== bl ? (al < bl ? -1 : 1) : 0;
}

/**
 * Writes a 9-byte head at buf[p]: one byte, then a 64-bit key as hi and lo, each u32
 * little-endian. DRUM's bucket entries (op byte + key) and key-run blocks (gap width + first key)
 * both start this way.
 */
export function putByteKey(buf: Uint8Array, p: number, byte: number, hi: number, lo: number): void {
  buf[p] = byte;
  buf[p + 1] = hi;
  buf[p + 2] = hi >>> 8;
  buf[p + 3] = hi >>> 16;
  buf[p + 4] = hi >>> 24;
  buf[p + 5] = lo;
  buf[p + 6] = lo >>> 8;
  buf[p + 7] = lo >>> 16;
  buf[p + 8] = lo >>> 24;
}
