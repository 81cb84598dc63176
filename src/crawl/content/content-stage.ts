/**
 * Stage 3 of a page job (thesis Fig. 2: parser → ContentSeen; IV.3): the parser's output, delivered
 * here by the pools' lanes (src/threads/page/lanes.ts: the parse pool's when this thread fetched the
 * page, a page worker's with --page-workers on). A sitemap's entries are read here (src/sitemap,
 * into URLseen like links). A 2xx page's payload digest goes into ContentSeen's
 * DRUM (check+update, aux = the job's id), whose answers its DRUM delivers to the archive stage
 * (archive-stage.ts), not here; the page's link table and WARC group wait for that answer in
 * `awaitingContent`. Everything else (a non-2xx answer, a failed parse) goes to the archive stage as
 * it is. mergeContent runs ContentSeen's merges (the scheduler decides when: merge-schedule.ts).
 */
import { contentAux, encodeContentValue } from '../../threads/drum/drum-codec.js';
import { fingerprintInto } from '../../url/index.js';
import { isSitemapHops } from '../../sitemap/crawl.js';
import { LinkTable, splitParseOutput, type EncodedGroupLike } from '../../threads/links-codec.js';
import type { ParseOutcome } from '../../threads/page/parse-pool.js';
import { PARSE_ABORTED, PARSE_CODES, PARSE_OK, type ParseNote } from '../../threads/page/page-worker-protocol.js';
import { PARSE_ABORTED_CODE } from '../ports/index.js';
import type { PageJob } from '../core/index.js';
import { ArchiveStage } from '../archive/index.js';

const EMPTY = new Uint8Array(0);

export abstract class ContentStage extends ArchiveStage {
  /**
   * The parse pool's outcome for a page this thread fetched (ParseLane's sink). The body's bytes go
   * back to the body budget here: the encoded group holds the payload from now on.
   */
  protected async parsedInPool(job: PageJob, po: ParseOutcome): Promise<void> {
    this.endParse(job);
    const r = job.result!;
    const fu = job.fu;
    if (!po.ok && po.code === PARSE_ABORTED_CODE) {
      // A stop past its grace period left the page unparsed (stop.ts): not archived, and it stays
      // pending, so the resume fetches it again.
      this.fetcher.release(r);
      r.body = r.decoded = EMPTY;
      this.count(po.code);
      this.logFetch(job, po.code, null);
      this.wake.kick();
      return;
    }
    // A sitemap's entries enter URLseen as links (src/sitemap/crawl.ts), read from the body this
    // thread still holds.
    if (r.outcome === 'ok' && isSitemapHops(fu.hops) && this.sitemaps !== null) job.sitemapQueued = (await this.sitemaps.read(fu.url, fu.hops, r.decoded, fu.path)).queued;
    // The supervisor replaced the worker; the page is kept (response record written from the
    // body) and recorded with the supervisor's outcome code; its links are not followed.
    if (!po.ok) return this.archiveExchange(job, po.code);
    const bodyBytes = r.body.byteLength;
    this.fetcher.release(r);
    r.body = r.decoded = EMPTY;
    await this.parsed(job, po.table, po.group!, bodyBytes);
  }

  /**
   * A page worker's note on the page it fetched and parsed (PageLane's sink; null: no parse
   * follows). Only the heads, the encoded results and a sitemap's decoded body cross, never the
   * page's body.
   */
  protected async parsedOnWorker(job: PageJob, x: ParseNote | null): Promise<void> {
    this.endFlight(job); // (when the worker never reported the fetch: a closed pool)
    const parsing = job.parsing;
    this.endParse(job);
    if (x === null || !parsing) return;
    const fu = job.fu;
    const r = job.result!;
    const rq = x.requestHeadBytes ?? 0;
    if (x.heads !== undefined) {
      r.requestHead = x.heads.subarray(0, rq);
      r.responseHead = x.heads.subarray(rq);
    }
    if (r.outcome === 'ok' && x.decoded !== undefined && this.sitemaps !== null) job.sitemapQueued = (await this.sitemaps.read(fu.url, fu.hops, x.decoded, fu.path)).queued;
    const po = x.out !== undefined ? splitParseOutput(x.out) : null;
    // `out` is this page's alone and its table came apart: the WARC writer's thread may take it
    if (po !== null && x.table !== undefined) {
      po.table = x.table;
      if (po.group !== null) po.group.owned = true;
    }
    if (x.parse === PARSE_ABORTED) {
      // A stop past its grace period left the page unparsed (stop.ts): not archived; it stays
      // pending, so the resume fetches it again.
      this.count(PARSE_ABORTED_CODE);
      this.logFetch(job, PARSE_ABORTED_CODE, null);
      this.wake.kick();
      return;
    }
    if (x.parse !== PARSE_OK) {
      // The parser failed: archived without links (CRAWL_PARSE_ERROR / LIMIT); or the worker died
      // with the page (CRAWL_PARSE_CRASH / TIMEOUT: its body died too, nothing to archive).
      const code = PARSE_CODES[x.parse]!;
      this.count(code);
      return this.archiveAsIs(job, code, po?.group ?? null, null, (job.sitemapQueued ?? 0) > 0, true);
    }
    // (the body stayed in the worker: only the table and the encoded group are held here)
    await this.parsed(job, po!.table, po!.group!, 0);
  }

  /** A page's parse output (either path): non-2xx to the archive stage as is; 2xx to ContentSeen. */
  private async parsed(job: PageJob, table: Uint8Array, group: EncodedGroupLike, bodyBytes: number): Promise<void> {
    const r = job.result!;
    job.table = new LinkTable(table);
    job.group = group;
    // Non-2xx answers are archived as they are; only 2xx payloads take part in dedup.
    if (r.outcome !== 'ok') return this.archiveAsIs(job, r.outcome, group, group.payloadDigest, r.location !== undefined, !job.retry);
    const digest = job.table.info().digest;
    fingerprintInto(digest, this.fp, 0);
    contentAux[0] = job.id;
    contentAux[1] = job.id >>> 8;
    contentAux[2] = job.id >>> 16;
    contentAux[3] = job.id >>> 24;
    job.bodyBytes = bodyBytes + table.byteLength + group.data.byteLength;
    // The encoded group holds the body now: let the fetched bytes go (the result is ours alone).
    r.body = EMPTY;
    r.decoded = EMPTY;
    this.awaitingContent.set(job.id, job);
    this.awaitingContentBytes += job.bodyBytes;
    this.contentBytesPerPage += (job.bodyBytes - this.contentBytesPerPage) / 64;
    this.contentSeen.checkUpdate(this.fp[0]!, this.fp[1]!, encodeContentValue(job.fu.url, job.date!), contentAux);
    this.unmergedContent++;
    this.wake.kick();
  }

  /** A ContentSeen merge: its answers go to the archive stage as they come (onContentResults). */
  protected async mergeContent(): Promise<void> {
    if (this.unmergedContent === 0) return;
    const n = this.unmergedContent;
    this.unmergedContent = 0;
    this.lastContentMerge = Date.now();
    const t0 = performance.now();
    await this.runMetrics.contentMerges.time(this.contentSeen.merge());
    this.contentPace.released(Date.now());
    if (process.env.DRUMCRAWL_DEBUG_TIMING) console.error(`content merge ${n} in ${(performance.now() - t0).toFixed(0)} ms`);
  }
}
