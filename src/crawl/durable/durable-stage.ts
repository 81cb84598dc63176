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
  /** WARC + crawl log durable → the pages waiting only for that leave the pending set. */
  protected async syncOutputs(): Promise<void> {
    if (this.awaitingSync.length === 0) return;
    const done = this.awaitingSync;
    this.awaitingSync = [];
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
