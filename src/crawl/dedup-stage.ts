/**
 * The two DRUM stages of the crawler (thesis Fig. 2, IV.3; V.2): ContentSeen takes each 2xx page's
 * payload digest and answers unique (response record written, links onward) or duplicate (revisit
 * record pointing at the first capture); URLseen takes the links (check+update, aux = the URL
 * record) and answers the unique URLs, which go to STAR and BEAST at once. A merge's results make
 * the pages they cover durable once the WARC file and the crawl log are synced (syncOutputs).
 * startMerges decides when each merge runs (the scheduler calls it every turn); merges run in the
 * DRUM worker threads, one of each kind at a time.
 */
import type { DrumResult } from '../drum/index.js';
import type { FetchResult } from '../fetch/index.js';
import {
  contentAux, decodeContentValue, discoverySuffix, encodeAux, encodeContentValue, le32, scanUniqueUrls, withSuffix,
} from '../threads/drum/drum-codec.js';
import { fingerprintInto, hostOf, pldOrHost } from '../url/index.js';
import { extendHopPath, pathSlot, type FrontierUrl, type FetchOutcome as PoliteFetchOutcome } from '../frontier/index.js';
import { LinkTable, type EncodedGroupLike } from '../threads/links-codec.js';
import { CrawlerCore, type PageJob } from './crawler-core.js';
import { DROP_CODES } from '../config/link-scope.js';
import { plainHops } from '../sitemap/crawl.js';
import { routeTable } from './cluster-port.js';

const enc = new TextEncoder();
const EMPTY = new Uint8Array(0);
const dec = new TextDecoder();

/** A URL up to the last '/' of its path: what its relative links resolve against. */
export function baseDirectory(url: string): string {
  const q = url.indexOf('?');
  const end = q < 0 ? url.length : q;
  return url.slice(0, url.lastIndexOf('/', end - 1) + 1);
}

/** Longest wait between ContentSeen merges while the frontier is not starving (see startMerges). */
const CONTENT_MERGE_MS = 1000;

export abstract class DedupStage extends CrawlerCore {
  protected contentMerging: Promise<void> | null = null;
  protected urlMerging: Promise<void> | null = null;
  protected merging = 0;
  private lastSync = Date.now();

  /** A page's parse output (either path): non-2xx archived as is; 2xx to ContentSeen. */
  protected async parsed(job: PageJob, r: FetchResult, pol: PoliteFetchOutcome, table: Uint8Array, group: EncodedGroupLike, bodyBytes: number): Promise<void> {
    const fu = job.fu;
    job.table = new LinkTable(table);
    job.group = group;
    if (r.outcome !== 'ok') {
      // Non-2xx answers are archived as they are; only 2xx payloads take part in dedup.
      await this.warc.appendEncoded(group, { url: fu.url, date: job.date!, kind: 'response', responseHead: r.responseHead! });
      this.logFetch(job, r.outcome, group.payloadDigest);
      if (!pol.retry) (r.location !== undefined ? this.awaitingMerge : this.awaitingSync).push(job.id);
      this.wake.kick();
      return;
    }
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
    this.contentSeen.checkUpdate(this.fp[0]!, this.fp[1]!, encodeContentValue(fu.url, job.date!), contentAux);
    this.unmergedContent++;
    this.wake.kick();
  }

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
    if (this.contentMerging === null && this.unmergedContent > 0 &&
      (force || this.awaitingContentBytes >= this.contentBatchBytes / 2 || this.contentSeen.needsMerge ||
        (this.parsing === 0 && this.inFlight === 0) || now - this.lastContentMerge > (starving ? 250 : CONTENT_MERGE_MS))) {
      this.contentMerging = this.track(this.mergeContent()).finally(() => {
        this.contentMerging = null;
      });
    }
    if (this.urlMerging === null && this.unmergedLinks > 0 && this.contentMerging === null && !this.holdUrlMerges &&
      (force || this.urlSeen.needsMerge || (starving && now - this.lastUrlMerge > 100) || now - this.lastUrlMerge > 5000)) {
      this.urlMerging = this.track(this.mergeUrlSeen()).finally(() => {
        this.urlMerging = null;
      });
    }
    if (this.urlMerging === null && this.awaitingSync.length > 0 && now - this.lastSync > 1000) {
      this.lastSync = now;
      void this.track(this.syncOutputs());
    }
  }

  private track(p: Promise<void>): Promise<void> {
    this.merging++;
    return p
      .catch((e) => this.fail(e))
      .finally(() => {
        this.merging--;
        this.wake.kick();
      });
  }

  protected async mergeContent(): Promise<void> {
    if (this.unmergedContent === 0) return;
    const n = this.unmergedContent;
    this.unmergedContent = 0;
    this.lastContentMerge = Date.now();
    const t0 = performance.now();
    await this.runMetrics.contentMerges.time(this.contentSeen.merge());
    if (process.env.DRUMCRAWL_DEBUG_TIMING) console.error(`content merge ${n} in ${(performance.now() - t0).toFixed(0)} ms`);
  }

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

  /** The page's links refused by the trap check or the scope (link-scope.ts): one crawl-log line each. */
  private logDroppedLinks(src: FrontierUrl, t: LinkTable): void {
    const d = t.dropped();
    if (d.length === 0) return;
    const time = new Date();
    const hops = plainHops(src.hops) + 1;
    for (const { url, code } of d) {
      const reason = DROP_CODES[code] ?? 'CRAWL_SCOPE_OUT';
      this.count(`dropped:${reason}`);
      this.crawlLog.writeDropped({ time, url, hops, reason });
    }
  }

  /**
   * A page's links into URLseen (aux = URL record) and its PLD→PLD pairs to STAR. In a cluster
   * crawl the links of other partitions go to their owners (routeTable); the pairs all go to STAR,
   * whose store sends each vote to the partition of its target (cluster-port.ts).
   */
  private submitTable(src: FrontierUrl, t: LinkTable): void {
    const n = t.count;
    if (n === 0) return;
    const hops = src.hops + 1;
    // Every link of the page carries the same via (the page) and hop path (the page's + L).
    const suffix = discoverySuffix(src.url, extendHopPath(src.path, 'L'));
    const local = this.cluster === null ? t : routeTable(t, this.cluster, hops, suffix);
    // PLD pairs into a reused scratch (addPldLinks copies them): no ArrayBuffer per page for V8's
    // ArrayBuffer sweeper (docs/performance.md, "Main thread").
    if (this.pairScratch.length < n * 4) this.pairScratch = new Uint32Array(Math.max(n * 4, this.pairScratch.length * 2));
    const pairs = this.pairScratch;
    let m = 0;
    // The whole table in one copy: URLseen's thread writes each link's tuple (encodeAux's aux).
    if (local.count > 0) this.urlSeen.linkTable(local.buf, local.count, hops, suffix);
    for (let i = 0; i < n; i++) {
      const pHi = t.word(i, 4);
      const pLo = t.word(i, 5);
      if (pHi !== src.pldHi || pLo !== src.pldLo) {
        pairs[m * 4] = src.pldHi;
        pairs[m * 4 + 1] = src.pldLo;
        pairs[m * 4 + 2] = pHi;
        pairs[m * 4 + 3] = pLo;
        m++;
      }
    }
    this.unmergedLinks += n;
    this.counters.urlsDiscovered += n;
    // The page's path, query left out, is its vote slot (STAR's trusted in-degree, star.ts): copies
    // of one page under session ids or tracking parameters are one vote, not one per copy.
    if (m > 0) this.frontier.addPldLinks(pairs, m, pathSlot(src.url));
  }

  /**
   * One URL into URLseen (seeds and redirect targets; page links come as tables). A URL of another
   * partition of a cluster crawl goes to its owner instead (cluster-port.ts); it counts as unmerged
   * until the merge that makes its page durable has flushed it (mergeUrlSeen).
   */
  protected submitUrl(url: string, hops: number, via = '', path = ''): void {
    this.unmergedLinks++;
    this.counters.urlsDiscovered++;
    if (this.cluster !== null) {
      const fp = this.fp;
      fingerprintInto(pldOrHost(hostOf(url)), fp, 4);
      if (!this.cluster.local(fp[4]!, fp[5]!)) {
        this.cluster.route(fp[4]!, fp[5]!, enc.encode(url), hops, discoverySuffix(via, path));
        return;
      }
    }
    this.submitLocal(url, hops, discoverySuffix(via, path));
  }

  /** A URL of this crawl into URLseen: aux = its keys, hops, text and discovery suffix (drum-codec.ts). */
  private submitLocal(url: string, hops: number, suffix: Uint8Array): void {
    const host = hostOf(url);
    const fp = this.fp;
    fingerprintInto(url, fp, 0);
    fingerprintInto(host, fp, 2);
    fingerprintInto(pldOrHost(host), fp, 4);
    this.urlSeen.checkUpdate(fp[0]!, fp[1]!, undefined, encodeAux(fp[2]!, fp[3]!, fp[4]!, fp[5]!, hops, withSuffix(enc.encode(url), suffix)));
  }

  /**
   * A batch another partition of a cluster crawl sent this one (src/cluster): its URLs enter
   * URLseen exactly as this crawl's own links do (the same aux: hops and discovery suffix as the
   * sender wrote them), and its votes STAR's in-degrees (Star.addVotes). Resolves once both are in
   * (the URLs buffered for the next URLseen merge, the votes in STAR's store): the next checkpoint
   * that starts after that holds the batch's effect.
   */
  async admitBatch(urls: readonly { url: Uint8Array; hops: number; suffix: Uint8Array }[], votes: Uint32Array, voteCount: number): Promise<void> {
    for (const u of urls) {
      this.submitLocal(dec.decode(u.url), u.hops, u.suffix);
      this.unmergedLinks++;
    }
    this.wake.kick();
    if (voteCount > 0) await this.frontier.addVotes(votes, voteCount);
  }

  protected async mergeUrlSeen(): Promise<void> {
    if (this.unmergedLinks === 0) {
      await this.syncOutputs();
      return;
    }
    const covered = this.awaitingMerge;
    this.awaitingMerge = [];
    this.unmergedLinks = 0;
    this.lastUrlMerge = Date.now();
    const t0 = performance.now();
    await this.runMetrics.urlSeenMerges.time(this.urlSeen.merge());
    // The links those pages routed to other partitions of a cluster crawl are in the stream.
    await this.cluster?.flush();
    // That merge re-delivered the bucket a kill left uncommitted, if any (admit-log.ts).
    this.again.mergeEnded();
    if (process.env.DRUMCRAWL_DEBUG_TIMING) console.error(`url merge in ${(performance.now() - t0).toFixed(0)} ms`);
    // Every page whose links that merge covered is now durable once its WARC record is.
    for (const p of covered) this.awaitingSync.push(p);
    await this.syncOutputs();
  }

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

  /** WARC + crawl log durable → the pages waiting only for that leave the pending set. */
  protected async syncOutputs(): Promise<void> {
    if (this.awaitingSync.length === 0) return;
    const done = this.awaitingSync;
    this.awaitingSync = [];
    await this.warc.sync();
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
