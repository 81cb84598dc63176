/**
 * The capacity gate: budgets as shares of the crawl's capacity (thesis VI.2: a PLD's budget is
 * what it may take per unit of time; VII.1/VII.2: politeness and BEAST decide *when* a URL may go,
 * not *whose* URL goes when fetch slots are scarce).
 *
 * Per-host politeness gives a PLD capacity in proportion to its number of hosts, so a spam PLD
 * that mints fresh host names (each one due at once, on IPs of its own) takes every free fetch
 * slot — and with the pages it fetches, the parse, DRUM, robots and archive work behind them —
 * while the real web waits on τh. BEAST's per-pass budgets bound how many URLs of a PLD are read
 * per queue, not how fast those URLs are fetched.
 *
 * INVARIANT (release share by reputation). Reputation is the STAR budget B of a host's PLD, in
 * levels ℓ(B): 0 for B ≤ B0 (unproven), 1 above (see levelOf). Let top be the highest level that
 * has work: a host of that level holds URLs in RAM, or one was released within `graceMs` (its
 * next URLs are in flight through fetch/parse/DRUM). Then, counted over page releases:
 *
 *     releases below top  ≤  share/(1 − share) × releases at or above top  +  burst
 *
 * i.e. lower-reputation PLDs get at most `share` of the fetches (hence of the parse, DRUM and
 * archive work those fetches cause) while higher-reputation PLDs have work waiting. A lower host
 * that may not go now is *parked* (its URLs stay in RAM, nothing is dropped — BEAST's
 * never-discard property holds) and does not count as releasable work for refill pacing.
 *
 * Never held back for nothing: the gate is relative to the top level with work. When only farms
 * are left (no higher level has work for `graceMs`), their level is the top and they run at full
 * speed. Hosts of the same level are never gated against each other, so a fast site is not slowed
 * to the pace of a politeness-bound one of equal budget (that is the heaps' job, per host and IP).
 *
 * Cost: O(LEVELS) per nextReady round, O(1) per release; RAM: LEVELS counters + the parked FIFO
 * (≤ hosts in the table).
 */

/** Reputation levels (see levelOf). */
export const LEVELS = 2;

export interface CapacityOptions {
  /** B0: budgets at or below it are level 0. */
  b0: number;
  /** Share of page releases lower levels may take while a higher level has work (0 < share < 1). */
  share: number;
  /** A level counts as having work this long after its last release (ms). */
  graceMs: number;
  /** Low releases that may go at once before the share applies (the token bucket's depth). */
  burst: number;
}

/** The defaults (Frontier options capacityShare / capacityGraceMs; docs/frontier.md). */
export const CAPACITY_DEFAULTS = { share: 0.125, graceMs: 2000, burst: 8 } as const;

export class CapacityGate {
  private readonly o: CapacityOptions;
  private readonly credit: number;
  /** Hosts with URLs queued in RAM, per level. */
  private readonly hostsAt = new Int32Array(LEVELS);
  /** Last page release per level (ms). */
  private readonly lastAt = new Float64Array(LEVELS).fill(-Infinity);
  private tokens: number;
  /** Highest level with work, as of the last `beginRound`. */
  top = 0;
  /** Page releases below the top level / all page releases (stats). */
  lowReleased = 0;
  deferred = 0;

  constructor(o: CapacityOptions) {
    this.o = o;
    this.credit = o.share / (1 - o.share);
    this.tokens = o.burst;
  }

  /**
   * Level 0: unproven PLDs (B ≤ B0: in-degree below STAR's minimum, e.g. a farm linked once);
   * level 1: every PLD with a budget above B0. Budgets above B0 are not ranked against each other
   * here: among reputable PLDs STAR's budgets already act through BEAST and τh(B), and gating a
   * PLD of budget 1,000 behind one of 100,000 would hold the crawl back for nothing whenever the
   * latter is politeness-bound.
   */
  levelOf(budget: number): number {
    return budget > this.o.b0 ? 1 : 0;
  }

  /** A host's queued-work level changed from `from` to `to` (-1 = no URLs queued). */
  move(from: number, to: number): void {
    if (from >= 0) this.hostsAt[from]!--;
    if (to >= 0) this.hostsAt[to]!++;
  }

  /** Recomputes the top level with work at `now`; returns it. */
  beginRound(now: number): number {
    let t = 0;
    for (let l = LEVELS - 1; l > 0; l--) {
      if (this.hostsAt[l]! > 0 || now - this.lastAt[l]! < this.o.graceMs) {
        t = l;
        break;
      }
    }
    this.top = t;
    return t;
  }

  /** Would a page release at `level` be allowed now (without taking it)? */
  allows(level: number): boolean {
    return level >= this.top || this.tokens >= 1;
  }

  /** Records a page release at `level` (call only when `allows(level)`). */
  released(level: number, now: number): void {
    this.lastAt[level] = now;
    if (level >= this.top) {
      this.tokens = Math.min(this.o.burst, this.tokens + this.credit);
    } else {
      this.tokens -= 1;
      this.lowReleased++;
    }
  }

  /** Whole low releases currently allowed (how many parked hosts are worth trying again). */
  get available(): number {
    return Math.floor(this.tokens);
  }

  /**
   * When a parked host should be looked at again if nothing else happens: the top level's grace
   * end when it has nothing queued (the gate then lifts), else `fallbackMs` from now.
   */
  recheckAt(now: number, fallbackMs: number): number {
    const t = this.top;
    if (t === 0) return now;
    return this.hostsAt[t]! > 0 ? now + fallbackMs : this.lastAt[t]! + this.o.graceMs;
  }
}
