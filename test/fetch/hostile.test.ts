/**
 * The fetcher, DNS cache and robots fetch against simweb's hostile preset: every adversity (robots
 * variants, page behaviours, DNS failures) yields its documented outcome code, nothing rejects or
 * crashes, sockets return to zero after each test, and huge bodies / gzip bombs cost no more memory
 * than the configured caps.
 */
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { startSimweb, type Simweb, type HostInfo } from '../../src/simweb/index.js';
import { DnsCache, DNS_CODES } from '../../src/dns/index.js';
import { Fetcher, FETCH_OUTCOMES as O, ROBOTS_OUTCOMES as R, LOOPBACK_NETWORKS, OUTCOME_POLICY, type FetcherOptions } from '../../src/fetch/index.js';
import { fetchRobots } from '../../src/fetch/index.js';
import { ALLOW_ALL } from '../../src/robots/index.js';

const UA = 'drumcrawl/0.1 (+http://crawler.test/about)';
const LONG = process.env.DRUMCRAWL_LONG !== undefined;
const MiB = 1024 * 1024;
let sim: Simweb;
let dns: DnsCache;
const unhandled: unknown[] = [];
const onUnhandled = (e: unknown): void => { unhandled.push(e); };

before(async () => {
  process.on('unhandledRejection', onUnhandled);
  // The gzip bomb inflates to 128 MiB here, 16× the decoded cap (1 GiB, simweb's default, under
  // DRUMCRAWL_LONG): the server builds it with zlib level 9, ~1.5 s per 128 MiB on this machine.
  sim = await startSimweb({ preset: 'hostile', params: LONG ? {} : { bombDecodedBytes: 128 * MiB } });
  // A DNS answer from this process's own server can be seconds late on a loaded box: the timeout is
  // generous (only the 'drop' host, which never answers, waits for it).
  dns = new DnsCache({ servers: [sim.dnsServer], timeoutMs: 5000, tries: 1 });
});
after(async () => {
  dns.close();
  await sim.close();
  process.off('unhandledRejection', onUnhandled);
  assert.deepEqual(unhandled, [], 'no unhandled rejections');
});

/** Every test closes its fetcher; then the server must see every connection closed. */
afterEach(async () => {
  // (A bound on a hang, not a speed: the server sees the closes within milliseconds.)
  const t0 = Date.now();
  while (sim.connectionStats().open > 0 && Date.now() - t0 < 60_000) await new Promise((r) => setTimeout(r, 20));
  assert.equal(sim.connectionStats().open, 0, 'sockets back to zero');
});

function fetcher(o: Partial<FetcherOptions> = {}): Fetcher {
  return new Fetcher({
    userAgent: UA, dns, allowedNetworks: LOOPBACK_NETWORKS, connectTimeoutMs: 1000, headersTimeoutMs: 400,
    bodyTimeoutMs: 400, totalTimeoutMs: 1500, maxBodyBytes: MiB, maxDecodedBytes: 8 * MiB, ...o,
  });
}

function hostWith(pred: (h: HostInfo) => boolean, what: string): HostInfo {
  const h = sim.web.findHost((x) => x.pldIndex >= 0 && x.dns === 'ok' && pred(x));
  assert.ok(h, `simweb hostile preset has a host with ${what}`);
  return h;
}
const page = (h: HostInfo, n = 1): string => `${sim.web.origin(h.name)}/p/${n}`;

test('page behaviours: each yields its documented outcome', async () => {
  const f = fetcher();
  try {
    const cases: Array<[string, (r: Awaited<ReturnType<Fetcher['fetch']>>, h: HostInfo) => void]> = [
      ['normal', (r) => { assert.equal(r.outcome, O.OK); assert.equal(r.status, 200); assert.ok(r.body.length > 1000); assert.equal(r.contentType, 'text/html'); }],
      ['trickle', (r) => { assert.equal(r.outcome, O.TOTAL_TIMEOUT); assert.equal(r.status, 200); assert.equal(r.truncated, true); }],
      ['reset', (r) => { assert.equal(r.outcome, O.RESET); assert.equal(r.status, undefined); }],
      ['no-response', (r) => { assert.equal(r.outcome, O.HEADERS_TIMEOUT); }],
      ['server-error', (r) => { assert.equal(r.outcome, O.HTTP_5XX); assert.ok(r.status! >= 500); }],
      ['wrong-type', (r) => { assert.equal(r.outcome, O.CONTENT_TYPE); assert.equal(r.contentType, 'image/jpeg'); assert.ok(r.body.length < 256 * 1024); }],
      ['no-type', (r) => { assert.equal(r.outcome, O.OK); assert.equal(r.contentType, undefined); assert.ok(r.body.length > 0); }],
      ['gzip', (r) => { assert.equal(r.outcome, O.OK); assert.equal(r.contentEncoding, 'gzip'); assert.ok(r.decoded.length > r.body.length); assert.match(Buffer.from(r.decoded).toString('latin1', 0, 200), /<!DOCTYPE html>/i); }],
      ['deflate', (r) => { assert.equal(r.outcome, O.OK); assert.equal(r.contentEncoding, 'deflate'); assert.match(Buffer.from(r.decoded).toString('latin1', 0, 200), /<!DOCTYPE html>/i); }],
      ['br', (r) => { assert.equal(r.outcome, O.OK); assert.equal(r.contentEncoding, 'br'); assert.match(Buffer.from(r.decoded).toString('latin1', 0, 200), /<!DOCTYPE html>/i); }],
      ['redirect-chain', (r, h) => { assert.equal(r.outcome, O.REDIRECT); assert.equal(r.status, 301); assert.equal(r.location, `${sim.web.origin(h.name)}/rd/${sim.web.params.redirectChainLength - 1}/p/1`); }],
      ['redirect-loop', (r, h) => { assert.equal(r.outcome, O.REDIRECT); assert.equal(r.status, 302); assert.equal(r.location, `${sim.web.origin(h.name)}/loop/p/1`); }],
      ['malformed', (r) => { assert.equal(r.outcome, O.OK); }],
      ['charset', (r, h) => {
        assert.equal(r.outcome, O.OK);
        if (h.charset!.where !== 'meta') assert.equal(r.charset, h.charset!.name);
      }],
    ];
    // Sequential: hosts share IPs, and one pool (one connection) per IP queues requests behind a
    // stalled one, as the politeness layer would never do.
    const results: Array<readonly [HostInfo, Awaited<ReturnType<Fetcher['fetch']>>]> = [];
    for (const [b] of cases) {
      const h = hostWith((x) => x.behaviour === b, `behaviour ${b}`);
      results.push([h, await f.fetch({ url: page(h) })]);
    }
    results.forEach(([h, r], i) => {
      const [b, check] = cases[i]!;
      assert.ok(r.outcome in OUTCOME_POLICY || r.outcome === 'ok', `${b}: outcome ${r.outcome} has a policy`);
      try { check(r, h); } catch (e) { throw new Error(`behaviour ${b} on ${h.name}: ${(e as Error).message} (got ${r.outcome} ${r.errorCode ?? ''})`); }
      assert.equal(r.ip, h.ip, `${b}: connected to the DNS answer`);
    });
  } finally { await f.close(); }
});

test('idle body timeout: a trickle slower than bodyTimeoutMs is cut with CRAWL_FETCH_BODY_TIMEOUT', async () => {
  // undici checks header/body timeouts on a coarse (~0.5–1 s) clock, so the gap must be long: a
  // second simweb whose trickling hosts pause 2.5 s between pieces.
  const slow = await startSimweb({ preset: 'hostile', params: { trickleIntervalMs: 2500 } });
  const d2 = new DnsCache({ servers: [slow.dnsServer] });
  const f = new Fetcher({ userAgent: UA, dns: d2, allowedNetworks: LOOPBACK_NETWORKS, bodyTimeoutMs: 300, totalTimeoutMs: 10_000 });
  try {
    const h = slow.web.findHost((x) => x.pldIndex >= 0 && x.dns === 'ok' && x.behaviour === 'trickle')!;
    const r = await f.fetch({ url: `${slow.web.origin(h.name)}/p/1` });
    // Cut by the idle-body timeout, not by the 10 s total (a trickle of 512 B per 2.5 s takes
    // longer than that to send a page): the outcome says which timer fired, whatever the load.
    assert.equal(r.outcome, O.BODY_TIMEOUT, `${r.outcome} ${r.errorCode ?? ''}`);
    assert.equal(r.status, 200);
    assert.equal(r.truncated, true);
    assert.equal(r.truncatedReason, 'time');
  } finally {
    await f.close();
    d2.close();
    // (A bound on a hang, not a speed: the server sees the closes within milliseconds.)
    const t0 = Date.now();
    while (slow.connectionStats().open > 0 && Date.now() - t0 < 60_000) await new Promise((r) => setTimeout(r, 20));
    assert.equal(slow.connectionStats().open, 0);
    await slow.close();
  }
});

test('traps are ordinary 200 pages to the fetcher (caught later by URL trap checks and STAR budgets)', async () => {
  const f = fetcher();
  try {
    const urls: Record<string, string> = { calendar: '/cal/2031/7', repeat: '/t/a/b/a/', session: '/p/1?sid=0badcafe' };
    for (const [kind, path] of Object.entries(urls)) {
      const h = hostWith((x) => x.trap === kind && x.behaviour === 'normal', `trap ${kind}`);
      const r = await f.fetch({ url: `${sim.web.origin(h.name)}${path}` });
      assert.equal(r.outcome, O.OK, `trap ${kind}: ${r.outcome} ${r.status}`);
    }
  } finally { await f.close(); }
});

test('429 and 503 surface Retry-After for the politeness layer', async () => {
  const f = fetcher();
  try {
    const h = hostWith((x) => x.behaviour === 'too-many-requests', 'behaviour too-many-requests');
    const first = await f.fetch({ url: page(h, 1) });
    assert.equal(first.outcome, O.OK);
    const second = await f.fetch({ url: page(h, 2) });
    assert.equal(second.outcome, O.HTTP_429);
    assert.equal(second.retryAfterMs, sim.web.params.retryAfterS * 1000);
    const se = hostWith((x) => x.behaviour === 'server-error', 'behaviour server-error');
    const r503 = await f.fetch({ url: page(se, 2) }); // simweb: page n → [500, 502, 503][n % 3]
    assert.equal(r503.status, 503);
    assert.equal(r503.outcome, O.HTTP_5XX);
    assert.equal(r503.retryAfterMs, 120_000);
  } finally { await f.close(); }
});

test('DNS failures become CRAWL_FETCH_DNS with the DNS code; nothing is connected', async () => {
  const f = fetcher();
  try {
    for (const [v, code] of [['nxdomain', DNS_CODES.NXDOMAIN], ['servfail', DNS_CODES.SERVFAIL], ['no-answer', DNS_CODES.NODATA], ['drop', DNS_CODES.TIMEOUT]] as const) {
      const h = sim.web.findHost((x) => x.dns === v && x.pldIndex >= 0);
      assert.ok(h, `host with dns ${v}`);
      const r = await f.fetch({ url: page(h) });
      assert.equal(r.outcome, O.DNS, v);
      assert.equal(r.errorCode, code, v);
    }
    assert.equal(f.stats().pools, 0);
  } finally { await f.close(); }
});

test('robots.txt variants: RFC 9309 access results, rules equal to the generator’s oracle', async () => {
  const f = fetcher();
  try {
    const expected: Record<string, string> = {
      'allow-all': R.OK, absent: R.UNAVAILABLE, unauthorized: R.UNAVAILABLE, forbidden: R.UNAVAILABLE,
      'server-error': R.UNREACHABLE, timeout: R.UNREACHABLE, rules: R.OK, redirect: R.OK, huge: R.OK, garbage: R.OK,
    };
    const t0 = Date.now();
    for (const [variant, outcome] of Object.entries(expected)) {
      const h = hostWith((x) => x.robots === variant && x.behaviour === 'normal', `robots ${variant}`);
      const r = await fetchRobots(f, h.name, h.ip, sim.httpPort, UA, { dns });
      assert.equal(r.outcome, outcome, `robots ${variant}`);
      if (outcome === R.UNREACHABLE) {
        assert.equal(r.rules.isAllowed('/'), false, `${variant}: complete disallow`);
        assert.ok(r.expiresAt - t0 <= 24 * 3600_000 && r.expiresAt > t0);
      } else {
        assert.ok(r.expiresAt - Date.now() <= 24 * 3600_000 + 1000, 'cached no longer than 24 h');
      }
      if (variant === 'redirect') assert.equal(r.redirects.length, 1);
      // Ground truth: the generator's independent matcher, for our agent, over many paths.
      const paths = ['/', '/robots.txt', '/private/x', '/cal/2020/1', '/p/1?x=1'];
      for (let n = 0; n < 120; n++) paths.push(`/p/${n}`);
      for (const p of paths) {
        assert.equal(r.rules.isAllowed(p), sim.web.robotsAllows(h, p, UA), `${variant} ${h.name} ${p}`);
      }
      assert.equal(r.rules.crawlDelayMs === undefined ? undefined : r.rules.crawlDelayMs / 1000, sim.web.crawlDelayFor(h, UA));
    }
    // A cached copy is kept while robots.txt is unreachable.
    const down = hostWith((x) => x.robots === 'server-error' && x.behaviour === 'normal', 'robots server-error');
    const kept = await fetchRobots(f, down.name, down.ip, sim.httpPort, UA, { previous: ALLOW_ALL });
    assert.equal(kept.outcome, R.UNREACHABLE);
    assert.equal(kept.rules, ALLOW_ALL);
    // The redirect limit (RFC: ≥ 5; here 0 to exercise it): "MAY assume unavailable" → allow all.
    const red = hostWith((x) => x.robots === 'redirect' && x.behaviour === 'normal', 'robots redirect');
    const lim = await fetchRobots(f, red.name, red.ip, sim.httpPort, UA, { maxRedirects: 0 });
    assert.equal(lim.outcome, R.REDIRECT_LIMIT);
    assert.equal(lim.rules.isAllowed('/p/1'), true);
  } finally { await f.close(); }
});

test('a 1 GiB body and a gzip bomb cost no more than the caps', async () => {
  const f = fetcher({ maxBodyBytes: 2 * MiB, maxDecodedBytes: 8 * MiB, headersTimeoutMs: 30_000, totalTimeoutMs: 60_000 });
  try {
    const big = hostWith((x) => x.behaviour === 'huge-body', 'behaviour huge-body');
    const bomb = hostWith((x) => x.behaviour === 'bomb', 'behaviour bomb');
    global.gc?.();
    const base = process.memoryUsage();
    let peak = 0;
    const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().arrayBuffers - base.arrayBuffers); }, 2);
    const r1 = await f.fetch({ url: page(big) });
    assert.equal(r1.outcome, O.OK);
    assert.equal(r1.truncated, true);
    assert.equal(r1.body.length, 2 * MiB);
    const r2 = await f.fetch({ url: page(bomb) });
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().arrayBuffers - base.arrayBuffers);
    assert.equal(r2.outcome, O.BOMB, `bomb: ${r2.outcome} ${r2.errorCode ?? ''}`);
    assert.equal(r2.decoded.length, 0);
    assert.ok(r2.body.length > 0 && r2.body.length <= 2 * MiB);
    // Caps: 2 MiB raw + 8 MiB decoded (+ the server's own ~1 MiB bomb buffer, socket buffers, slack).
    assert.ok(peak < 32 * MiB, `peak external memory ${Math.round(peak / MiB)} MiB`);
  } finally { await f.close(); }
});

test('close() while requests hang: every fetch resolves CRAWL_FETCH_ABORTED', async () => {
  const f = fetcher({ headersTimeoutMs: 60_000, totalTimeoutMs: 60_000 });
  const h = hostWith((x) => x.behaviour === 'no-response', 'behaviour no-response');
  const pending = [1, 2, 3].map((n) => f.fetch({ url: page(h, n) }));
  // Hanging: the server has read the first (and will never answer it); the others wait behind it
  // (one connection per host), in the client.
  while (sim.connectionStats().unlogged < 1) await new Promise((r) => setTimeout(r, 10));
  await f.close();
  const rs = await Promise.all(pending);
  for (const r of rs) assert.equal(r.outcome, O.ABORTED);
  assert.equal((await f.fetch({ url: page(h, 1) })).outcome, O.ABORTED);
});
