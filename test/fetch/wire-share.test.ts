/**
 * The wire gate shared between Fetchers (src/fetch/wire-share.ts, implemented by the crawler's
 * SharedFloors, src/crawl/page-worker-floors.ts): two Fetchers — as the page workers' and the main
 * thread's (robots.txt) are — each with its own connections, judged by simweb's request log:
 *   - a request to an IP whose connection the other Fetcher is using waits until that exchange has
 *     ended (one exchange per IP on the wire, all Fetchers together), then the IP floor;
 *   - the floors count from the other Fetcher's writes too (per IP; per host for pages);
 *   - a thread that died holding an IP's connection slot gives it back (releaseThread).
 * Both Fetchers run in this thread here; across threads the same table is shared through its
 * SharedArrayBuffer (the views below are what each thread builds).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSimweb, type Simweb, type HostInfo, type RequestLogEntry } from '../../src/simweb/index.js';
import { DnsCache } from '../../src/dns/index.js';
import { Fetcher, FETCH_OUTCOMES as O, LOOPBACK_NETWORKS, type FetcherOptions } from '../../src/fetch/index.js';
import { SharedFloors } from '../../src/crawl/page-worker-floors.js';

const UA = 'drumcrawl/0.1 (+http://crawler.test/about)';
let sim: Simweb;
let dns: DnsCache;

before(async () => {
  sim = await startSimweb({ preset: 'hostile' });
  dns = new DnsCache({ servers: [sim.dnsServer], timeoutMs: 200, tries: 1 });
});
after(async () => {
  dns.close();
  await sim.close();
});

function fetcher(o: Partial<FetcherOptions> = {}): Fetcher {
  return new Fetcher({
    userAgent: UA, dns, allowedNetworks: LOOPBACK_NETWORKS, connectTimeoutMs: 1000, headersTimeoutMs: 400,
    bodyTimeoutMs: 400, totalTimeoutMs: 1200, ...o,
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const used = new Map<string, number>();
function freshPage(h: HostInfo): string {
  const n = used.get(h.name) ?? 1;
  assert.ok(n < h.pages, `${h.name} has more than ${n} pages`);
  used.set(h.name, n + 1);
  return `${sim.web.origin(h.name)}/p/${n}`;
}

/** A host that never answers and two normal hosts, all on one IP. */
function oneIp(): { slow: HostInfo; normal: HostInfo[] } {
  const slow = sim.web.findHost((x) => x.pldIndex >= 0 && x.dns === 'ok' && x.behaviour === 'no-response');
  assert.ok(slow);
  const normal = [...sim.web.hosts()].filter((x) => x.ip === slow.ip && x.dns === 'ok' && x.behaviour === 'normal' && x.pldIndex >= 0).slice(0, 2);
  assert.equal(normal.length, 2, `two normal hosts on ${slow.ip}`);
  return { slow, normal };
}

/** The server's log entry (start, end) of each URL, once it has logged them. */
async function logOf(urls: string[]): Promise<Map<string, RequestLogEntry>> {
  const keys = new Set(urls.map((u) => { const x = new URL(u); return `${x.hostname}${x.pathname}`; }));
  let es: RequestLogEntry[] = [];
  for (let i = 0; i < 50; i++) {
    es = sim.log.entries().filter((e) => keys.has(`${e.host}${e.path}`));
    if (es.length === keys.size && sim.connectionStats().open === 0) break;
    await sleep(40);
  }
  return new Map(es.map((e) => [`${e.host}${e.path}`, e]));
}
const keyOf = (u: string): string => { const x = new URL(u); return `${x.hostname}${x.pathname}`; };

test('shared wire gate: a request waits while another Fetcher holds the IP’s connection, then the IP floor (without the share: at once)', { timeout: 60_000 }, async () => {
  const { slow, normal } = oneIp();
  const IP_GAP = 60;
  const SLACK = 8;
  /** A hangs on the slow host; 100 ms later B asks a normal host on the same IP. */
  const pair = async (a: Fetcher, b: Fetcher): Promise<{ aEnd: number; bStart: number }> => {
    const ua = freshPage(slow);
    const ub = freshPage(normal[0]!);
    const pa = a.fetch({ url: ua });
    await sleep(100);
    const rb = await b.fetch({ url: ub });
    const ra = await pa;
    assert.equal(ra.outcome, O.HEADERS_TIMEOUT);
    assert.equal(rb.status, 200, rb.outcome);
    const log = await logOf([ua, ub]);
    const ea = log.get(keyOf(ua));
    const eb = log.get(keyOf(ub));
    assert.ok(ea && eb, 'both requests logged');
    return { aEnd: ea.end, bStart: eb.start };
  };

  // Two Fetchers without a share: B goes while A's exchange is still on the wire.
  const a0 = fetcher();
  const b0 = fetcher();
  try {
    const { aEnd, bStart } = await pair(a0, b0);
    assert.ok(bStart < aEnd - 100, `without the share B starts while A is in flight (B ${bStart.toFixed(0)}, A ends ${aEnd.toFixed(0)})`);
  } finally {
    await a0.close();
    await b0.close();
  }

  const floors = new SharedFloors(1);
  floors.setFloors(0, IP_GAP);
  const a1 = fetcher({ minIpIntervalMs: IP_GAP, share: floors.forThread(1) });
  const b1 = fetcher({ minIpIntervalMs: IP_GAP, share: floors.forThread(0) });
  try {
    const { aEnd, bStart } = await pair(a1, b1);
    assert.ok(bStart >= aEnd - SLACK, `with the share B waits for A's exchange to end (B ${bStart.toFixed(1)}, A ends ${aEnd.toFixed(1)})`);
  } finally {
    await a1.close();
    await b1.close();
  }
});

test('shared wire gate: the IP floor counts from the other Fetcher’s write', { timeout: 30_000 }, async () => {
  const { normal } = oneIp();
  const IP_GAP = 300;
  const SLACK = 8;
  const floors = new SharedFloors(1);
  floors.setFloors(0, IP_GAP);
  const a = fetcher({ minIpIntervalMs: IP_GAP, share: floors.forThread(1) });
  const b = fetcher({ minIpIntervalMs: IP_GAP, share: floors.forThread(0) });
  try {
    const ua = freshPage(normal[0]!);
    const ub = freshPage(normal[1]!);
    const ra = await a.fetch({ url: ua });
    const rb = await b.fetch({ url: ub });
    assert.equal(ra.status, 200);
    assert.equal(rb.status, 200);
    const log = await logOf([ua, ub]);
    const gap = log.get(keyOf(ub))!.start - log.get(keyOf(ua))!.start;
    assert.ok(gap >= IP_GAP - SLACK, `B written ${gap.toFixed(1)} ms after A (floor ${IP_GAP})`);
  } finally {
    await a.close();
    await b.close();
  }
});

test('SharedFloors: connection slots are counted across threads and a dead thread’s are given back', () => {
  const floors = new SharedFloors(2);
  const main = floors.forThread(0);
  const w1 = floors.forThread(1);
  const w2 = floors.forThread(2);
  assert.equal(w1.tryAcquire('127.1.0.9', 1), true);
  assert.equal(main.tryAcquire('127.1.0.9', 1), false, 'the IP is busy in worker 1');
  assert.equal(w2.tryAcquire('127.1.0.9', 2), true, 'two slots allowed: the second one');
  assert.equal(w2.tryAcquire('127.1.0.9', 2), false);
  // Worker 1 dies with its exchange on the wire: its slot comes back.
  floors.releaseThread(1);
  assert.equal(main.tryAcquire('127.1.0.9', 2), true);
  main.release('127.1.0.9');
  w2.release('127.1.0.9');
  // A release without a slot held changes nothing (a dead thread's late release).
  w1.release('127.1.0.9');
  assert.equal(main.tryAcquire('127.1.0.9', 1), true);
  assert.equal(w1.tryAcquire('127.1.0.9', 1), false);
});
