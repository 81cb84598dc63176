/** DnsCache against simweb's real UDP DNS server (c-ares on the wire, no mocks). */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSimweb, type Simweb } from '../../src/simweb/index.js';
import { DnsCache, DNS_CODES } from '../../src/dns/index.js';

let sim: Simweb;
before(async () => { sim = await startSimweb({ preset: 'hostile', params: { dnsTtl: 300 } }); });
after(async () => { await sim.close(); });

function host(dns: 'ok' | 'nxdomain' | 'servfail' | 'no-answer' | 'drop'): string {
  const h = sim.web.findHost((x) => x.dns === dns && x.pldIndex >= 0);
  assert.ok(h, `simweb has a host with dns=${dns}`);
  return h.name;
}

test('positive answers: the host IP, cached within the TTL, re-queried after expiry, TTL clamped', async () => {
  let now = 1_000_000;
  const dns = new DnsCache({ servers: [sim.dnsServer], minTtlMs: 0, maxTtlMs: 120_000, now: () => now });
  try {
    const name = host('ok');
    const expectedIp = sim.web.hostInfo(name)!.ip;
    const q0 = sim.dnsStats().queries;
    const a = await dns.resolve(name);
    assert.ok('ip' in a);
    assert.equal(a.ip, expectedIp);
    assert.equal(a.cached, false);
    assert.equal(a.ttlMs, 120_000, 'simweb TTL 300 s clamped to maxTtlMs');
    now += 119_000;
    const b = await dns.resolve(name.toUpperCase());
    assert.ok('ip' in b && b.cached && b.ip === expectedIp && b.ttlMs === 1_000);
    assert.equal(sim.dnsStats().queries - q0, 1, 'one query within the TTL');
    now += 1_000;
    const c = await dns.resolve(name);
    assert.ok('ip' in c && !c.cached && c.ip === expectedIp);
    assert.equal(sim.dnsStats().queries - q0, 2, 're-queried after expiry');
    const st = dns.stats();
    assert.equal(st.lookups, 3);
    assert.equal(st.hits, 1);
    assert.ok(st.hitRate > 0.3 && st.hitRate < 0.34);
    assert.ok(st.meanLatencyMs > 0);
  } finally { dns.close(); }

  // minTtlMs raises a short TTL.
  const dns2 = new DnsCache({ servers: [sim.dnsServer], minTtlMs: 600_000, maxTtlMs: 3_600_000 });
  try {
    const r = await dns2.resolve(host('ok'));
    assert.ok('ip' in r && r.ttlMs === 600_000);
  } finally { dns2.close(); }
});

test('NXDOMAIN / NODATA cached for negativeTtlMs, SERVFAIL for failureTtlMs, dropped queries time out', async () => {
  let now = 5_000_000;
  const dns = new DnsCache({ servers: [sim.dnsServer], negativeTtlMs: 50_000, failureTtlMs: 10_000, timeoutMs: 150, tries: 1, now: () => now });
  try {
    const nx = host('nxdomain'), sf = host('servfail'), nd = host('no-answer'), drop = host('drop');
    const q0 = sim.dnsStats().queries;
    assert.deepEqual(await dns.resolve(nx), { error: DNS_CODES.NXDOMAIN, ttlMs: 50_000, cached: false });
    assert.deepEqual(await dns.resolve(sf), { error: DNS_CODES.SERVFAIL, ttlMs: 10_000, cached: false });
    assert.deepEqual(await dns.resolve(nd), { error: DNS_CODES.NODATA, ttlMs: 50_000, cached: false });
    const t0 = performance.now();
    assert.deepEqual(await dns.resolve(drop), { error: DNS_CODES.TIMEOUT, ttlMs: 10_000, cached: false });
    assert.ok(performance.now() - t0 >= 150, 'not given up before its 150 ms timeout');
    const q1 = sim.dnsStats().queries;
    assert.equal(q1 - q0, 5, 'one query each, and the no-answer host (no A record) is asked for AAAA too');
    now += 9_999;
    assert.deepEqual(await dns.resolve(nx), { error: DNS_CODES.NXDOMAIN, ttlMs: 40_001, cached: true });
    assert.deepEqual(await dns.resolve(sf), { error: DNS_CODES.SERVFAIL, ttlMs: 1, cached: true });
    assert.equal(sim.dnsStats().queries, q1, 'negative answers served from cache');
    now += 1;
    const again = await dns.resolve(sf);
    assert.equal(again.cached, false, 'SERVFAIL re-asked after failureTtlMs');
    assert.equal((await dns.resolve(nx)).cached, true, 'NXDOMAIN still cached');
    now += 40_000;
    assert.equal((await dns.resolve(nx)).cached, false, 'NXDOMAIN re-asked after negativeTtlMs');
    assert.equal(dns.stats().negativeHits, 3);
    assert.equal(dns.stats().errors[DNS_CODES.NXDOMAIN], 2);
  } finally { dns.close(); }
});

test('concurrent lookups share one query; at most `concurrency` queries in flight; bad names never asked', async () => {
  const dns = new DnsCache({ servers: [sim.dnsServer], concurrency: 2 });
  try {
    const name = host('ok');
    const q0 = sim.dnsStats().queries;
    const same = await Promise.all(Array.from({ length: 20 }, () => dns.resolve(name)));
    assert.equal(new Set(same.map((r) => ('ip' in r ? r.ip : r.error))).size, 1);
    assert.equal(sim.dnsStats().queries - q0, 1);
    assert.equal(dns.stats().joined, 19);
    const names: string[] = [];
    for (let i = 0; i < 12; i++) names.push(sim.web.hostName(i % sim.web.params.plds, 0));
    const uniq = [...new Set(names)];
    const res = await Promise.all(uniq.map((n) => dns.resolve(n)));
    assert.equal(res.length, uniq.length);
    assert.ok(dns.stats().maxInFlight <= 2, `max in flight ${dns.stats().maxInFlight}`);
    const q1 = sim.dnsStats().queries;
    const bad1 = await dns.resolve('bad..name');
    assert.ok('error' in bad1 && bad1.error === DNS_CODES.BAD_NAME && !bad1.cached);
    const bad2 = await dns.resolve('bad..name');
    assert.ok('error' in bad2 && bad2.error === DNS_CODES.BAD_NAME && bad2.cached);
    assert.equal(sim.dnsStats().queries, q1);
    const lit = await dns.resolve('127.0.0.1');
    assert.ok('ip' in lit && lit.ip === '127.0.0.1');
  } finally { dns.close(); }
});

test('family 6 asks for AAAA (simweb has only A records: NODATA); forget() drops an entry', async () => {
  const dns6 = new DnsCache({ servers: [sim.dnsServer], family: 6 });
  const dns4 = new DnsCache({ servers: [sim.dnsServer] });
  try {
    const name = host('ok');
    const r = await dns6.resolve(name);
    assert.ok('error' in r && r.error === DNS_CODES.NODATA);
    const q0 = sim.dnsStats().queries;
    await dns4.resolve(name);
    assert.equal((await dns4.resolve(name)).cached, true);
    dns4.forget(name);
    assert.equal((await dns4.resolve(name)).cached, false);
    assert.equal(sim.dnsStats().queries - q0, 2);
  } finally { dns6.close(); dns4.close(); }
});

test('maxEntries bounds the cache; close() answers CRAWL_DNS_CLOSED', async () => {
  const dns = new DnsCache({ servers: [sim.dnsServer], maxEntries: 3 });
  for (let i = 0; i < 6; i++) await dns.resolve(sim.web.hostName(i, 0));
  assert.equal(dns.stats().entries, 3);
  dns.close();
  assert.deepEqual(await dns.resolve(sim.web.hostName(0, 0)), { error: DNS_CODES.CLOSED, ttlMs: 0, cached: false });
  assert.throws(() => new DnsCache({ minTtlMs: 10, maxTtlMs: 5 }), /maxTtlMs/);
});

test('a full cache evicts the least recently used host: one answered from the cache stays', async () => {
  const dns = new DnsCache({ servers: [sim.dnsServer], maxEntries: 3 });
  try {
    const names: string[] = [];
    for (const h of sim.web.hosts()) {
      if (names.length >= 4) break;
      if (h.dns === 'ok' && h.pldIndex >= 0) names.push(h.name);
    }
    const [a, b, c, d] = names as [string, string, string, string];
    for (const h of [a, b, c]) await dns.resolve(h);
    assert.ok((await dns.resolve(a)).cached, 'a hit');
    await dns.resolve(d); // full: evicts b, the least recently used
    assert.deepEqual([...dns.entries()].map((e) => e.host), [c, a, d]);
    const q0 = sim.dnsStats().queries;
    assert.ok((await dns.resolve(a)).cached, 'the host used since stays');
    assert.equal((await dns.resolve(b)).cached, false, 'the least recently used was evicted');
    assert.equal(sim.dnsStats().queries - q0, 1);
  } finally { dns.close(); }
});
