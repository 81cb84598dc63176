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
  /** At most this many top-ranked PLDs get an interpolated budget (default 10,000). */
  top?: number;
  /**
   * Share of the known PLDs that can be top (default 0.01): the top holds
   * min(top, ⌊topShare · PLDs known⌋) PLDs, so a PLD is not top only because few PLDs are known
   * (10 known → none, 10^3 → 10, 10^6 → 10,000 = IRLbot's top).
   */
  topShare?: number;
  /** PLDs with in-degree below this are never "top" and get B0 (default 2: one in-link proves nothing). */
  minIndegree?: number;
  /**
   * Budget of a PLD with in-degree ≥ minIndegree outside the top (default 2·B0): linked from
   * several PLDs, it outranks an unproven one (in-degree 0 or 1) — the capacity gate
   * (capacity.ts) keeps the unproven from taking its fetches.
   */
  proven?: number;
}

/**
 * The thesis' crawl policy: the top-ranked PLDs by in-degree get a budget interpolated linearly by
 * rank between `ceiling` (rank 0) and `floor` (the last of the top); IRLbot used B0 = 10 and
 * interpolated its top 10,000 PLDs between 10 and 10,000 pages (VI.2). The size of the top is
 * min(top, ⌊topShare · PLDs known⌋): IRLbot ranked among millions of PLDs, and early in a crawl,
 * when few PLDs are known, an in-degree of 2 would otherwise rank a PLD "top" with a budget near
 * the ceiling (a farm that controls two linking PLDs would be a top site). Outside the top, PLDs
 * with in-degree ≥ minIndegree get `proven` (2·B0), the others B0.
 *
 * F(d) by PLDs known (defaults): 10 → top empty: B0 for d < 2, 2·B0 above; 10^3 → the 10 PLDs
 * of highest in-degree get 10,000 … 20 by rank; 10^6 → the top 10,000 (IRLbot's) from 10,000 to 20.
 */
export function crawlBudget(o: CrawlBudgetOptions = {}): BudgetFunction {
  const b0 = o.b0 ?? 10;
  const proven = o.proven ?? 2 * b0;
  const floor = Math.max(o.floor ?? proven, proven);
  const ceiling = o.ceiling ?? 10_000;
  const top = o.top ?? 10_000;
  const topShare = o.topShare ?? 0.01;
  const minD = o.minIndegree ?? 2;
  return {
    name: 'crawl',
    b0,
    budget(d, ctx) {
      if (d < minD) return b0;
      const size = Math.min(top, Math.floor(topShare * ctx.plds));
      // Rank of the last of the PLDs tied at d (those above d, plus d's own, minus one): a tie is
      // top only if all of it fits, so 999 PLDs at in-degree 2 are not top together.
      const rank = Math.max(ctx.rankAbove(d), ctx.rankAbove(d - 1) - 1);
      if (rank >= size) return proven;
      const t = size <= 1 ? 0 : rank / (size - 1);
      return Math.max(proven, Math.round(ceiling - (ceiling - floor) * t));
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

export function budgetPreset(name: BudgetPreset, b0?: number): BudgetFunction {
  switch (name) {
    case 'crawl':
      return crawlBudget(b0 === undefined ? {} : { b0, floor: b0 });
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
