/**
 * robots.txt per authority in the frontier's robots gate (RFC 9309 §2.3; src/util/authority.ts,
 * src/frontier/politeness/authorities.ts), and the key itself:
 *  - robotsAuthorityOf: default ports, userinfo, upper case, IDNA, IPv6 literals, and a property
 *    test against the WHATWG parser (fast-check prints its seed on failure);
 *  - one host entry, URLs of several authorities (schemes, ports): each authority's robots.txt is
 *    asked once, each URL judged by its own authority's rules, politeness (τh) still per host;
 *  - more authorities than a host entry holds: every one is still asked and judged, and the entry's
 *    list never exceeds MAX_AUTHORITIES_PER_HOST.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Frontier, FrontierUrl, UrlKind, type RobotsRulesLike } from '../../src/frontier/index.js';
import { HostAuthorities, MAX_AUTHORITIES_PER_HOST } from '../../src/frontier/politeness/authorities.js';
import { compileRobots, parseRobotsTxt } from '../../src/robots/index.js';
import { robotsAuthorityOf } from '../../src/util/authority.js';
import { fastOptions, FAST_POLITENESS } from './fast-options.js';

test('robotsAuthorityOf: scheme, host and port, the default port dropped', () => {
  const cases: [string, string | null][] = [
    ['http://a.example/x', 'http://a.example'],
    ['http://a.example:80/x', 'http://a.example'],
    ['http://a.example:8080/x?q#f', 'http://a.example:8080'],
    ['https://a.example:443/', 'https://a.example'],
    ['https://a.example:80/', 'https://a.example:80'],
    ['http://a.example:443/', 'http://a.example:443'],
    ['http://a.example', 'http://a.example'],
    ['http://a.example?q', 'http://a.example'],
    ['http://a.example:080/', 'http://a.example'],
    ['HTTP://A.Example:80/X', 'http://a.example'],
    ['http://user:pw@a.example:81/', 'http://a.example:81'],
    ['http://user@a.example/', 'http://a.example'],
    ['http://BÜCHER.example/', 'http://xn--bcher-kva.example'],
    ['http://xn--bcher-kva.example:8000/', 'http://xn--bcher-kva.example:8000'],
    ['http://[::1]/', 'http://[::1]'],
    ['http://[::1]:80/', 'http://[::1]'],
    ['http://[0:0::1]:8080/a', 'http://[::1]:8080'],
    ['https://[2001:DB8::1]:443/', 'https://[2001:db8::1]'],
    ['http://127.0.0.1:8080/', 'http://127.0.0.1:8080'],
    ['not a url', null],
  ];
  for (const [u, want] of cases) assert.equal(robotsAuthorityOf(u), want, u);
  // one authority however it is written; three services of one host are three authorities
  assert.equal(new Set(['http://a/', 'http://a:80/', 'HTTP://A/', 'http://u@a:80/x'].map(robotsAuthorityOf)).size, 1);
  assert.equal(new Set(['http://a/', 'https://a/', 'http://a:8080/'].map(robotsAuthorityOf)).size, 3);
});

test('property: robotsAuthorityOf agrees with the WHATWG parser on http(s) URLs', () => {
  const host = fc.oneof(
    fc.domain(),
    fc.ipV4(),
    fc.ipV6().map((h) => `[${h}]`),
    fc.constantFrom('A.EXAMPLE', 'bücher.example', 'Ex-ample.ORG', 'a_b.example'),
  );
  const port = fc.oneof(fc.constant(''), fc.constantFrom(':80', ':443', ':8080', ':0080', ':1'), fc.integer({ min: 1, max: 65535 }).map((p) => `:${p}`));
  fc.assert(fc.property(fc.constantFrom('http', 'https', 'HTTP', 'Https'), fc.option(fc.constantFrom('u', 'u:p'), { nil: undefined }), host, port, fc.webPath(), (scheme, user, h, p, path) => {
    const url = `${scheme}://${user !== undefined ? `${user}@` : ''}${h}${p}${path}`;
    let w: URL;
    try {
      w = new URL(url);
    } catch {
      return;
    }
    assert.equal(robotsAuthorityOf(url), `${w.protocol.slice(0, -1)}://${w.hostname}${w.port !== '' ? `:${w.port}` : ''}`, url);
  }), { numRuns: 2000 });
});

test('HostAuthorities: bounded; a further authority replaces the oldest known answer, never a wanted one', () => {
  const a = new HostAuthorities();
  for (let p = 1; p <= MAX_AUTHORITIES_PER_HOST; p++) assert.ok(a.want(`http://h:${p}`));
  assert.equal(a.want('http://h:99'), false, 'every place wanted: the URL waits');
  a.answer('http://h:3', null, 10, 0);
  assert.ok(a.want('http://h:99'), 'a known answer gives way');
  assert.equal(a.find('http://h:3'), undefined);
  assert.equal(a.size, MAX_AUTHORITIES_PER_HOST);
  a.answer('http://h:1', null, 50, 2000);
  a.answer('http://h:2', null, 20, 500);
  assert.equal(a.expiresAt, 20);
  assert.equal(a.crawlDelayMs, 2000);
  a.forgetExpired(20);
  assert.equal(a.find('http://h:2'), undefined);
  assert.equal(a.findUrl('http://h:1/x')?.origin, 'http://h:1');
  assert.equal(a.findUrl('http://h:10/x'), undefined, 'a prefix is not an authority');
});

const RULES: Record<string, string> = {
  'http://h.test': 'User-agent: *\nDisallow: /a/\n',
  'http://h.test:8080': 'User-agent: *\nDisallow: /b/\n',
  'https://h.test': 'User-agent: *\nDisallow: /c/\nCrawl-delay: 0.3\n',
};

function rulesOf(origin: string): RobotsRulesLike {
  return compileRobots(parseRobotsTxt(RULES[origin] ?? 'User-agent: *\nDisallow: /a/\n'), 'drumcrawl');
}

/**
 * Drives the frontier: robots requests scheduled, robots items answered with their authority's
 * rules, pages released and done, the clock moved on, until nothing is left. Returns what went out.
 */
async function drive(f: Frontier, clock: { now: number }): Promise<{ robots: string[]; pages: { url: string; at: number }[] }> {
  const robots: string[] = [];
  const pages: { url: string; at: number }[] = [];
  for (let step = 0; step < 20_000 && !f.isEmpty(); step++) {
    for (const q of f.takeRobotsRequests(1000)) assert.ok(f.scheduleRobotsFetch(q.hostHi, q.hostLo, '10.0.0.1'));
    for (const u of f.nextReady(clock.now, 1000)) {
      if (u.kind === UrlKind.Robots) {
        robots.push(u.url);
        const origin = u.url.slice(0, -'/robots.txt'.length);
        const rules = rulesOf(origin);
        f.robotsKnown(u.hostHi, u.hostLo, { rules, ip: u.ip, expiresAt: Infinity, crawlDelayMs: (rules as { crawlDelayMs?: number }).crawlDelayMs ?? undefined, origin });
      } else pages.push({ url: u.url, at: clock.now });
      f.fetchDone(u);
    }
    await f.refill();
    clock.now += 5;
  }
  assert.ok(f.isEmpty(), 'the frontier drained');
  return { robots, pages };
}

async function frontierWith(urls: string[]): Promise<{ f: Frontier; clock: { now: number }; dropped: [string, string][] }> {
  const clock = { now: 1_000_000 };
  const dropped: [string, string][] = [];
  const f = await Frontier.open(null, fastOptions({ onDrop: (u, r) => dropped.push([u.url, r]) }), () => clock.now);
  await f.admit(urls.map((url, i) => new FrontierUrl({ url, hostHi: 1, hostLo: 1, pldHi: 1, pldLo: 2, budget: 10, admitted: i + 1 })), { durable: false });
  await f.refill();
  return { f, clock, dropped };
}

test('frontier: one host, three authorities — each robots.txt asked once, each URL judged by its own, τh per host', async () => {
  const origins = Object.keys(RULES);
  const urls = origins.flatMap((o) => ['/a/1', '/b/1', '/c/1', '/d/1'].map((p) => `${o}${p}`));
  const { f, clock, dropped } = await frontierWith(urls);
  const { robots, pages } = await drive(f, clock);
  assert.deepEqual([...robots].sort(), origins.map((o) => `${o}/robots.txt`).sort(), 'each authority\'s robots.txt, once');
  const disallowed = ['http://h.test/a/1', 'http://h.test:8080/b/1', 'https://h.test/c/1'];
  assert.deepEqual(dropped.filter(([, r]) => r === 'robots').map(([u]) => u).sort(), [...disallowed].sort());
  assert.deepEqual(pages.map((p) => p.url).sort(), urls.filter((u) => !disallowed.includes(u)).sort());
  // Politeness per host: the three services' pages share the host's delay, and https's Crawl-delay
  // (300 ms) is the host's (its authorities are all asked before any page goes).
  const at = pages.map((p) => p.at).sort((x, y) => x - y);
  for (let i = 1; i < at.length; i++) assert.ok(at[i]! - at[i - 1]! >= Math.max(300, FAST_POLITENESS.minHostDelayMs), `pages of one host ${at[i]! - at[i - 1]!} ms apart`);
  await f.close();
});

test('frontier: a host linked on more ports than its entry holds — every authority asked once and judged by its own rules', async () => {
  const n = 3 * MAX_AUTHORITIES_PER_HOST;
  const urls: string[] = [];
  for (let p = 1; p <= n; p++) urls.push(`http://h.test:${8000 + p}/a/1`, `http://h.test:${8000 + p}/ok/1`);
  const { f, clock, dropped } = await frontierWith(urls);
  const { robots, pages } = await drive(f, clock);
  assert.equal(new Set(robots).size, n, 'every authority asked');
  assert.equal(robots.length, n, 'none asked twice (its URLs were all judged while its answer was held)');
  assert.deepEqual(dropped.map(([u]) => u).sort(), urls.filter((u) => u.endsWith('/a/1')).sort());
  assert.deepEqual(pages.map((p) => p.url).sort(), urls.filter((u) => u.endsWith('/ok/1')).sort());
  await f.close();
});

test('frontier: an answer for another authority than the one asked is kept and leaves the ask under way alone', async () => {
  const { f, clock, dropped } = await frontierWith(['http://h.test/a/1', 'http://h.test:8080/a/1']);
  const [q] = f.takeRobotsRequests(10);
  assert.equal(q?.origin, 'http://h.test', 'the first authority asked');
  assert.ok(f.scheduleRobotsFetch(1, 1, '10.0.0.1'));
  // the :8080 answer comes while http://h.test's robots.txt is scheduled
  f.robotsKnown(1, 1, { rules: rulesOf('http://h.test:8080'), ip: '10.0.0.1', expiresAt: Infinity, origin: 'http://h.test:8080' });
  const out = f.nextReady(clock.now, 10);
  assert.deepEqual(out.map((u) => u.url), ['http://h.test/robots.txt'], 'the scheduled robots.txt still goes');
  for (const u of out) {
    f.robotsKnown(u.hostHi, u.hostLo, { rules: rulesOf('http://h.test'), ip: u.ip, expiresAt: Infinity, origin: 'http://h.test' });
    f.fetchDone(u);
  }
  await f.refill();
  const { robots, pages } = await drive(f, clock);
  assert.deepEqual(robots, [], 'nothing asked again: both answers are held');
  assert.deepEqual(pages.map((p) => p.url), ['http://h.test:8080/a/1'], 'judged by :8080\'s rules');
  assert.deepEqual(dropped, [['http://h.test/a/1', 'robots']], 'judged by http://h.test\'s rules');
  await f.close();
});
