/**
 * The PLDs with the most page fetches in this run, for the status page's "top PLDs" table, in
 * fixed memory whatever the number of PLDs crawled (thesis ch. VI: a crawl meets millions of PLDs).
 *
 * Space-Saving (Metwally, Agrawal, El Abbadi 2005): at most `capacity` counters; a PLD without a
 * counter takes the one with the smallest count c and starts at c + 1, remembering c as its possible
 * over-count. Every PLD with more than N / capacity fetches (N = all fetches) holds a counter, and a
 * shown count exceeds the true one by at most its `overcount` (0 while fewer than `capacity` PLDs
 * were seen: then every count is exact).
 *
 * Each row also carries the STAR budget B its last fetched URL was admitted with and the largest
 * STAR count P seen (thesis VI.2: B is the PLD's pages per BEAST pass, P the URL's rank in its PLD).
 */

export interface PldRow {
  pld: string;
  /** Page fetches (any outcome) this run; exact when `overcount` is 0. */
  pages: number;
  /** The count may exceed the true one by up to this much (Space-Saving eviction). */
  overcount: number;
  /** STAR budget B of the PLD's most recently fetched URL. */
  budget: number;
  /** Largest STAR count P (rank of a URL in its PLD) among the fetched URLs. */
  admitted: number;
}

/** What the tally reads from a fetched URL (a FrontierUrl has these fields). */
export interface PldFetch {
  url: string;
  pldHi: number;
  pldLo: number;
  budget: number;
  admitted: number;
}

interface Entry extends PldRow {
  key: number;
}

/** Default counters kept: tens of KB at most. */
export const PLD_TALLY_CAPACITY = 256;

export class PldTally {
  private readonly entries = new Map<number, Entry>();

  /** `name(url)` gives the PLD's name; called only when a PLD takes a counter. */
  constructor(
    private readonly name: (url: string) => string,
    private readonly capacity = PLD_TALLY_CAPACITY,
  ) {
    if (!(capacity >= 1)) throw new RangeError('capacity must be at least 1');
  }

  /** Count one page fetch of `u`'s PLD. */
  add(u: PldFetch): void {
    // The 64-bit PLD hash folded to one JS number key (collisions only merge two display rows).
    const key = u.pldHi * 0x1_0000_0000 + (u.pldLo >>> 0);
    let e = this.entries.get(key);
    if (e === undefined) {
      let floor = 0;
      if (this.entries.size >= this.capacity) {
        let min: Entry | undefined;
        for (const x of this.entries.values()) if (min === undefined || x.pages < min.pages) min = x;
        this.entries.delete(min!.key);
        floor = min!.pages;
      }
      e = { key, pld: this.name(u.url), pages: floor, overcount: floor, budget: u.budget, admitted: 0 };
      this.entries.set(key, e);
    }
    e.pages++;
    e.budget = u.budget;
    if (u.admitted > e.admitted) e.admitted = u.admitted;
  }

  /** The `n` rows with the most fetches, most first (ties by name). */
  top(n: number): PldRow[] {
    return [...this.entries.values()]
      .sort((a, b) => b.pages - a.pages || (a.pld < b.pld ? -1 : a.pld > b.pld ? 1 : 0))
      .slice(0, n)
      .map(({ pld, pages, overcount, budget, admitted }) => ({ pld, pages, overcount, budget, admitted }));
  }
}
