/**
 * fetchRobots corners simweb cannot express (its robots redirect is a single hop and it sends no
 * Cache-Control): a small loopback node:http server. The simweb variants are covered in
 * test/fetch/hostile.test.ts.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Fetcher, LOOPBACK_NETWORKS, MAX_RETRY_AFTER_MS, ROBOTS_OUTCOMES as R } from '../../src/fetch/index.js';
import { fetchRobots } from '../../src/fetch/index.js';
import { DISALLOW_ALL } from '../../src/robots/index.js';

const UA = 'drumcrawl/0.1 (+http://crawler.test/about)';
let server: http.Server;
let port = 0;
const seen: string[] = [];

before(async () => {
  server = http.createServer((req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    seen.push(`${host}${req.url}`);
    const m = /^\/hop(\d+)$/.exec(req.url ?? '');
    if (host === 'chain.test' && (req.url === '/robots.txt' || m)) {
      const k = m ? Number(m[1]) : 0;
      if (k < 6) { res.writeHead(301, { location: `http://chain.test:${port}/hop${k + 1}` }); res.end(); return; }
      res.writeHead(200, { 'content-type': 'text/plain' }); res.end('User-agent: *\nDisallow: /chain\n'); return;
    }
    if (host === 'five.test') {
      const k = m ? Number(m[1]) : 0;
      if (k < 5) { res.writeHead(302, { location: `http://five.test:${port}/hop${k + 1}` }); res.end(); return; }
      res.writeHead(200, { 'content-type': 'text/plain' }); res.end('User-agent: drumcrawl\nDisallow: /five\n'); return;
    }
    if (host === 'cache.test') {
      res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'public, max-age=7200' });
      res.end('User-agent: *\nDisallow: /c\n'); return;
    }
    if (host === 'nocache.test') {
      res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'no-cache' });
      res.end('User-agent: *\nDisallow: /c\n'); return;
    }
    if (host === 'busy.test') { res.writeHead(429, { 'retry-after': '7200' }); res.end(); return; }
    if (host === 'gone.test') { res.writeHead(410); res.end(); return; }
    res.writeHead(404); res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
after(async () => { server.closeAllConnections(); await new Promise((r) => server.close(r)); });

const fetcher = (): Fetcher => new Fetcher({ userAgent: UA, allowedNetworks: LOOPBACK_NETWORKS });

test('five consecutive redirects are followed (rules apply to the original host); a sixth is the limit', async () => {
  const f = fetcher();
  try {
    // The redirect targets resolve through opts.dns; here every name is 127.0.0.1 — a DnsCache
    // stand-in is not needed because the hosts stay the same (same-host redirects keep the IP).
    const five = await fetchRobots(f, 'five.test', '127.0.0.1', port, UA);
    assert.equal(five.outcome, R.OK);
    assert.equal(five.redirects.length, 5);
    assert.equal(five.rules.isAllowed('/five/x'), false);
    assert.equal(five.rules.isAllowed('/other'), true);
    const six = await fetchRobots(f, 'chain.test', '127.0.0.1', port, UA);
    assert.equal(six.outcome, R.REDIRECT_LIMIT);
    assert.equal(six.rules.isAllowed('/chain'), true, 'RFC 9309 §2.3.1.2: MAY assume unavailable → allow');
    assert.ok(!seen.includes('chain.test/hop6'), 'the sixth redirect is not followed');
  } finally { await f.close(); }
});

test('Cache-Control max-age shortens the 24 h cache, floored at minTtlMs; 429 is unreachable with Retry-After; 410 allows all', async () => {
  const f = fetcher();
  const now = 1_000_000;
  try {
    const c = await fetchRobots(f, 'cache.test', '127.0.0.1', port, UA, { now: () => now });
    assert.equal(c.outcome, R.OK);
    assert.equal(c.expiresAt, now + 7_200_000);
    const n = await fetchRobots(f, 'nocache.test', '127.0.0.1', port, UA, { now: () => now, minTtlMs: 600_000 });
    assert.equal(n.expiresAt, now + 600_000);
    const d = await fetchRobots(f, 'plain.test', '127.0.0.1', port, UA, { now: () => now });
    assert.equal(d.outcome, R.UNAVAILABLE);
    assert.equal(d.expiresAt, now + 86_400_000);
    const busy = await fetchRobots(f, 'busy.test', '127.0.0.1', port, UA, { now: () => now });
    assert.equal(busy.outcome, R.UNREACHABLE);
    assert.equal(busy.rules, DISALLOW_ALL);
    assert.equal(busy.expiresAt, now + MAX_RETRY_AFTER_MS, 'Retry-After: 7200 honoured up to its cap (1 h)');
    const gone = await fetchRobots(f, 'gone.test', '127.0.0.1', port, UA);
    assert.equal(gone.outcome, R.UNAVAILABLE);
    assert.equal(gone.rules.isAllowed('/anything'), true);
  } finally { await f.close(); }
});

test('unreachable robots.txt: network error → complete disallow', async () => {
  const f = fetcher();
  try {
    const closedPort = await new Promise<number>((resolve) => {
      const s = http.createServer().listen(0, '127.0.0.1', () => { const p = (s.address() as AddressInfo).port; s.close(() => resolve(p)); });
    });
    const r = await fetchRobots(f, 'down.test', '127.0.0.1', closedPort, UA);
    assert.equal(r.outcome, R.UNREACHABLE);
    assert.equal(r.fetchResult?.outcome, 'CRAWL_FETCH_CONNECT_REFUSED');
    assert.equal(r.rules.isAllowed('/'), false);
  } finally { await f.close(); }
});
