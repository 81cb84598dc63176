/**
 * STAR budget functions F(d) (thesis VI.2) and the politeness delays they drive (thesis VII.1).
 *
 * B_x = F(d_x) is the number of pages of PLD x allowed to pass to crawling per BEAST queue pass,
 * from the PLD's in-degree d_x in the PLD graph. "By varying the budget function F(d_x), one can
 * implement a number of policies": the presets below are the ones the thesis names.
 */

/** What a budget function may look at besides d. */
export interface BudgetContext {
  /** Approximate number of PLDs whose in-degree is strictly greater than d (0 = top-ranked). */
  rankAbove(d: number): number;
  /** Number of PLDs with a known in-degree. */
  readonly plds: number;
}

export interface BudgetFunction {
  readonly name: string;
  /** Default budget B0 (what an unknown / low-ranked PLD gets). */
  readonly b0: number;
  budget(d: number, ctx: BudgetContext): number;
}

export interface CrawlBudgetOptions {
  /** Budget of every PLD outside the top (default 10, IRLbot's B0). */
  b0?: number;
  /** Budget of the last PLD in the top (default 10). */
  floor?: number;
  /** Budget of the top-ranked PLD (default 10,000). */
  ceiling?: number;
  /** How many top-ranked PLDs get an interpolated budget (default 10,000). */
  top?: number;
  /** PLDs with in-degree below this are never "top" (default 2: one in-link proves nothing). */
  minIndegree?: number;
  /**
   * Budget per unit of in-degree: B ≤ perIndegree · d (default B0). Rank alone says little while
   * few PLDs are known — at 10 known PLDs every one is in the top 10,000 — so a PLD's budget is
   * also bounded by the in-degree it has shown.
   */
  perIndegree?: number;
}

/**
 * The thesis' crawl policy (VIII.2): the `top` highest in-degree PLDs get a budget interpolated
 * linearly by rank between `ceiling` (rank 0) and `floor` (rank top-1); all others get B0. IRLbot
 * used B0 = 10 and interpolated the top 10,000 PLDs between 10 and 10,000 pages. Here B is also at
 * most perIndegree · d, so F(d) = B0 for d < minIndegree, else
 * max(B0, min(interp(rank(d)), perIndegree · d)). With the defaults:
 *   - 10 known PLDs: every PLD with d ≥ 2 ranks in the top; B = 10·d (d = 3 → 30, d = 50 → 500);
 *   - 10^3 known PLDs: still all in the top, ranks 0..999 interpolate 10,000 → ~9,000, so the cap
 *     10·d decides for every PLD with d < ~900;
 *   - 10^6 known PLDs: only the 10,000 best ranked are in the top; their in-degrees are large, so
 *     the rank decides (the thesis' policy), and everyone else gets B0.
 */
export function crawlBudget(o: CrawlBudgetOptions = {}): BudgetFunction {
  const b0 = o.b0 ?? 10;
  const floor = o.floor ?? 10;
  const ceiling = o.ceiling ?? 10_000;
  const top = o.top ?? 10_000;
  const minD = o.minIndegree ?? 2;
  const perD = o.perIndegree ?? b0;
  return {
    name: 'crawl',
    b0,
    budget(d, ctx) {
      if (d < minD) return b0;
      const rank = ctx.rankAbove(d);
      if (rank >= top) return b0;
      const t = top <= 1 ? 0 : rank / (top - 1);
      return Math.max(b0, Math.min(Math.round(perD * d), Math.round(ceiling - (ceiling - floor) * t)));
    },
  };
}

/** Equal distribution: B = B0 for every PLD. */
export function flatBudget(b0 = 10): BudgetFunction {
  return { name: 'flat', b0, budget: () => b0 };
}

export interface ProportionalBudgetOptions {
  b0?: number;
  /** Pages of budget per unit of in-degree (default 1). */
  perIndegree?: number;
  /** Upper bound (default 100,000). */
  max?: number;
  /** Bias toward unpopular PLDs instead: B = max(1, round(b0 · k / (d + 1))) with k = perIndegree. */
  inverse?: boolean;
}

/** Bias toward popular (or, with `inverse`, unpopular) PLDs: B directly (inversely) proportional to d. */
export function proportionalBudget(o: ProportionalBudgetOptions = {}): BudgetFunction {
  const b0 = o.b0 ?? 10;
  const k = o.perIndegree ?? 1;
  const max = o.max ?? 100_000;
  return {
    name: o.inverse ? 'inverse' : 'proportional',
    b0,
    budget: o.inverse
      ? (d) => Math.min(max, Math.max(1, Math.round((b0 * k) / (d + 1))))
      : (d) => Math.min(max, Math.max(b0, Math.round(b0 + k * d))),
  };
}

/** Popular pages only: zero budget (URLs wait in QF) below `minIndegree`, `b` above. */
export function popularOnlyBudget(minIndegree = 10, b = 1000): BudgetFunction {
  return { name: 'popular-only', b0: 0, budget: (d) => (d >= minIndegree ? b : 0) };
}

export type BudgetPreset = 'crawl' | 'flat' | 'proportional' | 'inverse' | 'popular-only';

export function budgetPreset(name: BudgetPreset, b0?: number, minIndegree?: number): BudgetFunction {
  switch (name) {
    case 'crawl':
      return crawlBudget({ ...(b0 === undefined ? {} : { b0, floor: b0 }), ...(minIndegree === undefined ? {} : { minIndegree }) });
    case 'flat':
      return flatBudget(b0);
    case 'proportional':
      return proportionalBudget(b0 === undefined ? {} : { b0 });
    case 'inverse':
      return proportionalBudget({ ...(b0 === undefined ? {} : { b0 }), inverse: true });
    case 'popular-only':
      return popularOnlyBudget();
  }
}

/**
 * In-degree histogram giving rankAbove(d) in bounded RAM (the PLD table itself is on disk).
 * Exact counts for d < EXACT; above that, 16 sub-buckets per power of two (rank error < 1/16 of a
 * bucket, interpolated). RAM: EXACT + 16·32 counters, whatever the number of PLDs.
 */
export class IndegreeHistogram implements BudgetContext {
  private static readonly EXACT = 4096;
  private readonly exact = new Float64Array(IndegreeHistogram.EXACT);
  private readonly log = new Float64Array(32 * 16);
  private total = 0;

  get plds(): number {
    return this.total;
  }

  private static logBin(d: number): number {
    const e = Math.floor(Math.log2(d));
    const sub = Math.floor(((d / 2 ** e) - 1) * 16);
    return Math.min(32 * 16 - 1, e * 16 + sub);
  }

  /** Serialised counts (for STAR's checkpoint): [total, exact…, log…] as float64. */
  toBytes(): Uint8Array {
    const a = new Float64Array(1 + this.exact.length + this.log.length);
    a[0] = this.total;
    a.set(this.exact, 1);
    a.set(this.log, 1 + this.exact.length);
    return new Uint8Array(a.buffer);
  }

  /** Restores counts written by toBytes; ignores data of the wrong size. */
  fromBytes(b: Uint8Array): boolean {
    const n = 1 + this.exact.length + this.log.length;
    if (b.byteLength !== n * 8) return false;
    const a = new Float64Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
    this.total = a[0]!;
    this.exact.set(a.subarray(1, 1 + this.exact.length));
    this.log.set(a.subarray(1 + this.exact.length));
    this.suffixExact = null;
    return true;
  }

  /** Records that a PLD moved from in-degree `from` (0 = new PLD) to `to`. */
  move(from: number, to: number): void {
    if (from > 0) this.add(from, -1);
    else this.total++;
    if (to > 0) this.add(to, 1);
    else this.total--;
  }

  private add(d: number, delta: number): void {
    this.suffixExact = null;
    if (d < IndegreeHistogram.EXACT) this.exact[d] = this.exact[d]! + delta;
    else {
      const b = IndegreeHistogram.logBin(d);
      this.log[b] = this.log[b]! + delta;
    }
  }

  /** Suffix sums, rebuilt lazily after moves (STAR queries a whole batch between updates). */
  private suffixExact: Float64Array | null = null;
  private suffixLog: Float64Array | null = null;

  rankAbove(d: number): number {
    if (this.suffixExact === null || this.suffixLog === null) this.rebuild();
    const E = IndegreeHistogram.EXACT;
    const sl = this.suffixLog!;
    if (d < E) return this.suffixExact![d + 1]! + sl[0]!;
    const b = IndegreeHistogram.logBin(d);
    return sl[b + 1]! + this.log[b]! / 2; // half of d's own bin lies above d, on average
  }

  private rebuild(): void {
    const E = IndegreeHistogram.EXACT;
    const L = this.log.length;
    const sl = new Float64Array(L + 1);
    for (let i = L - 1; i >= 0; i--) sl[i] = sl[i + 1]! + this.log[i]!;
    const se = new Float64Array(E + 1);
    for (let i = E - 1; i >= 0; i--) se[i] = se[i + 1]! + this.exact[i]!;
    this.suffixExact = se;
    this.suffixLog = sl;
  }
}

/** Politeness delays (thesis VII.1); all times in ms. */
export interface DelayOptions {
  /** τh for low-ranked PLDs (B ≤ B0). */
  hostDelayMs: number;
  /** Hard floor τh0: no host is ever contacted twice within it (start to start). */
  minHostDelayMs: number;
  /** τs for servers hosting only low-ranked PLDs. */
  ipDelayMs: number;
  /** Hard floor τs0 for any server. */
  minIpDelayMs: number;
  /** B0 the delays are scaled against. */
  b0: number;
}

/** τh(B) = τh · B0 / B, clamped to [τh0, τh] — "scale it down proportional to B_x" (VII.1). */
export function hostDelayFor(b: number, o: DelayOptions): number {
  if (!(b > o.b0)) return Math.max(o.hostDelayMs, o.minHostDelayMs);
  return Math.max(o.minHostDelayMs, Math.min(o.hostDelayMs, (o.hostDelayMs * o.b0) / b));
}

/** τs(avg B of the PLDs on the server) = τs · B0 / avgB, clamped to [τs0, τs]. */
export function ipDelayFor(avgB: number, o: DelayOptions): number {
  if (!(avgB > o.b0)) return Math.max(o.ipDelayMs, o.minIpDelayMs);
  return Math.max(o.minIpDelayMs, Math.min(o.ipDelayMs, (o.ipDelayMs * o.b0) / avgB));
}
