/**
 * What a resumed run must not fetch again, and how it knows. After a stop or a crash the frontier
 * resumes from its last commit, so it hands out again some URLs this crawl already handled; the
 * scheduler asks skipAtDispatch() before each request. Three sources, each bounded by work since
 * one checkpoint (never by the crawl):
 *
 *   - done.log (checkpoint.ts): pages made durable after the checkpoint. Dropped at dispatch
 *     ('done-before-crash'); an entry is kept as "skipped" for the run's life, since the frontier may
 *     hold a URL twice (below). Bound: one checkpoint interval's pages.
 *   - pending.bin: URLs re-admitted because they were not durable at the checkpoint. A kill inside a
 *     checkpoint (after pending.bin, before the frontier's commit) leaves such a URL in the
 *     frontier's committed state too, so it may be handed out twice: the first time it is fetched,
 *     later times dropped ('handed-out-twice'); a retry (503, reset…) is a new hand-out. Bound: the
 *     pending set at the checkpoint.
 *   - the admit log (admit-log.ts): URLseen's re-delivery, in the run's first merge, of a bucket
 *     whose URLs already reached BEAST before the kill is not admitted again (keepUnique). Bound:
 *     one merge's unique keys per URLseen bucket; cleared when the run's first URLseen merge ends.
 */
import type { KeySet } from './admit-log.js';

const NO_KEYS: KeySet = { size: 0, has: () => false };

export type SkipReason = 'done-before-crash' | 'handed-out-twice';

export class ResumeDedup {
  /** done.log: url → record, until the frontier hands the URL out (only shrinks) */
  private readonly done = new Map<string, Uint8Array>();
  /** done.log entries handed out once already (and skipped) */
  private readonly skipped = new Set<string>();
  /** pending.bin URLs → handed out in this run already */
  private readonly readmitted = new Map<string, boolean>();
  /** the admit log's keys, until the run's first URLseen merge has ended */
  private redelivered: KeySet = NO_KEYS;

  /** done.log's entries (url, record) of the checkpoint being resumed */
  addDone(url: string, rec: Uint8Array): void {
    this.done.set(url, rec);
  }

  /** URLs re-admitted from pending.bin */
  addReadmitted(urls: Iterable<string>): void {
    for (const u of urls) this.readmitted.set(u, false);
  }

  /** the admit log's keys (AdmitLog.open) */
  setRedelivered(keys: KeySet): void {
    this.redelivered = keys;
  }

  /** Why `url`, handed out by the frontier now, gets no request — or null: fetch it. */
  skipAtDispatch(url: string): SkipReason | null {
    if ((this.done.size > 0 || this.skipped.size > 0) && (this.done.delete(url) || this.skipped.has(url))) {
      this.skipped.add(url);
      return 'done-before-crash';
    }
    if (this.readmitted.size > 0) {
      const st = this.readmitted.get(url);
      if (st === true) return 'handed-out-twice';
      if (st === false) this.readmitted.set(url, true);
    }
    return null;
  }

  /** The frontier takes `url` back for a retry: its next hand-out is not a duplicate. */
  retried(url: string): void {
    if (this.readmitted.has(url)) this.readmitted.set(url, false);
  }

  /** Admit URLseen's unique key? false only for a re-delivery the admit log names. */
  keepUnique(hi: number, lo: number): boolean {
    return this.redelivered.size === 0 || !this.redelivered.has(hi, lo);
  }

  /** A URLseen merge of this run ended: it re-delivered the uncommitted bucket, if there was one. */
  mergeEnded(): void {
    this.redelivered = NO_KEYS;
  }

  /** done.log entries not yet handed out (a checkpoint keeps them in its done.log). */
  doneRecords(): Iterable<Uint8Array> {
    return this.done.values();
  }
}
