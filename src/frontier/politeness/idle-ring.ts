/**
 * The host table's idle hosts, in the order they turned idle: the candidates a full table evicts
 * to give a new host an entry (host-table.ts, evictIdle). Each host is in the ring at most once.
 *
 * An eviction call looks at no more than EVICT_SCAN entries: a host that cannot go yet — held until
 * QR has been read past its answer, or inside its politeness window — goes to the tail, one that is
 * no longer idle leaves the ring (it comes back when it turns idle again), so a full table costs
 * O(1) per host it refuses, however many hosts wait.
 *
 * A dry turn: once the calls since anything was freed have looked at every entry of the ring, no
 * entry can be freed before a host's state changes (`changed`), QR is read further (held hosts are
 * let go) or the earliest politeness window seen in that turn ends. Until one of those, a call looks
 * at nothing. Without this, a table full of held hosts cost EVICT_SCAN looks for every URL of an
 * unknown host a QR pass offered it: 17 % of the main thread's time in a resumed crawl over 10^7
 * hosts at --ram 512M (bench:soak, a CPU profile of run 2).
 */

/** Entries one eviction call looks at, at most. */
export const EVICT_SCAN = 512;

/** What an entry is, to `evict`'s caller. */
export const IDLE_FREE = 0;
/** Idle but not evictable yet: back to the tail (`due`: when its politeness window ends, or 0). */
export const IDLE_LATER = 1;
/** Not idle (URLs queued, in a heap, asking for robots): out of the ring until it turns idle again. */
export const IDLE_GONE = 2;

export class IdleRing {
  private ring: number[] = [];
  private head = 0;
  private member = new Uint8Array(1024);
  private dry = false;
  private dryLooks = 0;
  private dryQr = 0;
  private dryUntil = Infinity;
  /** Entries looked at, over the table's life (tests, profiles). */
  looks = 0;

  /** Hosts in the ring. */
  get length(): number {
    return this.ring.length - this.head;
  }

  /** Host h may have become evictable (it turned idle, or its state changed while it was). */
  changed(h: number): void {
    this.dry = false;
    this.dryLooks = 0;
    this.dryUntil = Infinity;
    this.queue(h);
  }

  /**
   * Frees up to `want` hosts: looks at the entries from the head, at most EVICT_SCAN, and calls
   * `free(h)` for each that `look(h)` says can go. `qrRead` is the refill's qrVisited (a change
   * ends a dry turn); `dueOf(h)` the end of a LATER host's politeness window. Returns how many were freed.
   */
  evict(now: number, want: number, qrRead: number, look: (h: number) => number, dueOf: (h: number) => number, free: (h: number) => void): number {
    if (this.dry) {
      if (qrRead === this.dryQr && now < this.dryUntil) return 0;
      this.dry = false;
      this.dryLooks = 0;
      this.dryUntil = Infinity;
    }
    const size = this.length;
    let budget = Math.min(size, EVICT_SCAN);
    let freed = 0;
    let looks = 0;
    while (freed < want && budget-- > 0 && this.head < this.ring.length) {
      const h = this.ring[this.head++]!;
      this.member[h] = 0;
      looks++;
      const k = look(h);
      if (k === IDLE_FREE) {
        free(h);
        freed++;
      } else if (k === IDLE_LATER) {
        const due = dueOf(h);
        if (due > now && due < this.dryUntil) this.dryUntil = due;
        this.queue(h);
      }
    }
    this.looks += looks;
    if (freed > 0) {
      this.dryLooks = 0;
      this.dryUntil = Infinity;
    } else if ((this.dryLooks += looks) >= size) {
      this.dry = true;
      this.dryQr = qrRead;
    }
    if (this.head > 4096 && this.head * 2 > this.ring.length) {
      this.ring = this.ring.slice(this.head);
      this.head = 0;
    }
    return freed;
  }

  private queue(h: number): void {
    if (h >= this.member.length) {
      const m = new Uint8Array(Math.max(h + 1, this.member.length * 2));
      m.set(this.member);
      this.member = m;
    }
    if (this.member[h] === 1) return;
    this.member[h] = 1;
    this.ring.push(h);
  }
}
