import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { Agent, request } from 'undici';
import { startSimweb, type Simweb } from '../../src/simweb/index.js';
import { simFetch, parse5Links, resolveCanonical } from './helpers.js';

let sw: Simweb;
before(async () => { sw = await startSimweb({ preset: 'tiny' }); });
after(async () => { await sw.close(); });

test('listens only on 127/8 simulated IPs, one port for all; seeds carry the port', () => {
  assert.ok(sw.ips.length >= 2);
  for (const ip of sw.ips) assert.match(ip, /^127\.(?!0\.0\.1$)/);
  for (const s of sw.seeds) assert.equal(new URL(s).port, String(sw.httpPort));
  assert.match(sw.dnsServer, /^127\.0\.0\.1:\d+$/);
});

test('pages over undici via the resolved IP, keep-alive reuses one connection, log records each request', async () => {
  sw.log.clear();
  const agent = new Agent({ connections: 1, keepAliveTimeout: 10_000 });
  try {
    const seed = sw.seeds[0]!;
    const first = await simFetch(sw, seed, { dispatcher: agent });
    assert.equal(first.status, 200);
    assert.equal(first.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(Number(first.headers['content-length']), first.body.length);
    const { base, links } = parse5Links(first.body.toString('utf8'));
    const expect = sw.web.pageLinks(sw.web.hostInfo(new URL(seed).hostname)!, 0).links.map((l) => sw.web.origin(l.host) + l.path);
    assert.deepEqual(links.map((l) => resolveCanonical(l, seed, base)).sort(), expect.sort());
    // Follow a few same-host links on the same connection.
    const same = [...new Set(expect.filter((u) => new URL(u).host === new URL(seed).host))].slice(0, 5);
    for (const u of same) assert.equal((await simFetch(sw, u, { dispatcher: agent })).status, 200);
    const entries = sw.log.entries();
    assert.equal(entries.length, 1 + same.length);
    assert.equal(new Set(entries.map((e) => e.conn)).size, 1, 'one keep-alive connection');
    const e = entries[0]!;
    assert.equal(e.host, 'www.pld0.test');
    assert.equal(e.localIp, first.ip);
    assert.equal(e.path, '/p/0');
    assert.equal(e.status, 200);
    assert.ok(e.bytes > first.body.length && e.end >= e.start);
    assert.match(e.userAgent, /^drumcrawl-test/);
  } finally {
    await agent.close();
  }
});

test('wrong IP for a host → 421, unknown host → 404, unknown path → 404, / → 301, HEAD, 405', async () => {
  const host = sw.web.hostInfo('www.pld0.test')!;
  const wrongIp = sw.ips.find((ip) => ip !== host.ip)!;
  const get = async (ip: string, hostHdr: string, path: string, method: 'GET' | 'HEAD' | 'POST' = 'GET') => {
    const r = await request(`http://${ip}:${sw.httpPort}${path}`, { method, headers: { host: hostHdr } });
    await r.body.dump();
    return r;
  };
  assert.equal((await get(wrongIp, `www.pld0.test:${sw.httpPort}`, '/p/0')).statusCode, 421);
  assert.equal((await get(host.ip, `www.nope.test:${sw.httpPort}`, '/p/0')).statusCode, 404);
  assert.equal((await get(host.ip, `www.pld0.test:${sw.httpPort}`, `/p/${host.pages}`)).statusCode, 404);
  assert.equal((await get(host.ip, `www.pld0.test:${sw.httpPort}`, '/p/01')).statusCode, 404);
  const root = await get(host.ip, `www.pld0.test:${sw.httpPort}`, '/');
  assert.equal(root.statusCode, 301);
  assert.equal(root.headers.location, `http://www.pld0.test:${sw.httpPort}/p/0`);
  const head = await get(host.ip, `www.pld0.test:${sw.httpPort}`, '/p/0', 'HEAD');
  assert.equal(head.statusCode, 200);
  assert.ok(Number(head.headers['content-length']) > 1000);
  assert.equal((await get(host.ip, `www.pld0.test:${sw.httpPort}`, '/p/0', 'POST')).statusCode, 405);
});

test('pipelined requests on a raw socket are answered in order; garbage gets 400 and a close', async () => {
  const host = sw.web.hostInfo('www.pld0.test')!;
  const raw = (payload: string) => new Promise<string>((resolve, reject) => {
    const s = net.connect(sw.httpPort, host.ip, () => s.end(payload));
    const out: Buffer[] = [];
    s.on('data', (d) => out.push(d));
    s.on('end', () => resolve(Buffer.concat(out).toString('latin1')));
    s.on('error', reject);
  });
  const req = (p: string, close = false) => `GET ${p} HTTP/1.1\r\nHost: www.pld0.test\r\n${close ? 'Connection: close\r\n' : ''}\r\n`;
  const resp = await raw(req('/p/1') + req('/p/2') + req('/robots.txt', true));
  const statuses = [...resp.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1]);
  assert.deepEqual(statuses, ['200', '200', '200']);
  assert.ok(resp.indexOf('page 1</title>') < resp.indexOf('page 2</title>'));
  assert.match(await raw('BLAH\r\n\r\n'), /^HTTP\/1\.1 400 /);
});

test('same seed, params and port → byte-identical pages and robots.txt from a second server', async () => {
  const port = sw.httpPort;
  const paths = ['/robots.txt', '/p/0', '/p/3', '/p/7'];
  const hosts = [...sw.web.hosts()].slice(0, 3);
  const fetchAll = async (s: Simweb) => {
    const out: Buffer[] = [];
    for (const h of hosts) for (const p of paths) out.push((await simFetch(s, `${s.web.origin(h.name)}${p}`)).body);
    return out;
  };
  const a = await fetchAll(sw);
  await sw.close();
  sw = await startSimweb({ preset: 'tiny', httpPort: port });
  const b = await fetchAll(sw);
  assert.equal(a.length, b.length);
  for (let i = 0; i < a.length; i++) assert.ok(a[i]!.equals(b[i]!), `response ${i}`);
  const other = await startSimweb({ preset: 'tiny', seed: 2 });
  try {
    const c = await simFetch(other, `${other.web.origin(hosts[0]!.name)}/p/0`);
    assert.notEqual(c.body.toString().replace(/:\d+\//g, ':/'), a[1]!.toString().replace(/:\d+\//g, ':/'));
  } finally {
    await other.close();
  }
});

test('a taken port is reported with CRAWL_SIMWEB_LISTEN', async () => {
  await assert.rejects(startSimweb({ preset: 'tiny', httpPort: sw.httpPort }), { code: 'CRAWL_SIMWEB_LISTEN' });
  const dnsPort = Number(sw.dnsServer.split(':')[1]);
  await assert.rejects(startSimweb({ preset: 'tiny', dnsPort }), { code: 'CRAWL_SIMWEB_LISTEN' });
});
