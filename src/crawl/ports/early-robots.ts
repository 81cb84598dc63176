/**
 * The seeds' robots.txt fetched while the crawler opens (docs/performance.md "Start-up and real
 * pages"). A new crawl's first requests are the robots.txt of its seeds' hosts (RFC 9309: nothing
 * of a host before its rules), and nothing those requests need is in the crawler's worker threads:
 * the DNS cache, the main thread's Fetcher and the floors live on this thread. So `startEarly`
 * makes those parts from the config and sends the first EARLY_ROBOTS_MAX seed hosts' robots.txt at
 * once — before the crawler's modules are loaded and its threads (archive, page workers, the two
 * DRUMs: ~0.1 s of CPU each to boot) start — and the opening (opening.ts) takes the parts over.
 * When the frontier later releases such a host's robots item, the fetch stage (fetch-stage.ts
 * startRobots) takes the answer from here instead of asking again, and goes on exactly as after
 * its own fetch: the same call (`fetchRobots`, its redirects, limits and outcomes), archived
 * before the host's pages are released, its crawl-log line, its rules to the frontier's robots
 * gate.
 *
 * What holds, and why:
 *  - robots.txt before any page of its host: these are the robots requests, and no page is
 *    fetched before the frontier has the host's rules (the robots gate, unchanged);
 *  - politeness on the wire: each request passes the same last-step guard as every other
 *    (FloorGuard, the crawler's own instance: its actual starts are the ones the later requests
 *    count from), and at most one seed host per IP is fetched here, so no two first requests share
 *    an IP; the frontier counts the host's and the IP's next due time from the robots item's
 *    release, which is later than the actual send (a longer gap, never a shorter one);
 *  - only seeds that would be crawled: canonical, not excluded, not a trap (LinkScope, the rule
 *    links are held to; a seed is in its own scope); at most EARLY_ROBOTS_MAX hosts, so the
 *    bodies held (≤ 500 KiB each, robots-fetch.ts) stay bounded;
 *  - durability: nothing here is durable until the fetch stage archives it (a crawl stopped or
 *    killed before that asks again when resumed, as for a robots.txt in flight at a stop); the
 *    DNS answers of these lookups wait (at most one per seed host here) for the archive thread and
 *    are then archived like every other (`archiveDnsTo`).
 *
 * Only a new crawl of a single node starts early (a resume's first requests are its pending pages;
 * a cluster node's parts are shared).
 */
import { DnsCache } from '../../dns/index.js';
import { fetchRobots, robotsUrl, type Fetcher, type FetchResult, type RobotsFetchOutcome } from '../../fetch/index.js';
import type { CrawlConfig } from '../../config/config.js';
import { LinkScope } from '../../config/link-scope.js';
import { crawlRamPlan } from '../../budget/ram-budget.js';
import { newBodyBudget, type BodyBudget } from '../../budget/body-budget.js';
import { SharedFloors, clock } from '../../threads/page/page-worker-floors.js';
import { canonicalizeUrl, hostOf } from '../../url/index.js';
import { FloorGuard, type GuardRequest } from './floor-guard.js';
import { newFetcher } from './fetcher-options.js';
import { withMargin } from './margin.js';

/** Seed hosts whose robots.txt is fetched while the crawler opens. */
export const EARLY_ROBOTS_MAX = 8;

type DnsAnswerSink = NonNullable<ConstructorParameters<typeof DnsCache>[0]>['onAnswer'] & {};
type DnsAnswerRecord = Parameters<DnsAnswerSink>[0];

/** One early robots.txt fetch, as the fetch stage takes it over. */
export interface EarlyRobotsAnswer {
  outcome: RobotsFetchOutcome;
  /** every response of the chain, to be archived and released (Fetcher.release) by the taker */
  answers: FetchResult[];
  /** each request's actual start (the shared clock), for the TRACE line and the 'dispatch' event */
  sends: { url: string; ip: string; at: number }[];
  /** Date.now() when the fetch began (the crawl-log line's duration) */
  start: number;
}

/** The parts made before the crawler (the opening uses them instead of making its own). */
export interface EarlyStart {
  readonly dns: DnsCache;
  readonly fetcher: Fetcher;
  readonly budget: BodyBudget;
  /** the page workers' shared floors table (--page-workers on), else null */
  readonly sharedFloors: SharedFloors | null;
  /** the last-step guard these fetches passed, reading the crawler's live config from now on */
  floorGuard(config: () => CrawlConfig): FloorGuard;
  /** DNS answers go to `sink` from now on (those given so far first) */
  archiveDnsTo(sink: DnsAnswerSink): void;
  /**
   * The early fetch of the robots.txt at `url` (robots-fetch.ts robotsUrl), once: its answer, or
   * null when it was not sent (its lookup failed, its IP was another seed host's or is refused) —
   * the taker then fetches it itself; undefined: none was started.
   */
  take(url: string): Promise<EarlyRobotsAnswer | null> | undefined;
  /** robots.txt URLs fetched early and not taken (yet) */
  readonly untaken: number;
  /** requests sent here (each hop of a redirect chain counts) */
  readonly sent: number;
  /**
   * Resolves once every early fetch has sent its first request or was left to the frontier (its
   * lookup failed, its IP was taken, its address is refused), or after `maxMs`, whichever is first
   * (for a caller that must know the requests are out: the tests; the CLI does not wait for them,
   * docs/performance.md "Start-up and real pages").
   */
  sending(maxMs: number): Promise<void>;
}

/**
 * Make the crawl's DNS cache, Fetcher, body budget and floors from `cfg`, and send the robots.txt
 * requests of its first seed hosts (one per IP). Returns at once; the fetches run on.
 */
export function startEarly(cfg: CrawlConfig): EarlyStart {
  const plan = crawlRamPlan(cfg);
  const budget = newBodyBudget(cfg);
  // The table the page workers will share (opening.ts hands it to PageWorkerPool): one slot per worker.
  const sharedFloors = cfg.pageWorkers === 'on' ? new SharedFloors(Math.max(1, plan.parseWorkers)) : null;
  sharedFloors?.setFloors(withMargin(cfg.minHostDelayMs, cfg), withMargin(cfg.minIpDelayMs, cfg));
  let sink: DnsAnswerSink | null = null;
  const held: DnsAnswerRecord[] = [];
  const dns = new DnsCache({
    servers: cfg.dnsServers.length > 0 ? cfg.dnsServers : undefined,
    maxEntries: plan.dnsCacheEntries,
    onAnswer: cfg.warcDns ? (a) => (sink !== null ? sink(a) : void held.push(a)) : undefined,
  });
  const fetcher = newFetcher(cfg, dns, sharedFloors?.forThread(0), budget);
  let config = (): CrawlConfig => cfg;
  const floors = new FloorGuard(() => config(), sharedFloors);
  const fetches = new Map<string, Promise<EarlyRobotsAnswer | null>>();

  // A seed is in its own host's and PLD's scope by definition (scopeAnchors), so of the link rules
  // only --include / --exclude and the trap rule can refuse it; no PLD is needed here (the PSL is
  // built on its first lookup, url/pld.ts).
  const scope = new LinkScope({ scope: 'any', scopeHosts: [], scopePlds: [], include: cfg.include, exclude: cfg.exclude });
  const origins = new Map<string, { host: string; port: number; scheme: 'http' | 'https' }>();
  for (const raw of cfg.seeds) {
    if (origins.size >= EARLY_ROBOTS_MAX) break;
    const url = canonicalizeUrl(raw);
    if (url === null) continue;
    const host = hostOf(url);
    if (scope.check(url, host) !== null) continue;
    const u = new URL(url);
    const scheme = u.protocol === 'https:' ? 'https' : 'http';
    const port = u.port !== '' ? Number(u.port) : scheme === 'https' ? 443 : 80;
    const key = robotsUrl(scheme, host, port);
    if (!origins.has(key)) origins.set(key, { host, port, scheme });
  }
  const ips = new Set<string>();
  let sent = 0;
  const onWire: Promise<void>[] = [];
  for (const [key, o] of origins) {
    // Each host's fetch starts once its name resolves; a host whose IP another one here took is
    // left to the frontier (whose heaps space requests per IP).
    let wire!: () => void;
    onWire.push(new Promise<void>((r) => { wire = r; }));
    const p = dns.resolve(o.host).then((d): Promise<EarlyRobotsAnswer> | null => {
      if ('error' in d || ips.has(d.ip) || fetcher.refusal(d.ip, o.port) !== null) return null;
      ips.add(d.ip);
      const start = Date.now();
      const answers: FetchResult[] = [];
      const sends: EarlyRobotsAnswer['sends'] = [];
      return fetchRobots(fetcher, o.host, d.ip, o.port, cfg.userAgent, {
        dns,
        scheme: o.scheme,
        // as fetch-stage.ts startRobots: every hop held to its IP's floor, its actual start recorded
        beforeRequest: async (req) => {
          const q: GuardRequest = { host: hostOf(req.url), ip: req.ip ?? d.ip, robots: true, hostGapMs: 0, ipGapMs: 0 };
          for (let wait = floors.guard(q); wait !== undefined; wait = floors.start(q)) await wait;
          const at = clock();
          floors.started(q.host, q.ip, at, 0, 0);
          sends.push({ url: req.url, ip: q.ip, at });
          sent++;
          wire();
        },
        afterResponse: (res) => answers.push(res),
      }).then((outcome) => ({ outcome, answers, sends, start }));
    }).catch(() => null); // (fetchRobots never rejects; a lookup that throws leaves the host to the frontier)
    void p.finally(wire);
    fetches.set(key, p);
  }

  return {
    dns, fetcher, budget, sharedFloors,
    floorGuard(c) {
      config = c;
      return floors;
    },
    archiveDnsTo(s) {
      sink = s;
      for (const a of held.splice(0)) s(a);
    },
    take(url) {
      const f = fetches.get(url);
      if (f === undefined) return undefined;
      fetches.delete(url);
      return f;
    },
    get untaken() {
      return fetches.size;
    },
    get sent() {
      return sent;
    },
    async sending(maxMs) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all(onWire), new Promise<void>((r) => { timer = setTimeout(r, maxMs); })]);
      clearTimeout(timer);
    },
  };
}

