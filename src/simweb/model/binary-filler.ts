/**
 * Binary filler for simweb's non-text bodies (images, PDF streams): seeded pseudo-random bytes over
 * all 256 values — NUL, CR, LF, bytes ≥ 0x80 — so a crawler that stores or digests a body as text
 * (or cuts it at a NUL or CRLF CRLF) gets a different payload. Deterministic: the same seed gives
 * the same bytes (xorshift32). Made once per renderer (1 MiB), sliced like the text filler.
 */
export const BINARY_FILLER_BYTES = 1 << 20;

export function makeBinaryFiller(seed: number, n = BINARY_FILLER_BYTES): Buffer {
  const b = Buffer.allocUnsafe(n);
  let x = (seed ^ 0x9e3779b9) >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    b[i] = x & 0xff;
  }
  return b;
}
