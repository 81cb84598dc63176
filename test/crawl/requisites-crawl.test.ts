/**
 * Page requisites in a crawl (--requisites, src/config/requisites.ts), judged from a small HTTP
 * server's request log and crawl.log: a page's scripts, style sheets, images and the URLs its style
 * sheets name (a chain: page → sheet → @import → url()) are fetched although --max-depth 0 follows no
 * link and the page says nofollow; each has the hop letter E per requisite hop; the summary counts
 * them apart; with --requisites=false none is fetched. With page workers off and on.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { Crawler } from '../../src/crawl/pipeline.js';
import { resolveCrawlConfig } from '../../src/config/config.js';
import { parseCrawlLogLine } from '../../src/store/index.js';
import { UA, tempDir } from '../e2e/harness.js';

const FILES: Record<string, [string, string]> = {
  '/index.html': ['text/html', '<!DOCTYPE html><html><head><meta name=robots content=nofollow><link rel=stylesheet href=s.css>' +
    '<script src=a.js></script></head><body style="background:url(body.png)"><img src=i.png srcset="i2.png 2x"><a href=p2.html>p2</a>' +
    '<object data=o.svg></object></body></html>'],
  '/p2.html': ['text/html', '<html><body>p2</body></html>'],
  '/s.css': ['text/css', '@import "t.css"; h1 { background: url(bg.png) }'],
  '/t.css': ['text/css', 'p { background: url("deep.png") }'],
  '/a.js': ['application/javascript', 'var x = 1;'],
  '/i.png': ['image/png', 'png1'], '/i2.png': ['image/png', 'png2'], '/bg.png': ['image/png', 'png3'], '/deep.png': ['image/png', 'png4'],
  '/body.png': ['image/png', 'png5'], '/o.svg': ['image/svg+xml', '<svg xmlns="http://www.w3.org/2000/svg"/>'],
};

async function crawl(requisites: boolean, pageWorkers: 'on' | 'off'): Promise<{ requests: string[]; paths: Map<string, string | null>; requisiteCount: number; pages: number }> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req.url!);
    const f = FILES[req.url!];
    if (f === undefined) { res.writeHead(404); res.end(); return; }
    res.writeHead(200, { 'content-type': f[0] });
    res.end(f[1]);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const dir = await tempDir('requisites-crawl');
    const crawler = await Crawler.open(resolveCrawlConfig({
      seeds: [`${origin}/index.html`], maxDepth: 0, requisites, pageWorkers,
      stateDir: path.join(dir, 'state'), outDir: path.join(dir, 'out'), allowNetworks: ['127.0.0.0/8'], userAgent: UA,
      progress: 'none', workers: 1, ramBytes: 256 * 2 ** 20, hostDelayMs: 0, minHostDelayMs: 0, ipDelayMs: 0, minIpDelayMs: 0,
    }));
    const summary = await crawler.run();
    const log = readFileSync(path.join(dir, 'out', 'crawl.log'), 'utf8').split('\n').filter((l) => l !== '').map(parseCrawlLogLine);
    const paths = new Map(log.filter((e) => e.status !== null && e.hops !== null).map((e) => [e.url.slice(origin.length), e.path ?? null] as const));
    return { requests: requests.filter((u) => u !== '/robots.txt').sort(), paths, requisiteCount: summary.requisites, pages: summary.pages };
  } finally {
    server.close();
  }
}

test('page requisites: fetched past --max-depth and nofollow, along a chain of style sheets, each hop an E, counted apart; none with --requisites=false', { timeout: 600_000 }, async () => {
  for (const pw of ['off', 'on'] as const) await judge(pw);
});

async function judge(pw: 'on' | 'off'): Promise<void> {
  const on = await crawl(true, pw);
  const want = ['/a.js', '/bg.png', '/body.png', '/deep.png', '/i.png', '/i2.png', '/index.html', '/o.svg', '/s.css', '/t.css'];
  assert.deepEqual(on.requests, want, `page workers ${pw}: the page and every requisite, once each; no link (p2.html: max-depth 0, nofollow)`);
  assert.equal(on.pages, want.length);
  assert.equal(on.requisiteCount, want.length - 1);
  assert.equal(on.paths.get('/index.html'), null, 'the seed');
  for (const u of ['/s.css', '/a.js', '/i.png', '/i2.png', '/body.png', '/o.svg']) assert.equal(on.paths.get(u), 'E', u);
  assert.equal(on.paths.get('/t.css'), 'EE');
  assert.equal(on.paths.get('/bg.png'), 'EE');
  assert.equal(on.paths.get('/deep.png'), 'EEE');

  const off = await crawl(false, pw);
  assert.deepEqual(off.requests, ['/index.html'], `page workers ${pw}`);
  assert.equal(off.requisiteCount, 0);
}
