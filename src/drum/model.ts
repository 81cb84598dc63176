/**
 * The DRUM cost model (thesis IV.4, Theorem 2) — the one DRUM itself uses to choose k and r.
 *
 * Symbols (thesis names): n tuples checked, U keys already in the disk cache Z, b bytes of aux per
 * tuple (URL text), p fraction of unique keys, H bytes per hash, P bytes of RAM overhead per entry
 * when a bucket is loaded (a pointer in the thesis), M write-buffer bytes per open file, R RAM
 * and D disk for the buckets, Δ minimum bucket size for efficient reads.
 *
 *   r = (R − 2Mk)·H/(H+P)                                (8)  bucket size that fits in R
 *   A = (H+P)·D/(H+b)
 *   R² < 8MA  → RAM-bound: k0 = R/(4M)                      (k maximising k(R−2Mk))
 *   R² ≥ 8MA  → disk-bound: k1 = (R − √(R² − 8MA))/(4M)  (12) (the smaller root: fewer files)
 *   ω(n,R)/(bn) = α = (2UH + pHn)·H/(b·k·r) + 2 + p + 2H/b  (14)
 *   D_opt = R²(H+b)/(8M(H+P))                            (17)
 *
 * drumAlpha() generalises (14) to this implementation's byte sizes (Z entries of Hz bytes, bucket
 * entries of Hb bytes, a few framing bytes per aux record) so that the prediction is compared with
 * the I/O DRUM actually counts, file by file.
 */

/** The thesis' own defaults (IV.4): M = 256 KB, Δ = 32 MB, H = 8, P = 4. */
export const THESIS = { M: 256 * 1024, Delta: 32 * 1024 * 1024, H: 8, P: 4 } as const;

export interface Theorem2Params {
  n: number;
  R: number;
  D: number;
  U: number;
  b: number;
  p: number;
  H?: number;
  P?: number;
  M?: number;
}

/** Λ = 8MD(H+P)/(H+b): R² < Λ is the RAM-bound case of (7). */
export function lambda(D: number, b: number, H: number = THESIS.H, P: number = THESIS.P, M: number = THESIS.M): number {
  return (8 * M * D * (H + P)) / (H + b);
}

/** Theorem 2, equation (7), exactly as printed (reproduces Tables II and III). */
export function theorem2Alpha(x: Theorem2Params): number {
  const H = x.H ?? THESIS.H;
  const P = x.P ?? THESIS.P;
  const M = x.M ?? THESIS.M;
  const tail = 2 + x.p + (2 * H) / x.b;
  const grow = 2 * x.U * H + x.p * H * x.n;
  if (x.R * x.R < lambda(x.D, x.b, H, P, M)) return (8 * M * (H + P) * grow) / (x.b * x.R * x.R) + tail;
  return ((H + x.b) * grow) / (x.b * x.D) + tail;
}

/** Equation (17): the disk size that RAM R can just fill with buckets. */
export function dOpt(R: number, b: number, H: number = THESIS.H, P: number = THESIS.P, M: number = THESIS.M): number {
  return (R * R * (H + b)) / (8 * M * (H + P));
}

export interface BucketPlanInput {
  /** RAM for the buckets' write buffers and one loaded bucket (bytes). */
  R: number;
  /** Disk for the buckets (key/value and aux files, bytes). */
  D: number;
  /** Average aux bytes per tuple. */
  b: number;
  /** Bytes per bucket entry on disk (the thesis' H). */
  H: number;
  /** RAM bytes per loaded entry beyond H (the thesis' P). */
  P: number;
  /** Write buffer per open file. */
  M: number;
}

export interface BucketPlan {
  /** Number of buckets as the model gives it (real). */
  kModel: number;
  /** Bucket size in bytes for kModel. */
  rModel: number;
  regime: 'ram-bound' | 'disk-bound';
  /** D_opt for these R, b, H, P, M. */
  Dopt: number;
}

/** Proof of Theorem 2, (8)–(12): k and r for a RAM budget R and disk budget D. */
export function planBuckets(x: BucketPlanInput): BucketPlan {
  const A = ((x.H + x.P) * x.D) / (x.H + x.b);
  const disc = x.R * x.R - 8 * x.M * A;
  let k: number;
  let regime: BucketPlan['regime'];
  if (disc < 0) {
    k = x.R / (4 * x.M);
    regime = 'ram-bound';
  } else {
    k = (x.R - Math.sqrt(disc)) / (4 * x.M);
    regime = 'disk-bound';
  }
  const r = bucketBytesFor(x.R, k, x.M, x.H, x.P);
  return { kModel: k, rModel: r, regime, Dopt: dOpt(x.R, x.b, x.H, x.P, x.M) };
}

/** Equation (8): r = (R − 2Mk)·H/(H+P). */
export function bucketBytesFor(R: number, k: number, M: number, H: number, P: number): number {
  return ((R - 2 * M * k) * H) / (H + P);
}

export interface DrumAlphaInput {
  /** Tuples passed through DRUM. */
  n: number;
  /** Keys in Z before. */
  U: number;
  /** Aux bytes per tuple (the thesis' b, the denominator of alpha). */
  b: number;
  /** Fraction of unique tuples. */
  p: number;
  /** Buckets and bucket bytes per merge round (kr = bucket bytes of all buckets at a merge). */
  k: number;
  r: number;
  /** Bytes per Z entry (key + value). @default 8 */
  Hz?: number;
  /** Bytes per bucket entry (key + op + value). @default 8 */
  Hb?: number;
  /** Extra framing bytes per aux record on disk. @default 0 */
  auxOverhead?: number;
  /** Bytes per unique aux record appended to the next queue (the thesis' p·b term). @default b */
  queueBytes?: number;
}

/**
 * Equation (14) with this implementation's sizes: per merge round Z is read and written once
 * (2f, f growing by p·Hz per tuple), each tuple's bucket entry and aux are written and read once,
 * and unique aux is appended to the next queue.
 */
export function drumAlpha(x: DrumAlphaInput): number {
  const Hz = x.Hz ?? 8;
  const Hb = x.Hb ?? 8;
  const aux = x.b + (x.auxOverhead ?? 0);
  const q = x.queueBytes ?? x.b;
  // nHb/(kr) merge rounds, each reading and writing Z (U·Hz bytes, growing by p·Hz per tuple).
  const zTerm = (x.n * Hb * (2 * x.U * Hz + x.p * Hz * x.n)) / (x.k * x.r);
  return (zTerm + 2 * x.n * aux + 2 * x.n * Hb + x.p * x.n * q) / (x.b * x.n);
}
