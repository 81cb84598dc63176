/**
 * The network guard in a real crawl, over real sockets: a page on an allowed simulated host links to
 * a loopback address outside the allowed range in every spelling a page can use (IP literal, hex,
 * decimal, octal, `127.1`, an internal DNS name, `localhost`, IPv6 loopback and IPv4-mapped forms,
 * a 302 and a scheme-relative redirect) and to the crawler's own status port. A trap server listens
 * on those addresses; it must see no connection at all, simweb's request log only the allowed
 * paths, and crawl.log must record each refused URL with CRAWL_FETCH_BLOCKED_ADDRESS (no WARC record).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { WebGraph, ipString } from '../../src/simweb/model/graph.js';
import { RequestLog } from '../../src/simweb/request-log.js';
import { resolveParams } from '../../src/simweb/model/params.js';
import { SimHttpServer } from '../../src/simweb/http-server.js';
import { SimDnsServer } from '../../src/simweb/dns-server.js';
import { resolveCrawlConfig } from '../../src/config/config.js';
import { Crawler } from '../../src/crawl/pipeline.js';
import { parseCrawlLogLine } from '../../src/store/index.js';
import { readWarcDir } from '../e2e/warc-read.js';
import { tempDir, UA } from '../e2e/harness.js';

/** A TCP listener on every forbidden address at one port; counts connections (it must stay at 0). */
async function trap(): Promise<{ port: number; connections: string[]; close(): Promise<void> }> {
  const connections: string[] = [];
  for (let attempt = 0; attempt < 20; attempt++) {
    const servers: net.Server[] = [];
    const listen = (host: string, port: number): Promise<number> => new Promise((resolve, reject) => {
      const s = net.createServer((c) => { connections.push(`${c.localAddress}:${c.localPort}`); c.destroy(); });
      s.once('error', reject);
      s.listen({ host, port, exclusive: true }, () => { servers.push(s); resolve((s.address() as net.AddressInfo).port); });
    });
    try {
      const port = await listen('127.0.0.99', 0);
      await listen('127.0.0.1', port);
      await listen('::1', port).catch(() => undefined); // a host without IPv6 loopback: the v4 traps still count
      return { port, connections, close: async () => { await Promise.all(servers.map((s) => new Promise((r) => s.close(r)))); } };
    } catch {
      await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    }
  }
  throw new Error('no free trap port');
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => { const p = (s.address() as net.AddressInfo).port; s.close(() => resolve(p)); });
  });
}

test('network guard in a crawl: every inward spelling, redirects and the own status port refused, nothing sent', { timeout: 900_000 }, async () => {
  const t = await trap();
  const params = resolveParams('tiny');
  const log = new RequestLog({ capacity: 10_000 });
  const ips: string[] = [];
  for (let k = 0; k < params.ips; k++) ips.push(ipString(k));
  let web!: WebGraph;
  const http = await SimHttpServer.listen(ips, 0, (port) => { web = new WebGraph(params, 1, port); return { web, log }; });
  const dns = await SimDnsServer.listen(web, 0, '127.0.0.1', new Map([['internal.test', '127.0.0.99']]));
  const dir = await tempDir('guard-crawl');
  try {
    const host = 'www.pld0.test';
    const origin = web.origin(host);
    const q = t.port;
    const statusPort = await freePort();
    const forbidden: Record<string, string> = {
      '/literal': `http://127.0.0.99:${q}/literal`,
      '/hex': `http://0x7f000063:${q}/hex`,
      '/decimal': `http://2130706531:${q}/decimal`,
      '/octal': `http://0177.0.0.99:${q}/octal`,
      '/short': `http://127.1:${q}/short`,
      '/name': `http://internal.test:${q}/name`,
      '/localhost': `http://localhost:${q}/localhost`,
      '/v6-loopback': `http://[::1]:${q}/v6-loopback`,
      '/v6-mapped': `http://[::ffff:127.0.0.99]:${q}/v6-mapped`,
      '/metrics': `http://127.0.0.1:${statusPort}/metrics`,
      '/redirected': '(302 target)',
      '/scheme-relative': '(scheme-relative 302 target)',
    };
    const links = Object.values(forbidden).filter((u) => u.startsWith('http')).concat(['/ok', '/r302', '/rsr']);
    const page = `<!DOCTYPE html><title>guard</title>${links.map((u) => `<a href="${u}">x</a>`).join('\n')}\n`;
    http.setFixedResponse(host, '/robots.txt', { status: 200, contentType: 'text/plain', body: 'User-agent: *\nAllow: /\n' });
    http.setFixedResponse(host, '/guard', { status: 200, body: page });
    http.setFixedResponse(host, '/ok', { status: 200, body: '<!DOCTYPE html><title>ok</title>\n' });
    http.setFixedResponse(host, '/r302', { status: 302, headers: { Location: `http://127.0.0.99:${q}/redirected` } });
    http.setFixedResponse(host, '/rsr', { status: 302, headers: { Location: `//127.0.0.99:${q}/scheme-relative` } });

    const crawler = await Crawler.open(resolveCrawlConfig({
      seeds: [`${origin}/guard`], stateDir: path.join(dir, 'state'), outDir: path.join(dir, 'warc'), dnsServers: [`127.0.0.1:${dns.port}`],
      // Only simweb's own addresses (127.1.0.0/16); 127.0.0.0/16 and ::1 stay forbidden.
      allowNetworks: ['127.1.0.0/16'], statusPort,
      scope: 'any', // the page links to other hosts (and addresses) than the seed's PLD
      userAgent: UA, maxDepth: 1, hostDelayMs: 20, minHostDelayMs: 20, ipDelayMs: 5, minIpDelayMs: 5, progress: 'none',
      workers: 1, ramBytes: 256 * 2 ** 20, fetchTimeoutMs: 3000,
    }));
    const summary = await crawler.run();
    assert.equal(summary.stopReason, 'done');

    assert.deepEqual(t.connections, [], 'no connection ever reached a forbidden address');
    const served = log.entries().map((e) => `${e.host} ${e.path}`).sort();
    assert.deepEqual([...new Set(served)], [`${host} /guard`, `${host} /ok`, `${host} /r302`, `${host} /robots.txt`, `${host} /rsr`],
      'simweb saw only the allowed host and paths');

    const lines = readFileSync(path.join(dir, 'warc', 'crawl.log'), 'utf8').split('\n').filter((l) => l !== '').map(parseCrawlLogLine);
    const byPath = new Map(lines.map((l) => [new URL(l.url).pathname, l]));
    for (const p of Object.keys(forbidden)) {
      const l = byPath.get(p);
      assert.ok(l !== undefined, `crawl.log has a line for ${forbidden[p]} (lines: ${lines.map((x) => x.url).join(' ')})`);
      assert.equal(l.outcome, 'CRAWL_FETCH_BLOCKED_ADDRESS', `${l.url} refused with the guard's code`);
      assert.equal(l.status, null, `${l.url}: no response`);
      assert.equal(l.bytes, 0);
    }
    assert.equal(byPath.get('/ok')?.outcome, 'ok', 'the allowed host was crawled');
    const recs = await readWarcDir(path.join(dir, 'warc'));
    const archived = recs.filter((r) => r.uri !== undefined && r.uri !== null).map((r) => new URL(r.uri!).pathname);
    for (const p of Object.keys(forbidden)) assert.equal(archived.includes(p), false, `${p} never archived`);
  } finally {
    await http.close();
    await dns.close();
    await t.close();
    await rm(dir, { recursive: true, force: true });
  }
});
