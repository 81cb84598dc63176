/**
 * BEAST's re-spread (thesis VII.2, Fig. 5): when the last queue of the ring is emptied, QF is re-read
 * and split over j new queues — B URLs of a PLD per queue, counted per pass — and j doubles; QH
 * (deferrals) is spread in the same pass, and alone over the existing queues. At the same wrap the
 * deferrals of QN whose host has room go to QV (releaseDeferred). The invariants and the reasons
 * for QH, QN and QV are in beast.ts.
 */
import { peekFrontierUrl, rebudgetRecords } from '../record.js';
import { BeastQueues, type QRef } from './beast-queues.js';

export abstract class BeastRespread extends BeastQueues {
  /** Records the last re-spread put into ring queues (0: everything stayed in QF/QH). */
  lastRespreadMoved = 0;

  /**
   * At a wrap: the deferrals in QN whose host has room in RAM go to QV, at most B per PLD (as a
   * re-spread puts at most B per PLD into a queue); the rest stay in QN (a fresh file: the old
   * one is removed). Nothing here is durable (see the invariants). Returns the URLs moved.
   */
  protected async releaseDeferred(): Promise<number> {
    const old = this.qn;
    this.qn = this.fresh('n');
    if (this.qv.q!.length === 0) {
      const drained = this.qv;
      this.qv = this.fresh('v');
      await this.store.remove(drained.name);
    }
    const counters = this.counters;
    counters.clear();
    const keep = this.opts.hostFull;
    const pk = this.peek;
    let moved = 0;
    for (;;) {
      const recs = old.q!.shiftSync(this.batch);
      if (recs.length === 0) break;
      for (const rec of recs) {
        peekFrontierUrl(rec, pk);
        let seen = counters.get(pk[2]!, pk[3]!);
        const full = keep !== undefined && keep(pk[0]!, pk[1]!);
        if (full || (seen < 0 && counters.size >= this.maxPassPlds) || (pk[4]! > 0 && seen >= pk[4]!)) {
          this.qn.q!.push(rec);
          continue;
        }
        if (seen < 0) seen = 0;
        counters.set(pk[2]!, pk[3]!, seen + 1);
        this.qv.q!.push(rec);
        moved++;
      }
    }
    counters.clear();
    await this.store.remove(old.name);
    return moved;
  }

  /**
   * Thesis VII.2: re-read QF, split it over j new queues (B per PLD per queue), double j; QH
   * (deferrals) is spread in the same pass, and alone it spreads over the existing queues.
   */
  protected async respread(): Promise<void> {
    const jOld = this.j;
    const doubling = this.qf.q!.length > 0 && jOld * 2 <= this.maxQueues;
    const count = jOld;
    const targets: QRef[] = [];
    for (let k = 0; k < count; k++) targets.push(doubling ? this.fresh('q') : this.ring[k]!);
    const oldQf = this.qf;
    const oldQh = this.qh;
    // New admissions and deferrals go to the new QF/QH from now on; the old ones stay named by
    // the manifest (drain) until the targets are durable.
    this.qf = this.fresh('f');
    this.qh = this.fresh('h');
    this.drainF.push(oldQf);
    this.drainH.push(oldQh);
    this.spreading = true;
    const counters = this.counters;
    counters.clear();
    const touched = new Set<QRef>();
    // Deferred URLs first: they had passed the budget already.
    try {
      await this.spread(oldQh, this.qh, targets, touched, this.opts.hostFull);
      await this.spread(oldQf, this.qf, targets, touched);
    } finally {
      this.spreading = false;
    }
    counters.clear();
    if (doubling) {
      for (const t of targets) this.ring.push(t);
      this.j = jOld * 2;
      this.doublings++;
    }
    this.respreads++;
    this.lastRespreadMoved = 0;
    for (const t of touched) if (t !== this.qf && t !== this.qh) this.lastRespreadMoved += t.q!.pushed - t.p;
    this.c = 0;
    // Their records now sit in the targets / the new QF and QH. No commit here (it would cost an
    // fdatasync per target at every wrap): the old QF/QH stay named by the manifest (drain) until
    // the next commit has synced the targets, and are deleted then (see capture).
    this.unsynced.delete(oldQf);
    this.unsynced.delete(oldQh);
    for (const t of touched) this.unsynced.add(t);
  }

  protected async spread(src: QRef, overflow: QRef, targets: QRef[], touched: Set<QRef>, keep?: (hi: number, lo: number) => boolean): Promise<void> {
    const counters = this.counters;
    const count = targets.length;
    for (;;) {
      let recs = src.q!.shiftSync(this.batch);
      if (recs.length === 0) break;
      if (this.opts.rebudget) recs = await rebudgetRecords(recs, this.opts.rebudget);
      else if (this.opts.pause) await this.opts.pause();
      const pk = this.peek;
      for (let i = 0; i < recs.length; i++) {
        const rec = recs[i]!;
        peekFrontierUrl(rec, pk);
        if (keep !== undefined && keep(pk[0]!, pk[1]!)) {
          overflow.q!.push(rec); // host still full in RAM: stays deferred
          touched.add(overflow);
          continue;
        }
        const pldHi = pk[2]!;
        const pldLo = pk[3]!;
        const budget = pk[4]!;
        let seen = counters.get(pldHi, pldLo);
        let k = Infinity;
        if (seen >= 0 || counters.size < this.maxPassPlds) {
          if (seen < 0) seen = 0;
          counters.set(pldHi, pldLo, seen + 1);
          if (budget > 0) k = Math.floor(seen / budget);
        }
        const t = k < count ? targets[k]! : overflow;
        t.q!.push(rec);
        touched.add(t);
      }
    }
  }
}
