/**
 * The frontier's RAM snapshot taken copy-on-free (Frontier.commit): the set of URLs in RAM at one
 * instant — queued or in flight, as the slots hold them — written out over many turns of the event
 * loop while the crawl goes on, instead of in the turn of that instant.
 *
 * Why: encoding every URL in RAM in one turn held the scheduler ~1.0–1.6 µs per URL (444,000 URLs
 * at the default --ram: 0.46–0.70 s at first, 0.8–1.3 s later in an hour's bench:soak on a loaded
 * box), so every periodic checkpoint stopped all fetching for about a second.
 *
 * Invariant: every URL in a slot at begin (the instant) is emitted exactly once, and no other.
 *   - A cursor walks the slots that existed at begin (`end`), emitting those still held.
 *   - A slot freed before the cursor reaches it emits its URL first (`leaving`: freeSlot calls it
 *     while the URL is intact), then counts as visited.
 *   - A slot taken after begin (`born`: enqueue) is skipped: its URL was not in RAM at the instant
 *     (slots past `end` are too). The frontier lets nothing be read into RAM while a commit runs;
 *     this keeps the snapshot exact whatever enters meanwhile.
 * A URL's fields are read when it is emitted: a retry in between counts its attempt (the slot and
 * the URL are the same).
 *
 * RAM: one byte per slot that existed at begin (≤ ramUrls), for the snapshot's length.
 */
import type { FrontierUrl } from '../record.js';

export class RamSnapshot {
  private cursor = 0;
  /** 1: the slot's URL was emitted already, or the slot was taken after begin. */
  private readonly visited: Uint8Array;
  private error: unknown = null;

  constructor(
    private readonly slots: readonly (FrontierUrl | null)[],
    private readonly end: number,
    private readonly emit: (u: FrontierUrl) => void,
  ) {
    this.visited = new Uint8Array(end);
  }

  /** Slot s was taken now. */
  born(s: number): void {
    if (s < this.end) this.visited[s] = 1;
  }

  /** Slot s, holding u, is being freed now. */
  leaving(s: number, u: FrontierUrl): void {
    if (s < this.cursor || s >= this.end || this.visited[s] === 1) return;
    this.visited[s] = 1;
    this.send(u);
  }

  /**
   * Emits the URLs of up to `max` more slots; true when every slot is done. Throws the first error
   * an emit raised (an emit inside freeSlot must not throw into the frontier's bookkeeping: it is
   * kept for here).
   */
  step(max: number): boolean {
    const stop = Math.min(this.end, this.cursor + max);
    for (let s = this.cursor; s < stop; s++) {
      if (this.visited[s] === 1) continue;
      const u = this.slots[s];
      if (u !== null && u !== undefined) this.send(u);
    }
    this.cursor = stop;
    if (this.error !== null) throw this.error;
    return stop === this.end;
  }

  private send(u: FrontierUrl): void {
    if (this.error !== null) return;
    try {
      this.emit(u);
    } catch (e) {
      this.error = e;
    }
  }
}
