/**
 * The low-PLD pace: a PLD with budget B ≤ B0 is released as one host (thesis VII.1, VI.2).
 *
 * τh spaces requests per host, so a PLD that mints host names has a due host for every free fetch
 * slot: a farm of in-degree 1 took 94–99 % of the fetches of a crawl whose real web was
 * politeness-bound (bench:adversary). The invariant kept here, for a crawl that ranks PLDs (a PLD
 * with B > B0 has been seen; not `--budget flat`):
 *
 *   while another PLD has had a URL taken into RAM or QR, or released, within ACTIVE_MS (or two of
 *   τh, if longer), a PLD with B ≤ B0 is released at most once per τh — its pages and robots.txt
 *   fetches together, across all its hosts — holds at most two horizons of that pace in RAM and QR
 *   (the rest waits in BEAST), and its work does not count toward BEAST's move to the next queue.
 *
 * So a farm gets one host's pace whatever its host count, a one-host site is not slowed at all,
 * PLDs with B > B0 keep τh per host, and a crawl left with one PLD (the farm alone) runs at full
 * speed. Leaving the paced PLDs' work out of the refill's measure (`dispatchable`) keeps the ring
 * moving at the real web's pace: counting it had kept BEAST on its current queue while the real
 * web's URLs waited in the next ones (the ring read at the farm's pace).
 *
 * RAM is fixed: PLDs are direct-mapped to SLOTS slots by hash (768 KiB in all). Two PLDs that share
 * a slot share its pace and count as one PLD: a collision only slows, never speeds.
 */
const SLOTS = 1 << 16;
/**
 * Another PLD counts as crawling for this long (ms) after its last URL taken into RAM or QR or
 * released, or for two of τh if longer: a PLD crawled at τh = 10 s (the irlbot preset) is active
 * between its releases.
 */
const ACTIVE_MS = 2000;

/** The slot of a PLD key (hi, lo) in the pace's tables. */
export function pldSlot(pldHi: number, pldLo: number): number {
  return (Math.imul(pldHi ^ 0x9e3779b9, 0x85ebca6b) ^ pldLo) >>> 16;
}

export class PldPace {
  /** Earliest next release of the low PLDs hashed to each slot. */
  private readonly next = new Float64Array(SLOTS);
  /** The two most recently active distinct slots and when (enough to ask "another PLD than p?"). */
  private slotA = -1;
  private atA = -Infinity;
  private slotB = -1;
  private atB = -Infinity;
  /** A URL of a PLD with B > B0 has been offered: the crawl ranks PLDs (read on hot paths to skip the pace). */
  ranked = false;
  /** The B ≤ B0 hosts' part of the dispatch potential (dispatchable). */
  private low = 0;
  /** Releases the pace held back (stats). */
  held = 0;
  /**
   * URLs of the low PLDs in each slot held in RAM or parked in QR, and the most a paced PLD may
   * hold (two horizons of its one-host pace): beyond it the refill sends its URLs back to BEAST.
   * Without the bound a paced farm fills QR and the host table with minted hosts at the pace the
   * ring is read, and the real web's hosts then find no room.
   */
  private readonly inHand = new Int32Array(SLOTS);
  private handCap = 64;

  constructor(private readonly delayMs: () => number) {}

  private activeMs(): number {
    return Math.max(ACTIVE_MS, 2 * this.delayMs());
  }

  /** A URL with B > B0 was offered: the crawl ranks PLDs. */
  sawRanked(): void {
    this.ranked = true;
  }

  /** A URL of the PLD in `slot` entered RAM or QR, or was released, at `now`. */
  active(slot: number, now: number): void {
    if (!this.ranked) return; // nothing is paced in a crawl that does not rank PLDs
    if (slot === this.slotA) this.atA = now;
    else {
      this.slotB = this.slotA;
      this.atB = this.atA;
      this.slotA = slot;
      this.atA = now;
    }
  }

  /** Whether a PLD other than `slot` was active within ACTIVE_MS (and the crawl ranks PLDs). */
  private othersActive(slot: number, now: number): boolean {
    if (!this.ranked) return false;
    const at = this.slotA !== slot ? this.atA : this.atB;
    return now - at < this.activeMs();
  }

  /** 0: a low PLD's host in `slot` may be released now; else the time it may next. */
  hold(slot: number, now: number): number {
    if (!this.othersActive(slot, now)) return 0;
    const t = this.next[slot]!;
    if (t <= now) return 0;
    this.held++;
    return t;
  }

  /** A low PLD's item (page or robots.txt) in `slot` was released at `now`. */
  released(slot: number, now: number): void {
    if (!this.ranked) return;
    this.next[slot] = now + this.delayMs();
    this.active(slot, now);
  }

  /** A low host's part of the dispatch potential changed from `before` to `after`. */
  potChanged(before: number, after: number): void {
    this.low = Math.max(0, this.low + after - before);
  }

  /** One host's fetches within the refill horizon (W/τh): a paced PLD holds at most twice that in hand. */
  setHorizonFetches(n: number): void {
    this.handCap = Math.max(64, Math.ceil(2 * n));
  }

  /**
   * `potential` without the paced PLDs' part, while the pace holds: their URLs go out at one host's
   * pace whatever the ring does, so they must not hold BEAST on its current queue (a paced farm's
   * URLs waiting for robots answers kept the ring still for tens of seconds while the real web's
   * URLs waited in the next queues). What they may hold in hand is bounded instead (mayTake).
   */
  dispatchable(potential: number, now: number): number {
    if (!this.paceOn(now)) return potential;
    return Math.max(0, potential - this.low);
  }

  /** The pace holds for some PLD: the crawl ranks PLDs and two PLDs were active within ACTIVE_MS. */
  private paceOn(now: number): boolean {
    const w = this.activeMs();
    return this.ranked && now - this.atA < w && now - this.atB < w;
  }

  /** May a low PLD's URL (slot) enter RAM or QR now? Always, unless the pace holds it and it holds its cap. */
  mayTake(slot: number, now: number): boolean {
    return this.inHand[slot]! < this.handCap || !this.othersActive(slot, now);
  }

  /** A low PLD's URL entered RAM or QR (took) or left it (left). */
  took(slot: number): void {
    if (this.ranked) this.inHand[slot]!++;
  }

  /** (Counted only in a crawl that ranks PLDs; a URL taken before the first ranked one is not.) */
  left(slot: number): void {
    if (this.ranked && this.inHand[slot]! > 0) this.inHand[slot]!--;
  }
}
