/**
 * Per-PLD pacing: a PLD's budget as a share of the crawl's capacity per unit of time.
 *
 * WHY. STAR's budget B_x (thesis VI.2) is "the number of pages of PLD x allowed to pass to
 * crawling per unit of time" — in IRLbot the unit is one BEAST queue period T0 (VII.2). BEAST
 * enforces it per queue *read*, and the politeness heaps (VII.1) enforce τh per *host*. Neither
 * bounds a PLD's fetch rate: a spammer who mints host names (`s<random>.farm.test`, each on its
 * own IP, each due at once) gets one fetch slot per host, so the PLD's rate grows with the number
 * of names it mints, and the pages it fetches bring the parse, URLseen, STAR and archive work
 * behind them. Measured on the adv-mint preset (bench:adversary, 50 ms τh): the good web alone is
 * crawled at 35–170 pages/s with at most one or two fetches in flight — it is bound by the latency
 * of a hop (fetch → parse → URLseen → STAR → BEAST → RAM), not by fetch slots — and once the farm
 * is reached it takes ~96 % of the fetches (≈ 700/s: one robots.txt fetch, one DNS lookup and one
 * page per minted host), the CPU goes to the farm's pages and the good web's hop latency grows.
 *
 * INVARIANT (per-PLD pace). While any *other* PLD that is not held back itself (at most k of its
 * hosts parked) has released a fetch within `graceMs`, a PLD x
 * is released (pages, and the DNS lookup + robots.txt fetch of each new host) at most once per
 *
 *     τp(x) = τh · B0 / (k · B_x)        (τh = the low-ranked host delay, k = `hostsPerPld`)
 *
 * on average (a token bucket of depth k: k releases may go back to back after a pause),
 * i.e. at most k hosts' worth of low-reputation pace, scaled up by B_x/B0 (VII.1 scales τh down by
 * B_x; here the whole PLD is scaled, not each host). A PLD of B0 therefore cannot take more than
 * k/τh fetches per second however many hosts it mints, while a PLD with a top budget (10^3–10^4 ×
 * B0) is effectively unpaced. B_x is the best budget STAR gave any URL of x so far (`noteBudget`),
 * so a PLD whose in-degree grew is un-throttled at its next URL, not when its old URLs drain.
 *
 * WORK-CONSERVING. (1) When no other PLD released anything for `graceMs` without being held back
 * itself (a crawl left with only farms, one or many), x is not paced at all: its parked hosts are
 * released at once and it runs at full speed. (2) PLDs are never paced against each other: a fast site is limited only by its own τp,
 * never by the pace of a slow site of equal budget. (3) Nothing is dropped: a host refused here is
 * *parked* on its PLD (its URLs stay in RAM, BEAST's never-discard property holds) and re-offered
 * when its PLD's τp has passed; parked hosts do not count as dispatchable work for the refill
 * pacing, so BEAST keeps reading the other PLDs' URLs instead of waiting on the farm's.
 *
 * HOW THIS RELATES TO STAR. The budget is STAR's B = F(d) from PLD in-degree (VI.2) unchanged;
 * what changes is what B buys: a share of releases per unit of time for the whole PLD, as VI.2
 * defines budgets, rather than per-host slots. In-degree can be bought (adv-bought, adv-clique:
 * PLDs the spammer controls linking to each other get d ≥ 2 and, with the `crawl` preset, a top
 * budget); pacing by B does not help against those, see docs/frontier.md (Capacity).
 *
 * Cost: O(1) per release, O(log P) per park/unpark (P = PLDs with parked hosts); RAM: one entry
 * per PLD with hosts in the table (≤ maxHosts), swept when the table is full.
 */
import { IdHeap } from './heap.js';
import { U64Map } from './u64-map.js';

export interface PacerOptions {
  /** B0: the budget of a low-ranked PLD. */
  b0: number;
  /** τh of low-ranked hosts, read at every release (live delay changes apply at once). */
  hostDelayMs(): number;
  /** k: how many hosts' worth of τh pace a PLD of budget B0 gets. */
  hostsPerPld: number;
  /** A PLD alone for this long (no other PLD released) is not paced. */
  graceMs: number;
  /** PLD table cap. */
  maxPlds: number;
}

/** The defaults (docs/frontier.md, Capacity). */
export const PACER_DEFAULTS = { hostsPerPld: 2, graceMs: 2000 } as const;

export class PldPacer {
  private readonly o: PacerOptions;
  private readonly index = new U64Map(1024);
  private cap = 0;
  private used = 0;
  private free: number[] = [];
  private pHi = new Uint32Array(0);
  private pLo = new Uint32Array(0);
  /** Per PLD: the last release (or bucket update) and the tokens the bucket held then. */
  private lastAt = new Float64Array(0);
  private tokens = new Float64Array(0);
  private budget = new Float64Array(0);
  private parkHead = new Int32Array(0);
  private parkTail = new Int32Array(0);
  private parkCount = new Int32Array(0);
  /** Host id → next parked host of the same PLD (-1 = last). */
  private hostNext = new Int32Array(0);
  /** PLDs with parked hosts, keyed by the time they may release again. */
  private readonly heap = new IdHeap(256);
  /**
   * The last PLD that released while nothing of it was parked ("free" work), its last such release,
   * and the last free release by any other PLD.
   */
  private lastId = -1;
  private lastTime = -Infinity;
  private otherTime = -Infinity;
  /** Releases refused (parks), and releases let through only because the PLD was alone. */
  parked = 0;
  aloneReleases = 0;
  private parkedNow = 0;

  constructor(o: PacerOptions) {
    this.o = o;
    this.grow(1024);
  }

  private grow(cap: number): void {
    const g = <T extends Uint32Array | Int32Array | Float64Array>(a: T, C: new (n: number) => T): T => {
      const b = new C(cap);
      b.set(a);
      return b;
    };
    this.pHi = g(this.pHi, Uint32Array);
    this.pLo = g(this.pLo, Uint32Array);
    this.lastAt = g(this.lastAt, Float64Array);
    this.tokens = g(this.tokens, Float64Array);
    this.budget = g(this.budget, Float64Array);
    this.parkHead = g(this.parkHead, Int32Array);
    this.parkTail = g(this.parkTail, Int32Array);
    this.parkCount = g(this.parkCount, Int32Array);
    for (let i = cap - 1; i >= this.cap; i--) this.free.push(i);
    this.cap = cap;
  }

  /** Id of a PLD, created on first use (-1 when the table is full of PLDs with parked hosts). */
  private idOf(hi: number, lo: number, now: number): number {
    let id = this.index.get(hi, lo);
    if (id >= 0) return id;
    if (this.free.length === 0) {
      if (this.cap < this.o.maxPlds) this.grow(Math.min(this.o.maxPlds, this.cap * 2));
      else this.sweep(now);
      if (this.free.length === 0) return -1;
    }
    id = this.free.pop()!;
    this.used++;
    this.index.set(hi, lo, id);
    this.pHi[id] = hi;
    this.pLo[id] = lo;
    this.lastAt[id] = -Infinity;
    this.tokens[id] = 0;
    this.budget[id] = this.o.b0;
    this.parkHead[id] = -1;
    this.parkTail[id] = -1;
    this.parkCount[id] = 0;
    return id;
  }

  /** Forgets PLDs with nothing parked whose pace window has passed (they would be allowed anyway). */
  private sweep(now: number): void {
    for (let id = 0; id < this.cap; id++) {
      if (this.parkCount[id] !== 0 || this.lastAt[id]! + this.o.hostsPerPld * this.pace(id) > now || this.index.get(this.pHi[id]!, this.pLo[id]!) !== id) continue;
      if (id === this.lastId) continue;
      this.index.delete(this.pHi[id]!, this.pLo[id]!);
      this.free.push(id);
      this.used--;
    }
  }

  /** Makes room for host ids below `hosts` (Politeness' host table grew). */
  ensureHosts(hosts: number): void {
    if (hosts <= this.hostNext.length) return;
    const b = new Int32Array(hosts);
    b.set(this.hostNext);
    this.hostNext = b;
  }

  /** STAR gave a URL of this PLD budget `b`: the PLD is paced by the best budget seen. */
  noteBudget(hi: number, lo: number, b: number, now: number): void {
    if (!(b > this.o.b0)) return;
    const id = this.idOf(hi, lo, now);
    if (id >= 0 && b > this.budget[id]!) this.budget[id] = b;
  }

  /** τp of a PLD id. */
  private pace(id: number): number {
    return (this.o.hostDelayMs() * this.o.b0) / (this.o.hostsPerPld * Math.max(this.o.b0, this.budget[id]!));
  }

  /** When the PLD's bucket holds one token again. */
  private tokenAt(id: number): number {
    return this.lastAt[id]! + Math.max(0, 1 - this.tokens[id]!) * this.pace(id);
  }

  private alone(id: number, now: number): boolean {
    const other = id === this.lastId ? this.otherTime : this.lastTime;
    return now - other >= this.o.graceMs;
  }

  /**
   * May PLD (hi, lo) release one fetch (a page, or a new host's DNS + robots.txt) at `now`? If so
   * the release is counted against its pace; if not, the caller parks the host (`park`).
   */
  tryRelease(hi: number, lo: number, now: number): boolean {
    const id = this.idOf(hi, lo, now);
    if (id < 0) return true; // no room to track it: not paced (the table holds ≥ maxHosts PLDs)
    const alone = this.alone(id, now);
    // Token bucket of depth k refilled at 1/τp with τp as it is now (a live change of τh applies
    // at once): a PLD may do k releases back to back (a new host's robots.txt and its first page),
    // then one per τp.
    const pace = this.pace(id);
    const tokens = Math.min(this.o.hostsPerPld, this.tokens[id]! + (now - this.lastAt[id]!) / pace);
    if (!alone && tokens < 1) return false;
    if (alone) this.aloneReleases++;
    this.tokens[id] = alone ? this.o.hostsPerPld : tokens - 1;
    this.lastAt[id] = now;
    // Only releases of PLDs that are not held back themselves show that other work is waiting:
    // two farms, both paced, must not keep each other paced (a crawl left with farms runs free).
    // Held back = more hosts parked than one bucket lets go; a site of a few hosts that waits a
    // moment for its own token still counts as work of another PLD.
    if (this.parkCount[id]! <= this.o.hostsPerPld) {
      if (id !== this.lastId) {
        this.otherTime = this.lastTime;
        this.lastId = id;
      }
      this.lastTime = now;
    }
    return true;
  }

  /** Parks host `h` (refused by tryRelease) on its PLD until the PLD may release again. */
  park(hi: number, lo: number, h: number, now: number): void {
    const id = this.idOf(hi, lo, now);
    if (id < 0) return;
    this.ensureHosts(h + 1);
    this.hostNext[h] = -1;
    if (this.parkTail[id]! < 0) this.parkHead[id] = h;
    else this.hostNext[this.parkTail[id]!] = h;
    this.parkTail[id] = h;
    this.parkCount[id]!++;
    this.parked++;
    this.parkedNow++;
    if (!this.heap.has(id)) this.heap.set(id, this.tokenAt(id));
  }

  /**
   * Hands back (through `fn`) the parked hosts whose PLD may release again at `now`: one per PLD
   * whose τp has passed, or all of a PLD that is now alone (only farms left: full speed).
   */
  unpark(now: number, fn: (h: number) => void): void {
    const heap = this.heap;
    while (heap.size > 0 && heap.minKey() <= now) {
      const id = heap.pop();
      let n = this.alone(id, now) ? this.parkCount[id]! : 1;
      while (n-- > 0 && this.parkHead[id]! >= 0) {
        const h = this.parkHead[id]!;
        this.parkHead[id] = this.hostNext[h]!;
        if (this.parkHead[id]! < 0) this.parkTail[id] = -1;
        this.parkCount[id]!--;
        this.parkedNow--;
        fn(h);
      }
      // Looked at again after one more τp (the host handed back takes the current slot).
      if (this.parkCount[id]! > 0) heap.set(id, Math.max(this.tokenAt(id), now + this.pace(id)));
    }
  }

  /** Hosts parked now. */
  get parkedHosts(): number {
    return this.parkedNow;
  }

  /** Earliest time a parked host may be handed back (Infinity when none is parked). */
  nextWakeup(): number {
    return this.heap.minKey();
  }

  /** Distinct PLDs tracked (stats). */
  get plds(): number {
    return this.used;
  }
}
