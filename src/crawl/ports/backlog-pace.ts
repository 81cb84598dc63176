/**
 * Smooth back-pressure of a batch stage's backlog on dispatch.
 *
 * DRUM answers in batches (thesis V.2): a page whose links wait for URLseen, or whose body waits
 * for ContentSeen, leaves the crawl's RAM only when the merge that covers it ends. So the backlog
 * of such a stage falls in steps, once per merge, and grows between them at the rate pages are
 * dispatched. A hard bound alone turns that into stop-and-go: fetching runs at full speed until
 * the bound and then stops, with URLs due, until the merge under way ends — the stalled seconds
 * of the soaks (docs/performance.md, "A page's durability and the stalled seconds").
 *
 * This pace spreads the same pages over the whole merge instead. Up to half the bound it does not
 * limit. Above it, dispatch runs at the rate that would fill what is left of the bound exactly
 * when the next release is expected: free / (time to the next release). The time to the next
 * release is predicted from the stage's last releases: P = 1.25 × the longest of the last four
 * intervals between them. At s since the last release, the time left is taken as P − s, or, once
 * s passes 3/4 P, as s − P/2: free room falls linearly until then (to a quarter of it), and after
 * that in proportion to 1 / (s − P/2), so a merge that overruns its prediction several times over
 * still gets pages dispatched every second from the quarter kept back. Over a cycle the stage
 * releases what was dispatched in the one before, so in a steady state where merges bound the
 * crawl the pace lets through a little less than the hard bound's stop-and-go does on the same
 * merges (about bound / (2 × cycle)): 0.97 × in the test's model with steady merges, at least
 * 0.85 × with drifting and jittering ones — the price of the quarter kept back.
 *
 * The invariants a test checks against a model of merges (test/crawl/backlog-pace.test.ts): while
 * releases come no later than predicted, the backlog stays under its bound, every second has a
 * dispatch, and at least 0.85 × the hard bound's pages get through; a merge 8 × later than its
 * prediction still sees a dispatch every second.
 */

/** How far ahead of the longest recent interval the next release is expected (a margin of 25 %). */
const PREDICT_MARGIN = 1.25;
/** Intervals between releases that the prediction looks back over. */
const RECENT = 4;
/** The shortest time to the next release the pace plans for (ms): a release is not expected sooner. */
const MIN_HORIZON_MS = 20;
/** Allowance unused for this long is not kept (ms): a long quiet spell does not bank a burst. */
const BURST_MS = 100;

export class BacklogPace {
  private lastRelease: number;
  private readonly intervals: number[] = [];
  private tokens = 0;
  /** of the last room(): the part below half the bound, not paced */
  private unpaced = 0;
  private lastRoom: number;

  /** `bound`: the backlog's hard bound, in the units `room` is asked in; `now`: the clock (ms). */
  constructor(readonly bound: number, now: number) {
    this.lastRelease = now;
    this.lastRoom = now;
  }

  /** The stage released its batch at `now` (a merge ended and its pages left the backlog). */
  released(now: number): void {
    this.intervals.push(Math.max(0, now - this.lastRelease));
    if (this.intervals.length > RECENT) this.intervals.shift();
    this.lastRelease = now;
  }

  /** The time (ms) the pace expects until the next release, seen at `now`. */
  horizon(now: number): number {
    const since = now - this.lastRelease;
    let longest = 0;
    for (const t of this.intervals) longest = Math.max(longest, t);
    const predicted = PREDICT_MARGIN * longest;
    return Math.max(predicted - since, since - predicted / 2, MIN_HORIZON_MS);
  }

  /**
   * Units that may enter the backlog at `now`, which holds `backlog`: none at the bound; below half
   * of it, what is left to the half at once; and what the pace has accrued since the last call at
   * free / horizon per ms. `unit`: what one dispatch adds to the backlog (1 for pages; a page's
   * bytes for bytes), so that what is kept never falls below one dispatch's worth.
   */
  room(now: number, backlog: number, unit = 1): number {
    const dt = Math.max(0, now - this.lastRoom);
    this.lastRoom = now;
    const free = this.bound - backlog;
    if (free <= 0) {
      this.tokens = 0;
      this.unpaced = 0;
      return 0;
    }
    const rate = free / this.horizon(now);
    this.tokens = Math.min(this.tokens + rate * dt, Math.max(unit, rate * BURST_MS));
    this.unpaced = Math.max(0, Math.floor(this.bound / 2 - backlog));
    return Math.min(free, this.unpaced + Math.floor(this.tokens));
  }

  /** `n` units entered the backlog (taken from what `room` allowed). */
  took(n: number): void {
    this.tokens = Math.max(0, this.tokens - Math.max(0, n - this.unpaced));
    this.unpaced = Math.max(0, this.unpaced - n);
  }
}
