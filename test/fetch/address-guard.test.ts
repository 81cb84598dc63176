/**
 * The network guard (src/fetch/address-guard.ts) as a table over every special-purpose range, a
 * property over random addresses, and the fetcher's use of it with a real DNS server: a name that
 * rebinds to a forbidden address between two lookups, `localhost`, and the own-endpoint refusal.
 * Only loopback addresses are ever connected to; non-loopback ranges are checked without a fetch.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { addressGuard, specialAddress, embeddedIpv4, Fetcher, FETCH_OUTCOMES as O } from '../../src/fetch/index.js';
import { DnsCache } from '../../src/dns/index.js';
import { startSimweb } from '../../src/simweb/index.js';
import { SimDnsServer } from '../../src/simweb/dns-server.js';

const UA = 'drumcrawl-test/0.1 (+https://example.test/bot)';

test('every special-purpose range is refused by default; public addresses pass', () => {
  const refused = [
    '0.0.0.0', '0.1.2.3', '10.0.0.1', '10.255.255.255', '100.64.0.1', '100.127.255.254', '127.0.0.1', '127.0.0.99', '127.255.255.255',
    '169.254.169.254', '172.16.0.1', '172.31.255.255', '192.0.0.1', '192.0.2.1', '192.88.99.1', '192.168.1.1', '198.18.0.1',
    '198.19.255.255', '198.51.100.7', '203.0.113.9', '224.0.0.1', '239.255.255.250', '240.0.0.1', '255.255.255.255',
    '::', '::1', '::ffff:127.0.0.99', '::ffff:7f00:63', '::ffff:10.0.0.1', '::ffff:169.254.169.254', '64:ff9b::7f00:63', '64:ff9b::10.0.0.1',
    '64:ff9b:1::1', '2002:7f00:63::1', '2002:a00:1::', '::127.0.0.1', '100::1', '2001::1', '2001:2::1', '2001:db8::1', '3fff::1',
    'fc00::1', 'fd12:3456::1', 'fe80::1', 'fe80::1%lo', 'fec0::1', 'ff02::1', 'ff05::2', '4000::1', '1::1',
  ];
  for (const ip of refused) assert.notEqual(specialAddress(ip), null, `${ip} refused`);
  const allowed = ['1.1.1.1', '8.8.8.8', '93.184.216.34', '100.63.255.255', '100.128.0.0', '172.15.255.255', '172.32.0.0', '192.167.1.1',
    '198.17.255.255', '198.20.0.0', '223.255.255.255', '2606:4700::1111', '2a00:1450:4001::1', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1'];
  for (const ip of allowed) assert.equal(specialAddress(ip), null, `${ip} public`);
  assert.equal(specialAddress('example.com'), 'not an IP address');
  assert.match(specialAddress('127.0.0.99')!, /loopback 127\.0\.0\.0\/8/);
  assert.match(specialAddress('::ffff:10.0.0.1')!, /private 10\.0\.0\.0\/8 \(embedded in/);
  assert.equal(embeddedIpv4('::ffff:7f00:63'), '127.0.0.99');
  assert.equal(embeddedIpv4('64:ff9b::7f00:63'), '127.0.0.99');
  assert.equal(embeddedIpv4('2002:7f00:63::'), '127.0.0.99');
  assert.equal(embeddedIpv4('2606:4700::1'), null);
});

test('allowNetworks admits exactly the given ranges, mapped forms judged by their IPv4 address', () => {
  const g = addressGuard(['127.1.0.0/16', 'fd00::/8']);
  assert.equal(g('127.1.0.1'), null);
  assert.equal(g('::ffff:127.1.0.1'), null);
  assert.equal(g('fd00::5'), null);
  assert.notEqual(g('127.0.0.1'), null);
  assert.notEqual(g('127.2.0.1'), null);
  assert.notEqual(g('::ffff:127.0.0.99'), null);
  assert.notEqual(g('fc00::1'), null);
  assert.equal(g('8.8.8.8'), null);
  for (const bad of ['10.0.0.0/33', '10.0.0.0/', '10.0.0.0/8x', 'ten/8', '::1/129']) assert.throws(() => addressGuard([bad]), TypeError, bad);
});

test('property: any address inside a refused IPv4 range is refused in every IPv6 spelling too, unless allowed', () => {
  const special = fc.constantFrom(
    [10, 8], [127, 8], [172, 12], [192, 16], [169, 16], [100, 10], [224, 4], [240, 4], [0, 8],
  ).chain(([a, bits]) => fc.integer({ min: 0, max: 2 ** (32 - bits) - 1 }).map((low) => {
    const base: Record<number, number> = { 10: 0x0a000000, 127: 0x7f000000, 172: 0xac100000, 192: 0xc0a80000, 169: 0xa9fe0000, 100: 0x64400000, 224: 0xe0000000, 240: 0xf0000000, 0: 0 };
    const n = (base[a]! + low) >>> 0;
    return { n, v4: `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}` };
  }));
  fc.assert(fc.property(special, ({ n, v4 }) => {
    const hex = `${((n >>> 16) & 0xffff).toString(16)}:${(n & 0xffff).toString(16)}`;
    for (const ip of [v4, `::ffff:${v4}`, `::ffff:${hex}`, `64:ff9b::${hex}`, `2002:${hex}::1`]) {
      if (specialAddress(ip) === null) return false;
      if (addressGuard([`${v4}/32`])(ip) !== null) return false;
    }
    return true;
  }), { seed: Number(process.env.FC_SEED ?? 0x5eed), numRuns: 2000 });
});

test('property: an IPv6 allowance never opens an IPv4 special-purpose range, an IPv4 allowance never an IPv6 one', () => {
  // Every IPv4 special-purpose range, an address anywhere inside it, in each IPv6 spelling that
  // carries it; allowances: the widest IPv6 ones (and the carriers' own ranges) next to IPv4
  // networks that do not hold the address.
  const specials = [
    [0x00000000, 8], [0x0a000000, 8], [0x64400000, 10], [0x7f000000, 8], [0xa9fe0000, 16], [0xac100000, 12], [0xc0000000, 24],
    [0xc0000200, 24], [0xc0586300, 24], [0xc0a80000, 16], [0xc6120000, 15], [0xc6336400, 24], [0xcb007100, 24], [0xe0000000, 4],
    [0xf0000000, 4], [0xffffffff, 32],
  ] as const;
  const quad = (n: number): string => `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
  const v4addr = fc.constantFrom(...specials).chain(([base, bits]) => fc.integer({ min: 0, max: 2 ** (32 - bits) - 1 }).map((low) => (base + low) >>> 0));
  const v6allow = fc.subarray(['::/0', '::/1', '::/2', '::ffff:0:0/96', '::ffff:0.0.0.0/97', '64:ff9b::/96', '64:ff9b:1::/48', '2002::/16', '::/96', '::/8', '2000::/3', '0::/4'], { minLength: 1 });
  fc.assert(fc.property(v4addr, v6allow, fc.array(fc.integer({ min: 0, max: 0xffffffff }), { maxLength: 3 }), (n, v6, others) => {
    const v4 = quad(n);
    // IPv4 networks (a /24 around a random address) that miss this address
    const v4allow = others.map((o) => `${quad((o & 0xffffff00) >>> 0)}/24`).filter((c) => (((n & 0xffffff00) >>> 0) !== (((Number(c.split('.')[0]) << 24) | (Number(c.split('.')[1]) << 16) | (Number(c.split('.')[2]) << 8)) >>> 0)));
    const g = addressGuard([...v6, ...v4allow]);
    const hex = `${((n >>> 16) & 0xffff).toString(16)}:${(n & 0xffff).toString(16)}`;
    // spellings that stand for the IPv4 address, and the deprecated ranges that carry one
    const embedded = [v4, `::ffff:${v4}`, `::ffff:${hex}`, `64:ff9b::${hex}`, `64:ff9b::${v4}`, `2002:${hex}::1`, `2002:${hex}:ffff::`];
    const carried = [`64:ff9b:1::${hex}`, ...(n > 1 ? [`::${hex}`, `::${v4}`] : [])];
    for (const ip of [...embedded, ...carried]) if (g(ip) === null) return false;
    // the same address allowed as IPv4 passes in every spelling that stands for it
    const g4 = addressGuard([...v6, `${v4}/32`]);
    for (const ip of embedded) if (g4(ip) !== null) return false;
    return true;
  }), { seed: Number(process.env.FC_SEED ?? 0x6a4d), numRuns: 3000 });
  // An IPv4 allowance of everything opens no IPv6 range
  const g = addressGuard(['0.0.0.0/0']);
  for (const ip of ['::', '::1', 'fe80::1', 'fc00::1', 'fd12::1', 'ff02::1', '100::1', '2001:db8::1', '2001::1', '64:ff9b:1::1', '3fff::1']) {
    assert.notEqual(g(ip), null, ip);
  }
  // and ::/0 opens the IPv6 ones (its own family), public IPv4 stays open
  const g6 = addressGuard(['::/0']);
  for (const ip of ['::1', 'fe80::1', 'fd12::1', '2001:db8::1']) assert.equal(g6(ip), null, ip);
  assert.equal(g6('8.8.8.8'), null);
  assert.match(g6('::7f00:1')!, /loopback 127\.0\.0\.0\/8 \(carried in ::7f00:1\)/);
});

test('fetcher: DNS rebinding to a forbidden address, localhost and the own status endpoint are refused before connecting', { timeout: 600_000 }, async () => {
  const sim = await startSimweb({ preset: 'tiny', log: true });
  const host = 'www.pld0.test';
  const good = sim.web.hostInfo(host)!.ip;
  let answers = 0;
  // First answer: the simulated host; every later one: a loopback address outside the allowance.
  const dns = await SimDnsServer.listen(sim.web, 0, '127.0.0.1', new Map([['rebind.test', () => (answers++ === 0 ? good : '127.0.0.99')]]));
  const cache = new DnsCache({ servers: [`127.0.0.1:${dns.port}`], minTtlMs: 1, maxTtlMs: 1 });
  const f = new Fetcher({ userAgent: UA, dns: cache, allowedNetworks: ['127.1.0.0/16'] });
  try {
    const url = `http://rebind.test:${sim.httpPort}/robots.txt`;
    const first = await f.fetch({ url });
    assert.equal(first.ip, good);
    assert.notEqual(first.outcome, O.BLOCKED_ADDRESS, 'the first answer is allowed and fetched');
    await new Promise((r) => setTimeout(r, 20));
    const before = sim.log.length;
    const second = await f.fetch({ url });
    assert.equal(second.ip, '127.0.0.99');
    assert.equal(second.outcome, O.BLOCKED_ADDRESS);
    assert.match(second.errorCode!, /loopback/);
    assert.equal(sim.log.length, before, 'nothing sent after the rebinding');
    assert.ok(answers >= 2, 'the name was looked up again');

    const local = await f.fetch({ url: `http://localhost:${sim.httpPort}/` });
    assert.equal(local.ip, '127.0.0.1');
    assert.equal(local.outcome, O.BLOCKED_ADDRESS);

    // The own status endpoint is refused even inside an allowed range.
    const g = new Fetcher({ userAgent: UA, allowedNetworks: ['127.0.0.0/8'] });
    g.refuseEndpoint('127.0.0.1', sim.httpPort);
    assert.match(g.refusal('127.0.0.1', sim.httpPort)!, /own status server/);
    assert.equal(g.refusal('127.1.0.1', sim.httpPort), null, 'another address on that port is not the endpoint');
    assert.equal(g.refusal('127.0.0.1', sim.httpPort + 1), null);
    const all = new Fetcher({ userAgent: UA, allowedNetworks: ['0.0.0.0/0', '::/0'] });
    all.refuseEndpoint('127.0.0.1', sim.httpPort);
    for (const ip of ['0.0.0.0', '::', '::ffff:127.0.0.1']) assert.notEqual(all.refusal(ip, sim.httpPort), null, `${ip} reaches the endpoint`);
    await all.close();
    const own = await g.fetch({ url: `http://127.0.0.1:${sim.httpPort}/metrics`, ip: '127.0.0.1' });
    assert.equal(own.outcome, O.BLOCKED_ADDRESS);
    g.refuseEndpoint('0.0.0.0', 9);
    assert.notEqual(g.refusal('127.0.0.5', 9), null, 'a wildcard-bound endpoint is refused on every loopback address');
    await g.close();
    assert.throws(() => new Fetcher({ userAgent: UA, allowedNetworks: ['nope'] }), /CRAWL_FETCH_BAD_OPTION|allowedNetworks/);
  } finally {
    await f.close();
    cache.close();
    await dns.close();
    await sim.close();
  }
});

test('config: --allow-network is repeatable and validated; allowNetworks in a config file; retryDelayScale', async () => {
  const { parseCrawlArgs, resolveCrawlConfig, configFromFileObject } = await import('../../src/config/config.js');
  const { input } = parseCrawlArgs(['http://a.test/', '--allow-network', '127.0.0.0/8', '--allow-network=::1', '--retry-delay-scale', '0.01']);
  const cfg = resolveCrawlConfig(input);
  assert.deepEqual(cfg.allowNetworks, ['127.0.0.0/8', '::1']);
  assert.equal(cfg.retryDelayScale, 0.01);
  assert.deepEqual(resolveCrawlConfig({}).allowNetworks, [], 'nothing special is allowed by default');
  assert.equal(resolveCrawlConfig({}).retryDelayScale, 1);
  assert.deepEqual(resolveCrawlConfig(configFromFileObject({ 'allow-network': ['10.0.0.0/8'] })).allowNetworks, ['10.0.0.0/8']);
  assert.deepEqual(resolveCrawlConfig(configFromFileObject({ allowNetworks: ['fd00::/8'] })).allowNetworks, ['fd00::/8']);
  for (const bad of ['localhost', '10.0.0.0/33', '10.0.0.0/', '']) {
    assert.throws(() => resolveCrawlConfig({ allowNetworks: [bad] }), (e: unknown) => (e as { code?: string }).code === 'CRAWL_CONFIG_INVALID' && /allowNetworks/.test(String(e)), bad);
  }
  for (const bad of [0, -1, 'fast', 1e6]) {
    assert.throws(() => resolveCrawlConfig({ retryDelayScale: bad as number }), (e: unknown) => (e as { code?: string }).code === 'CRAWL_CONFIG_INVALID', String(bad));
  }
});
