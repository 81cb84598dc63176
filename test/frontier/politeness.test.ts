import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Frontier, FrontierUrl, UrlKind, type FrontierOptions, type RobotsInfo } from '../../src/frontier/index.js';
import { fastOptions } from './fast-options.js';

interface Rig {
  f: Frontier;
  clock: { now: number };
  dropped: [string, string][];
  /** Admits `n` URLs on host h (PLD = h unless given), budget B. */
  add(h: number, n: number, budget?: number, path?: string): Promise<void>;
  /** Answers every robots request: schedule the fetch, release it, mark known. */
  robots(info?: (h: number) => Partial<RobotsInfo>): Promise<void>;
  /** Releases what is due now (pages only), returning [host, url]. */
  take(max?: number): FrontierUrl[];
}

let urlId = 0;
async function rig(opts: FrontierOptions, ipOf: (h: number) => string = (h) => `10.0.0.${h}`): Promise<Rig> {
  const clock = { now: 1_000_000 };
  const dropped: [string, string][] = [];
  const f = await Frontier.open(null, fastOptions({ ...opts, onDrop: (u, r) => dropped.push([u.url, r]) }), () => clock.now);
  const P = new Map<number, number>();
  const r: Rig = {
    f,
    clock,
    dropped,
    async add(h, n, budget = 10, path = '/p') {
      const us: FrontierUrl[] = [];
      for (let i = 0; i < n; i++) {
        const p = (P.get(h) ?? 0) + 1;
        P.set(h, p);
        us.push(new FrontierUrl({ url: `http://h${h}.test${path}${urlId++}`, hostHi: h, hostLo: 1, pldHi: h, pldLo: 2, budget, admitted: Math.min(p, budget) }));
      }
      await f.admit(us, { durable: false });
      await f.refill();
    },
    async robots(info = () => ({})) {
      for (let round = 0; round < 3; round++) {
        for (const q of f.takeRobotsRequests(1000)) assert.ok(f.scheduleRobotsFetch(q.hostHi, q.hostLo, ipOf(q.hostHi)));
        for (const u of f.nextReady(clock.now, 1000)) {
          assert.equal(u.kind, UrlKind.Robots, 'only robots fetches come out before robots are known');
          f.robotsKnown(u.hostHi, u.hostLo, { rules: null, ip: u.ip, expiresAt: Infinity, ...info(u.hostHi) });
          f.fetchDone(u);
        }
        await f.refill();
      }
    },
    take(max = 1000) {
      const out: FrontierUrl[] = [];
      for (const u of f.nextReady(clock.now, max)) {
        if (u.kind === UrlKind.Page) out.push(u);
        else {
          // A robots fetch (new host, or IP busy earlier): answer it at once.
          f.robotsKnown(u.hostHi, u.hostLo, { rules: null, ip: u.ip, expiresAt: Infinity });
          f.fetchDone(u);
        }
      }
      return out;
    },
  };
  return r;
}

/** Runs the clock forward, completing each fetch immediately, and returns the start times per host. */
async function crawl(r: Rig, until: number, step = 1, outcome?: (u: FrontierUrl) => Parameters<Frontier['fetchDone']>[1]): Promise<Map<number, number[]>> {
  const starts = new Map<number, number[]>();
  while (r.clock.now < until) {
    await r.f.refill();
    for (const u of r.take()) {
      const s = starts.get(u.hostHi) ?? [];
      s.push(r.clock.now);
      starts.set(u.hostHi, s);
      r.f.fetchDone(u, outcome?.(u));
    }
    r.clock.now += step;
  }
  return starts;
}

const gaps = (xs: number[]): number[] => xs.slice(1).map((x, i) => x - xs[i]!);

test('τh is start to start; Crawl-delay lengthens it (capped), never shortens it', async () => {
  const r = await rig({ hostDelayMs: 100, minHostDelayMs: 20, maxCrawlDelayMs: 400 });
  await r.add(1, 5);
  await r.add(2, 5);
  await r.add(3, 5);
  await r.robots((h) => ({ crawlDelayMs: h === 2 ? 300 : h === 3 ? 5_000 : 10 }));
  const starts = await crawl(r, r.clock.now + 3_000);
  assert.deepEqual(gaps(starts.get(1)!), [100, 100, 100, 100]);
  assert.deepEqual(gaps(starts.get(2)!), [300, 300, 300, 300]);
  assert.deepEqual(gaps(starts.get(3)!), [400, 400, 400, 400], 'Crawl-delay capped at maxCrawlDelayMs');
});

test('a Crawl-delay gets the politeness margin, each released URL carries its host\'s and IP\'s delays, and a late send moves the host\'s next start', async () => {
  const r = await rig({ hostDelayMs: 100, minHostDelayMs: 20, ipDelayMs: 10, minIpDelayMs: 10, maxCrawlDelayMs: 400, crawlDelayMarginMs: 5 });
  await r.add(1, 4);
  await r.add(2, 4);
  await r.robots((h) => ({ crawlDelayMs: h === 2 ? 300 : 0 }));
  const seen = new Map<number, number[]>();
  const starts = await crawl(r, r.clock.now + 3_000, 1, (u) => {
    const g = seen.get(u.hostHi) ?? [];
    g.push(u.hostGapMs);
    seen.set(u.hostHi, g);
    assert.equal(u.ipGapMs, 10);
    return undefined;
  });
  assert.deepEqual(gaps(starts.get(1)!), [100, 100, 100], 'no Crawl-delay: τh, no margin added by the frontier');
  assert.deepEqual(gaps(starts.get(2)!), [305, 305, 305], 'Crawl-delay 300 ms + margin 5');
  assert.deepEqual(seen.get(1), [100, 100, 100, 100]);
  assert.deepEqual(seen.get(2), [305, 305, 305, 305]);
  // A send 40 ms after its release (held by the last-step guard): the next start is 40 ms later.
  await r.add(1, 2);
  const late = await crawl(r, r.clock.now + 1_000, 1, () => ({ lateMs: 40 }));
  assert.deepEqual(gaps(late.get(1)!), [140], 'start to start from the actual send');
});

test('Retry-After and consecutive errors lengthen the wait; maxHostErrors drops the host with a reason', async () => {
  const r = await rig({ hostDelayMs: 100, minHostDelayMs: 20, maxHostErrors: 3, maxBackoffMs: 10_000, maxAttempts: 10 });
  await r.add(1, 3);
  await r.add(2, 10);
  await r.robots();
  let n = 0;
  const starts = await crawl(r, r.clock.now + 5_000, 1, (u) => {
    if (u.hostHi === 1) return n++ === 0 ? { retryAfterMs: 2_000 } : {};
    return { hostError: true, retry: true };
  });
  assert.deepEqual(gaps(starts.get(1)!), [2_000, 100], 'Retry-After 2 s, then back to τh');
  assert.deepEqual(gaps(starts.get(2)!), [200, 400], 'backoff doubles per consecutive error');
  assert.equal(r.dropped.filter(([, why]) => why === 'host-errors').length, 10, 'after 3 errors all its URLs are dropped');
  assert.equal(r.f.stats().ramUrls, 0);
});

test('budget scales delays down to the floors τh0 and τs0, never below', async () => {
  const r = await rig({ b0: 10, hostDelayMs: 1_000, minHostDelayMs: 50, ipDelayMs: 100, minIpDelayMs: 5, maxConnectionsPerIp: 1 }, () => '10.9.9.9');
  await r.add(1, 6, 10); // low-ranked: full τh
  await r.add(2, 6, 100); // τh/10
  await r.add(3, 6, 1e6); // floor
  await r.robots();
  const starts = await crawl(r, r.clock.now + 7_000);
  assert.ok(gaps(starts.get(1)!).every((g) => g >= 1_000));
  assert.ok(gaps(starts.get(2)!).every((g) => g >= 100 && g < 1_000));
  assert.ok(gaps(starts.get(3)!).every((g) => g >= 50 && g < 100), `floor: ${gaps(starts.get(3)!)}`);
  // All three share one IP: consecutive starts on it are ≥ τs0 apart.
  const all = [...starts.values()].flat().sort((a, b) => a - b);
  assert.ok(gaps(all).every((g) => g >= 5), 'IP floor');
});

test('many hosts on one IP: ≤ maxConnectionsPerIp in flight and τs between starts', async () => {
  const r = await rig({ hostDelayMs: 10, minHostDelayMs: 10, ipDelayMs: 50, minIpDelayMs: 50, maxConnectionsPerIp: 2 }, () => '10.1.1.1');
  for (let h = 1; h <= 50; h++) await r.add(h, 2);
  // Hold page fetches open: nothing completes, so only 2 can be in flight on the IP (robots
  // fetches, answered at once by take(), go through the same IP heap, alternating with pages).
  const held: FrontierUrl[] = [];
  for (let t = 0; t < 400; t++) {
    await r.f.refill();
    for (const q of r.f.takeRobotsRequests(100)) r.f.scheduleRobotsFetch(q.hostHi, q.hostLo, '10.1.1.1');
    held.push(...r.take());
    r.clock.now += 10;
  }
  assert.ok(r.f.stats().robotsReleased >= 2);
  assert.equal(held.length, 2, 'two connections per IP');
  for (const u of held) r.f.fetchDone(u);
  r.clock.now += 100;
  const starts = await crawl(r, r.clock.now + 10_000, 5);
  const all = [...starts.values()].flat().sort((a, b) => a - b);
  assert.equal(all.length, 98);
  assert.ok(gaps(all).every((g) => g >= 50), 'τs between any two starts on the IP');
});

test('robots.txt fetches obey the IP heap only; disallowed URLs are dropped with reason robots', async () => {
  const r = await rig({ hostDelayMs: 1_000, minHostDelayMs: 100, ipDelayMs: 300, minIpDelayMs: 300 }, () => '10.2.2.2');
  await r.add(1, 1);
  await r.robots();
  assert.equal(r.take().length, 0, 'the robots fetch counts for the host: τh before its first page');
  r.clock.now += 1_000;
  const page = r.take();
  assert.equal(page.length, 1);
  r.f.fetchDone(page[0]!);
  // A new host on the same IP: its robots fetch must wait τs after the page fetch.
  await r.add(2, 3, 10, '/private/');
  await r.add(2, 2, 10, '/ok/');
  const [q] = r.f.takeRobotsRequests(10);
  assert.equal(q!.host, 'h2.test');
  assert.equal(q!.origin, 'http://h2.test');
  r.f.scheduleRobotsFetch(q!.hostHi, q!.hostLo, '10.2.2.2');
  assert.equal(r.f.nextReady(r.clock.now + 299, 10).length, 0, 'IP not due yet');
  const [item] = r.f.nextReady(r.clock.now + 300, 10);
  assert.equal(item!.kind, UrlKind.Robots);
  assert.equal(item!.url, 'http://h2.test/robots.txt');
  r.clock.now += 300;
  r.f.robotsKnown(item!.hostHi, item!.hostLo, { rules: { isAllowed: (p) => !p.startsWith('/private/') }, ip: item!.ip, expiresAt: Infinity });
  r.f.fetchDone(item!);
  await r.f.refill();
  assert.equal(r.dropped.filter(([, why]) => why === 'robots').length, 3);
  // The host's first page waits τh after its robots fetch (robots fetches count for the host too).
  assert.equal(r.take().length, 0);
  r.clock.now += 1_000;
  assert.equal(r.take().length, 1);
});

test('an IP alternates its robots.txt lane and its due pages: robots fetches of many new hosts do not starve the pages of known ones', async () => {
  const zero = { hostDelayMs: 0, minHostDelayMs: 0, ipDelayMs: 0, minIpDelayMs: 0 };
  const r = await rig({ ...zero, maxConnectionsPerIp: 1 }, () => '10.3.3.3');
  await r.add(1, 40);
  for (const q of r.f.takeRobotsRequests(10)) r.f.scheduleRobotsFetch(q.hostHi, q.hostLo, '10.3.3.3');
  const [first] = r.f.nextReady(r.clock.now, 1);
  assert.equal(first!.kind, UrlKind.Robots);
  r.f.robotsKnown(first!.hostHi, first!.hostLo, { rules: null, ip: first!.ip, expiresAt: Infinity });
  r.f.fetchDone(first!);
  await r.f.refill();
  // 30 new hosts on the same IP ask for their robots.txt (as after a resume: answers not yet durable
  // at the kill are fetched again) while host 1 has 40 pages due.
  for (let h = 2; h <= 31; h++) await r.add(h, 1);
  for (const q of r.f.takeRobotsRequests(100)) r.f.scheduleRobotsFetch(q.hostHi, q.hostLo, '10.3.3.3');
  const kinds: string[] = [];
  for (let k = 0; k < 40; k++) {
    const [u] = r.f.nextReady(r.clock.now, 1);
    assert.ok(u !== undefined, 'the IP has work');
    kinds.push(u.kind === UrlKind.Robots ? 'R' : 'P');
    if (u.kind === UrlKind.Robots) r.f.robotsKnown(u.hostHi, u.hostLo, { rules: null, ip: u.ip, expiresAt: Infinity });
    r.f.fetchDone(u);
    r.clock.now += 1;
  }
  const seq = kinds.join('');
  // Robots first always released all 30 robots.txt before any page (RRRR…).
  assert.ok(!seq.includes('RR'), `two robots.txt in a row while pages were due: ${seq}`);
  assert.ok(seq.slice(0, 20).split('').filter((c) => c === 'R').length >= 9, `robots.txt still go: ${seq}`);
});

test('DNS failure drops the host’s URLs with the given code; expired robots are asked for again', async () => {
  const r = await rig({});
  await r.add(1, 4);
  await r.add(2, 1);
  const reqs = r.f.takeRobotsRequests(10);
  assert.equal(reqs.length, 2);
  assert.equal(r.f.takeRobotsRequests(10).length, 0, 'each host is requested once');
  r.f.robotsFailed(1, 1, 'CRAWL_DNS_NXDOMAIN');
  r.f.robotsKnown(2, 1, { rules: null, ip: '10.0.0.2', expiresAt: r.clock.now + 500 });
  await r.f.refill();
  assert.equal(r.dropped.filter(([, why]) => why === 'CRAWL_DNS_NXDOMAIN').length, 4);
  assert.equal(r.take().length, 1);
  r.clock.now += 1_000;
  await r.add(2, 1);
  assert.equal(r.f.takeRobotsRequests(10).length, 1, 'expired entry → asked again');
});

test('a host never holds more than maxUrlsPerHost in RAM; the rest waits on disk and still gets crawled', async () => {
  const r = await rig({ ramUrls: 100, maxUrlsPerHost: 5, hostDelayMs: 20, minHostDelayMs: 20, beast: { initialQueues: 4, maxQueues: 8 } });
  await r.add(1, 40, 1_000);
  await r.robots();
  assert.ok(r.f.stats().ramUrls <= 5);
  const starts = await crawl(r, r.clock.now + 5_000, 5);
  assert.equal(starts.get(1)!.length, 40);
  assert.ok(r.f.stats().deferred > 0);
  assert.ok(r.f.isEmpty());
});

test('setDelays changes τh of a running crawl; invalid values are refused', async () => {
  const r = await rig({ hostDelayMs: 100, minHostDelayMs: 20 });
  await r.add(1, 4);
  await r.robots();
  r.f.setDelays({ hostDelayMs: 300, minHostDelayMs: 300 });
  const starts = await crawl(r, r.clock.now + 2_000);
  assert.ok(gaps(starts.get(1)!).every((g) => g >= 300), String(gaps(starts.get(1)!)));
  assert.throws(() => r.f.setDelays({ ipDelayMs: -1 }), /ipDelayMs/);
  await assert.rejects(Frontier.open(null, { ramUrls: 0 }), /ramUrls/);
});

test('setDelays takes effect at once for hosts and IPs already waiting (shorter and longer); Retry-After still holds', async () => {
  // Host 1 and 2 on their own IPs, host 3 and 4 sharing one IP; host 5 under Retry-After.
  const ips: Record<number, string> = { 1: '10.1.0.1', 2: '10.1.0.2', 3: '10.1.0.3', 4: '10.1.0.3', 5: '10.1.0.5' };
  const r = await rig({ hostDelayMs: 10_000, minHostDelayMs: 10_000, ipDelayMs: 5_000, minIpDelayMs: 5_000, maxHostErrors: 50 }, (h) => ips[h]!);
  for (const h of [1, 2, 3, 4, 5]) await r.add(h, 4);
  await r.robots();
  const t0 = r.clock.now;
  let n5 = 0;
  const first = await crawl(r, t0 + 1, 1, (u) => (u.hostHi === 5 && n5++ === 0 ? { retryAfterMs: 60_000 } : {}));
  // The robots fetches used the IPs just now (τs 5 s): hosts 1, 2, 5 are blocked by their IP.
  const waited = first.size;
  // Shorten everything: hosts waiting on 10 s / IPs on 5 s become due 20 ms / 2 ms after their last start.
  r.f.setDelays({ hostDelayMs: 20, minHostDelayMs: 20, ipDelayMs: 2, minIpDelayMs: 2 });
  const after = await crawl(r, r.clock.now + 200, 1, (u) => (u.hostHi === 5 && n5++ === 0 ? { retryAfterMs: 60_000 } : {}));
  for (const h of [1, 2, 3, 4]) {
    const s = [...(first.get(h) ?? []), ...(after.get(h) ?? [])];
    assert.equal(s.length, 4, `host ${h}: all 4 URLs fetched within 200 ms of the change (had ${waited} hosts started before)`);
    for (const g of gaps(s)) assert.ok(g >= 20, `host ${h}: new τh floor holds (gap ${g})`);
  }
  const s5 = [...(first.get(5) ?? []), ...(after.get(5) ?? [])];
  assert.ok(s5.length <= 1, 'host 5 keeps its Retry-After (60 s) wait');
  // Lengthen: a host that was due in 20 ms now waits the new τh from its last start.
  await r.add(1, 2);
  await r.add(2, 2);
  r.clock.now += 25; // hosts 1 and 2 would be due under the 20 ms delay...
  r.f.setDelays({ hostDelayMs: 5_000, minHostDelayMs: 5_000 });
  const later = await crawl(r, r.clock.now + 1_000);
  assert.equal((later.get(1) ?? []).length + (later.get(2) ?? []).length, 0, '...but the 5 s delay applies to hosts already waiting');
  const much = await crawl(r, r.clock.now + 6_000);
  assert.equal((much.get(1) ?? []).length, 1, 'host 1 resumes after 5 s');
});

test('presets: only the documented ones; an unknown preset is refused with CRAWL_FRONTIER_OPTIONS', async () => {
  for (const preset of ['default', 'irlbot'] as const) {
    const f = await Frontier.open(null, { preset }, () => 0);
    await f.close();
  }
  for (const preset of ['fast-test', 'nonsense']) {
    await assert.rejects(Frontier.open(null, { preset: preset as FrontierOptions['preset'] }, () => 0), (e: Error & { code?: string }) => {
      assert.equal(e.code, 'CRAWL_FRONTIER_OPTIONS');
      assert.match(e.message, /options\.preset/);
      return true;
    });
  }
});

// The URL slab starts small and doubles as URLs come (host-table.ts growSlab): past its first size,
// RAM still takes exactly ramUrls URLs, never more, and every URL comes out once, in its host's order.
test('the URL slab grows to ramUrls and no further; every URL comes out once, in its host\'s order', { timeout: 120_000 }, async () => {
  const r = await rig({ ramUrls: 10_000, maxUrlsPerHost: 100_000, hostDelayMs: 1, minHostDelayMs: 1, ipDelayMs: 1, minIpDelayMs: 1 });
  for (let h = 1; h <= 20; h++) await r.add(h, 600);
  await r.robots();
  assert.equal(r.f.stats().ramUrls, 10_000, 'RAM holds ramUrls URLs of the 12,000 admitted');
  const seen = new Map<number, number[]>();
  let n = 0;
  for (let step = 0; step < 20_000 && n < 12_000; step++) {
    await r.f.refill();
    for (const u of r.take()) {
      assert.ok(r.f.stats().ramUrls <= 10_000);
      const ids = seen.get(u.hostHi) ?? [];
      ids.push(Number(/(\d+)$/.exec(u.url)![1]));
      seen.set(u.hostHi, ids);
      r.f.fetchDone(u);
      n++;
    }
    r.clock.now += 1;
  }
  assert.equal(n, 12_000, 'every URL released once');
  for (const [h, ids] of seen) {
    assert.equal(ids.length, 600, `host ${h}`);
    assert.deepEqual(ids, [...ids].sort((a, b) => a - b), `host ${h}: in admission order`);
  }
});

test('a request written late moves its IP\'s next start as well as its host\'s (start to start on the wire)', async () => {
  // τs = 100 ms on one IP: host a's robots.txt is released at t0 but written 5 ms late (lateMs);
  // host b's page on the same IP must not go before t0 + 105, or the wire sees a 95 ms gap.
  let now = 1_000_000;
  const f = await Frontier.open(null, fastOptions({ ipDelayMs: 100, minIpDelayMs: 100, hostDelayMs: 20, minHostDelayMs: 20, maxConnectionsPerIp: 1 }), () => now);
  const mkUrl = (host: string, hi: number): FrontierUrl => new FrontierUrl({ url: `http://${host}.test/`, hostHi: hi, hostLo: 1, pldHi: hi, pldLo: 1, budget: 10, admitted: 1 });
  await f.admit([mkUrl('b', 2)], { durable: false });
  await f.refill();
  for (const r of f.takeRobotsRequests(10)) f.robotsKnown(r.hostHi, r.hostLo, { rules: null, ip: '10.9.9.9', expiresAt: Infinity });
  await f.refill();
  await f.admit([mkUrl('a', 1)], { durable: false });
  await f.refill();
  for (const r of f.takeRobotsRequests(10)) f.scheduleRobotsFetch(r.hostHi, r.hostLo, '10.9.9.9');
  const t0 = now;
  const first = f.nextReady(now, 1);
  assert.equal(first.length, 1);
  assert.equal(first[0]!.kind, UrlKind.Robots, 'the IP\'s robots.txt lane goes first');
  now += 2;
  f.robotsKnown(1, 1, { rules: null, ip: '10.9.9.9', expiresAt: Infinity });
  f.fetchDone(first[0]!, { lateMs: 5 });
  const at = (t: number): FrontierUrl[] => {
    now = t;
    return f.nextReady(now, 10).filter((u) => u.kind === UrlKind.Page);
  };
  assert.deepEqual(at(t0 + 100).map((u) => u.url), [], 'nothing on the IP 100 ms after a release written 5 ms late');
  assert.deepEqual(at(t0 + 105).map((u) => u.url), ['http://b.test/'], 'b\'s page 100 ms after the robots.txt\'s actual send');
  await f.close();
});
