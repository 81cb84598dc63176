/**
 * Stage 5 of a page job (thesis Fig. 2: ContentSeen → URLseen; V.2, IV.3): a page's links (a
 * unique page's, or a duplicate's whose relative links differ: archive-stage.ts), a redirect's
 * target (fetched-stage.ts), a sitemap's entries, the seeds and the URLs other partitions of a
 * cluster crawl send go into URLseen's DRUM (check+update, aux = the URL record: drum-codec.ts);
 * the page's PLD→PLD pairs go to STAR. A merge's answers are delivered by the DRUM to the admit
 * stage (admit-stage.ts), not here; once the merge has ended, the pages whose links it covered
 * wait only for the sync (durable-stage.ts).
 */
import { discoverySuffix, encodeAux, withSuffix } from '../../threads/drum/drum-codec.js';
import { fingerprintInto, hostOf, pldOrHost } from '../../url/index.js';
import { extendHopPath, pathSlot, type FrontierUrl } from '../../frontier/index.js';
import type { LinkTable } from '../../threads/links-codec.js';
import { routeTable } from '../ports/index.js';
import { AdmitStage } from '../admit/index.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

export abstract class UrlSeenStage extends AdmitStage {
  /**
   * A page's links into URLseen (aux = URL record) and its PLD→PLD pairs to STAR. In a cluster
   * crawl the links of other partitions go to their owners (routeTable); the pairs all go to STAR,
   * whose store sends each vote to the partition of its target (cluster-port.ts).
   */
  protected submitTable(src: FrontierUrl, t: LinkTable): void {
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

  /**
   * A URLseen merge: its answers go to the admit stage as they come (the DRUM's callback,
   * onUrlSeenResults); when it has ended, the pages whose links it covered go on to the sync.
   */
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
    // Those pages have left `pending`: the release that paces dispatch (backlog-pace.ts).
    this.urlSeenPace.released(Date.now());
  }
}
