/**
 * Stage 6 of a page job (thesis Fig. 2: URLseen → STAR → BEAST → politeness): URLseen's answers,
 * delivered here by its DRUM (opening.ts wires its callback to onUrlSeenResults), are the page's
 * unique new URLs; they go to STAR's budgets and BEAST's queues (frontier.admitUnique), where the
 * politeness heaps release them to the crawling threads (fetch-stage.ts).
 */
import { scanUniqueUrls } from '../../threads/drum/drum-codec.js';
import { DurableStage } from '../durable/index.js';

export abstract class AdmitStage extends DurableStage {
  /**
   * URLseen answers: unique URLs → STAR (B, P) → BEAST, placed but not yet durable: URLseen's DRUM
   * calls `frontier.commitAdmits()` (its beforeCommit) once per bucket, after the bucket's last
   * chunk, and commits its Z only when that resolved — nothing it reported unique can be lost.
   */
  protected async onUrlSeenResults(batch: Uint8Array): Promise<void> {
    const admits = this.admitLog;
    const again = this.again;
    const unique = scanUniqueUrls(batch, (hi, lo) => {
      admits?.add(hi, lo);
      return again.keepUnique(hi, lo);
    });
    this.counters.urlsSeen += unique.count;
    if (unique.count === 0) return;
    // Admitted at once, not in the scheduler's next turn (that wait cost up to 500 ms per result
    // chunk, ~16 chunks per merge): STAR runs in a worker thread, BEAST appends without blocking
    // I/O; the commit (fdatasyncs, on the thread pool) runs once per bucket in beforeCommit.
    await this.frontier.admitUnique(unique, Date.now());
    this.wake.kick();
  }
}
