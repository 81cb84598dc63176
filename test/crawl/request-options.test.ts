/**
 * --header and --tls-insecure reach the wire. Real parts over loopback: simweb's tiny web (its
 * request log keeps the header lines it does not act on) for the headers, and a small HTTPS server
 * with a self-signed certificate made by openssl for the TLS option (simweb speaks plain HTTP).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import https from 'node:https';
import path from 'node:path';
import { readFile, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { parseCrawlArgs, resolveCrawlConfig, configFromFileObject } from '../../src/config/config.js';
import { Crawler } from '../../src/crawl/pipeline.js';
import { parseCrawlLogLine } from '../../src/store/index.js';
import { startSimweb } from '../../src/simweb/index.js';
import { tempDir, UA, SIMWEB_NETWORKS } from '../e2e/harness.js';

const dirs: string[] = [];
after(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

test('--header and headers: flags, config file forms, one normal form', () => {
  const { input } = parseCrawlArgs(['--header', 'X-Crawl-Test:  alpha ', '--header', 'From: ops@example.test', '--tls-insecure', '--crawl-log-format', 'heritrix']);
  const cfg = resolveCrawlConfig({ ...input, seeds: ['http://a.test/'] });
  assert.deepEqual(cfg.headers, ['X-Crawl-Test: alpha', 'From: ops@example.test']);
  assert.equal(cfg.tlsInsecure, true);
  assert.equal(cfg.crawlLogFormat, 'heritrix');
  const fromObject = resolveCrawlConfig({ ...configFromFileObject({ headers: { 'X-Crawl-Test': 'alpha' }, tlsInsecure: true }), seeds: ['http://a.test/'] });
  assert.deepEqual(fromObject.headers, ['X-Crawl-Test: alpha']);
  const fromFlagName = resolveCrawlConfig({ ...configFromFileObject({ header: ['X-Crawl-Test: alpha'] }), seeds: ['http://a.test/'] });
  assert.deepEqual(fromFlagName.headers, ['X-Crawl-Test: alpha']);
  const dflt = resolveCrawlConfig({ seeds: ['http://a.test/'] });
  assert.deepEqual([dflt.headers, dflt.tlsInsecure, dflt.crawlLogFormat], [[], false, 'drumcrawl']);
  for (const bad of ['NoColon', ': empty name', 'Bad Name: x', 'Content-Length: 5', 'user-agent: x', 'X-A: a\u0000b']) {
    assert.throws(() => resolveCrawlConfig({ seeds: ['http://a.test/'], headers: [bad] }), (e: Error & { code?: string }) => e.code === 'CRAWL_CONFIG_INVALID' && /^headers /.test(e.message), bad);
  }
});

test('--header: every request simweb answers carries the headers, robots.txt included', { timeout: 900_000 }, async () => {
  const web = await startSimweb({ preset: 'tiny' });
  const dir = await tempDir('req-headers');
  dirs.push(dir);
  try {
    const crawler = await Crawler.open(resolveCrawlConfig({
      seeds: web.seeds, stateDir: path.join(dir, 'state'), outDir: path.join(dir, 'out'), dnsServers: [web.dnsServer], allowNetworks: SIMWEB_NETWORKS,
      userAgent: UA, progress: 'none', workers: 1, ramBytes: 256 * 2 ** 20, hostDelayMs: 10, minHostDelayMs: 10, ipDelayMs: 0, minIpDelayMs: 0,
      maxPages: 25, headers: ['X-Crawl-Test: alpha', 'From: ops@example.test'],
    }));
    await crawler.run();
    const entries = web.log.entries();
    assert.ok(entries.length >= 10, `requests served: ${entries.length}`);
    assert.ok(entries.some((e) => e.path === '/robots.txt'), 'robots.txt was asked for');
    for (const e of entries) {
      assert.equal(e.extraHeaders, 'X-Crawl-Test: alpha\nFrom: ops@example.test', `${e.host}${e.path}`);
    }
  } finally {
    await web.close();
  }
});

/** A self-signed certificate for 127.0.0.1 (openssl, P-256: fast to make). */
function selfSigned(dir: string): { key: Buffer; cert: Buffer } {
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert,
    '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  return { key: readFileSync(key), cert: readFileSync(cert) };
}

test('--tls-insecure: a self-signed HTTPS server is refused without it (robots.txt unreachable, seed dropped) and crawled with it', { timeout: 900_000 }, async () => {
  const dir = await tempDir('tls');
  dirs.push(dir);
  const seen: string[] = [];
  const server = https.createServer(selfSigned(dir), (req, res) => {
    seen.push(req.url ?? '');
    if (req.url === '/robots.txt') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('none');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body><p>secure</p></body></html>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const seed = `https://127.0.0.1:${port}/`;
  const crawl = async (name: string, tlsInsecure: boolean): Promise<string[]> => {
    const out = path.join(dir, name, 'out');
    const crawler = await Crawler.open(resolveCrawlConfig({
      seeds: [seed], stateDir: path.join(dir, name, 'state'), outDir: out, allowNetworks: ['127.0.0.1/32'], userAgent: UA, progress: 'none',
      workers: 1, ramBytes: 256 * 2 ** 20, hostDelayMs: 10, minHostDelayMs: 10, ipDelayMs: 0, minIpDelayMs: 0, tlsInsecure,
      fetchTimeoutMs: 5000, retryDelayScale: 0.001,
    }));
    await crawler.run();
    return (await readFile(path.join(out, 'crawl.log'), 'utf8')).split('\n').filter((l) => l !== '');
  };
  try {
    const strict = (await crawl('strict', false)).map(parseCrawlLogLine);
    // robots.txt cannot be fetched over a certificate that does not verify: the host is treated
    // as unreachable (RFC 9309 §2.3.1.4: complete disallow) and the seed is dropped.
    const robots = strict.find((e) => e.url === `${seed}robots.txt`);
    assert.ok(robots !== undefined, `a robots.txt line: ${JSON.stringify(strict)}`);
    assert.equal(robots.outcome, 'CRAWL_ROBOTS_UNREACHABLE');
    assert.equal(strict.find((e) => e.url === seed)?.outcome, 'dropped:robots');
    assert.deepEqual(seen, [], 'no request reached the server over a certificate that does not verify');

    const insecure = (await crawl('insecure', true)).map(parseCrawlLogLine);
    const ok = insecure.find((e) => e.url === seed);
    assert.ok(ok !== undefined);
    assert.equal(ok.status, 200);
    assert.equal(ok.outcome, 'ok');
    assert.deepEqual(seen, ['/robots.txt', '/']);
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
});
