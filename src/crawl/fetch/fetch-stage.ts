/**
 * Stage 1 of a page job (thesis Fig. 2: the crawling threads, fed by the politeness heaps): a page
 * the frontier released becomes a job and is fetched, after the last-step floor guard, on this
 * thread (src/fetch) or, with --page-workers on, by its IP's page worker (an order handed to the
 * page workers' lane). The fetch's answer goes on to the fetched stage (fetched-stage.ts): this
 * stage hands the page over and sees nothing that comes after. A robots item is fetched with its
 * redirects (each hop held to its IP's floor) and its rules go to the frontier's robots gate.
 */
import { Fetcher, fetchRobots, robotsUrl as robotsUrlOf, type FetchResult, type RobotsFetchOutcome } from '../../fetch/index.js';
import type { DnsCache } from '../../dns/index.js';
import type { CrawlConfig } from '../../config/config.js';
import { ALLOW_ALL } from '../../robots/index.js';
import { hostOf } from '../../url/index.js';
import { encodeFrontierUrl, type FrontierUrl } from '../../frontier/index.js';
import { archiveRobots } from '../../threads/archive/archive-hooks.js';
import { isSitemapHops } from '../../sitemap/crawl.js';
import { clock } from '../../threads/page/page-worker-floors.js';
import { isRequisitePath } from '../../config/requisites.js';
import { PageLane } from '../../threads/page/lanes.js';
import { ABORTED_OUTCOME, withMargin, type GuardRequest } from '../ports/index.js';
import type { PageJob } from '../core/index.js';
import { FetchedStage } from '../fetched/index.js';

export { MAIN_SYNC_DECODE_BYTES, newFetcher, fetcherOptions } from '../ports/fetcher-options.js';

const EMPTY = new Uint8Array(0);

/** What the frontier is told for a URL skipped at dispatch (resume-dedup.ts): a success. */
const SKIPPED: FetchResult = {
  url: '', ip: '', outcome: 'ok', requestHead: EMPTY, body: EMPTY, decoded: EMPTY, truncated: false, startedAt: 0, timings: { totalMs: 0 },
};

export abstract class FetchStage extends FetchedStage {
  /** The page workers with their sinks, the fetched and content stages (--page-workers on; else null). */
  private readonly pageLane = this.pages === null ? null : new PageLane<PageJob>(this.pages, {
    fetched: (job, a) => this.workerFetched(job, a),
    parsed: (job, note) => this.parsedOnWorker(job, note),
  });

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
    const job: PageJob = {
      id, fu, rec, bodyBytes: 0, payloadBytes: 0, group: null, releasedAt: clock(), requisite, flying: true, parsing: false, retry: false,
    };
    this.heldIds.add(id);
    this.jobs++;
    // The task ends when the page has been handed over by the last stage it passes through (to
    // ContentSeen, the merge or sync lists, or dropped): until then the crawl is not idle.
    void (this.pageLane !== null ? this.fetchOnWorker(job, this.pageLane) : this.fetchPage(job))
      .catch((e) => this.fail(e))
      .finally(() => {
        this.heldIds.delete(id); // (fetchDone was called, or the job ended without one: a stop's abort)
        this.jobs--;
        this.wake.kick();
      });
  }

  /** The fetch on this thread; its answer goes on to the fetched stage (takeFetched). */
  private async fetchPage(job: PageJob): Promise<void> {
    const fu = job.fu;
    let r: FetchResult;
    try {
      const q: GuardRequest = { host: hostOf(fu.url), ip: fu.ip, robots: false, hostGapMs: fu.hostGapMs, ipGapMs: fu.ipGapMs };
      for (let wait = this.floors.guard(q); wait !== undefined; wait = this.floors.start(q)) await wait;
      if (this.aborting) {
        job.date = new Date();
        r = { ...SKIPPED, url: fu.url, outcome: ABORTED_OUTCOME };
      } else {
        const at = this.traceDispatch(q, fu.url);
        // The capture's date is the dispatch's own instant, the one the floors and the trace record.
        job.date = new Date(at);
        r = await this.fetcher.fetch({ url: fu.url, ip: fu.ip, hostGapMs: fu.hostGapMs, ipGapMs: fu.ipGapMs });
        r.wireAt ??= at;
      }
    } finally {
      this.endFlight(job);
    }
    await this.takeFetched(job, r);
  }

  /** Pages fetched and in flight, their requisites not counted (--max-pages counts pages: requisites.ts). */
  protected pagesCounted(): number {
    return this.counters.pages - this.counters.requisites;
  }
  protected pagesInFlight(): number {
    return this.inFlight - this.requisitesInFlight;
  }

  /**
   * A page to be fetched, parsed and encoded by a page worker (page-worker.ts, --page-workers on):
   * the floors' earliest start is reserved here and the worker sends no sooner (nor sooner than the
   * actual starts in the shared table). The order goes to the page workers' lane, which delivers
   * the fetch report to the fetched stage (workerFetched) and then the parse's note to the content
   * stage (parsedOnWorker): only outcomes, heads and the encoded results cross, never the body.
   */
  private async fetchOnWorker(job: PageJob, lane: PageLane<PageJob>): Promise<void> {
    const fu = job.fu;
    const host = hostOf(fu.url);
    await lane.submit(job, {
      id: job.id, url: fu.url, ip: fu.ip, host, hostGapMs: fu.hostGapMs, ipGapMs: fu.ipGapMs,
      notBefore: this.floors.reserve({ host, ip: fu.ip, robots: false, hostGapMs: fu.hostGapMs, ipGapMs: fu.ipGapMs }),
      follow: this.cfg.maxDepth === null || fu.hops < this.cfg.maxDepth, sitemap: isSitemapHops(fu.hops), requisites: this.requisitesOf(fu),
    });
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
        // The seeds' first robots.txt may have gone out while the crawler opened (early-robots.ts):
        // its answer is taken as this fetch's, its requests reported as they were sent.
        const early = await this.early?.take(robotsUrlOf(item.url.startsWith('https:') ? 'https' : 'http', item.host, portOfUrl(item.url)));
        let start = Date.now();
        let robotsUrl: string | null = null;
        let answers: FetchResult[] = [];
        let r: RobotsFetchOutcome;
        if (early !== undefined && early !== null) {
          ({ start, answers, outcome: r } = early);
          for (const sent of early.sends) {
            robotsUrl ??= sent.url;
            this.dispatched(sent.url, sent.ip, true, sent.at);
          }
        } else {
          r = await fetchRobots(this.fetcher, item.host, item.ip, portOfUrl(item.url), this.cfg.userAgent, {
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
        }
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
}

function portOfUrl(url: string): number {
  const u = new URL(url);
  return u.port !== '' ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
}
