/**
 * The low-PLD pace (thesis VII.1, VI.2): a PLD with budget B ≤ B0 is released as one host, and an
 * untrusted PLD's pages and new hosts at 1/UNTRUSTED_PACE of that.
 *
 * τh spaces requests per host, so a PLD that mints host names has a due host for every free fetch
 * slot: a farm of in-degree 1 took 94–99 % of the fetches of a crawl whose real web was
 * politeness-bound (bench:adversary). And a clique of small PLDs is many PLDs: at one host's pace
 * each, 60 spam PLDs linking to each other took 85–90 % of them. The invariants kept here, in a
 * crawl that ranks PLDs (a PLD with B > B0 has been seen; not `--budget flat`):
 *
 *   1. while another PLD has had a URL taken into RAM or QR, or released, within ACTIVE_MS (or two
 *      of τh, if longer), a PLD with B ≤ B0 is released at most once per τh — its pages and
 *      robots.txt fetches together, across all its hosts — holds at most two horizons of that pace
 *      in RAM and QR (the rest waits in BEAST), and its work does not count toward BEAST's move to
 *      the next queue;
 *   2. with STAR ranking by trusted in-degree (star.ts), while a page of a PLD trusted through links
 *      (promoted by STAR, not only vouched for as a seed's), or pages of two trusted PLDs, were
 *      released within ACTIVE_MS, a PLD whose trusted in-degree is below the threshold releases,
 *      after its first, at most one page and the robots.txt of at most one new host per
 *      UNTRUSTED_PACE · τh; and all such PLDs together release at most one item per τh plus
 *      UNTRUSTED_SHARE of all releases (1/15 of the trusted PLDs' pages).
 *
 * So a farm gets one host's pace whatever its host count; a clique of untrusted PLDs, once the
 * crawl has a trusted web, at most a sixteenth of the crawl beyond one host's pace however many PLDs
 * it buys; a one-host site is not slowed by (1); PLDs with B > B0 keep τh per host; and a crawl
 * left with one PLD (the farm alone) runs at full speed. (2) waits for a trusted web of more than
 * one seed's site: before that, nothing tells a farm from a real site that no trusted page links to
 * yet (on a sparse web grown from one seed, trust never spreads), and slowing every untrusted PLD
 * while the seed's site is crawled would hold the crawl back for nothing. A PLD STAR promotes
 * leaves (2) at once: the frontier is told (Frontier.trustPromoted), and a host (2) holds asks
 * again within τh. Leaving the paced PLDs' work out of the refill's measure (`dispatchable`) keeps
 * the ring moving at the real web's pace: counting it had kept BEAST on its current queue while
 * the real web's URLs waited in the next ones.
 *
 * RAM is fixed: PLDs are direct-mapped to SLOTS slots by hash (2.4 MiB in all). Two PLDs that share
 * a slot share its pace and count as one PLD: a collision only slows, never speeds. What is known of
 * a slot's PLD (ranked, trusted) is checked against its key: a collision only forgets it.
 */
const SLOTS = 1 << 16;
/** Invariant (2)'s slowdown of an untrusted PLD: a clique of 60 PLDs then gets about two hosts' worth. */
const UNTRUSTED_PACE = 32;
/**
 * …and the untrusted PLDs together take at most one release per τh plus this share of the releases
 * (of the trusted PLDs' pages: 1/15 of them), whatever their number. TOKEN_CAP bounds what the share
 * saves up while the untrusted PLDs have nothing due.
 */
const UNTRUSTED_SHARE = 1 / 16;
const TOKEN_CAP = 16;
/**
 * What the pace knows of a PLD: a URL with B > B0 was taken in (ranked); one with a trusted
 * in-degree was, or STAR promoted it (trusted); STAR promoted it through links (earned).
 */
const F_RANKED = 1;
const F_TRUSTED = 2;
const F_EARNED = 4;
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
  /** Earliest next release (page or robots.txt) of the low PLDs hashed to each slot. */
  private readonly next = new Float64Array(SLOTS);
  /** Earliest next page, and next robots.txt (a new host), of an untrusted PLD in each slot at the untrusted pace. */
  private readonly nextPage = new Float64Array(SLOTS);
  private readonly nextHost = new Float64Array(SLOTS);
  /** When a page of a PLD trusted through links (`promoted`) was last released: invariant (2) holds. */
  private earnedAt = -Infinity;
  /** The two most recent distinct slots with a trusted PLD's page released, and when: two trusted sites crawling hold (2) too. */
  private trustedA = -1;
  private trustedAtA = -Infinity;
  private trustedAtB = -Infinity;
  /** Releases the untrusted PLDs have earned beyond their floor, and when the floor is free next. */
  private tokens = 0;
  private nextClass = 0;
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

  /**
   * What is known of the PLD last seen in each slot (its key, and F_* flags): a PLD keeps its class
   * after its first ranked or trusted URL or its promotion, though URLs STAR budgeted before (in QR,
   * in BEAST's queues) still carry B0 and the in-degree of then. Checked against the key, so a
   * slot's collision never promotes a PLD; it only forgets one (which then waits as it was).
   */
  private readonly knownHi = new Uint32Array(SLOTS);
  private readonly knownLo = new Uint32Array(SLOTS);
  private readonly known = new Uint8Array(SLOTS);

  private mark(slot: number, hi: number, lo: number, f: number): void {
    if (this.known[slot] !== 0 && this.knownHi[slot] === hi && this.knownLo[slot] === lo) this.known[slot]! |= f;
    else {
      this.knownHi[slot] = hi;
      this.knownLo[slot] = lo;
      this.known[slot] = f;
    }
  }

  private flags(slot: number, hi: number, lo: number): number {
    return this.knownHi[slot] === hi && this.knownLo[slot] === lo ? this.known[slot]! : 0;
  }

  /**
   * A URL of PLD (hi, lo) was taken in with B > B0 (`ranked`: the crawl ranks PLDs, and so does this
   * PLD) and/or a trusted in-degree (`trusted`).
   */
  saw(slot: number, hi: number, lo: number, ranked: boolean, trusted: boolean): void {
    if (ranked) this.ranked = true;
    const f = (ranked ? F_RANKED : 0) | (trusted ? F_TRUSTED : 0);
    if (f !== 0) this.mark(slot, hi, lo, f);
  }

  /** PLD (hi, lo) became trusted through links (STAR's promotion; not the operator's vouch for a seed). */
  promoted(slot: number, hi: number, lo: number): void {
    this.mark(slot, hi, lo, F_TRUSTED | F_EARNED);
  }

  /** Whether PLD (hi, lo) in `slot` has had a URL with B > B0 taken in. */
  isRanked(slot: number, hi: number, lo: number): boolean {
    return (this.flags(slot, hi, lo) & F_RANKED) !== 0;
  }

  /** Whether PLD (hi, lo) in `slot` has had a URL with a trusted in-degree taken in, or was promoted. */
  isTrusted(slot: number, hi: number, lo: number): boolean {
    return (this.flags(slot, hi, lo) & F_TRUSTED) !== 0;
  }

  /**
   * A page of PLD (hi, lo) was released at `now`: one of a PLD promoted through links keeps
   * invariant (2) on, and a trusted PLD's (`trusted`) earns the untrusted PLDs their share.
   */
  pageReleased(slot: number, hi: number, lo: number, now: number, trusted: boolean): void {
    if ((this.flags(slot, hi, lo) & F_EARNED) !== 0) this.earnedAt = now;
    if (!trusted) return;
    this.tokens = Math.min(TOKEN_CAP, this.tokens + UNTRUSTED_SHARE / (1 - UNTRUSTED_SHARE));
    if (slot !== this.trustedA) {
      this.trustedA = slot;
      this.trustedAtB = this.trustedAtA;
    }
    this.trustedAtA = now;
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

  /**
   * Whether invariant (2) holds: a page of a PLD trusted through links, or pages of two trusted
   * PLDs (the seeds' PLDs count: the operator vouches for them), were released within ACTIVE_MS.
   */
  private trustedWebOn(now: number): boolean {
    const w = this.activeMs();
    return now - this.earnedAt < w || (now - this.trustedAtA < w && now - this.trustedAtB < w);
  }

  /**
   * 0: a low PLD's host in `slot` may release its next item now; else the time it may next.
   * `untrusted`: the item (a page: `page`, or a robots.txt) is an untrusted PLD's, which also keeps
   * the untrusted pace, pages and new hosts each.
   */
  hold(slot: number, now: number, untrusted: boolean, page: boolean): number {
    if (!this.othersActive(slot, now)) return 0;
    let t = this.next[slot]!;
    // Held by the untrusted pace: asked again within τh, as the PLD may be promoted (or the
    // trusted PLDs' pages stop) meanwhile.
    if (untrusted && this.trustedWebOn(now)) {
      let slow = page ? this.nextPage[slot]! : this.nextHost[slot]!;
      if (this.tokens < 1) slow = Math.max(slow, this.nextClass);
      t = Math.max(t, Math.min(slow, now + this.delayMs()));
    }
    if (t <= now) return 0;
    this.held++;
    return t;
  }

  /** A low PLD's item (a page: `page`, or robots.txt; of an untrusted PLD: `untrusted`) in `slot` was released at `now`. */
  released(slot: number, now: number, page: boolean, untrusted: boolean): void {
    if (!this.ranked) return;
    this.next[slot] = now + this.delayMs();
    (page ? this.nextPage : this.nextHost)[slot] = now + UNTRUSTED_PACE * this.delayMs();
    if (untrusted && this.trustedWebOn(now)) {
      // The untrusted PLDs' floor first, then their share.
      if (this.nextClass <= now) this.nextClass = now + this.delayMs();
      else this.tokens = Math.max(0, this.tokens - 1);
    }
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
