/**
 * When the DRUM merges and the output sync run (thesis V.2: a DRUM merges when a bucket is full;
 * this crawler also merges on time, so that pages become durable and the frontier does not starve):
 * the scheduler (pipeline.ts) calls startMerges every turn. ContentSeen's merge is the content
 * stage's (content-stage.ts mergeContent), URLseen's the URLseen stage's (urlseen-stage.ts
 * mergeUrlSeen), the sync the durable stage's (durable-stage.ts); merges run in the DRUM worker
 * threads, one of each kind at a time.
 */
import { FetchStage } from './fetch/index.js';

/** Longest wait between ContentSeen merges while the frontier is not starving (see startMerges). */
const CONTENT_MERGE_MS = 1000;

export abstract class MergeSchedule extends FetchStage {
  protected contentMerging: Promise<void> | null = null;
  protected urlMerging: Promise<void> | null = null;
  protected merging = 0;
  private lastSync = Date.now();

  /**
   * Start DRUM merges in the background (they run in worker threads) when due: a buffer is full,
   * bodies wait for ContentSeen, or the frontier is starving. `force` merges whatever is buffered
   * (the frontier ran dry: a small crawl must not wait for a buffer to fill).
   */
  protected startMerges(force: boolean): void {
    const now = Date.now();
    const starving = this.frontier.readyCount() < this.cfg.fetchConcurrency;
    // ContentSeen: each merge rewrites the touched buckets' part of Z (one row per page crawled),
    // so its cost per page falls with the pages per merge. Once a second while the frontier has
    // work; every 250 ms while it starves (links reach URLseen only after their page's answer);
    // at once when the pipeline holds nothing else or the held bodies reach half their bound.
    // (Every 250 ms, or whenever no page was parsing, cost its thread 0.12–0.19 ms per page in
    // bench:e2e; once a second 0.05–0.06: docs/performance.md, "Main thread".)
    if (this.contentMerging === null && this.unmergedContent > 0 && !this.holdContentMerges &&
      (force || this.awaitingContentBytes >= this.contentBatchBytes / 2 || this.contentSeen.needsMerge ||
        (this.parsing === 0 && this.inFlight === 0) || now - this.lastContentMerge > (starving ? 250 : CONTENT_MERGE_MS))) {
      this.contentMerging = this.trackMerge(this.mergeContent()).finally(() => {
        this.contentMerging = null;
      });
    }
    if (this.urlMerging === null && this.unmergedLinks > 0 && this.contentMerging === null && !this.holdUrlMerges &&
      (force || this.urlSeen.needsMerge || (starving && now - this.lastUrlMerge > 100) || now - this.lastUrlMerge > 5000)) {
      this.urlMerging = this.trackMerge(this.mergeUrlSeen()).finally(() => {
        this.urlMerging = null;
      });
    }
    this.markSynced(now);
    if (this.urlMerging === null && this.awaitingSync.length > 0 && now - this.lastSync > 1000) {
      this.lastSync = now;
      void this.trackMerge(this.syncOutputs());
    }
  }

  /** A merge (or sync) started outside startMerges: counted in `merging`, its failure the crawl's. */
  protected trackMerge(p: Promise<void>): Promise<void> {
    this.merging++;
    return p
      .catch((e) => this.fail(e))
      .finally(() => {
        this.merging--;
        this.wake.kick();
      });
  }
}
