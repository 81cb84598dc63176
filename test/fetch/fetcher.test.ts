import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import zlib from 'node:zlib';
import diagnostics from 'node:diagnostics_channel';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { startSimweb, type Simweb, type HostInfo } from '../../src/simweb/index.js';
import {
  Fetcher, FETCH_OUTCOMES as O, LOOPBACK_NETWORKS, decodeContent, parseRetryAfter, parseContentType, networkPredicate, isHttpResponse, MAX_RETRY_AFTER_MS,
} from '../../src/fetch/index.js';
import { isCrawlError } from '../../src/errors.js';

const UA = 'drumcrawl/0.1 (+http://crawler.test/about)';
let sim: Simweb;
before(async () => { sim = await startSimweb({ preset: 'tiny' }); });
after(async () => { await sim.close(); });

function aHost(): HostInfo {
  const h = sim.web.findHost((x) => x.pldIndex >= 0 && x.behaviour === 'normal' && x.dns === 'ok');
  assert.ok(h);
  return h;
}

async function socketsClosed(): Promise<void> {
  // (A bound on a hang, not a speed: the server sees the closes within milliseconds.)
  const t0 = Date.now();
  while (sim.connectionStats().open > 0 && Date.now() - t0 < 60_000) await new Promise((r) => setTimeout(r, 20));
  assert.equal(sim.connectionStats().open, 0);
}

test('requestHead is byte-identical to what undici writes on the socket', async () => {
  const sent: string[] = [];
  const onSend = (m: unknown): void => { sent.push((m as { headers: string }).headers); };
  diagnostics.subscribe('undici:client:sendHeaders', onSend);
  const f = new Fetcher({ userAgent: UA, allowedNetworks: LOOPBACK_NETWORKS, headers: { 'X-Extra': 'yes' } });
  try {
    const h = aHost();
    const r = await f.fetch({ url: `${sim.web.origin(h.name)}/p/1?q=a%20b`, ip: h.ip, headers: { 'if-none-match': '"x"' } });
    assert.equal(isHttpResponse(r), true, r.outcome);
    assert.equal(sent.length, 1);
    assert.equal(Buffer.from(r.requestHead).toString('latin1'), sent[0] + '\r\n');
    assert.match(sent[0]!, new RegExp(`^GET /p/1\\?q=a%20b HTTP/1.1\\r\\nhost: ${h.name}:${sim.httpPort}\\r\\n`));
    // The server saw our Host header and User-Agent on the IP we chose (simweb answers 421 otherwise).
    const e = sim.log.entries().at(-1)!;
    assert.equal(e.localIp, h.ip);
    assert.equal(e.host, h.name);
    assert.equal(e.userAgent, UA);
  } finally {
    diagnostics.unsubscribe('undici:client:sendHeaders', onSend);
    await f.close();
  }
  await socketsClosed();
});

test('connects to the given IP with the Host header: a wrong IP gets simweb’s 421', async () => {
  const f = new Fetcher({ userAgent: UA, allowedNetworks: LOOPBACK_NETWORKS });
  try {
    const h = aHost();
    const wrong = sim.ips.find((ip) => ip !== h.ip)!;
    const r = await f.fetch({ url: `${sim.web.origin(h.name)}/p/1`, ip: wrong });
    assert.equal(r.status, 421);
    assert.equal(r.outcome, O.HTTP_4XX);
    assert.equal(isHttpResponse(r), true);
  } finally { await f.close(); }
  await socketsClosed();
});

test('keep-alive: sequential fetches to one IP reuse one connection', async () => {
  const f = new Fetcher({ userAgent: UA, allowedNetworks: LOOPBACK_NETWORKS });
  try {
    const h = aHost();
    const before = sim.connectionStats().accepted;
    for (let n = 0; n < 8; n++) {
      const r = await f.fetch({ url: `${sim.web.origin(h.name)}/p/${n}`, ip: h.ip });
      assert.ok(r.outcome === O.OK || r.outcome === O.HTTP_4XX, r.outcome);
    }
    assert.equal(sim.connectionStats().accepted - before, 1);
    assert.equal(f.stats().pools, 1);
  } finally { await f.close(); }
  await socketsClosed();
});

test('pool count is bounded by maxPools (LRU close of idle pools)', async () => {
  const f = new Fetcher({ userAgent: UA, allowedNetworks: LOOPBACK_NETWORKS, maxPools: 2 });
  try {
    const h = aHost();
    for (const ip of sim.ips) await f.fetch({ url: `${sim.web.origin(h.name)}/p/1`, ip });
    assert.ok(sim.ips.length >= 3);
    assert.equal(f.stats().pools, 2);
    assert.equal(f.stats().poolsEvicted, sim.ips.length - 2);
  } finally { await f.close(); }
  await socketsClosed();
});

test('https: SNI and Host come from the URL while connecting to the IP; a self-signed cert is CRAWL_FETCH_TLS', async () => {
  // simweb speaks no TLS: a loopback node:https server with a test-only self-signed certificate for
  // tls.test (test/fetch/fixtures, generated with openssl, valid 100 years).
  const dir = new URL('./fixtures/', import.meta.url);
  const seen: Array<{ sni: unknown; host: string | undefined }> = [];
  const server = https.createServer({ key: readFileSync(new URL('tls-test.key', dir)), cert: readFileSync(new URL('tls-test.crt', dir)) }, (req, res) => {
    seen.push({ sni: (req.socket as unknown as { servername?: unknown }).servername, host: req.headers.host });
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<p>secure</p>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  const lax = new Fetcher({ userAgent: UA, allowedNetworks: LOOPBACK_NETWORKS, tlsRejectUnauthorized: false });
  const strict = new Fetcher({ userAgent: UA, allowedNetworks: LOOPBACK_NETWORKS });
  try {
    const r = await lax.fetch({ url: `https://tls.test:${port}/x`, ip: '127.0.0.1' });
    assert.equal(r.outcome, O.OK, `${r.outcome} ${r.errorCode ?? ''}`);
    assert.equal(Buffer.from(r.body).toString(), '<p>secure</p>');
    assert.deepEqual(seen, [{ sni: 'tls.test', host: `tls.test:${port}` }]);
    const s = await strict.fetch({ url: `https://tls.test:${port}/x`, ip: '127.0.0.1' });
    assert.equal(s.outcome, O.TLS, `${s.outcome} ${s.errorCode ?? ''}`);
  } finally {
    await lax.close();
    await strict.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

test('TLS: a server answering the ClientHello with plain HTTP gives CRAWL_FETCH_TLS', async () => {
  // simweb speaks no TLS; this loopback server answers any bytes with an HTTP error, which is not a
  // TLS record, so the handshake fails on the client side.
  const server = net.createServer((s) => { s.once('data', () => s.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n')); s.on('error', () => undefined); });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  const f = new Fetcher({ userAgent: UA, allowedNetworks: LOOPBACK_NETWORKS, connectTimeoutMs: 2000 });
  try {
    const r = await f.fetch({ url: `https://tls.test:${port}/`, ip: '127.0.0.1' });
    assert.equal(r.outcome, O.TLS, `${r.outcome} ${r.errorCode ?? ''}`);
  } finally {
    await f.close();
    await new Promise((r) => server.close(r));
  }
});

test('a non-allowed IP is refused before any socket is created', async () => {
  let sockets = 0;
  const onSocket = (): void => { sockets++; };
  diagnostics.subscribe('net.client.socket', onSocket);
  const f = new Fetcher({ userAgent: UA, allowedNetworks: LOOPBACK_NETWORKS });
  try {
    // Special-purpose addresses outside the allowed loopback ranges (a public address would be
    // allowed: tests never target one).
    for (const ip of ['10.0.0.1', '192.168.1.1', '169.254.169.254', '2001:db8::1', 'fe80::1', '::ffff:10.0.0.1']) {
      const r = await f.fetch({ url: 'http://example.com/', ip });
      assert.equal(r.outcome, O.BLOCKED_ADDRESS, ip);
      assert.equal(r.body.length, 0);
    }
    assert.equal(sockets, 0);
    assert.equal(f.stats().pools, 0);
    // The check also guards addresses coming from DNS.
    const g = new Fetcher({ userAgent: UA, allowedNetworks: LOOPBACK_NETWORKS, isAddressAllowed: (ip) => ip === '127.0.0.1' });
    assert.equal((await g.fetch({ url: 'http://x.test/', ip: '127.0.0.2' })).outcome, O.BLOCKED_ADDRESS);
    await g.close();
    assert.equal(sockets, 0);
    // Positive control: the channel does see the socket of an allowed fetch.
    const h = aHost();
    assert.equal(isHttpResponse(await f.fetch({ url: `${sim.web.origin(h.name)}/p/1`, ip: h.ip })), true);
    assert.equal(sockets, 1);
  } finally {
    diagnostics.unsubscribe('net.client.socket', onSocket);
    await f.close();
  }
});

test('connection refused, bad URLs, and the User-Agent contact requirement', async () => {
  const port = await new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => { const p = (s.address() as net.AddressInfo).port; s.close(() => resolve(p)); });
  });
  const f = new Fetcher({ userAgent: UA, allowedNetworks: LOOPBACK_NETWORKS });
  try {
    const r = await f.fetch({ url: `http://refused.test:${port}/`, ip: '127.0.0.1' });
    assert.equal(r.outcome, O.CONNECT_REFUSED);
    assert.equal(r.errorCode, 'ECONNREFUSED');
    assert.equal(isHttpResponse(r), false);
    assert.equal((await f.fetch({ url: 'ftp://x.test/', ip: '127.0.0.1' })).outcome, O.BAD_URL);
    assert.equal((await f.fetch({ url: 'not a url', ip: '127.0.0.1' })).outcome, O.BAD_URL);
    assert.equal((await f.fetch({ url: 'http://x.test/' })).outcome, O.DNS, 'no ip and no DnsCache');
  } finally { await f.close(); }
  for (const ua of ['drumcrawl/0.1', '', 'bot (+mailto:)']) {
    assert.throws(() => new Fetcher({ userAgent: ua }), (e: unknown) => isCrawlError(e, 'CRAWL_FETCH_BAD_OPTION'));
  }
  assert.throws(() => new Fetcher({ userAgent: UA, maxBodyBytes: -1 }), (e: unknown) => isCrawlError(e, 'CRAWL_FETCH_BAD_OPTION'));
});

/**
 * Protocol corners simweb does not produce (it always sends Content-Length and fixed header
 * spelling): a tiny loopback node:net server writing exact bytes, to check the response-head
 * reconstruction (case, order, duplicates, Transfer-Encoding) and the chunked body.
 */
test('responseHead keeps header case/order/duplicates; chunked body is de-chunked; TE header renamed', async () => {
  const head = 'HTTP/1.1 200 Fine Thanks\r\nX-Foo: a\r\nSet-Cookie: one=1\r\nset-cookie: two=2\r\nContent-Type: text/html; Charset="ISO-8859-1"\r\nTransfer-Encoding: chunked\r\n\r\n';
  const server = net.createServer((s) => {
    s.once('data', () => s.end(head + '5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  const f = new Fetcher({ userAgent: UA, allowedNetworks: LOOPBACK_NETWORKS });
  try {
    const r = await f.fetch({ url: `http://corner.test:${port}/x`, ip: '127.0.0.1' });
    assert.equal(r.outcome, O.OK);
    assert.equal(r.statusText, 'Fine Thanks');
    assert.equal(Buffer.from(r.body).toString(), 'hello world');
    assert.equal(r.charset, 'iso-8859-1');
    assert.equal(Buffer.from(r.responseHead!).toString('latin1'), head.replace('Transfer-Encoding', 'X-Crawler-Transfer-Encoding'));
    assert.deepEqual(r.rawHeaders!.filter((_, i) => i % 2 === 0), ['X-Foo', 'Set-Cookie', 'set-cookie', 'Content-Type', 'Transfer-Encoding']);
  } finally {
    await f.close();
    await new Promise((r) => server.close(r));
  }
});

test('protocol corners: oversized head, short body, bad status line, corrupt gzip, 3xx without Location', async () => {
  // Raw bytes simweb never sends; one loopback node:net server answers by request path.
  const replies: Record<string, string> = {
    '/bighead': 'HTTP/1.1 200 OK\r\n' + 'X-Pad: ' + 'x'.repeat(40 * 1024) + '\r\nContent-Length: 0\r\n\r\n',
    '/short': 'HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100\r\n\r\nonly ten b',
    '/badstatus': 'HTTP/1.1 2x0 What\r\nContent-Length: 0\r\n\r\n',
    '/badgzip': 'HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\nContent-Length: 12\r\n\r\nnot gzipped!',
    '/noloc': 'HTTP/1.1 302 Found\r\nContent-Length: 0\r\n\r\n',
    '/relloc': 'HTTP/1.1 307 Temporary Redirect\r\nLocation: ../b?c=1#f\r\nContent-Length: 0\r\n\r\n',
  };
  const server = net.createServer((s) => {
    s.on('error', () => undefined);
    s.once('data', (d) => {
      const path = d.toString('latin1').split(' ')[1]!;
      s.end(replies[path] ?? 'HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  const f = new Fetcher({ userAgent: UA, allowedNetworks: LOOPBACK_NETWORKS });
  try {
    const get = (p: string) => f.fetch({ url: `http://corner.test:${port}${p}`, ip: '127.0.0.1' });
    assert.equal((await get('/bighead')).outcome, O.TOO_LARGE);
    const short = await get('/short');
    assert.equal(short.outcome, O.RESET, 'server closed before Content-Length bytes arrived (undici: UND_ERR_SOCKET)');
    assert.equal(Buffer.from(short.body).toString(), 'only ten b');
    assert.equal(short.truncated, true);
    assert.equal((await get('/badstatus')).outcome, O.BAD_RESPONSE);
    const bg = await get('/badgzip');
    assert.equal(bg.outcome, O.DECODE);
    assert.equal(Buffer.from(bg.body).toString(), 'not gzipped!');
    assert.equal(bg.decoded.length, 0);
    assert.equal((await get('/noloc')).outcome, O.HTTP_3XX);
    assert.equal((await get('/unknown')).outcome, O.HTTP_4XX);
    const loc = await get('/relloc');
    assert.equal(loc.outcome, O.REDIRECT);
    assert.equal(loc.location, `http://corner.test:${port}/b?c=1#f`);
  } finally {
    await f.close();
    await new Promise((r) => server.close(r));
  }
});

test('decodeContent: gzip/deflate(raw and zlib)/br, truncated input, corrupt input, bomb cap', async () => {
  const text = Buffer.from('<!DOCTYPE html><p>' + 'hello '.repeat(5000));
  for (const [enc, data] of [['gzip', zlib.gzipSync(text)], ['deflate', zlib.deflateSync(text)], ['deflate', zlib.deflateRawSync(text)],
    ['br', zlib.brotliCompressSync(text)]] as const) {
    const d = await decodeContent(data, [enc], 1 << 20);
    assert.ok(d.ok && Buffer.from(d.decoded).equals(text), enc);
  }
  const twice = await decodeContent(zlib.gzipSync(zlib.gzipSync(text)), ['gzip', 'gzip'], 1 << 20);
  assert.ok(twice.ok && Buffer.from(twice.decoded).equals(text));
  const big = zlib.gzipSync(Buffer.alloc(4 << 20, 0x61));
  const part = await decodeContent(big.subarray(0, big.length >> 1), ['gzip'], 16 << 20, true);
  assert.ok(part.ok && part.decoded.length > 0 && part.decoded.length < 4 << 20, 'truncated gzip decodes as far as it goes');
  const bomb = await decodeContent(big, ['gzip'], 1 << 20);
  assert.deepEqual(bomb.ok ? 'ok' : bomb.reason, 'bomb');
  const bigAsync = Buffer.concat([zlib.gzipSync(Buffer.alloc(1 << 20, 1)), Buffer.alloc(0)]);
  assert.ok(bigAsync.length < 256 * 1024);
  const corrupt = await decodeContent(Buffer.from('this is not gzip at all'), ['gzip'], 1 << 20);
  assert.deepEqual(corrupt.ok ? 'ok' : corrupt.reason, 'decode');
  const unknown = await decodeContent(Buffer.from('x'), ['compress'], 1 << 20);
  assert.deepEqual(unknown.ok ? 'ok' : unknown.reason, 'decode');
  // Large compressed input goes to the thread pool; same cap.
  const noise = Buffer.alloc(600 * 1024);
  for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 24;
  const gzNoise = zlib.gzipSync(noise, { level: 0 });
  assert.ok(gzNoise.length > 256 * 1024);
  const okAsync = await decodeContent(gzNoise, ['gzip'], 1 << 20);
  assert.ok(okAsync.ok && Buffer.from(okAsync.decoded).equals(noise));
  const capAsync = await decodeContent(gzNoise, ['gzip'], 100 * 1024);
  assert.deepEqual(capAsync.ok ? 'ok' : capAsync.reason, 'bomb');
});

test('header helpers: Retry-After, Content-Type, networks', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  assert.equal(parseRetryAfter('120', now), 120_000);
  assert.equal(parseRetryAfter('Thu, 01 Jan 2026 00:01:00 GMT', now), 60_000);
  assert.equal(parseRetryAfter('Wed, 31 Dec 2025 00:00:00 GMT', now), 0);
  assert.equal(parseRetryAfter('99999999', now), MAX_RETRY_AFTER_MS);
  assert.equal(parseRetryAfter('soon', now), undefined);
  assert.deepEqual(parseContentType('Text/HTML ; charset = "UTF-8"'), { type: 'text/html', charset: 'utf-8' });
  assert.deepEqual(parseContentType('application/pdf'), { type: 'application/pdf', charset: undefined });
  const ok = networkPredicate(['127.0.0.0/8', '::1/128', '10.1.2.3']);
  assert.equal(ok('127.200.0.1'), true);
  assert.equal(ok('::1'), true);
  assert.equal(ok('10.1.2.3'), true);
  assert.equal(ok('10.1.2.4'), false);
  assert.equal(ok('not-an-ip'), false);
  assert.throws(() => networkPredicate(['10.0.0.0/33']));
});
