/** The checkers, on synthetic logs with known violations: each one must be caught, and only those. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  RequestLog, WebGraph, resolveParams, minInterval, maxConcurrentPerIp, robotsViolations, duplicateFetches, pagesPerPld,
  type RequestLogEntry,
} from '../../src/simweb/index.js';

let conn = 0;
function e(start: number, end: number, host: string, path: string, status = 200, localIp = '127.1.0.1'): RequestLogEntry {
  return { start, end, host, localIp, remoteIp: '127.0.0.1', method: 'GET', path, status, bytes: 100, conn: ++conn, userAgent: 'drumcrawl/1', extraHeaders: '' };
}

test('minIntervalPerHost / PerIp catch the too-close and overlapping pairs only', () => {
  const log = [
    e(0, 10, 'a.pld1.test', '/p/1'),
    e(1000, 1010, 'a.pld1.test', '/p/2'), // ok: 1000 ms after
    e(1500, 1510, 'a.pld1.test', '/p/3'), // violation: 500 ms
    e(1505, 1600, 'b.pld1.test', '/p/1'), // other host, same IP: violates per-IP 1000 ms only
    e(3000, 3500, 'a.pld1.test', '/p/4'),
    e(3100, 3200, 'a.pld1.test', '/p/5', 200, '127.1.0.2'), // overlaps /p/4 (same host, other IP)
  ];
  const host = minInterval(log, 'host', 1000);
  assert.deepEqual(host.map((v) => v.entries.map((x) => x.path)), [['/p/2', '/p/3'], ['/p/4', '/p/5']]);
  assert.match(host[1]!.message, /in flight/);
  const ip = minInterval(log, 'ip', 1000);
  assert.deepEqual(ip.map((v) => [v.key, ...v.entries.map((x) => `${x.host}${x.path}`)]), [
    ['127.1.0.1', 'a.pld1.test/p/2', 'a.pld1.test/p/3'],
    ['127.1.0.1', 'a.pld1.test/p/3', 'b.pld1.test/p/1'],
  ]);
  assert.equal(minInterval(log, 'host', 400).length, 1, 'only the overlap stays at 400 ms');
  // from: 'end' measures the idle gap.
  assert.equal(minInterval([e(0, 900, 'a', '/1'), e(1000, 1001, 'a', '/2')], 'host', 500, { from: 'end' }).length, 1);
  assert.equal(minInterval([e(0, 900, 'a', '/1'), e(1000, 1001, 'a', '/2')], 'host', 500).length, 0);
  // The ring-buffer class exposes the same checks.
  const rl = new RequestLog();
  for (const x of log) rl.add(x);
  assert.equal(rl.minIntervalPerHost(1000).length, 2);
  assert.equal(rl.minIntervalPerIp(1000).length, 2);
});

test('maxConcurrentPerIp reports each excursion above n once', () => {
  const log = [
    e(0, 100, 'a', '/1'), e(10, 50, 'b', '/1'), e(20, 30, 'c', '/1'), // 3 at once on .1
    e(100, 200, 'a', '/2'), e(200, 300, 'a', '/3'), // back-to-back is not overlap
    e(400, 500, 'a', '/4'), e(450, 460, 'b', '/4'), e(455, 470, 'c', '/4'), // second excursion
    e(0, 100, 'x', '/1', 200, '127.1.0.9'), e(0, 100, 'y', '/1', 200, '127.1.0.9'),
  ];
  const v = maxConcurrentPerIp(log, 2);
  assert.deepEqual(v.map((x) => [x.key, x.entries.length]), [['127.1.0.1', 3], ['127.1.0.1', 3]]);
  assert.equal(maxConcurrentPerIp(log, 1).length, 3);
  assert.equal(maxConcurrentPerIp(log, 3).length, 0);
});

test('robotsViolations uses the generator oracle and finds fetches before robots.txt', () => {
  const web = new WebGraph(resolveParams('hostile'), 1, 80);
  const rules = web.findHost((h) => h.robots === 'rules')!;
  const down = web.findHost((h) => h.robots === 'server-error')!;
  let disallowed = '';
  let allowed = '';
  for (let n = 0; n < 100 && (!disallowed || !allowed); n++) {
    if (!web.robotsAllows(rules, `/p/${n}`, 'drumcrawl/1')) disallowed ||= `/p/${n}`;
    else allowed ||= `/p/${n}`;
  }
  const log = [
    e(0, 5, rules.name, '/robots.txt'),
    e(10, 20, rules.name, allowed),
    e(30, 40, rules.name, disallowed), // violation
    e(50, 60, down.name, '/robots.txt', 503),
    e(70, 80, down.name, '/p/0'), // violation: 5xx robots → disallow all
    e(90, 95, 'www.pld0.test', '/p/0'), // allowed, but robots.txt never fetched
  ];
  const v = robotsViolations(log, web, 'drumcrawl/1.0', { requireRobotsFirst: true });
  assert.deepEqual(v.map((x) => [x.check, x.key]), [
    ['robots', `${rules.name}${disallowed}`],
    ['robots', `${down.name}/p/0`],
    ['robotsNotFetchedFirst', 'www.pld0.test/p/0'],
  ]);
  assert.equal(robotsViolations(log, web, 'drumcrawl/1.0').length, 2);
});

test('duplicateFetches ignores legitimate retries; pagesPerPld counts 2xx pages per PLD', () => {
  const log = [
    e(0, 1, 'www.pld1.test', '/p/1', 503), e(10, 11, 'www.pld1.test', '/p/1', 200), // retry after 5xx: fine
    e(20, 21, 'www.pld1.test', '/p/1', 200), // duplicate
    e(30, 31, 'h2.pld1.test', '/p/1', 429), e(40, 41, 'h2.pld1.test', '/p/1', 200), // retry after 429: fine
    e(50, 51, 'h2.pld1.test', '/p/2', 404), e(60, 61, 'h2.pld1.test', '/p/2', 404), // duplicate
    e(70, 71, 'www.pld2.test', '/robots.txt'), e(80, 81, 'www.pld2.test', '/robots.txt'), // robots refresh: fine
    e(90, 91, 'www.pld2.test', '/p/0', 0), e(95, 96, 'www.pld2.test', '/p/0', 200), // no answer, then ok
  ];
  assert.deepEqual(duplicateFetches(log).map((v) => v.key), ['www.pld1.test/p/1', 'h2.pld1.test/p/2']);
  assert.deepEqual([...pagesPerPld(log)].sort(), [['pld1.test', 3], ['pld2.test', 1]]);
});

test('RequestLog is a bounded ring buffer', () => {
  const rl = new RequestLog({ capacity: 5 });
  for (let i = 0; i < 12; i++) rl.add(e(i, i, 'a', `/p/${i}`));
  assert.equal(rl.length, 5);
  assert.equal(rl.total, 12);
  assert.equal(rl.dropped, 7);
  assert.deepEqual(rl.entries().map((x) => x.path), ['/p/7', '/p/8', '/p/9', '/p/10', '/p/11']);
  rl.clear();
  assert.equal(rl.entries().length, 0);
  const off = new RequestLog({ enabled: false });
  off.add(e(0, 0, 'a', '/'));
  assert.equal(off.length, 0);
});
