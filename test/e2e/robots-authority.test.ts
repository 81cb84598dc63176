/**
 * robots.txt per authority (RFC 9309 §2.3: the rules apply only to the host, protocol and port
 * they were fetched from; src/util/authority.ts): two small HTTP servers on 127.0.0.1, on two ports
 * — one host, two services — each with its own robots.txt, crawled in one run. Judged from each
 * server's own request log: each port's robots.txt is requested exactly once, none of its
 * disallowed paths is requested, and every page it allows is fetched. Each page links to every
 * path on both ports, so a crawler that applied one port's rules to the other would fetch a path
 * the other disallows or drop one it allows.
 *
 * A second test: one port's robots.txt unreachable (503, complete disallow), the other's missing
 * (404, allow all). The resume of a state written by the host-keyed robots DRUMs (no `robots-key`
 * file) is tested in test/crawl/robots-stage.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { Crawler } from '../../src/crawl/pipeline.js';
import { resolveCrawlConfig } from '../../src/config/config.js';
import { UA, tempDir } from './harness.js';

const PATHS = ['/', '/x/1.html', '/x/2.html', '/y/1.html', '/y/2.html', '/z/1.html', '/z/y/1.html'];

interface Site {
  requests: string[];
  origin: string;
  close(): void;
}

/**
 * A server whose robots.txt is `robots` (a number: that status, no body), and whose every page
 * links to every path of `origins()`.
 */
async function site(robots: string | number, origins: () => string[]): Promise<Site> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req.url!);
    if (req.url === '/robots.txt') {
      if (typeof robots === 'number') {
        res.writeHead(robots);
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(robots);
      return;
    }
    if (!PATHS.includes(req.url!)) {
      res.writeHead(404);
      res.end();
      return;
    }
    const links = origins().flatMap((o) => PATHS.map((p) => `<a href="${o}${p}">${p}</a>`)).join(' ');
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<!DOCTYPE html><html><body>${links}</body></html>`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { requests, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

async function crawl(name: string, seeds: string[]): Promise<void> {
  const dir = await tempDir(name);
  const crawler = await Crawler.open(resolveCrawlConfig({
    seeds, stateDir: path.join(dir, 'state'), outDir: path.join(dir, 'out'), allowNetworks: ['127.0.0.0/8'], userAgent: UA,
    progress: 'none', workers: 2, ramBytes: 256 * 2 ** 20, hostDelayMs: 0, minHostDelayMs: 0, ipDelayMs: 0, minIpDelayMs: 0,
  }));
  await crawler.run();
}

test('robots.txt per authority: two ports of one host, each judged by its own robots.txt, each asked once', { timeout: 180_000 }, async () => {
  const all: string[] = [];
  // Port A disallows /x/ (and allows /z/y/ past a broader Disallow), port B disallows /y/ and /z/.
  const a = await site('User-agent: *\nDisallow: /x/\n', () => all);
  const b = await site('User-agent: *\nDisallow: /y/\nDisallow: /z/\nAllow: /z/y/\n', () => all);
  all.push(a.origin, b.origin);
  try {
    await crawl('robots-authority', [`${a.origin}/`, `${b.origin}/`]);
    const expect = {
      a: { log: a.requests, disallowed: ['/x/1.html', '/x/2.html'] },
      b: { log: b.requests, disallowed: ['/y/1.html', '/y/2.html', '/z/1.html'] },
    };
    for (const [name, { log, disallowed }] of Object.entries(expect)) {
      const seen = JSON.stringify(log);
      assert.equal(log.filter((u) => u === '/robots.txt').length, 1, `port ${name}: robots.txt requested once (${seen})`);
      assert.equal(log[0], '/robots.txt', `port ${name}: robots.txt before any page (${seen})`);
      for (const p of disallowed) assert.ok(!log.includes(p), `port ${name}: disallowed ${p} never requested (${seen})`);
      const allowed = PATHS.filter((p) => !disallowed.includes(p));
      assert.deepEqual(log.filter((u) => u !== '/robots.txt').sort(), [...allowed].sort(), `port ${name}: every allowed page fetched, once (${seen})`);
    }
  } finally {
    a.close();
    b.close();
  }
});

test('robots.txt per authority: one port\'s robots.txt unreachable (503) disallows that port only; the other port, its robots.txt missing (404), is crawled whole', { timeout: 180_000 }, async () => {
  const all: string[] = [];
  const down = await site(503, () => all);
  const open = await site(404, () => all);
  all.push(down.origin, open.origin);
  try {
    // Seeded in both orders across the two ports' pages: whichever answer comes first, it is not the other's.
    await crawl('robots-authority-5xx', [`${down.origin}/`, `${open.origin}/`, `${down.origin}/z/1.html`]);
    assert.deepEqual(down.requests, ['/robots.txt'], `RFC 9309 §2.3.1.4: complete disallow on the unreachable port (${JSON.stringify(down.requests)})`);
    assert.equal(open.requests.filter((u) => u === '/robots.txt').length, 1);
    assert.deepEqual(open.requests.filter((u) => u !== '/robots.txt').sort(), [...PATHS].sort(), `§2.3.1.3: the port whose robots.txt is 404 is crawled whole (${JSON.stringify(open.requests)})`);
  } finally {
    down.close();
    open.close();
  }
});
