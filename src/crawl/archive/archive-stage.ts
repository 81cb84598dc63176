/**
 * Stage 4 of a page job (thesis Fig. 2: ContentSeen → URLseen; IV.3): ContentSeen's answers,
 * delivered here by its DRUM (opening.ts wires its callback to onContentResults). A unique payload's
 * response record and crawl-log line are written and its links go on to URLseen
 * (urlseen-stage.ts); a duplicate gets a revisit record pointing at the first capture. A page that
 * takes no part in dedup (a non-2xx answer, a failed parse) comes here from the content stage and
 * is archived as received (archiveAsIs, archiveExchange), a redirect's target then going to URLseen
 * as the answer's one link. Each page then waits for the URLseen
 * merge its links or sitemap entries are in, or only for the sync (durable-stage.ts).
 */
import type { DrumResult } from '../../drum/index.js';
import { extendHopPath, type FrontierUrl } from '../../frontier/index.js';
import { canonicalizeUrl } from '../../url/index.js';
import { decodeContentValue, le32 } from '../../threads/drum/drum-codec.js';
import { truncation } from '../../threads/page/page-worker-protocol.js';
import type { EncodedGroupLike, LinkTable } from '../../threads/links-codec.js';
import { DROP_CODES } from '../../config/link-scope.js';
import { plainHops } from '../../sitemap/crawl.js';
import type { PageJob } from '../core/index.js';
import { UrlSeenStage } from '../urlseen/index.js';

/** a drop code out of DROP_CODES' range is logged as out of scope */
const OUT_OF_SCOPE = DROP_CODES.indexOf('CRAWL_SCOPE_OUT');
/** the outcome counters' key of each drop code, and a page's count of each (reused) */
const DROP_KEYS = DROP_CODES.map((c) => `dropped:${c}`);
const dropCounts = new Array<number>(DROP_CODES.length).fill(0);

/** A URL up to the last '/' of its path: what its relative links resolve against. */
export function baseDirectory(url: string): string {
  const q = url.indexOf('?');
  const end = q < 0 ? url.length : q;
  return url.slice(0, url.lastIndexOf('/', end - 1) + 1);
}

export abstract class ArchiveStage extends UrlSeenStage {
  /** ContentSeen answers: unique payload → response record + links onward; duplicate → revisit. */
  protected async onContentResults(batch: DrumResult[]): Promise<void> {
    // A hurried stop closes the parts with pages still waiting here: the WARC may be closed, so
    // they are left as they are, pending in the last checkpoint (the resume fetches them again).
    if (this.closing) return;
    for (const res of batch) {
      if (res.aux === null) continue;
      const id = le32(res.aux, 0);
      const job = this.awaitingContent.get(id);
      if (job === undefined) continue;
      this.awaitingContent.delete(id);
      this.awaitingContentBytes -= job.bodyBytes;
      const table = job.table!;
      // DRUM gives the value stored before this tuple: for the 2nd+ copy in one batch, the 1st's.
      const original = !res.unique && res.value !== null ? decodeContentValue(res.value) : null;
      // A re-fetch after a crash may find its own earlier digest: it is still the original capture.
      if (original !== null && original.url !== job.fu.url) {
        this.counters.duplicates++;
        const r = job.result!;
        await this.warc.writeRevisit({
          url: job.fu.url,
          ip: job.fu.ip,
          date: job.date!,
          requestHead: r.requestHead,
          responseHead: r.responseHead!,
          payloadDigest: job.group!.payloadDigest,
          refersToUri: original.url,
          refersToDate: original.date,
        });
        this.logFetch(job, 'duplicate', job.group!.payloadDigest);
        // A copy in another directory (a sitemap's copy of a page kept elsewhere, a mirror): its
        // relative links resolve to other URLs than the first capture's, so they are followed as a
        // unique page's are — else the page reached second loses its links (and a copy fetched
        // first would stand in for the real page). A copy in the same directory (a session id or a
        // tracking parameter in the query, index.html beside /) has the first capture's links.
        const follow = baseDirectory(original.url) !== baseDirectory(job.fu.url) && table.count + table.dropped().length > 0;
        if (follow) {
          this.count('duplicate:links-followed');
          this.logDroppedLinks(job.fu, table);
          this.submitTable(job.fu, table);
        }
        ((follow && table.count > 0) || (job.sitemapQueued ?? 0) > 0 ? this.awaitingMerge : this.awaitingSync).push(id);
        continue;
      }
      await this.warc.appendEncoded(job.group!, { url: job.fu.url, date: job.date!, kind: 'response', responseHead: job.result!.responseHead! });
      this.logFetch(job, 'ok', job.group!.payloadDigest);
      this.logDroppedLinks(job.fu, table);
      this.submitTable(job.fu, table);
      (table.count > 0 || (job.sitemapQueued ?? 0) > 0 ? this.awaitingMerge : this.awaitingSync).push(id);
    }
    this.wake.kick();
  }

  /**
   * A page that takes no part in dedup, with its encoded WARC group (if any) archived as it is: a
   * non-2xx answer (outcome = its status class, digest = its payload's) or a failed parse (outcome
   * = its CRAWL_PARSE_* code, no digest). It waits for the URLseen merge when `merge` (a redirect's
   * target or a sitemap's entries went there), else only for the sync; a page the frontier took
   * back to retry waits for neither (it left the pending set).
   */
  protected async archiveAsIs(job: PageJob, outcome: string, group: EncodedGroupLike | null, digest: string | null, merge: boolean, final: boolean): Promise<void> {
    if (group !== null) await this.warc.appendEncoded(group, { url: job.fu.url, date: job.date!, kind: 'response', responseHead: job.result!.responseHead ?? null });
    this.logFetch(job, outcome, digest);
    this.redirect(job);
    if (final) (merge ? this.awaitingMerge : this.awaitingSync).push(job.id);
    this.wake.kick();
  }

  /**
   * A page the parse pool's supervisor gave up (its worker crashed or hung on it: CRAWL_PARSE_*),
   * fetched on this thread: its response record is written from the body here; its links are not
   * followed. The body's bytes go back to the body budget after the write.
   */
  protected async archiveExchange(job: PageJob, code: string): Promise<void> {
    const fu = job.fu;
    const r = job.result!;
    this.count(code);
    try {
      await this.warc.writeExchange({
        url: fu.url, ip: fu.ip, date: job.date!, requestHead: r.requestHead, responseHead: r.responseHead!, body: r.body, truncated: truncation(r),
      });
    } finally {
      this.fetcher.release(r);
    }
    this.logFetch(job, code, null);
    this.redirect(job);
    ((job.sitemapQueued ?? 0) > 0 ? this.awaitingMerge : this.awaitingSync).push(job.id);
    this.wake.kick();
  }

  /**
   * A redirect's link: not followed inline, its target enters URLseen as a new link (dedup, robots,
   * politeness apply), at the same depth.
   */
  private redirect(job: PageJob): void {
    const r = job.result!;
    if (r.location === undefined || r.status! < 300 || r.status! >= 400) return;
    const target = canonicalizeUrl(r.location);
    if (target !== null) this.submitUrl(target, job.fu.hops, job.fu.url, extendHopPath(job.fu.path, 'R'));
  }

  /** The page's links refused by the trap check or the scope (link-scope.ts): one crawl-log line each. */
  private logDroppedLinks(src: FrontierUrl, t: LinkTable): void {
    const d = t.dropped();
    if (d.length === 0) return;
    const links: { url: string; reason: string }[] = new Array(d.length);
    for (let i = 0; i < d.length; i++) {
      const { url, code } = d[i]!;
      const c = code < DROP_CODES.length ? code : OUT_OF_SCOPE;
      dropCounts[c]!++;
      links[i] = { url, reason: DROP_CODES[c]! };
    }
    // counted per reason once per page (the outcome counters' keys: dropped:<reason>)
    const outcomes = this.counters.outcomes;
    for (let c = 0; c < dropCounts.length; c++) {
      if (dropCounts[c] === 0) continue;
      outcomes[DROP_KEYS[c]!] = (outcomes[DROP_KEYS[c]!] ?? 0) + dropCounts[c]!;
      dropCounts[c] = 0;
    }
    this.crawlLog.writeDroppedLinks(new Date(), plainHops(src.hops) + 1, links);
  }
}
