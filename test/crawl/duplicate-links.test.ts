/**
 * A page whose content duplicates an earlier capture at another base URL still has its links
 * followed (src/crawl/archive/archive-stage.ts): its relative links resolve to other URLs than the first capture's. A
 * real manual's page reached second, after a sitemap's copy of it elsewhere, lost its links
 * (test/realweb). Here two directories hold the same page, whose relative link leads to a page that
 * differs between them; whichever copy the crawl fetches first, both linked pages are fetched. A copy
 * in the same directory (another query) is archived as a revisit and adds nothing. A small HTTP
 * server on loopback is the web (its own request log judges).
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

const PAGE = '<!DOCTYPE html><html><body><a href="next.html">next</a> <a href="../common.html">common</a></body></html>';
const PAGE_C = '<!DOCTYPE html><html><body><a href="next.html">next in c</a></body></html>';

test('a duplicate of an earlier capture in another directory has its relative links followed; one in the same directory adds nothing', { timeout: 120_000 }, async () => {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req.url!);
    const body = (() => {
      switch (req.url!.replace(/\?.*$/, '')) {
        case '/a/page.html': case '/b/page.html': return PAGE;
        case '/c/page.html': return PAGE_C;
        case '/c/next.html': return '<html><body>next in c</body></html>';
        case '/a/next.html': return '<html><body>next in a</body></html>';
        case '/b/next.html': return '<html><body>next in b</body></html>';
        case '/common.html': return '<html><body>common</body></html>';
        default: return null;
      }
    })();
    if (body === null) { res.writeHead(404); res.end(); return; }
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const dir = await tempDir('dup-links');
    const crawler = await Crawler.open(resolveCrawlConfig({
      seeds: [`${origin}/b/page.html`, `${origin}/a/page.html`, `${origin}/c/page.html`, `${origin}/c/page.html?copy=1`],
      stateDir: path.join(dir, 'state'), outDir: path.join(dir, 'out'), allowNetworks: ['127.0.0.0/8'], userAgent: UA,
      progress: 'none', workers: 1, ramBytes: 256 * 2 ** 20, hostDelayMs: 0, minHostDelayMs: 0, ipDelayMs: 0, minIpDelayMs: 0,
    }));
    const summary = await crawler.run();
    const log = readFileSync(path.join(dir, 'out', 'crawl.log'), 'utf8').split('\n').filter((l) => l !== '').map(parseCrawlLogLine);
    const outcome = (u: string): string[] => log.filter((e) => e.url === u).map((e) => e.outcome);
    assert.deepEqual([...requests].filter((u) => u.endsWith('next.html')).sort(), ['/a/next.html', '/b/next.html', '/c/next.html'], 'both copies\' links followed');
    assert.equal(requests.filter((u) => u === '/common.html').length, 1, 'a link both copies resolve alike: fetched once');
    // Of each pair one copy is the first capture, the other a revisit; only the revisit in another
    // directory (a or b) had its links followed, the one in the same directory (c's) not.
    for (const pair of [[`${origin}/a/page.html`, `${origin}/b/page.html`], [`${origin}/c/page.html`, `${origin}/c/page.html?copy=1`]]) {
      assert.deepEqual(pair.map(outcome).flat().sort(), ['duplicate', 'ok'], JSON.stringify(log.map((e) => [e.url, e.outcome])));
    }
    assert.equal(summary.outcomes['duplicate:links-followed'], 1, 'links followed for the copy in the other directory only');
  } finally {
    server.close();
  }
});
