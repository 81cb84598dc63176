/**
 * Stage 2 of a page job (thesis Fig. 2: crawling threads → parser, and the fetch's report to the
 * politeness heaps): a fetch's answer, from this thread's fetch (fetch-stage.ts fetchPage) or from
 * a page worker (its lane delivers the report here: workerFetched). The page is counted and
 * reported to the frontier (its host's next due time, a retry); a page fetched on this thread has
 * its body handed to the parse pool, whose lane delivers the output to the content stage
 * (content-stage.ts): this stage never sees it. A page worker parses the page itself and its note
 * goes to the content stage too.
 */
import { isHttpResponse, type FetchResult } from '../../fetch/index.js';
import type { FrontierUrl } from '../../frontier/index.js';
import { isSitemapHops } from '../../sitemap/crawl.js';
import { MAX_REQUISITE_HOPS, isCss, requisiteChain } from '../../config/requisites.js';
import { ParseLane } from '../../threads/page/lanes.js';
import { isHtml, truncation, type PageAnswer } from '../../threads/page/page-worker-protocol.js';
import { ABORTED_OUTCOME, politenessOutcome } from '../ports/index.js';
import type { PageJob } from '../core/index.js';
import { ContentStage } from '../content/index.js';

const EMPTY = new Uint8Array(0);

export abstract class FetchedStage extends ContentStage {
  /** The parse pool with its sink, the content stage (--page-workers off; else null). */
  private readonly parseLane = this.pool === null ? null : new ParseLane<PageJob>(this.pool, (job, po) => this.parsedInPool(job, po));

  /**
   * A page this thread fetched (its fetch ended: fetch-stage.ts fetchPage). Resolves once the page
   * has left the parse pool's stages (ParseLane.submit), or at once when it goes no further.
   */
  protected takeFetched(job: PageJob, r: FetchResult): Promise<void> | undefined {
    job.result = r;
    if (this.aborted(job, r)) {
      this.fetcher.release(r);
      return;
    }
    this.fetched(job, r, r.body.byteLength);
    if (!isHttpResponse(r)) {
      // Transport failure (DNS, connect, timeout, reset…): nothing to archive; logged with its code.
      this.fetcher.release(r);
      this.logFetch(job, r.outcome, null);
      if (!job.retry) this.awaitingSync.push(job.id);
      return;
    }
    this.counters.pagesOk++;
    return this.toParse(job, r);
  }

  /** The body to the parse pool (ParseLane): its outcome goes to the content stage. */
  private toParse(job: PageJob, r: FetchResult): Promise<void> {
    const fu = job.fu;
    const ok2xx = r.outcome === 'ok';
    // A sitemap is not parsed for links: the content stage reads its entries (src/sitemap/crawl.ts).
    const html = ok2xx && isHtml(r.contentType) && !isSitemapHops(fu.hops);
    const follow = html && (this.cfg.maxDepth === null || fu.hops < this.cfg.maxDepth);
    const css = ok2xx && isCss(r.contentType) && !isSitemapHops(fu.hops);
    this.startParse(job);
    return this.parseLane!.submit(job, {
      url: fu.url, body: r.body, decoded: r.decoded, charset: r.charset, html, follow, requisites: this.requisitesOf(fu), css,
      exchange: { ip: fu.ip, dateMs: job.date!.getTime(), requestHead: r.requestHead, responseHead: r.responseHead!, truncated: truncation(r) },
    });
  }

  /**
   * A page worker's fetch report (PageLane's sink, as soon as the fetch ends): reported to the
   * frontier at once, as for a fetch on this thread; the parse follows in the worker.
   */
  protected workerFetched(job: PageJob, a: PageAnswer): void {
    const fu = job.fu;
    this.endFlight(job);
    if (a.at !== 0 && !this.pages!.reportingStarts) this.dispatched(fu.url, a.ip, false, a.at);
    job.date = new Date(a.at !== 0 ? a.at : Date.now());
    const r: FetchResult = {
      url: fu.url, ip: a.ip, outcome: a.outcome, errorCode: a.errorCode, status: a.status, contentType: a.contentType,
      location: a.location, retryAfterMs: a.retryAfterMs, truncated: a.truncated, truncatedReason: a.truncatedReason as FetchResult['truncatedReason'],
      requestHead: EMPTY, body: EMPTY, decoded: EMPTY, startedAt: job.date.getTime(), timings: { totalMs: a.totalMs },
    };
    if (a.wireAt !== undefined) r.wireAt = a.wireAt;
    else if (a.at !== 0) r.wireAt = a.at;
    job.result = r;
    if (this.aborted(job, r)) return;
    this.fetched(job, r, a.payloadBytes);
    if (!a.parses) {
      // Transport failure (DNS, connect, timeout, reset…): nothing to archive; logged with its code.
      this.logFetch(job, r.outcome, null);
      if (!job.retry) this.awaitingSync.push(job.id);
      return;
    }
    this.counters.pagesOk++;
    this.startParse(job);
  }

  /** Whether the page's requisites are extracted: --requisites, and not past a chain of MAX_REQUISITE_HOPS. */
  protected requisitesOf(fu: FrontierUrl): boolean {
    return this.cfg.requisites && !isSitemapHops(fu.hops) && requisiteChain(fu.path) < MAX_REQUISITE_HOPS;
  }

  /** A fetch the stop cut short (stop.ts): not a page; true when it was one. */
  private aborted(job: PageJob, r: FetchResult): boolean {
    if (!(this.aborting && r.outcome === ABORTED_OUTCOME)) return false;
    // The frontier still holds the URL as in flight and the stop's checkpoint snapshots it, so the
    // resume fetches it again.
    this.pending.delete(job.id);
    this.count('aborted:stop');
    this.logFetch(job, r.outcome, null);
    this.wake.kick();
    return true;
  }

  /** A page fetched (any outcome): counted and reported to the frontier; its retry verdict on the job. */
  private fetched(job: PageJob, r: FetchResult, payloadBytes: number): void {
    const fu = job.fu;
    job.payloadBytes = payloadBytes;
    this.counters.pages++;
    if (job.requisite) this.counters.requisites++;
    this.plds.add(fu);
    this.counters.bytes += payloadBytes;
    this.count(r.status !== undefined ? String(r.status) : r.outcome);
    const pol = politenessOutcome(r, fu.attempts + 1, this.cfg.retryDelayScale);
    // The host's next due time counts from the actual send (FetchOutcome.lateMs).
    this.frontier.done(fu, r, r.wireAt !== undefined ? Math.max(0, r.wireAt - job.releasedAt) : 0);
    this.heldIds.delete(job.id);
    this.wake.kick();
    job.retry = pol.retry === true;
    // A URL to be retried went back into the frontier's RAM (its snapshot covers it now).
    if (job.retry) this.pending.delete(job.id);
    // A retry is a new hand-out of the URL, not a duplicate one.
    if (job.retry) this.again.retried(fu.url);
  }
}
