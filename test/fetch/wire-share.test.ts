/**
 * The wire gate shared between Fetchers (src/fetch/wire-share.ts, implemented by the crawler's
 * SharedFloors, src/threads/page/page-worker-floors.ts): two Fetchers — as the page workers' and the main
 * thread's (robots.txt) are — each with its own connections, judged by simweb's request log:
 *   - a request to an IP whose connection the other Fetcher is using waits until that exchange has
 *     ended (one exchange per IP on the wire, all Fetchers together), then the IP floor;
 *   - the floors count from the other Fetcher's writes too (per IP; per host for pages);
 *   - a thread that died holding an IP's connection slot gives it back (releaseThread).
 * Both Fetchers run in this thread here; across threads the same table is shared through its
 * SharedArrayBuffer (the views below are what each thread builds). The order and spacing of the
 * writes are judged on undici's record of them (test/e2e/wire-log.ts): the server's stamps run on
 * this same event loop and a loaded box delays them.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSimweb, type Simweb, type HostInfo } from '../../src/simweb/index.js';
import { DnsCache } from '../../src/dns/index.js';
import { Fetcher, FETCH_OUTCOMES as O, LOOPBACK_NETWORKS, type FetcherOptions } from '../../src/fetch/index.js';
import { SharedFloors } from '../../src/threads/page/page-worker-floors.js';
import { wireLog } from '../e2e/wire-log.js';

const UA = 'drumcrawl/0.1 (+http://crawler.test/about)';
let sim: Simweb;
let dns: DnsCache;

before(async () => {
  sim = await startSimweb({ preset: 'hostile' });
  // A DNS answer from this process's own server can be seconds late on a loaded box: the timeout is
  // generous (only the 'drop' host, which never answers, waits for it).
  dns = new DnsCache({ servers: [sim.dnsServer], timeoutMs: 5000, tries: 1 });
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


/** Requests the server has read and not yet logged (a silent host's, until its socket closes). */
async function untilRead(n: number): Promise<void> {
  while (sim.connectionStats().unlogged < n) await sleep(10);
}

// The requests carry their IP (no DNS lookup in the way), the silent host's exchange is ended by the
// test (never by a timeout racing the other request), and the order of writes is read from undici's
// own record of them (wire-log.ts): nothing here depends on how fast the box is.
test('shared wire gate: a request waits while another Fetcher holds the IP’s connection, then the IP floor (without the share: at once)', { timeout: 600_000 }, async () => {
  const { slow, normal } = oneIp();
  const IP_GAP = 60;
  const slowFetcher = (o: Partial<FetcherOptions>): Fetcher => fetcher({ headersTimeoutMs: 600_000, totalTimeoutMs: 600_000, ...o });
  const wire = wireLog();
  try {
    // Two Fetchers without a share: B goes while A's exchange is still on the wire.
    const a0 = slowFetcher({});
    const b0 = fetcher();
    try {
      const ua = freshPage(slow);
      const ub = freshPage(normal[0]!);
      let aEnded = false;
      const pa = a0.fetch({ url: ua, ip: slow.ip }).finally(() => { aEnded = true; });
      await untilRead(1);
      const rb = await b0.fetch({ url: ub, ip: slow.ip });
      assert.equal(rb.status, 200, rb.outcome);
      assert.equal(aEnded, false, 'A is still on the wire');
      await a0.close();
      assert.equal((await pa).outcome, O.ABORTED);
    } finally {
      await a0.close();
      await b0.close();
    }

    // With the share: B waits in its gate while A holds the IP's connection (however long), and is
    // written only after A's exchange has ended (the test ends it), then after the IP floor.
    const floors = new SharedFloors(1);
    floors.setFloors(0, IP_GAP);
    const a1 = slowFetcher({ minIpIntervalMs: IP_GAP, share: floors.forThread(1) });
    const b1 = fetcher({ minIpIntervalMs: IP_GAP, share: floors.forThread(0), totalTimeoutMs: 600_000 });
    try {
      const ua = freshPage(slow);
      const ub = freshPage(normal[1]!);
      const pa = a1.fetch({ url: ua, ip: slow.ip });
      await untilRead(1);
      const pb = b1.fetch({ url: ub, ip: slow.ip });
      while (b1.stats().gated < 1) await sleep(5);
      // Held for longer than the IP floor (a wait that only grows with the load: it cannot fail).
      await sleep(4 * IP_GAP);
      assert.equal(b1.stats().gated, 1, 'B still waits while A is on the wire');
      assert.equal(wire.at(normal[1]!.name, new URL(ub).pathname), undefined, 'B not written');
      const endedAt = performance.timeOrigin + performance.now();
      await a1.close();
      assert.equal((await pa).outcome, O.ABORTED);
      const rb = await pb;
      assert.equal(rb.status, 200, rb.outcome);
      const wroteB = wire.at(normal[1]!.name, new URL(ub).pathname);
      assert.ok(wroteB !== undefined && wroteB >= endedAt, `B written after A's exchange ended (${wroteB === undefined ? 'never' : (wroteB - endedAt).toFixed(1)} ms)`);
    } finally {
      await a1.close();
      await b1.close();
    }
  } finally {
    wire.stop();
  }
});

test('shared wire gate: the IP floor counts from the other Fetcher’s write', { timeout: 600_000 }, async () => {
  const { normal } = oneIp();
  const IP_GAP = 300;
  // undici's record of a write comes right after the gate's stamp, in the same synchronous step.
  const SLACK = 1;
  const floors = new SharedFloors(1);
  floors.setFloors(0, IP_GAP);
  const a = fetcher({ minIpIntervalMs: IP_GAP, share: floors.forThread(1), totalTimeoutMs: 600_000 });
  const b = fetcher({ minIpIntervalMs: IP_GAP, share: floors.forThread(0), totalTimeoutMs: 600_000 });
  const wire = wireLog();
  try {
    const ua = freshPage(normal[0]!);
    const ub = freshPage(normal[1]!);
    const ra = await a.fetch({ url: ua, ip: normal[0]!.ip });
    const rb = await b.fetch({ url: ub, ip: normal[1]!.ip });
    assert.equal(ra.status, 200);
    assert.equal(rb.status, 200);
    const gap = wire.at(normal[1]!.name, new URL(ub).pathname)! - wire.at(normal[0]!.name, new URL(ua).pathname)!;
    assert.ok(gap >= IP_GAP - SLACK, `B written ${gap.toFixed(1)} ms after A (floor ${IP_GAP})`);
  } finally {
    wire.stop();
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
