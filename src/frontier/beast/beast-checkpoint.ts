/**
 * BEAST's durability points (thesis VII.2 keeps its queues on disk; a resumable crawl needs them
 * durable at-least-once, beast.ts's invariants): commitAppends (what was admitted), commitDeferred
 * (the deferrals, into QH) and the full checkpoint, which commits the read cursors and swaps
 * drained or mostly-read queues for fresh files so that disk use stays bounded.
 */
import { BeastRespread } from './respread.js';

/** A queue is compacted at a checkpoint once its read prefix is this large and > 2 × its unread part. */
const COMPACT_MIN_BYTES = 4 << 20;

export abstract class BeastCheckpoint extends BeastRespread {
  /**
   * What QN and QV hold moves to QH (called under the lock, before a capture that makes it
   * durable). Returns the names of the emptied files, to remove once that capture has landed.
   */
  protected promoteDeferred(): string[] {
    const gone: string[] = [];
    for (const which of ['qv', 'qn'] as const) {
      const src = this[which];
      if (src.q!.pushed === 0) continue;
      for (;;) {
        const recs = src.q!.shiftSync(this.batch);
        if (recs.length === 0) break;
        for (const rec of recs) this.qh.q!.push(rec);
        this.unsynced.add(this.qh);
      }
      this[which] = this.fresh(which === 'qv' ? 'v' : 'n');
      gone.push(src.name);
    }
    return gone;
  }

  /**
   * Makes the deferrals so far durable (in QH), ahead of a checkpoint: the frontier calls it
   * before it commits QR's cursor, since deferrals also come from QR (a URL whose robots answer
   * came but whose host is full in RAM). A crash between this and the checkpoint's commit of the
   * BEAST cursors may bring such a URL back twice — a window inside the checkpoint, like the
   * frontier's RAM snapshot (named before BEAST's cursors move).
   */
  commitDeferred(): Promise<void> {
    return this.withLock(async () => {
      const gone = this.promoteDeferred();
      await this.capture();
      for (const n of gone) await this.store.remove(n);
    });
  }

  /**
   * Makes everything admitted (and deferred) so far durable: an fdatasync per touched queue file and
   * one for the manifest, on the thread pool; no lock (the synchronous part cannot interleave with a
   * read); calls are chained. A `mark` above `committedMark` becomes it, named by this manifest (even
   * with nothing appended) and every later one: after a crash, committedMark ≥ mark iff it landed.
   */
  commitAppends(mark = 0): Promise<void> { return this.capture(false, mark); }

  /**
   * Full checkpoint. Call only once everything read from BEAST so far is durable elsewhere (the
   * frontier's RAM snapshot): commits the read cursors; drained ring queues are swapped for fresh
   * files, and a queue whose read prefix is much larger than its unread part is copied into a fresh
   * file (at most 1/2 of what it frees), so BEAST's disk use stays bounded; the old files are
   * deleted once the manifest naming their successors is durable.
   */
  checkpoint(): Promise<void> {
    return this.withLock(async () => {
      const drop: string[] = this.promoteDeferred();
      for (let k = 0; k < this.ring.length; k++) {
        const r = this.ring[k]!;
        const q = r.q!;
        const cur = q.cursor();
        if (cur.shifted === 0) continue; // nothing read: nothing to free
        const dead = cur.off;
        const live = q.end - cur.off;
        if (q.length === 0 || (dead >= COMPACT_MIN_BYTES && dead > 2 * live)) {
          const fresh = this.fresh('q');
          for (;;) {
            const recs = q.shiftSync(this.batch);
            if (recs.length === 0) break;
            for (const rec of recs) fresh.q!.push(rec);
            if (this.opts.pause) await this.opts.pause();
          }
          if (fresh.q!.pushed > 0) this.unsynced.add(fresh);
          this.unsynced.delete(r);
          this.ring[k] = fresh;
          drop.push(r.name);
        }
      }
      for (const r of [...this.ring, this.qf, this.qh]) {
        const q = r.q!;
        const cur = q.cursor();
        r.o = cur.off;
        r.i = cur.idx;
        r.s = cur.shifted;
        if (q.pushed !== r.p) this.unsynced.add(r);
      }
      await this.capture(true);
      for (const n of drop) await this.store.remove(n);
    });
  }
}
