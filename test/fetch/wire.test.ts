/**
 * What the server sees (simweb's request log is the judge):
 *   - one Fetcher.fetch puts at most one request on the wire, for every hostile behaviour, on fresh
 *     and on reused keep-alive connections, alone and with other requests queued behind it on the
 *     same IP (undici re-sends only requests it has not written yet; a GET reset after it was
 *     written fails with CRAWL_FETCH_RESET and is not repeated);
 *   - the wire gate: requests queued behind a slow exchange on one IP are written ≥ minIpIntervalMs
 *     apart, and ≥ minHostIntervalMs apart per host (robots.txt per IP only), although they were all
 *     handed to the fetcher at once; without the gate they go out back to back (the cause of the
 *     server-side gaps < τs0 the e2e crawls used to show).
 *   - fetchRobots calls its beforeRequest hook before every hop with the hop's IP (the crawler's
 *     politeness guard waits there).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSimweb, type Simweb, type HostInfo, type RequestLogEntry, type Behaviour } from '../../src/simweb/index.js';
import { DnsCache } from '../../src/dns/index.js';
import { Fetcher, FETCH_OUTCOMES as O, ROBOTS_OUTCOMES as R, LOOPBACK_NETWORKS, type FetcherOptions, type FetchResult } from '../../src/fetch/index.js';
import { fetchRobots } from '../../src/robots/index.js';

const UA = 'drumcrawl/0.1 (+http://crawler.test/about)';
const MiB = 1024 * 1024;
let sim: Simweb;
let dns: DnsCache;
const unhandled: unknown[] = [];
const onUnhandled = (e: unknown): void => { unhandled.push(e); };

before(async () => {
  process.on('unhandledRejection', onUnhandled);
  // Small bomb and huge body: this file is about request counts, not caps (hostile.test.ts).
  sim = await startSimweb({ preset: 'hostile', params: { bombDecodedBytes: 4 * MiB, hugeBodyBytes: 2 * MiB } });
  dns = new DnsCache({ servers: [sim.dnsServer], timeoutMs: 200, tries: 1 });
});
after(async () => {
  dns.close();
  await sim.close();
  process.off('unhandledRejection', onUnhandled);
  assert.deepEqual(unhandled, [], 'no unhandled rejections');
});

function fetcher(o: Partial<FetcherOptions> = {}): Fetcher {
  return new Fetcher({
    userAgent: UA, dns, allowedNetworks: LOOPBACK_NETWORKS, connectTimeoutMs: 1000, headersTimeoutMs: 400,
    bodyTimeoutMs: 400, totalTimeoutMs: 1200, maxBodyBytes: MiB, maxDecodedBytes: 2 * MiB, ...o,
  });
}

const page = (h: HostInfo, n: number): string => `${sim.web.origin(h.name)}/p/${n}`;
/** A page of `h` not requested before in this file (each (host, path) is fetched once). */
const used = new Map<string, number>();
function freshPage(h: HostInfo): string {
  const n = used.get(h.name) ?? 1;
  assert.ok(n < h.pages, `${h.name} has more than ${n} pages`);
  used.set(h.name, n + 1);
  return page(h, n);
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Server log entries for these (host, path) pairs, once the server has logged everything it will. */
async function entriesFor(keys: Set<string>): Promise<RequestLogEntry[]> {
  // 'no-response' and reset requests are logged when their sockets close: wait until quiet.
  let n = -1;
  for (let i = 0; i < 50; i++) {
    const m = sim.log.entries().filter((e) => keys.has(`${e.host}${e.path}`)).length;
    if (m === n && sim.connectionStats().open === 0) break;
    n = m;
    await sleep(40);
  }
  return sim.log.entries().filter((e) => keys.has(`${e.host}${e.path}`));
}

test('one fetch = at most one request on the wire, for every hostile behaviour, fresh and reused connections, alone and queued', { timeout: 60_000 }, async () => {
  const behaviours: Behaviour[] = ['reset', 'no-response', 'trickle', 'server-error', 'too-many-requests', 'bomb', 'huge-body',
    'redirect-chain', 'wrong-type', 'gzip', 'br', 'malformed'];
  const f = fetcher();
  const fetched = new Map<string, FetchResult>();
  const go = async (h: HostInfo): Promise<FetchResult> => {
    const url = freshPage(h);
    const r = await f.fetch({ url });
    fetched.set(`${h.name}${new URL(url).pathname}`, r);
    return r;
  };
  try {
    // Behaviours on different IPs run in parallel; on one IP in sequence (as politeness would).
    const byIp = new Map<string, Array<[Behaviour, HostInfo, HostInfo]>>();
    for (const b of behaviours) {
      const h = sim.web.findHost((x) => x.pldIndex >= 0 && x.dns === 'ok' && x.behaviour === b);
      assert.ok(h, `the hostile preset has a '${b}' host`);
      const normal = sim.web.findHost((x) => x.pldIndex >= 0 && x.dns === 'ok' && x.behaviour === 'normal' && x.ip === h.ip);
      assert.ok(normal, `a normal host shares ${h.ip} with the '${b}' host`);
      byIp.set(h.ip, [...(byIp.get(h.ip) ?? []), [b, h, normal]]);
    }
    await Promise.all([...byIp.values()].map(async (list) => {
      for (const [, h, normal] of list) {
        await go(h); // alone (fresh or reused connection, whatever the IP's pool holds)
        assert.notEqual((await go(normal)).status, undefined);
        await go(h); // on a keep-alive connection a normal answer left open
        // queued: the behaviour's request with two more behind it on the same IP, all at once
        await Promise.all([go(h), go(normal), go(h)]);
      }
    }));
    const log = await entriesFor(new Set(fetched.keys()));
    const count = new Map<string, number>();
    for (const e of log) count.set(`${e.host}${e.path}`, (count.get(`${e.host}${e.path}`) ?? 0) + 1);
    const twice = [...count].filter(([, n]) => n > 1).map(([k, n]) => `${k} ×${n} (${fetched.get(k)?.outcome})`);
    assert.deepEqual(twice, [], 'no request written twice');
    assert.ok(log.length <= fetched.size, `${log.length} requests on the wire for ${fetched.size} fetches`);
    // Every fetch that got an answer or a transport error after writing is in the server log.
    const missing = [...fetched].filter(([k, r]) => r.status !== undefined && !count.has(k)).map(([k]) => k);
    assert.deepEqual(missing, []);
    const resets = [...fetched].filter(([k]) => sim.web.hostInfo(k.slice(0, k.indexOf('/')))!.behaviour === 'reset');
    assert.equal(resets.length, 4);
    for (const [k, r] of resets) {
      assert.equal(r.outcome, O.RESET, k);
      assert.equal(count.get(k), 1, `${k}: the reset GET was written once and not repeated`);
    }
  } finally {
    await f.close();
  }
});

/** Hosts on one IP: a silent one (holds the connection until the headers timeout, ~1 s) and three normal ones. */
function oneIp(): { slow: HostInfo; normal: HostInfo[] } {
  const slow = sim.web.findHost((x) => x.pldIndex >= 0 && x.dns === 'ok' && x.behaviour === 'no-response');
  assert.ok(slow);
  const normal = [...sim.web.hosts()].filter((x) => x.ip === slow.ip && x.dns === 'ok' && x.behaviour === 'normal' && x.pldIndex >= 0).slice(0, 3);
  assert.equal(normal.length, 3, `three normal hosts on ${slow.ip}`);
  return { slow, normal };
}

/** Starts of the given requests as the server saw them, in order. */
async function startsOf(urls: string[]): Promise<Array<{ key: string; start: number }>> {
  const keys = new Set(urls.map((u) => { const x = new URL(u); return `${x.hostname}${x.pathname}`; }));
  const es = await entriesFor(keys);
  return es.map((e) => ({ key: `${e.host}${e.path}`, start: e.start })).sort((a, b) => a.start - b.start);
}

test('wire gate: requests queued behind a slow exchange go out ≥ τs0 apart per IP and ≥ τh0 per host (without it: back to back)', { timeout: 60_000 }, async () => {
  const { slow, normal } = oneIp();
  const IP_GAP = 80;
  const HOST_GAP = 250;
  // Slack for the server's timestamps: both ends run on one event loop here, and the server logs a
  // request when it has parsed the head, a few ms after the write on a loaded 2-core box.
  const SLACK = 8;
  const burst = (f: Fetcher): { urls: string[]; done: Promise<FetchResult[]> } => {
    const urls = [freshPage(slow), freshPage(normal[0]!), freshPage(normal[1]!), freshPage(normal[0]!), freshPage(normal[2]!)];
    // The slow one first; the others are handed over while it hangs (as two dispatch slots per
    // IP in the frontier, or robots + page, would do).
    const first = f.fetch({ url: urls[0]! });
    const rest = (async () => { await sleep(100); return Promise.all(urls.slice(1).map((url) => f.fetch({ url }))); })();
    return { urls, done: Promise.all([first, rest]).then(([a, b]) => [a, ...b]) };
  };

  const plain = fetcher({ totalTimeoutMs: 3000 });
  try {
    const b = burst(plain);
    const rs = await b.done;
    assert.equal(rs[0]!.outcome, O.HEADERS_TIMEOUT);
    const s = await startsOf(b.urls.slice(1));
    assert.equal(s.length, 4);
    const minGap = Math.min(...s.slice(1).map((x, i) => x.start - s[i]!.start));
    // Undici writes each queued request as soon as the previous exchange ends: the gaps are the
    // response times of the small pages, far below τs0 (the failure the gate exists for).
    assert.ok(minGap < IP_GAP / 2, `without the gate queued requests go out back to back (min gap ${minGap.toFixed(1)} ms)`);
  } finally {
    await plain.close();
  }

  const gated = fetcher({ totalTimeoutMs: 3000, minIpIntervalMs: IP_GAP, minHostIntervalMs: HOST_GAP });
  try {
    const b = burst(gated);
    const rs = await b.done;
    assert.equal(rs[0]!.outcome, O.HEADERS_TIMEOUT);
    for (const r of rs.slice(1)) assert.notEqual(r.status, undefined, r.outcome);
    const s = await startsOf(b.urls);
    assert.equal(s.length, 5);
    for (let i = 1; i < s.length; i++) {
      assert.ok(s[i]!.start - s[i - 1]!.start >= IP_GAP - SLACK, `per IP: ${s[i - 1]!.key} → ${s[i]!.key} ${(s[i]!.start - s[i - 1]!.start).toFixed(1)} ms`);
    }
    const h0 = s.filter((x) => x.key.startsWith(normal[0]!.name + '/'));
    assert.equal(h0.length, 2);
    assert.ok(h0[1]!.start - h0[0]!.start >= HOST_GAP - SLACK, `per host: ${(h0[1]!.start - h0[0]!.start).toFixed(1)} ms`);
    assert.equal(gated.stats().gated, 0);
  } finally {
    await gated.close();
  }
});

test('wire gate: setIntervals changes the floors of requests already waiting (a shorter floor releases them, a longer one holds them)', { timeout: 30_000 }, async () => {
  const { normal } = oneIp();
  const SLACK = 8;
  const f = fetcher({ totalTimeoutMs: 8000, minIpIntervalMs: 5000 });
  try {
    // Shorter: B waits behind A's 5 s floor; lowering the floor to 100 ms releases it at once.
    const a = freshPage(normal[0]!), b = freshPage(normal[1]!);
    const ra = await f.fetch({ url: a });
    assert.notEqual(ra.status, undefined, ra.outcome);
    const pb = f.fetch({ url: b });
    await sleep(150);
    assert.equal(f.stats().gated, 1, 'B waits in the gate');
    const t0 = performance.now();
    f.setIntervals({ minIpIntervalMs: 100 });
    const rb = await pb;
    assert.notEqual(rb.status, undefined, rb.outcome);
    assert.ok(performance.now() - t0 < 2500, `released by the shorter floor (${(performance.now() - t0).toFixed(0)} ms)`);
    const s1 = await startsOf([a, b]);
    assert.equal(s1.length, 2);
    assert.ok(s1[1]!.start - s1[0]!.start >= 100 - SLACK, `still ≥ the new floor: ${(s1[1]!.start - s1[0]!.start).toFixed(1)} ms`);

    // Longer: three requests handed over under a 0 ms floor; raising it to 200 ms once the first
    // is on the wire spaces the other two.
    f.setIntervals({ minIpIntervalMs: 0 });
    const urls = [freshPage(normal[0]!), freshPage(normal[1]!), freshPage(normal[2]!)];
    const first = f.fetch({ url: urls[0]! });
    await sleep(5);
    const rest = urls.slice(1).map((url) => f.fetch({ url }));
    f.setIntervals({ minIpIntervalMs: 200 });
    for (const r of await Promise.all([first, ...rest])) assert.notEqual(r.status, undefined, r.outcome);
    const s2 = await startsOf(urls);
    assert.equal(s2.length, 3);
    for (let i = 1; i < s2.length; i++) {
      assert.ok(s2[i]!.start - s2[i - 1]!.start >= 200 - SLACK, `held by the longer floor: ${(s2[i]!.start - s2[i - 1]!.start).toFixed(1)} ms`);
    }
    assert.throws(() => f.setIntervals({ minHostIntervalMs: -1 }), /CRAWL_FETCH_BAD_OPTION|non-negative/);
  } finally {
    await f.close();
  }
});

test('wire gate: robots.txt is spaced per IP only; a fetch that times out while waiting in the gate never reaches the wire; close() answers waiting fetches', { timeout: 30_000 }, async () => {
  const { normal } = oneIp();
  const h = normal[0]!;
  const f = fetcher({ minIpIntervalMs: 60, minHostIntervalMs: 5000, totalTimeoutMs: 1000 });
  try {
    const t0 = performance.now();
    const robots = await f.fetch({ url: `${sim.web.origin(h.name)}/robots.txt`, robots: true, acceptContentTypes: null });
    const p1 = await f.fetch({ url: freshPage(h) });
    const dt = performance.now() - t0;
    assert.ok(robots.status !== undefined && p1.status !== undefined);
    assert.ok(dt < 1000, `robots.txt then a page of the same host: IP spacing only (${dt.toFixed(0)} ms)`);
    // The host's next page is due 5 s after the last: its fetch times out inside the gate (1 s).
    const u2 = freshPage(h);
    const p2 = await f.fetch({ url: u2 });
    assert.equal(p2.outcome, O.TOTAL_TIMEOUT);
    assert.equal(p2.status, undefined);
    assert.equal((await entriesFor(new Set([`${h.name}${new URL(u2).pathname}`]))).length, 0, 'never written');
    // Queued behind the host spacing, then the fetcher closes: every fetch resolves, nothing is sent.
    const u3 = [freshPage(h), freshPage(h)];
    const waiting = u3.map((url) => f.fetch({ url }));
    await sleep(50);
    assert.equal(f.stats().gated, 2);
    await f.close();
    for (const r of await Promise.all(waiting)) assert.equal(r.outcome, O.ABORTED);
    assert.equal((await entriesFor(new Set(u3.map((u) => `${h.name}${new URL(u).pathname}`)))).length, 0);
  } finally {
    await f.close();
  }
});

test('fetchRobots: beforeRequest runs before every hop with the hop’s IP (a redirect to another server)', async () => {
  const h = sim.web.findHost((x) => x.pldIndex >= 0 && x.dns === 'ok' && x.robots === 'redirect');
  assert.ok(h, 'the hostile preset has a robots redirect host');
  const target = sim.web.hostInfo(sim.web.hostName(0, 0))!;
  const f = fetcher();
  const calls: Array<{ url: string; host: string; ip: string | undefined; hop: number }> = [];
  try {
    const r = await fetchRobots(f, h.name, h.ip, sim.httpPort, UA, {
      dns,
      beforeRequest: async (req) => { calls.push(req); await sleep(5); },
    });
    assert.equal(r.outcome, R.OK);
    assert.equal(r.redirects.length, 1);
    assert.deepEqual(calls.map((c) => [c.hop, c.host, c.ip]), [[0, h.name, h.ip], [1, target.name, target.ip]]);
  } finally {
    await f.close();
  }
});
