/**
 * The pipeline's last-step floor guard (Crawler.fetchPage / startRobots → FloorGuard guard, start,
 * traceDispatch): whatever the timing, two page requests to one host are dispatched ≥ τh0 + margin
 * apart, and two requests to one IP (robots.txt included) ≥ τs0 + margin apart, as the 'dispatch'
 * events (the e2e tests' judge) record them.
 *
 * A loaded box is modelled by the clock: performance.now() jumps forward at random reads, as it
 * does when a scavenge runs or the process is descheduled between two statements (measured on this
 * box at load ~9: up to 34 ms between the guard's read and the dispatch stamp in the e2e tiny crawl,
 * scavenges of 20–54 ms in bench:e2e).
 * The jumps only ever add time, so timers look late, never early. Before the dispatch was stamped
 * once at the send, a jump between floorStart's read and the dispatch made the request leave later
 * than the guard recorded, and the next one to its host came that much sooner after it (the e2e
 * failure 'h1.pld0.test: 114.7 ms before …' with a 160 ms floor).
 *
 * The guard's code runs as is on a Crawler without its stores (Object.create on the prototype):
 * the fetcher is a stub, because the property is about when requests leave the guard, not about
 * sockets (test/e2e judges the same events against a real server). Budget: ~5 s.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import fc from 'fast-check';
import { Crawler } from '../../src/crawl/pipeline.js';
import { resolveCrawlConfig, type CrawlConfig } from '../../src/config/config.js';
import { FloorGuard } from '../../src/crawl/ports/floor-guard.js';

const TAU_H0 = 10;
const TAU_S0 = 4;
const MARGIN = 5;
const HOST_FLOOR = TAU_H0 + MARGIN;
const IP_FLOOR = TAU_S0 + MARGIN;
/**
 * hosts 0 and 1 share an IP, host 2 has its own; host 1 has a delay of its own longer than the floor
 * (a robots.txt Crawl-delay: FrontierUrl.hostGapMs, margin included), as its IP has (τs)
 */
const CRAWL_DELAY = 3 * HOST_FLOOR;
const IP_DELAY = 2 * IP_FLOOR;
const HOSTS = [
  { host: 'h0.test', ip: '10.0.0.1', hostGapMs: 0, ipGapMs: IP_DELAY },
  { host: 'h1.test', ip: '10.0.0.1', hostGapMs: CRAWL_DELAY, ipGapMs: IP_DELAY },
  { host: 'h2.test', ip: '10.0.0.2', hostGapMs: 0, ipGapMs: 0 },
];

interface Dispatch { at: number; url: string; ip: string; robots: boolean }
/** The private members of Crawler this test drives (names as in src/crawl/fetch-stage.ts and floor-guard.ts). */
interface GuardView {
  fetchPage(job: unknown): Promise<void>;
  startRobots(item: unknown): void;
  floors: {
    hostStarted: Map<string, number>;
    ipStarted: Map<string, number>;
    lastHostStart: Map<string, number>;
    lastIpStart: Map<string, number>;
  };
}

const PAGE_STUB = new Error('stub fetcher: page requests end here');

/** A Crawler with just what the guard and the two dispatch paths touch. */
function guardRig(floors: { host: number; ip: number }) {
  const robotsDone = new Map<object, () => void>();
  const c = Object.create(Crawler.prototype) as Crawler;
  EventEmitter.call(c);
  Object.assign(c, {
    cfg: resolveCrawlConfig({
      seeds: ['http://h0.test/'], stateDir: '/nonexistent/state', outDir: '/nonexistent/warc', userAgent: 'floor-guard-test/1.0 (+http://example.test/bot)',
      hostDelayMs: floors.host, minHostDelayMs: floors.host, ipDelayMs: floors.ip, minIpDelayMs: floors.ip, politenessMarginMs: MARGIN,
    }),
    floors: new FloorGuard(() => (c as unknown as { cfg: CrawlConfig }).cfg),
    inFlight: 0, heldIds: new Set(), robotsInFlight: 0,
    counters: { robotsFetches: 0 },
    dns: {},
    fetcher: {
      refusal: () => null,
      // a result's hold on the body budget (src/fetch/memory-budget.ts) is not what this test judges
      release: () => {},
      fetch: async (req: { robots?: boolean }) => {
        if (req.robots !== true) throw PAGE_STUB;
        // Unreachable: fetchRobots answers without another hop.
        return { outcome: 'CRAWL_FETCH_CONNECT', body: new Uint8Array(0), timings: { totalMs: 0 } };
      },
    },
    frontier: { robotsDone: (item: object) => robotsDone.get(item)!() },
    // crawl.log lines of robots.txt fetches and drops are not what this test judges
    crawlLog: { writeRobots: () => {}, writeDropped: () => {} },
    wake: { kick: () => {} },
    sitemaps: null, // robots.txt Sitemap: lines are not what this test judges
    pool: null, // no parse pool: nothing to start after the first request (crawler-core.ts afterFirstRequest)
    fail: (e: unknown) => { throw e; },
  });
  const events: Dispatch[] = [];
  c.on('dispatch', (e: Dispatch) => events.push(e));
  const view = c as unknown as GuardView;
  let nextId = 1;
  return {
    view,
    events,
    page(k: number, path: string): Promise<void> {
      const { host, ip, hostGapMs, ipGapMs } = HOSTS[k]!;
      const fu = { url: `http://${host}/${path}`, ip, host, hops: 0, attempts: 0, hostGapMs, ipGapMs };
      return view.fetchPage({ id: nextId++, fu, rec: new Uint8Array(0), bodyBytes: 0, payloadBytes: 0, group: null }).then(
        () => assert.fail('the stub fetcher rejects page requests'),
        (e) => { if (e !== PAGE_STUB) throw e; },
      );
    },
    robots(k: number): Promise<void> {
      const { host, ip, hostGapMs, ipGapMs } = HOSTS[k]!;
      const url = `http://${host}/robots.txt`;
      const item = { url, ip, host, hops: 0, attempts: 0, hostGapMs, ipGapMs };
      const done = new Promise<void>((resolve) => robotsDone.set(item, resolve));
      view.startRobots(item);
      return done;
    },
  };
}

/** Gaps shorter than `ms` between consecutive events with the same key. */
function shortGaps(events: Dispatch[], key: (e: Dispatch) => string | null, ms: number): string[] {
  const last = new Map<string, number>();
  const out: string[] = [];
  for (const e of events) {
    const k = key(e);
    if (k === null) continue;
    const p = last.get(k);
    // 1e-6: both stamps are timeOrigin + now(), a sum whose rounding may differ in the last bit.
    if (p !== undefined && e.at - p < ms - 1e-6) out.push(`${k}: ${(e.at - p).toFixed(2)} ms before ${e.url}`);
    last.set(k, e.at);
  }
  return out;
}

/**
 * Page dispatches sooner after the previous dispatch to their host — a page's or a robots.txt's: a
 * robots.txt request is a start on its host — than the host's delay (its own when longer than the
 * floor: a Crawl-delay).
 */
function shortHostGaps(events: Dispatch[]): string[] {
  const last = new Map<string, number>();
  const out: string[] = [];
  for (const e of events) {
    const host = new URL(e.url).hostname;
    const p = last.get(host);
    const ms = Math.max(HOST_FLOOR, HOSTS.find((h) => h.host === host)!.hostGapMs);
    if (!e.robots && p !== undefined && e.at - p < ms - 1e-6) out.push(`${host}: ${(e.at - p).toFixed(2)} ms before ${e.url} (delay ${ms})`);
    last.set(host, e.at);
  }
  return out;
}

/**
 * performance.now() with forward jumps: at each read, with probability `p`, the clock moves on by
 * up to `maxJumpMs` first (a scavenge or a deschedule just before the read).
 */
function jumpyClock(seed: number, p: number, maxJumpMs: number): () => void {
  const real = performance.now.bind(performance);
  let s = seed >>> 0 || 1;
  const rand = (): number => {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    return s / 2 ** 32;
  };
  let offset = 0;
  performance.now = () => {
    if (rand() < p) offset += rand() * maxJumpMs;
    return real() + offset;
  };
  return () => { performance.now = real; };
}

/** A page request (robots.txt one time in five) to one of HOSTS, started `afterMs` into the case. */
const request = fc.record({
  robots: fc.integer({ min: 0, max: 4 }).map((x) => x === 0),
  host: fc.integer({ min: 0, max: HOSTS.length - 1 }),
  afterMs: fc.integer({ min: 0, max: 40 }),
});

test('floor guard: page dispatches to a host ≥ its delay apart (τh0 + margin, or its Crawl-delay, counted from its robots.txt too), to an IP ≥ its delay apart (robots.txt included), however late the clock reads', { timeout: 600_000 }, async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(request, { minLength: 2, maxLength: 12 }),
      fc.integer({ min: 1, max: 2 ** 31 - 1 }),
      fc.constantFrom(0.1, 0.3),
      async (reqs, seed, p) => {
        const rig = guardRig({ host: TAU_H0, ip: TAU_S0 });
        const restore = jumpyClock(seed, p, 3 * HOST_FLOOR);
        try {
          await Promise.all(reqs.map((r, i) => new Promise<void>((resolve, reject) => {
            setTimeout(() => {
              (r.robots ? rig.robots(r.host) : rig.page(r.host, `p/${i}`)).then(resolve, reject);
            }, r.afterMs);
          })));
        } finally {
          restore();
        }
        assert.equal(rig.events.length, reqs.length, 'every request dispatched once');
        assert.deepEqual(shortHostGaps(rig.events), [], 'host delay');
        assert.deepEqual(shortGaps(rig.events.filter((e) => e.ip === '10.0.0.1'), (e) => e.ip, IP_DELAY), [], 'IP delay');
        assert.deepEqual(shortGaps(rig.events, (e) => e.ip, IP_FLOOR), [], 'IP floor');
      },
    ),
    { numRuns: 40 },
  );
});

test('floor guard: floors off, nothing is held and no per-host or per-IP start is kept', async () => {
  const rig = guardRig({ host: 0, ip: 0 });
  await Promise.all([rig.page(2, 'a'), rig.page(2, 'b'), rig.robots(2)]);
  assert.equal(rig.events.length, 3);
  const f = rig.view.floors;
  assert.equal(f.hostStarted.size + f.ipStarted.size + f.lastHostStart.size + f.lastIpStart.size, 0);
});
