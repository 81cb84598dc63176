/**
 * HTTP edge cases against a raw-socket server (bytes exactly as written here):
 *   - interim 1xx responses before the final one, `100 Continue` included (RFC 9110 §15.2), on a
 *     fresh and on a kept-alive connection, whole or split across TCP segments;
 *   - bytes that are not the Content-Encoding they are labelled with (br, gzip, deflate, zstd)
 *     end as CRAWL_FETCH_DECODE, never 'ok';
 *   - a redirect whose Location is empty or leads back to the URL itself is CRAWL_FETCH_HTTP_3XX.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import zlib from 'node:zlib';
import fc from 'fast-check';
import { Fetcher, FETCH_OUTCOMES as O, LOOPBACK_NETWORKS } from '../../src/fetch/index.js';

const UA = 'drumcrawl-test/0.1 (+https://example.test/bot)';

/** Path → the raw bytes (or segments, written 20 ms apart) the server answers with. */
const routes = new Map<string, Buffer | Buffer[]>();
let server: net.Server;
let port = 0;

before(async () => {
  server = net.createServer((s) => {
    let buf = '';
    s.on('error', () => undefined);
    s.on('data', (d) => {
      buf += d.toString('latin1');
      let end: number;
      while ((end = buf.indexOf('\r\n\r\n')) >= 0) {
        const head = buf.slice(0, end);
        buf = buf.slice(end + 4);
        const target = head.split(' ')[1]!;
        const res = routes.get(target) ?? Buffer.from('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n');
        if (Buffer.isBuffer(res)) s.write(res);
        else res.forEach((seg, i) => setTimeout(() => { if (!s.destroyed) s.write(seg); }, 20 * i));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as net.AddressInfo).port;
});
after(() => new Promise<void>((r) => server.close(() => r())));

const fetcher = (): Fetcher => new Fetcher({ userAgent: UA, allowedNetworks: LOOPBACK_NETWORKS, headersTimeoutMs: 2000, totalTimeoutMs: 5000 });
const ok200 = (body: string, extra = ''): string => `HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n${extra}Content-Length: ${body.length}\r\n\r\n${body}`;

test('1xx before the final response: 100 Continue, 102, 103 (one or several, split or whole) are passed over', async () => {
  routes.set('/c100', Buffer.from('HTTP/1.1 100 Continue\r\n\r\n' + ok200('hello')));
  routes.set('/multi', Buffer.from('HTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 100 Continue\r\nX-A: 1\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n' + ok200('multi')));
  // The status line split inside "100", and the head's CR LF CR LF split too.
  routes.set('/split', ['HTTP/1.1 10', '0 Continue\r\n\r', '\n' + ok200('split', 'X-B: 2\r\n')].map((x) => Buffer.from(x)));
  routes.set('/plain', Buffer.from(ok200('plain')));
  routes.set('/final-100-body', Buffer.from(ok200('HTTP/1.1 100 Continue\r\n\r\n')));
  const f = fetcher();
  try {
    const base = `http://edge.test:${port}`;
    // One keep-alive connection: each request's interim heads are handled, not just the first one's.
    for (const [p, body] of [['/plain', 'plain'], ['/c100', 'hello'], ['/multi', 'multi'], ['/split', 'split'], ['/c100', 'hello'], ['/final-100-body', 'HTTP/1.1 100 Continue\r\n\r\n']] as const) {
      const r = await f.fetch({ url: base + p, ip: '127.0.0.1' });
      assert.equal(r.outcome, O.OK, `${p}: ${r.outcome} ${r.errorCode ?? ''}`);
      assert.equal(r.status, 200, p);
      assert.equal(Buffer.from(r.decoded).toString('latin1'), body, p);
      assert.match(Buffer.from(r.responseHead!).toString('latin1'), /^HTTP\/1\.1 200 OK\r\n/, `${p}: the WARC head is the final one`);
      assert.equal(r.rawHeaders!.includes('X-A'), false, `${p}: interim headers are not the response's`);
    }
    assert.equal(f.stats().poolsCreated, 1);
    assert.equal(f.stats().connected, 1, 'the connection stayed alive across the interim responses');
  } finally {
    await f.close();
  }
});

test('bytes that are not their Content-Encoding: CRAWL_FETCH_DECODE (raw body kept, nothing decoded), never ok', async () => {
  const f = fetcher();
  try {
    const base = `http://edge.test:${port}`;
    const text = Buffer.from('<!DOCTYPE html><p>real content</p>'.repeat(20));
    const good: Record<string, Buffer> = { br: zlib.brotliCompressSync(text), gzip: zlib.gzipSync(text), deflate: zlib.deflateSync(text) };
    const reply = (enc: string, body: Buffer): Buffer => Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: ${enc}\r\nContent-Length: ${body.length}\r\n\r\n`), body]);
    for (const [enc, body] of Object.entries(good)) {
      routes.set(`/good-${enc}`, reply(enc, body));
      const r = await f.fetch({ url: `${base}/good-${enc}`, ip: '127.0.0.1' });
      assert.equal(r.outcome, O.OK, `well-formed ${enc}`);
      assert.ok(Buffer.from(r.decoded).equals(text));
      // A well-formed stream followed by bytes that belong to no stream.
      routes.set(`/trail-${enc}`, reply(enc, Buffer.concat([body, Buffer.from('trailing junk')])));
      assert.equal((await f.fetch({ url: `${base}/trail-${enc}`, ip: '127.0.0.1' })).outcome, O.DECODE, `${enc} + trailing bytes`);
    }
    // Random bodies, each encoding: a seeded property (fast-check prints the seed on failure). At
    // least 8 bytes: a byte or two can be a complete stream of empty content (br 0x3f, raw deflate
    // 03 00), which is that encoding, not random bytes.
    let n = 0;
    await fc.assert(fc.asyncProperty(fc.constantFrom('br', 'gzip', 'deflate', 'zstd'), fc.uint8Array({ minLength: 8, maxLength: 3000 }), async (enc, bytes) => {
      const p = `/random-${n++}`;
      routes.set(p, reply(enc, Buffer.from(bytes)));
      const r = await f.fetch({ url: base + p, ip: '127.0.0.1' });
      routes.delete(p);
      return r.outcome === O.DECODE && r.decoded.length === 0 && Buffer.from(r.body).equals(Buffer.from(bytes)) && r.errorCode !== undefined;
    }), { seed: Number(process.env.FC_SEED ?? 0xb07), numRuns: 400 });
  } finally {
    await f.close();
  }
});

test('a redirect with an empty Location, or one back to itself, is CRAWL_FETCH_HTTP_3XX without a location', async () => {
  const f = fetcher();
  try {
    const base = `http://edge.test:${port}`;
    routes.set('/empty', Buffer.from('HTTP/1.1 302 Found\r\nLocation: \r\nContent-Length: 0\r\n\r\n'));
    routes.set('/blank', Buffer.from('HTTP/1.1 301 Moved\r\nLocation:    \r\nContent-Length: 0\r\n\r\n'));
    routes.set('/self', Buffer.from('HTTP/1.1 307 Temporary Redirect\r\nLocation: /self#frag\r\nContent-Length: 0\r\n\r\n'));
    routes.set('/elsewhere', Buffer.from('HTTP/1.1 302 Found\r\nLocation: /target\r\nContent-Length: 0\r\n\r\n'));
    for (const p of ['/empty', '/blank', '/self']) {
      const r = await f.fetch({ url: base + p, ip: '127.0.0.1' });
      assert.equal(r.outcome, O.HTTP_3XX, p);
      assert.equal(r.location, undefined, p);
    }
    const r = await f.fetch({ url: `${base}/elsewhere`, ip: '127.0.0.1' });
    assert.equal(r.outcome, O.REDIRECT);
    assert.equal(r.location, `${base}/target`);
  } finally {
    await f.close();
  }
});
