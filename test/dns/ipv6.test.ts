/**
 * IPv6-only hosts, end to end over real sockets: simweb's DNS server answers AAAA (::1) and no A
 * record for its v6Share hosts and serves them on ::1; the crawler's DNS cache falls back from A to
 * AAAA, the network guard lets ::1 through only when `--allow-network ::1/128` says so, and the
 * politeness layer keys an IPv6 server by its /64.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readFile, rm } from 'node:fs/promises';
import { startSimweb, type Simweb } from '../../src/simweb/index.js';
import { DnsCache } from '../../src/dns/index.js';
import { ipQueueKey } from '../../src/frontier/politeness/ip-key.js';
import { resolveCrawlConfig } from '../../src/config/config.js';
import { Crawler } from '../../src/crawl/pipeline.js';
import { parseCrawlLogLine, type CrawlLogEntry } from '../../src/store/index.js';
import { tempDir, UA } from '../e2e/harness.js';
import { wireLog, type WireLog } from '../e2e/wire-log.js';

const dirs: string[] = [];
const webs: Simweb[] = [];
after(async () => {
  for (const w of webs) await w.close();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

test('politeness key: IPv4 as is, IPv6 by its /64', () => {
  assert.equal(ipQueueKey('127.1.0.3'), '127.1.0.3');
  assert.equal(ipQueueKey('2001:db8:1:2::5'), '2001:db8:1:2::/64');
  assert.equal(ipQueueKey('2001:0DB8:0001:0002:ffff:ffff:ffff:1'), '2001:db8:1:2::/64');
  assert.notEqual(ipQueueKey('2001:db8:1:3::5'), ipQueueKey('2001:db8:1:2::5'));
  assert.equal(ipQueueKey('::1'), '0:0:0:0::/64');
  assert.equal(ipQueueKey('::ffff:127.0.0.1'), '0:0:0:0::/64');
  assert.equal(ipQueueKey('fe80::1%eth0'), 'fe80:0:0:0::/64');
});

test('DNS: a host without an A record resolves through AAAA; IPv4 hosts keep their A answer', async () => {
  const web = await startSimweb({ preset: 'tiny', params: { v6Share: 0.5 } });
  webs.push(web);
  const v6 = web.web.findHost((h) => h.ip === '::1' && h.dns === 'ok' && h.pldIndex >= 0);
  const v4 = web.web.findHost((h) => h.ip !== '::1' && h.dns === 'ok' && h.pldIndex >= 0);
  assert.ok(v6 && v4, 'simweb has both kinds of host');
  const dns = new DnsCache({ servers: [web.dnsServer] });
  try {
    const a6 = await dns.resolve(v6.name);
    assert.ok('ip' in a6, JSON.stringify(a6));
    assert.equal(a6.ip, '::1');
    const a4 = await dns.resolve(v4.name);
    assert.ok('ip' in a4);
    assert.equal(a4.ip, v4.ip);
    assert.equal(dns.stats().queries, 3, 'A + AAAA for the IPv6-only host, A alone for the other');
    const ipv6Only = new DnsCache({ servers: [web.dnsServer], family: 6 });
    const n = await ipv6Only.resolve(v4.name);
    assert.ok('error' in n && n.error === 'CRAWL_DNS_NODATA', 'an IPv4 host has no AAAA record');
    ipv6Only.close();
  } finally {
    dns.close();
  }
});

/** `watch`: given the crawler once it is open, before it runs (its 'dispatch' events: wire-log.ts). */
async function crawl(web: Simweb, name: string, allowNetworks: string[], watch?: (c: Crawler) => void): Promise<CrawlLogEntry[]> {
  const dir = await tempDir(`v6-${name}`);
  dirs.push(dir);
  const crawler = await Crawler.open(resolveCrawlConfig({
    seeds: web.seeds, stateDir: path.join(dir, 'state'), outDir: path.join(dir, 'out'), dnsServers: [web.dnsServer], allowNetworks, userAgent: UA,
    progress: 'none', workers: 1, ramBytes: 256 * 2 ** 20, hostDelayMs: 20, minHostDelayMs: 20, ipDelayMs: 100, minIpDelayMs: 100,
    maxPages: 60, retryDelayScale: 0.001, budget: 'flat', scope: 'any',
  }));
  watch?.(crawler);
  await crawler.run();
  return (await readFile(path.join(dir, 'out', 'crawl.log'), 'utf8')).split('\n').filter((l) => l !== '').map(parseCrawlLogLine);
}

// Each crawl ends at 60 pages or when its frontier runs dry, never at a time limit (what it reaches
// would depend on the box's load); the timeout bounds a hang.
test('crawl: IPv6-only hosts are fetched on ::1 when ::1/128 is allowed, refused by the guard otherwise', { timeout: 900_000 }, async () => {
  const web = await startSimweb({ preset: 'tiny', params: { v6Share: 0.5 } });
  webs.push(web);
  const isV6Url = (u: string): boolean => web.web.hostInfo(new URL(u).hostname)?.ip === '::1';

  const refused = await crawl(web, 'refused', ['127.0.0.0/8']);
  assert.equal(web.log.entries().filter((e) => e.localIp === '::1').length, 0, 'nothing reached ::1 without the allowance');
  const blocked = refused.filter((e) => isV6Url(e.url) && e.outcome === 'CRAWL_FETCH_BLOCKED_ADDRESS');
  assert.ok(blocked.length > 0, 'IPv6-only hosts are refused by the network guard');

  web.log.clear();
  let wire: WireLog | undefined;
  const entries = await crawl(web, 'allowed', ['127.0.0.0/8', '::1/128'], (c) => { wire = wireLog(c); });
  wire!.stop();
  const served = web.log.entries().filter((e) => e.localIp === '::1');
  assert.ok(served.some((e) => e.status === 200 && e.path !== '/robots.txt'), `pages served on ::1: ${served.length}`);
  assert.ok(served.some((e) => e.path === '/robots.txt'), 'robots.txt of an IPv6-only host asked on ::1');
  const okV6 = entries.filter((e) => isV6Url(e.url) && e.status === 200 && e.hops !== null);
  assert.ok(okV6.length > 0, 'crawl.log has 200 lines for IPv6-only hosts');
  for (const e of okV6) {
    const u = new URL(e.url);
    assert.ok(served.some((s) => s.host === u.hostname && s.path === u.pathname + u.search && s.status === 200), `${e.url} was served on ::1`);
  }
  // One politeness queue for the IPv6 server (its /64): requests on ::1 spaced by τs0 = 100 ms.
  // simweb runs in this process here, so a stall of the event loop can stamp a request late and
  // shorten a logged gap: a gap logged shorter is judged on the crawler's socket writes, or the
  // send stamps of its page workers, whose writes this thread does not see (wire-log.ts).
  const violations = web.log.minIntervalPerIp(100).filter((v) => v.key === '::1');
  assert.deepEqual(wire!.unexcused(violations.map((v) => v.entries), violations.map((v) => v.message), 100), []);
});
