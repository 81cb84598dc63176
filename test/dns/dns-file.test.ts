/**
 * The DNS cache's checkpoint copy (src/dns/dns-file.ts): what one cache saves, another loads and
 * answers without a query (against simweb's real DNS server); expired entries, damaged lines and
 * foreign files are passed over; the cache's bound holds. Property: encode/decode is the identity on
 * entries not expired, whatever the hosts, addresses and codes.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { startSimweb, type Simweb } from '../../src/simweb/index.js';
import { DnsCache, DNS_CODES, decodeDnsFile, encodeDnsFile, encodeDnsFileSliced, loadDnsFile, readDnsFile, type DnsFileEntry } from '../../src/dns/index.js';

/** The line checksum dns-file.ts writes (CRC-32 of the rest of the line, 8 hex digits). */
const crcOf = (body: string): string => crc32(body).toString(16).padStart(8, '0');

let sim: Simweb;
before(async () => { sim = await startSimweb({ preset: 'hostile', params: { dnsTtl: 300 } }); });
after(async () => { await sim.close(); });

function hosts(dns: 'ok' | 'nxdomain', n: number): string[] {
  const out: string[] = [];
  for (const h of sim.web.hosts()) {
    if (out.length >= n) break;
    if (h.dns === dns && h.pldIndex >= 0) out.push(h.name);
  }
  assert.equal(out.length, n, `simweb has ${n} hosts with dns=${dns}`);
  return out;
}

test('a cache loaded from another\'s saved answers answers them without a query, failures included', async () => {
  let now = 1_000_000;
  const ok = hosts('ok', 20);
  const nx = hosts('nxdomain', 1);
  const a = new DnsCache({ servers: [sim.dnsServer], now: () => now });
  try {
    for (const h of [...ok, ...nx]) await a.resolve(h);
  } finally { a.close(); }
  const text = encodeDnsFile(a.entries());
  now += 10_000;
  const b = new DnsCache({ servers: [sim.dnsServer], now: () => now });
  try {
    assert.equal(b.load(decodeDnsFile(text, now).entries), 21);
    const q0 = sim.dnsStats().queries;
    for (const h of ok) {
      const r = await b.resolve(h);
      assert.ok('ip' in r && r.cached, `${h} answered from the loaded copy`);
      assert.equal(r.ip, sim.web.hostInfo(h)!.ip);
    }
    for (const h of nx) assert.deepEqual(await b.resolve(h), { error: DNS_CODES.NXDOMAIN, ttlMs: 3_600_000 - 10_000, cached: true });
    assert.equal(sim.dnsStats().queries - q0, 0, 'no query for a saved answer');
  } finally { b.close(); }
});

test('an entry that expired while the crawl was stopped is not loaded: the host is asked again', async () => {
  let now = 2_000_000;
  const [h] = hosts('ok', 1);
  const a = new DnsCache({ servers: [sim.dnsServer], minTtlMs: 60_000, maxTtlMs: 60_000, now: () => now });
  try { await a.resolve(h!); } finally { a.close(); }
  const text = encodeDnsFile(a.entries());
  now += 60_000;
  assert.deepEqual(decodeDnsFile(text, now).entries, []);
  const b = new DnsCache({ servers: [sim.dnsServer], now: () => now });
  try {
    b.load(decodeDnsFile(text, now - 1).entries); // (loaded a moment before it expired)
    const q0 = sim.dnsStats().queries;
    const r = await b.resolve(h!);
    assert.ok('ip' in r && !r.cached);
    assert.equal(sim.dnsStats().queries - q0, 1);
  } finally { b.close(); }
});

test('damaged lines, a foreign file, a missing one and a directory load nothing wrong and never throw', async () => {
  const at = Date.now() + 600_000;
  const entry = (host: string, ip: string, addresses = [ip]): DnsFileEntry => ({ host, expiresAt: at, ip, addresses, error: null });
  const encoded = encodeDnsFile([entry('good.test', '10.0.0.1', ['10.0.0.2', '10.0.0.1']), entry('flip.test', '10.0.0.1'), entry('torn.test', '10.0.0.1')]).split('\n');
  const unsealed = (body: string): string => `00000000\t${body}`;
  const lines = [
    ...encoded.slice(0, 2),
    encoded[2]!.replace('10.0.0.1', '10.0.0.3'), // a flipped bit: the CRC no longer matches
    encoded[3]!.slice(0, -4), // torn
    'not a line',
    // lines whose checksum is right but whose fields are not (written by something else)
    ...[`${at}\tbad-ip.test\t10.0.0.300\t10.0.0.300`, `${at}\tnot-listed.test\t10.0.0.1\t10.0.0.2`, `${at}\tcode.test\t!\tnot-a-code`, `soon\tclock.test\t10.0.0.1\t10.0.0.1`]
      .map((b) => `${crcOf(b)}\t${b}`),
    unsealed(`${at}\tnocrc.test\t10.0.0.1\t10.0.0.1`),
  ];
  const d = decodeDnsFile(lines.join('\n'), Date.now());
  assert.deepEqual(d.entries.map((e) => e.host), ['good.test']);
  assert.equal(d.skipped, 8);
  assert.deepEqual(decodeDnsFile(encoded.join('\n').replace('drumcrawl-dns 1', 'drumcrawl-dns 2'), Date.now()).entries, [], 'another version: nothing');
  assert.deepEqual(decodeDnsFile('', Date.now()).entries, []);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dnsfile-'));
  try {
    assert.deepEqual(await readDnsFile(path.join(dir, 'missing'), Date.now()), { entries: [], skipped: 0 });
    assert.deepEqual(await readDnsFile(dir, Date.now()), { entries: [], skipped: 0 });
    await writeFile(path.join(dir, 'x'), Buffer.from([0xff, 0xfe, 0x00, 0x0a]));
    assert.deepEqual((await readDnsFile(path.join(dir, 'x'), Date.now())).entries, []);
  } finally { await rm(dir, { recursive: true, force: true }); }
  // A code this version does not know is left out by load() as well.
  const c = new DnsCache({ servers: [sim.dnsServer] });
  try {
    assert.equal(c.load([{ host: 'x.test', expiresAt: Date.now() + 1000, ip: null, addresses: [], error: 'CRAWL_DNS_WHATEVER' }]), 0);
  } finally { c.close(); }
});

test('load keeps the cache within maxEntries (the newest saved entries) and a host already cached keeps its entry', () => {
  const now = Date.now();
  const saved: DnsFileEntry[] = [];
  for (let i = 0; i < 50; i++) saved.push({ host: `h${i}.test`, expiresAt: now + 100_000 + i, ip: `10.1.0.${i}`, addresses: [`10.1.0.${i}`], error: null });
  const c = new DnsCache({ maxEntries: 10 });
  try {
    assert.equal(c.load(saved), 10);
    assert.deepEqual([...c.entries()].map((e) => e.host), saved.slice(40).map((e) => e.host));
    assert.equal(c.stats().entries, 10);
    assert.equal(c.load([{ host: 'h45.test', expiresAt: now + 500_000, ip: '10.9.9.9', addresses: ['10.9.9.9'], error: null }]), 0);
    assert.equal([...c.entries()].find((e) => e.host === 'h45.test')!.ip, '10.1.0.45');
  } finally { c.close(); }
});

test('property: decode(encode(entries)) is the entries not expired, in order', () => {
  const label = fc.stringMatching(/^[a-z0-9_-]{1,20}$/);
  const entry = fc.record({
    host: fc.array(label, { minLength: 1, maxLength: 4 }).map((l) => l.join('.')),
    expiresAt: fc.integer({ min: 0, max: 2 ** 45 }),
    kind: fc.oneof(
      fc.array(fc.oneof(fc.ipV4(), fc.ipV6()), { minLength: 1, maxLength: 4 }).map((addresses) => ({ addresses })),
      fc.constantFrom(...Object.values(DNS_CODES)).map((error) => ({ error })),
    ),
  }).map(({ host, expiresAt, kind }): DnsFileEntry => 'error' in kind
    ? { host, expiresAt, ip: null, addresses: [], error: kind.error }
    : { host, expiresAt, ip: kind.addresses[kind.addresses.length - 1]!, addresses: kind.addresses, error: null });
  fc.assert(fc.property(fc.array(entry, { maxLength: 30 }), fc.integer({ min: 0, max: 2 ** 45 }), (entries, now) => {
    const d = decodeDnsFile(encodeDnsFile(entries), now);
    assert.deepEqual(d.entries, entries.filter((e) => e.expiresAt > now));
    assert.equal(d.skipped, 0);
  }));
});

test('loadDnsFile: slice by slice, the most recently used entries up to the capacity, a host cached meanwhile keeps its entry', async () => {
  const now = Date.now();
  const saved: DnsFileEntry[] = [];
  for (let i = 0; i < 10_000; i++) saved.push({ host: `h${i}.test`, expiresAt: now + 100_000, ip: `10.2.${i >> 8 & 255}.${i & 255}`, addresses: [`10.2.${i >> 8 & 255}.${i & 255}`], error: null });
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dnsfile-'));
  const c = new DnsCache({ maxEntries: 6_000 });
  try {
    const file = path.join(dir, 'dns-cache');
    const text = await encodeDnsFileSliced(saved);
    assert.equal(text, encodeDnsFile(saved), 'sliced or whole, the same text');
    await writeFile(file, text);
    c.load([{ host: 'h9999.test', expiresAt: now + 500_000, ip: '10.9.9.9', addresses: ['10.9.9.9'], error: null }]);
    assert.equal(await loadDnsFile(file, c, Date.now), 5_999);
    const hosts = [...c.entries()].map((e) => e.host);
    assert.equal(hosts.length, 6_000);
    assert.deepEqual(hosts.slice(1), saved.slice(4_000, 9_999).map((e) => e.host), 'the last 6,000 saved, in order');
    assert.equal([...c.entries()].find((e) => e.host === 'h9999.test')!.ip, '10.9.9.9');
    assert.equal(await loadDnsFile(path.join(dir, 'missing'), c, Date.now), 0);
  } finally {
    c.close();
    await rm(dir, { recursive: true, force: true });
  }
});
