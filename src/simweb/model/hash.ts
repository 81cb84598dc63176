/**
 * Stateless integer hashing for the generator. Every random choice simweb makes is a pure function
 * of (seed, a few integers), so a page, a robots.txt or a DNS answer can be produced on demand in
 * O(1) without materializing the web and without any global RNG state (this is what keeps memory
 * flat for a web of 10^9 pages and output byte-identical across runs).
 *
 * `mix32` is the "lowbias32" finalizer (Chris Wellons' hash-prospector), a 32-bit avalanche mixer
 * in the splitmix/murmur3-fmix family: two multiplies, three xor-shifts, no allocation.
 */

/** Avalanche a 32-bit integer (lowbias32). Result is an unsigned 32-bit integer. */
export function mix32(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  x ^= x >>> 16;
  return x >>> 0;
}

/** Hash of (seed, a). */
export function h2(seed: number, a: number): number {
  return mix32((mix32(seed ^ 0x5bd1e995) + Math.imul(a | 0, 0x9e3779b1)) | 0);
}

/** Hash of (seed, a, b). */
export function h3(seed: number, a: number, b: number): number {
  return mix32((h2(seed, a) ^ Math.imul(b | 0, 0x85ebca6b)) + 0x632be5ab);
}

/** Hash of (seed, a, b, c). */
export function h4(seed: number, a: number, b: number, c: number): number {
  return mix32((h3(seed, a, b) ^ Math.imul(c | 0, 0xc2b2ae35)) + 0x27d4eb2f);
}

/** FNV-1a over a string's UTF-16 code units, then mixed: names → 32-bit keys. */
export function hashString(seed: number, s: string): number {
  let x = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < s.length; i++) {
    x ^= s.charCodeAt(i);
    x = Math.imul(x, 0x01000193);
  }
  return mix32(x);
}

/** Map a 32-bit hash to [0, 1). */
export function unit(h: number): number {
  return h / 4294967296;
}

/** Map a 32-bit hash to an integer in [0, n) (n ≤ 2^32). */
export function below(h: number, n: number): number {
  return Math.floor(unit(h) * n);
}

/**
 * Inverse-CDF sample of a continuous power law (Zipf-like, exponent s) over ranks 1..n, returned
 * 0-based. P(rank r) ∝ r^-s; s = 1 is handled by its logarithmic limit. O(1), no tables.
 */
export function zipf(u: number, n: number, s: number): number {
  let r: number;
  if (Math.abs(s - 1) < 1e-9) {
    r = Math.pow(n + 1, u);
  } else {
    const e = 1 - s;
    r = Math.pow(1 + u * (Math.pow(n + 1, e) - 1), 1 / e);
  }
  const k = Math.floor(r) - 1;
  return k < 0 ? 0 : k >= n ? n - 1 : k;
}

/**
 * A seeded sequential PRNG (mulberry32) for tests, benches and simulations that need a reproducible
 * stream rather than simweb's stateless per-item hashes. Returns floats in [0, 1).
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
