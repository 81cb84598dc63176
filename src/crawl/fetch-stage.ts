/**
 * The fetch stage of the crawler (thesis Fig. 2): a page released by the frontier is fetched (after
 * the last-step floor guard), reported back to the frontier, parsed in the pool and handed to
 * ContentSeen (dedup-stage.ts); non-2xx answers and worker failures are archived as they are. A
 * robots item is fetched with its redirects (each hop held to its IP's floor) and its rules go to
 * the frontier's robots gate.
 */
import { Fetcher, fetchRobots, isHttpResponse, type FetchResult } from '../fetch/index.js';
import type { WireShare } from '../fetch/wire-share.js';
import type { MemoryBudget } from '../fetch/memory-budget.js';
import { MAX_DECODED_BYTES } from '../budget/body-budget.js';
import type { DnsCache } from '../dns/index.js';
import type { CrawlConfig } from '../config/config.js';
import { headerRecord } from '../config/request-headers.js';
import { ALLOW_ALL } from '../robots/index.js';
import { canonicalizeUrl, hostOf } from '../url/index.js';
import { encodeFrontierUrl, extendHopPath, type FrontierUrl } from '../frontier/index.js';
import { politenessOutcome, withMargin } from './frontier-port.js';
import { ABORTED_OUTCOME } from './stop.js';
import { archiveRobots } from '../threads/archive/archive-hooks.js';
import type { PageJob } from './crawler-core.js';
import { DedupStage } from './dedup-stage.js';
import { isSitemapHops } from '../sitemap/crawl.js';
import { splitParseOutput } from '../threads/links-codec.js';
import { clock } from '../threads/page/page-worker-floors.js';
import type { GuardRequest } from './floor-guard.js';
import { MAX_REQUISITE_HOPS, isCss, isRequisitePath, requisiteChain } from '../config/requisites.js';
import type { PageWorkerPool } from '../threads/page/page-worker-pool.js';
import { PARSE_ABORTED, PARSE_CODES, PARSE_OK, isHtml, truncation, type PageFetcherOptions } from '../threads/page/page-worker-protocol.js';
import { PARSE_ABORTED_CODE } from './stop.js';

const EMPTY = new Uint8Array(0);
/** Read once (as src/fetch does for its WIRE lines): process.env is a slow lookup for a per-page check. */
const TRACE_FETCH = process.env.DRUMCRAWL_TRACE_FETCH !== undefined && process.env.DRUMCRAWL_TRACE_FETCH !== '';

/** What the frontier is told for a URL skipped at dispatch (resume-dedup.ts): a success. */
const SKIPPED: FetchResult = {
  url: '', ip: '', outcome: 'ok', requestHead: EMPTY, body: EMPTY, decoded: EMPTY, truncated: false, startedAt: 0, timings: { totalMs: 0 },
};

/** The crawl's Fetcher: its limits, the floors at the socket and the network guard, from the config. */
export function newFetcher(cfg: CrawlConfig, dns: DnsCache, share?: WireShare, budget?: MemoryBudget): Fetcher {
  return new Fetcher({ ...fetcherOptions(cfg), dns, share, budget });
}

/** The fetcher's options from the config (the main thread's Fetcher and each page worker's). */
export function fetcherOptions(cfg: CrawlConfig): PageFetcherOptions {
  return {
    userAgent: cfg.userAgent,
    maxBodyBytes: cfg.maxBodyBytes,
    maxDecodedBytes: MAX_DECODED_BYTES,
    // Bodies of every type are downloaded and archived as received (PDF, images, …): what is
    // parsed for links (HTML) is decided after the fetch, not by what is read off the wire.
    acceptContentTypes: null,
    totalTimeoutMs: cfg.fetchTimeoutMs,
    connectTimeoutMs: Math.min(10_000, cfg.fetchTimeoutMs),
    headersTimeoutMs: Math.min(15_000, cfg.fetchTimeoutMs),
    bodyTimeoutMs: Math.min(15_000, cfg.fetchTimeoutMs),
    // The floors where the server sees them: a request queued behind a slow one on its IP's
    // connection is written no sooner than τs0 / τh0 after the previous one (src/fetch wire gate).
    minIpIntervalMs: withMargin(cfg.minIpDelayMs, cfg),
    minHostIntervalMs: withMargin(cfg.minHostDelayMs, cfg),
    // The network guard refuses special-purpose addresses; these ranges are allowed anyway.
    allowedNetworks: cfg.allowNetworks,
    // --header / --tls-insecure (validated in config.ts / request-headers.ts).
    headers: headerRecord(cfg.headers),
    tlsRejectUnauthorized: !cfg.tlsInsecure,
  };
}

export abstract class FetchStage extends DedupStage {
  protected startPage(fu: FrontierUrl): void {
    const skip = this.again.skipAtDispatch(fu.url);
    if (skip !== null) {
      // Handled already (resume-dedup.ts): free its slots, no request.
      this.frontier.done(fu, SKIPPED);
      this.count(`skipped:${skip}`);
      this.wake.kick();
      return;
    }
    const id = this.nextId++;
    const rec = encodeFrontierUrl(fu);
    this.pending.set(id, rec);
    this.inFlight++;
    const requisite = isRequisitePath(fu.path);
    if (requisite) this.requisitesInFlight++;
    this.dispatchedThisRun++;
    const job: PageJob = { id, fu, rec, bodyBytes: 0, payloadBytes: 0, group: null, releasedAt: clock(), requisite };
    this.inFlightIds.add(id);
    this.jobs++;
    void (this.pages !== null ? this.fetchOnWorker(job, this.pages) : this.fetchPage(job))
      .catch((e) => this.fail(e))
      .finally(() => {
        this.inFlightIds.delete(id);
        this.jobs--;
        this.wake.kick();
      });
  }

  private async fetchPage(job: PageJob): Promise<void> {
    const fu = job.fu;
    let r: FetchResult;
    try {
      const q: GuardRequest = { host: hostOf(fu.url), ip: fu.ip, robots: false, hostGapMs: fu.hostGapMs, ipGapMs: fu.ipGapMs };
      for (let wait = this.floors.guard(q); wait !== undefined; wait = this.floors.start(q)) await wait;
      job.date = new Date();
      if (this.aborting) r = { ...SKIPPED, url: fu.url, outcome: ABORTED_OUTCOME };
      else {
        const at = this.traceDispatch(q, fu.url);
        r = await this.fetcher.fetch({ url: fu.url, ip: fu.ip, hostGapMs: fu.hostGapMs, ipGapMs: fu.ipGapMs });
        r.wireAt ??= at;
      }
    } finally {
      this.endFlight(job);
    }
    job.result = r;
    if (this.aborted(job, r)) {
      this.fetcher.release(r);
      return;
    }
    const pol = this.fetched(job, r, r.body.byteLength);

    if (!isHttpResponse(r)) {
      // Transport failure (DNS, connect, timeout, reset…): nothing to archive; logged with its code.
      this.fetcher.release(r);
      this.logFetch(job, r.outcome, null);
      if (!pol.retry) this.awaitingSync.push(job.id);
      return;
    }
    this.counters.pagesOk++;
    this.redirect(job, r);
    const ok2xx = r.outcome === 'ok';
    // A sitemap (src/sitemap/crawl.ts) is read here, before the body goes to the parse pool (which
    // archives it like any payload): its entries enter URLseen as links.
    if (ok2xx && isSitemapHops(fu.hops) && this.sitemaps !== null) job.sitemapQueued = (await this.sitemaps.read(fu.url, fu.hops, r.decoded, fu.path)).queued;
    const html = ok2xx && isHtml(r.contentType) && !isSitemapHops(fu.hops);
    const follow = html && (this.cfg.maxDepth === null || fu.hops < this.cfg.maxDepth);
    const css = ok2xx && isCss(r.contentType) && !isSitemapHops(fu.hops);
    this.parsing++;
    let po;
    try {
      po = await this.pool!.run({
        url: fu.url, body: r.body, decoded: r.decoded, charset: r.charset, html, follow, requisites: this.requisitesOf(fu), css,
        exchange: { ip: fu.ip, dateMs: job.date.getTime(), requestHead: r.requestHead, responseHead: r.responseHead!, truncated: truncation(r) },
      });
    } finally {
      this.parsing--;
    }
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
    if (!po.ok) {
      // The supervisor replaced the worker; the page is kept (response record written here) and
      // recorded with the supervisor's outcome code; its links are not followed.
      this.count(po.code);
      try {
        await this.warc.writeExchange({
          url: fu.url, ip: fu.ip, date: job.date, requestHead: r.requestHead, responseHead: r.responseHead!, body: r.body, truncated: truncation(r),
        });
      } finally {
        this.fetcher.release(r);
      }
      this.logFetch(job, po.code, null);
      ((job.sitemapQueued ?? 0) > 0 ? this.awaitingMerge : this.awaitingSync).push(job.id);
      this.wake.kick();
      return;
    }
    // The encoded group holds the body now: its bytes go back to the budget.
    const bodyBytes = r.body.byteLength;
    this.fetcher.release(r);
    r.body = r.decoded = EMPTY;
    await this.parsed(job, r, pol, po.table, po.group!, bodyBytes);
  }

  /** Pages fetched and in flight, their requisites not counted (--max-pages counts pages: requisites.ts). */
  protected pagesCounted(): number {
    return this.counters.pages - this.counters.requisites;
  }
  protected pagesInFlight(): number {
    return this.inFlight - this.requisitesInFlight;
  }

  /** A page fetch ends (its answer came, or it never went out). */
  private endFlight(job: PageJob): void {
    this.inFlight--;
    if (job.requisite) this.requisitesInFlight--;
    this.inFlightIds.delete(job.id);
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

  /** A page fetched (any outcome): counted and reported to the frontier; its retry verdict. */
  private fetched(job: PageJob, r: FetchResult, payloadBytes: number): ReturnType<typeof politenessOutcome> {
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
    this.wake.kick();
    // A URL to be retried went back into the frontier's RAM (its snapshot covers it now).
    if (pol.retry) this.pending.delete(job.id);
    // A retry is a new hand-out of the URL, not a duplicate one.
    if (pol.retry) this.again.retried(fu.url);
    return pol;
  }

  /**
   * Redirects are not followed inline: the target enters as a new link (dedup, robots, politeness
   * apply), at the same depth.
   */
  private redirect(job: PageJob, r: FetchResult): void {
    if (r.location === undefined || r.status! < 300 || r.status! >= 400) return;
    const target = canonicalizeUrl(r.location);
    if (target !== null) this.submitUrl(target, job.fu.hops, job.fu.url, extendHopPath(job.fu.path, 'R'));
  }

  /**
   * A page fetched, parsed and encoded by a page worker (page-worker.ts, --page-workers on): the
   * floors' earliest start is reserved here and the worker sends no sooner (nor sooner than the
   * actual starts in the shared table). The fetch result comes back first (reported to the frontier
   * at once, as fetchPage does), then the parse's output: only outcomes, heads and the encoded
   * results cross, never the body.
   */
  private async fetchOnWorker(job: PageJob, pages: PageWorkerPool): Promise<void> {
    const fu = job.fu;
    const host = hostOf(fu.url);
    let pol: ReturnType<typeof politenessOutcome> = {};
    let fetched = false;
    let ended = true;
    const order = {
      id: job.id, url: fu.url, ip: fu.ip, host, hostGapMs: fu.hostGapMs, ipGapMs: fu.ipGapMs,
      notBefore: this.floors.reserve({ host, ip: fu.ip, robots: false, hostGapMs: fu.hostGapMs, ipGapMs: fu.ipGapMs }),
      follow: this.cfg.maxDepth === null || fu.hops < this.cfg.maxDepth, sitemap: isSitemapHops(fu.hops), requisites: this.requisitesOf(fu),
    };
    const parse = pages.run(order, (a) => {
      this.endFlight(job);
      fetched = true;
      if (a.at !== 0 && !pages.reportingStarts) this.dispatched(fu.url, a.ip, false, a.at);
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
      pol = this.fetched(job, r, a.payloadBytes);
      if (!a.parses) {
        // Transport failure (DNS, connect, timeout, reset…): nothing to archive; logged with its code.
        this.logFetch(job, r.outcome, null);
        if (!pol.retry) this.awaitingSync.push(job.id);
        return;
      }
      this.counters.pagesOk++;
      this.redirect(job, r);
      ended = false;
      this.parsing++;
    });
    let x;
    try {
      x = await parse;
    } finally {
      if (!fetched) this.endFlight(job);
      if (!ended) this.parsing--;
    }
    if (x === null || ended) return;
    const r = job.result!;
    const rq = x.requestHeadBytes ?? 0;
    if (x.heads !== undefined) {
      r.requestHead = x.heads.subarray(0, rq);
      r.responseHead = x.heads.subarray(rq);
    }
    if (r.outcome === 'ok' && x.decoded !== undefined && this.sitemaps !== null) job.sitemapQueued = (await this.sitemaps.read(fu.url, fu.hops, x.decoded, fu.path)).queued;
    const po = x.out !== undefined ? splitParseOutput(x.out) : null;
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
      if (po?.group != null) await this.warc.appendEncoded(po.group, { url: fu.url, date: job.date!, kind: 'response', responseHead: r.responseHead ?? null });
      this.logFetch(job, code, null);
      ((job.sitemapQueued ?? 0) > 0 ? this.awaitingMerge : this.awaitingSync).push(job.id);
      this.wake.kick();
      return;
    }
    // (the body stayed in the worker: only the table and the encoded group are held here)
    await this.parsed(job, r, pol, po!.table, po!.group!, 0);
  }

  protected startRobots(item: FrontierUrl): void {
    const releasedAt = clock();
    this.robotsInFlight++;
    this.counters.robotsFetches++;
    void (async () => {
      try {
        if (this.fetcher.refusal(item.ip, portOfUrl(item.url)) !== null) {
          // The network guard refuses the host's address: no robots.txt can be asked there. Each
          // page URL goes on to the fetcher, which refuses it too (nothing is sent) and crawl.log
          // records it with CRAWL_FETCH_BLOCKED_ADDRESS.
          this.frontier.robotsDone(item, { rules: ALLOW_ALL, outcome: 'CRAWL_FETCH_BLOCKED_ADDRESS', expiresAt: Date.now() + 3_600_000 });
          return;
        }
        const start = Date.now();
        let robotsUrl: string | null = null;
        const answers: FetchResult[] = [];
        const r = await fetchRobots(this.fetcher, item.host, item.ip, portOfUrl(item.url), this.cfg.userAgent, {
          dns: this.dns,
          // The host's origin scheme (item.url is `<origin>/robots.txt`): an https host's robots.txt over https.
          scheme: item.url.startsWith('https:') ? 'https' : 'http',
          // Every request, the first and each redirect hop (which may go to another server's IP),
          // waits for its IP's floor and is traced: robots.txt fetches count per IP (RFC 9309).
          beforeRequest: async (req) => {
            const first = robotsUrl === null;
            robotsUrl ??= req.url;
            const ip = req.ip ?? item.ip;
            // Held per IP; a start on its host (the host's first page waits its delay after it).
            const q: GuardRequest = { host: hostOf(req.url), ip, robots: true, hostGapMs: first ? item.hostGapMs : 0, ipGapMs: first ? item.ipGapMs : 0 };
            for (let wait = this.floors.guard(q); wait !== undefined; wait = this.floors.start(q)) await wait;
            this.traceDispatch(q, req.url);
          },
          afterResponse: (res) => answers.push(res),
        });
        // archived like any capture (archive-hooks.ts), before the host's pages are released
        try {
          await archiveRobots(this.warc, answers);
        } finally {
          for (const a of answers) this.fetcher.release(a);
        }
        // An answer cut short by the stop is not one (stop.ts): the resumed run asks again. The
        // host's next due time counts from the actual send of its robots.txt (FetchOutcome.lateMs).
        const wireAt = answers[0]?.wireAt;
        if (!this.aborting) this.frontier.robotsDone(item, { ...r, lateMs: wireAt !== undefined ? Math.max(0, wireAt - releasedAt) : 0 });
        // The host's sitemaps (--sitemaps) enter URLseen like links (src/sitemap/crawl.ts).
        if (!this.aborting && this.sitemaps !== null) this.sitemaps.fromRobots(item.host, item.url, r.sitemaps);
        const now = new Date();
        this.crawlLog.writeRobots({
          time: now, status: r.status ?? null, bytes: r.fetchResult?.body.byteLength ?? 0, durationMs: now.getTime() - start,
          url: robotsUrl ?? item.url, outcome: r.outcome, mime: r.fetchResult?.contentType ?? null,
        });
      } finally {
        this.robotsInFlight--;
        this.wake.kick();
      }
    })().catch((e) => this.fail(e));
  }

  /**
   * A request is about to be sent (its floors passed): its start is stamped here, once, and that one
   * time is what the floors count from (FloorGuard.started), what the TRACE line
   * (DRUMCRAWL_TRACE_FETCH) shows and what the 'dispatch' event the e2e tests judge carries. The
   * caller runs this in the same synchronous run as the guard's `start` and the send, but one run of the
   * event loop is not one instant: a scavenge or the process being descheduled between `start`'s
   * read of the clock and this one (up to 34 ms seen in the e2e tiny crawl at load ~9; scavenges of
   * 20–54 ms in bench:e2e) made the request leave later than recorded, and the next one to its
   * host, held to the recorded start + floor, left that much sooner after it (e2e, load ~10: 114.7
   * ms apart with a 160 ms floor). Stamped here, no lateness before this point can shorten a gap
   * (test/crawl/floor-guard.test.ts). Returns the stamp.
   */
  private traceDispatch(q: GuardRequest, url: string): number {
    const at = clock();
    this.floors.started(q.host, q.ip, at, q.hostGapMs, q.ipGapMs);
    this.dispatched(url, q.ip, q.robots, at);
    return at;
  }

  /**
   * A request's actual start (`at` on the shared clock, page-worker-floors.ts) to the TRACE line and
   * the 'dispatch' event: at once on this thread, when its answer comes back from a page worker.
   */
  protected dispatched(url: string, ip: string, robots: boolean, at: number): void {
    if (TRACE_FETCH) process.stderr.write(`TRACE ${at.toFixed(1)} ${ip} ${url}\n`);
    if (this.listenerCount('dispatch') > 0) this.emit('dispatch', { at, url, ip, robots });
  }
}

function portOfUrl(url: string): number {
  const u = new URL(url);
  return u.port !== '' ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
}
