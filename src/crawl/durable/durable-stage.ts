/**
 * The last stage of a page job (durability, checkpoint.ts; thesis Fig. 2 ends at the frontier, a
 * resumable crawl needs this step): the pages whose WARC records and crawl-log lines are written,
 * and whose links are in a merged URLseen (urlseen-stage.ts), leave the pending set once the WARC
 * file, the crawl log and sitemaps.log are synced; done.log then records them, so that a resume
 * does not fetch them again. Each sync's WARC position is recorded too (warc-synced.ts): a resume
 * after a crash reads the WARC back from there rather than from the last checkpoint.
 */
import { CrawlerCore } from '../core/index.js';

export abstract class DurableStage extends CrawlerCore {
  /** When the WARC's synced position was last recorded, and the recording under way (markSynced). */
  private lastMark = Date.now();
  private marking: Promise<void> | null = null;
  private syncChain: Promise<void> = Promise.resolve();

  /**
   * The WARC synced and its position recorded (warc-synced.ts) when a second has passed since the
   * last time, whether or not a page waits for it: while a URLseen merge runs for seconds no page
   * does (mergeUrlSeen syncs at its end), and a crash then would leave all the WARC written since
   * to be read back at the resume — 55 MB in one kill at 10^6 hosts.
   */
  protected markSynced(now: number): void {
    if (this.syncedLog === null || this.marking !== null || now - this.lastMark < 1000) return;
    this.lastMark = now;
    const log = this.syncedLog;
    this.marking = this.warc.syncedPosition()
      .then((pos) => { void log.record(pos); })
      .catch((e: unknown) => this.fail(e))
      .finally(() => {
        this.marking = null;
      });
  }

  /** The recording under way, if any (awaited before the WARC closes). */
  protected async marked(): Promise<void> {
    await this.marking;
  }

  /**
   * WARC + crawl log durable → the pages waiting only for that leave the pending set. One at a
   * time (a URLseen merge's pages and a checkpoint's may come together): each waits for the one
   * before it.
   */
  protected syncOutputs(): Promise<void> {
    const run = this.syncChain.then(() => this.syncNow());
    this.syncChain = run.catch(() => undefined);
    return run;
  }

  private async syncNow(): Promise<void> {
    if (this.awaitingSync.length === 0) return;
    const done = this.awaitingSync;
    this.awaitingSync = [];
    this.lastMark = Date.now();
    const pos = await this.warc.syncedPosition();
    // (not awaited: a mark is only ever older than the truth — warc-synced.ts)
    void this.syncedLog?.record(pos);
    await this.crawlLog.flush();
    // sitemaps.log's lines go out with the crawl log's: a sitemap read long ago is listed whole
    // once any page after it is durable, not only when 64 KiB more lines have come.
    await this.sitemapLog?.flush();
    const recs: Uint8Array[] = [];
    for (const id of done) {
      const rec = this.pending.get(id);
      if (rec !== undefined) recs.push(rec);
      this.pending.delete(id);
    }
    // After the data is durable, never before: an entry makes resume skip the URL.
    this.doneLog?.append(recs);
  }
}
