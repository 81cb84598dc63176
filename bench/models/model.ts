/**
 * Analytic models of the IRLbot thesis (Lee 2008), chapters IV (disk URL checks, DRUM),
 * V (caching, hybrid RAM-disk) and VII (budget enforcement, BEAST).
 *
 * Every function is pure and cites the equation it implements. Units are bytes, seconds,
 * pages and URLs; the caller decides what "GB" or "KB" means (see bench/models/readings.ts —
 * the thesis' printed tables use decimal units throughout: GB = 1e9, MB = 1e6, KB = 1e3).
 *
 * Symbols (thesis §IV.2): n = lN links checked, U = entries already in URLseen, R = RAM for URL
 * checks, H = hash bytes, P = pointer bytes, b = mean URL bytes, bq = compressed URL bytes,
 * p = probability that a checked URL is unique. DRUM (§IV.4) adds M (buffer per open bucket
 * file), Δ (minimum bucket size) and D (disk budget for buckets).
 */

/** Parameters of the URL-uniqueness check models of §IV. */
export interface UrlCheckParams {
  /** Hash size H in bytes (IRLbot: 8). */
  readonly H: number;
  /** Memory pointer size P in bytes (IRLbot: 4). */
  readonly P: number;
  /** Average URL length b in bytes (IRLbot: 110). */
  readonly b: number;
  /** Average compressed URL length bq in bytes (Polybot model only). */
  readonly bq: number;
  /** Average number of links per page l (duplicates included; IRLbot: 59). */
  readonly l: number;
  /** Probability p that a checked URL is unique (IRLbot: 1/9). */
  readonly p: number;
  /** Current size U of URLseen in entries. */
  readonly U: number;
}

/** DRUM adds its buffer geometry (§IV.4). */
export interface DrumParams extends UrlCheckParams {
  /** Buffer M per open bucket file, bytes (thesis: 256 KB). */
  readonly M: number;
  /** Minimum bucket size Δ for efficient sequential reads, bytes (thesis: 32 MB). */
  readonly Delta: number;
}

/** The bytes that one full pass rewrites grow with 2UH + pHn (eqs. 1, 7, 14): old file twice plus appended hashes. */
function hashVolume(n: number, q: UrlCheckParams): number {
  return 2 * q.U * q.H + q.p * q.H * n;
}

/** Eq. (1): Mercator-B overhead α(n, R); total disk bytes are ω = α·b·n (Theorem 1). */
export function mercatorAlpha(n: number, R: number, q: UrlCheckParams): number {
  return (2 * hashVolume(n, q) * (q.H + q.P)) / (q.b * R) + 2 + q.p;
}

/** Eq. (2): Polybot overhead α(n, R) (Theorem 1). */
export function polybotAlpha(n: number, R: number, q: UrlCheckParams): number {
  return (2 * (2 * q.U * q.bq + q.p * q.bq * n) * (q.b + 4 * q.P)) / (q.b * R) + q.p;
}

/** Ratio of the quadratic terms (6)/(5): how many times Mercator-B is faster than Polybot as n → ∞. */
export function polybotOverMercatorAsymptotic(q: UrlCheckParams): number {
  return (q.bq * (q.b + 4 * q.P)) / ((q.H + q.P) * q.H);
}

/** §IV.2: α_min = 2 + p, the floor for methods that spill URL text to disk before checking. */
export function mercatorAlphaMin(q: UrlCheckParams): number {
  return 2 + q.p;
}

/** §IV.4: α''_min = 2 + p + 2H/b, the floor for methods that keep both hashes and URLs on disk (DRUM). */
export function drumAlphaMin(q: UrlCheckParams): number {
  return 2 + q.p + (2 * q.H) / q.b;
}

/** Theorem 2: Λ = 8MD(H+P)/(H+b); R² < Λ means RAM, not disk, is DRUM's bottleneck. */
export function drumLambda(D: number, q: DrumParams): number {
  return (8 * q.M * D * (q.H + q.P)) / (q.H + q.b);
}

export type DrumRegime = 'ram-limited' | 'disk-limited';

/** Which branch of eq. (7) applies. */
export function drumRegime(R: number, D: number, q: DrumParams): DrumRegime {
  return R * R < drumLambda(D, q) ? 'ram-limited' : 'disk-limited';
}

/** Eq. (7): DRUM URLseen overhead α(n, R) with disk budget D (Theorem 2; valid for R ≥ 2Δ(1+P/H)). */
export function drumAlpha(n: number, R: number, D: number, q: DrumParams): number {
  const floor = drumAlphaMin(q);
  if (drumRegime(R, D, q) === 'ram-limited') {
    return (8 * q.M * (q.H + q.P) * hashVolume(n, q)) / (q.b * R * R) + floor;
  }
  return ((q.H + q.b) * hashVolume(n, q)) / (q.b * D) + floor;
}

/** Eq. (14): α from an explicit bucket layout (k buckets of r bytes of hashes each). */
export function drumAlphaFromBuckets(n: number, k: number, r: number, q: DrumParams): number {
  return (hashVolume(n, q) * q.H) / (q.b * k * r) + drumAlphaMin(q);
}

/** DRUM bucket layout chosen by the proof of Theorem 2. */
export interface DrumLayout {
  readonly regime: DrumRegime;
  /** Number of buckets k: k0 = R/4M (eq. after 10) when RAM-limited, else the smaller root k1 (eq. 12). */
  readonly k: number;
  /** Bucket size r = (R − 2Mk)H/(H+P) (eq. 8). */
  readonly r: number;
  /** k_m (eq. 10): most buckets that still leave r ≥ Δ. */
  readonly kMax: number;
}

/** Eqs. (8)–(12): number and size of DRUM buckets for RAM R and disk D. */
export function drumLayout(R: number, D: number, q: DrumParams): DrumLayout {
  const A = ((q.H + q.P) * D) / (q.H + q.b);
  const kMax = (R - (q.Delta * (q.H + q.P)) / q.H) / (2 * q.M);
  const disc = R * R - 8 * q.M * A;
  const regime: DrumRegime = disc < 0 ? 'ram-limited' : 'disk-limited';
  const k = regime === 'ram-limited' ? R / (4 * q.M) : (R - Math.sqrt(disc)) / (4 * q.M);
  const r = ((R - 2 * q.M * k) * q.H) / (q.H + q.P);
  return { regime, k, r, kMax };
}

/** Eq. (17): disk size D_opt that RAM R can just fill (R² = Λ). */
export function drumOptimalDisk(R: number, q: DrumParams): number {
  return (R * R * (q.H + q.b)) / (8 * q.M * (q.H + q.P));
}

/** §IV.4: at D = D_opt DRUM's quadratic term is R/4M times smaller than Mercator-B's. */
export function drumQuadraticAdvantage(R: number, q: DrumParams): number {
  return R / (4 * q.M);
}

/** §IV.5: D(n) = max(pHn, floor) — disk scaled to the unique hashes appended during the crawl (floor 10^12 in the thesis). */
export function scaledDisk(n: number, q: UrlCheckParams, floor: number): number {
  return Math.max(q.p * q.H * n, floor);
}

/** Eq. (18), Theorem 3: S_disk = W/(α b l) pages/s for average disk I/O speed W bytes/s. */
export function diskRate(W: number, alpha: number, q: UrlCheckParams): number {
  return W / (alpha * q.b * q.l);
}

/**
 * Eq. (19), Theorem 4: S_cache(c) = g⁻¹(μ(c)) with g(x) = l·x/(1 − φ(x)), for any non-decreasing
 * CPU-utilisation curve φ with φ(sMax) = 1. Solved by bisection on [0, sMax).
 */
export function cacheRate(mu: number, l: number, phi: (S: number) => number, sMax: number): number {
  const g = (x: number): number => (l * x) / (1 - phi(x));
  let lo = 0;
  let hi = sMax;
  for (let i = 0; i < 200; i++) {
    const mid = (lo + hi) / 2;
    if (phi(mid) < 1 && g(mid) < mu) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/** Eq. (21): closed form of (19) for φ(S) = S/S_max: S_cache = μ·S_max/(l·S_max + μ). */
export function cacheRateLinear(mu: number, l: number, sMax: number): number {
  return (mu * sMax) / (l * sMax + mu);
}

/** One step of the cache-miss function π(c, S) (§V.3): miss rate `pi` once c ≥ cacheMultiple·γτ_h·l·S. */
export interface MissStep {
  readonly pi: number;
  readonly cacheMultiple: number;
}

/** The step function π(c, S) of §V.3: π(0, S) = 1; for c > 0 the best step whose cache need is met, else `coldPi`. */
export interface MissRateModel {
  /** Miss rate when 0 < c < (smallest multiple)·γτ_h·l·S (thesis: 0.84). */
  readonly coldPi: number;
  /** Steps sorted by decreasing pi (increasing cacheMultiple). */
  readonly steps: readonly MissStep[];
  /** γ·τ_h·l: cache bytes needed per page/s of crawl rate for one "τ_h l S" worth of entries. */
  readonly bytesPerRate: number;
}

/** π(c, S) of §V.3 (non-decreasing in S, non-increasing in c). */
export function missRate(c: number, S: number, m: MissRateModel): number {
  if (c <= 0) return 1;
  let pi = m.coldPi;
  for (const step of m.steps) if (c >= step.cacheMultiple * m.bytesPerRate * S) pi = Math.min(pi, step.pi);
  return pi;
}

/** α as a function of (links checked, RAM left for the disk structure); e.g. DRUM with D chosen per n. */
export type AlphaOf = (n: number, R: number) => number;

/** Inputs of Theorem 5. */
export interface HybridProblem {
  readonly alpha: AlphaOf;
  readonly N: number;
  readonly R: number;
  readonly W: number;
  readonly q: UrlCheckParams;
  readonly miss: MissRateModel;
}

/** The miss-rate tiers as S-intervals for a fixed c > 0: tier i holds for S in (lo_i, hi_i]. */
function tiers(c: number, m: MissRateModel): Array<{ pi: number; hi: number }> {
  const out: Array<{ pi: number; hi: number }> = [];
  const steps = [...m.steps].sort((a, b) => a.pi - b.pi); // best (lowest π) first = lowest S range
  for (const s of steps) out.push({ pi: s.pi, hi: c / (s.cacheMultiple * m.bytesPerRate) });
  out.push({ pi: m.coldPi, hi: Infinity });
  return out;
}

/**
 * Eq. (22), Theorem 5: S_hybrid(c) = h⁻¹(W/(b l)) with h(x) = x·α(π(c,x)n, R−c)·π(c,x).
 * h is non-decreasing with jumps where π steps up, so h⁻¹(T) is sup{S : h(S) ≤ T}: walk the
 * S-intervals of π in increasing S; stop where the line S·σ reaches T or at the jump past T.
 */
export function hybridRate(c: number, pb: HybridProblem): number {
  const T = pb.W / (pb.q.b * pb.q.l);
  const n = pb.q.l * pb.N;
  if (c <= 0) return T / pb.alpha(n, pb.R);
  let lo = 0;
  for (const t of tiers(c, pb.miss)) {
    if (t.hi <= lo) continue;
    const sigma = t.pi * pb.alpha(t.pi * n, pb.R - c);
    const s = T / sigma;
    if (s <= lo) return lo;
    if (s <= t.hi) return s;
    lo = t.hi;
  }
  return lo;
}

/** Result of maximising (22) over the cache size c. */
export interface HybridOptimum {
  readonly S: number;
  readonly c: number;
  readonly pi: number;
}

/**
 * max_c S_hybrid(c) over c ∈ [0, R) (Table VII). With σ(c) increasing in c, S_hybrid(c) =
 * max over tiers of min(T/σ_tier(c), hi_tier(c)), so each tier peaks where its two curves cross
 * (found by bisection); the cold tier (π = coldPi) peaks as c → 0⁺.
 */
export function maxHybridRate(pb: HybridProblem): HybridOptimum {
  const T = pb.W / (pb.q.b * pb.q.l);
  const n = pb.q.l * pb.N;
  let best: HybridOptimum = { S: T / pb.alpha(n, pb.R), c: 0, pi: 1 };
  const cold = T / (pb.miss.coldPi * pb.alpha(pb.miss.coldPi * n, pb.R));
  if (cold > best.S) best = { S: cold, c: 0, pi: pb.miss.coldPi };
  for (const step of pb.miss.steps) {
    const need = step.cacheMultiple * pb.miss.bytesPerRate; // bytes of cache per page/s
    const rateCap = (c: number): number => T / (step.pi * pb.alpha(step.pi * n, pb.R - c));
    let lo = 0;
    let hi = pb.R * (1 - 1e-12);
    let c: number;
    if (rateCap(hi) >= hi / need) c = hi;
    else {
      // 80 halvings of R reach far below one byte of cache.
      for (let i = 0; i < 80; i++) {
        const mid = (lo + hi) / 2;
        if (rateCap(mid) > mid / need) lo = mid;
        else hi = mid;
      }
      c = lo;
    }
    const S = Math.min(rateCap(c), c / need);
    if (S > best.S) best = { S, c, pi: step.pi };
  }
  return best;
}

/**
 * max over c ∈ {0, step, 2·step, …} < R of S_hybrid(c): the maximisation as a numeric search over
 * cache sizes on a fixed grid (Table VII's printed values are reproduced digit for digit with a
 * 50 MB grid; see docs/benchmarks.md).
 */
export function maxHybridRateOnGrid(pb: HybridProblem, step: number): HybridOptimum {
  let best: HybridOptimum = { S: hybridRate(0, pb), c: 0, pi: 1 };
  for (let i = 1; i * step < pb.R; i++) {
    const c = i * step;
    const S = hybridRate(c, pb);
    if (S > best.S) best = { S, c, pi: missRate(c, S, pb.miss) };
  }
  return best;
}

/** Parameters of the budget-enforcement models of §VII.2. */
export interface BeastParams {
  /** Crawl rate S, pages/s. */
  readonly S: number;
  /** Average URL size b, bytes. */
  readonly b: number;
  /** Unique URLs per page L. */
  readonly L: number;
  /** Expected PLD budget E[B_x]. */
  readonly EB: number;
  /** PLDs seen in one pass through Q_F, V. */
  readonly V: number;
}

/** Eq. (25), Theorem 6: disk bytes/s the naive two-queue budget check needs for an N-page crawl. */
export function naiveBudgetDiskSpeed(N: number, q: BeastParams): number {
  const base = 2 * q.b * q.S * (q.L - 1);
  const Q = q.EB * q.V;
  return N >= Q ? (base * N) / Q : base;
}

/** Eq. (27): β = 2E[B]V/(N + E[B]V) for N ≥ E[B]V, else 1. */
export function beastBeta(N: number, q: BeastParams): number {
  const Q = q.EB * q.V;
  return N >= Q ? (2 * Q) / (N + Q) : 1;
}

/** Eq. (26), Theorem 7: BEAST's disk bytes/s, λ = 2Sb[(2 − β)(L − 1) + 1]. */
export function beastDiskSpeed(N: number, q: BeastParams): number {
  return 2 * q.S * q.b * ((2 - beastBeta(N, q)) * (q.L - 1) + 1);
}

/** §VII.2: the N → ∞ limit of (26), 2Sb(2L − 1). */
export function beastDiskSpeedLimit(q: BeastParams): number {
  return 2 * q.S * q.b * (2 * q.L - 1);
}

/** Eq. (31): queues j in the last stage of an N-page crawl, j = (N/(E[B]V) + 1)/2 (N ≥ E[B]V). */
export function beastQueues(N: number, q: BeastParams): number {
  return (N / (q.EB * q.V) + 1) / 2;
}
