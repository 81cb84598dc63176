/**
 * The seeds' robots.txt fetched while the crawler opens (src/crawl/ports/early-robots.ts): the
 * first requests need no worker thread, and what the crawl does with them is what it does with its
 * own robots.txt fetches. Small HTTP and DNS servers on loopback record every request; the crawler is
 * opened only once the early robots.txt requests have reached them (so no thread of the crawler's
 * existed when they went out), and the crawl is judged from the servers' logs, the 'dispatch'
 * events (the actual send times the floors count from), crawl.log and the WARC:
 *  - each origin's robots.txt is requested exactly once, before any page of it;
 *  - at most one early request per IP (two hosts on one IP: the second is the frontier's);
 *  - every request to a host starts ≥ the host floor after the previous one (robots.txt included),
 *    and every request to an IP ≥ the IP floor after the previous one;
 *  - each robots.txt answer is archived (a WARC response record) and logged in crawl.log;
 *  - the crawl goes on as usual (its pages fetched, links followed).
 * No timing is asserted beyond the floors themselves (send stamps, not the servers' clocks).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { resolveCrawlConfig } from '../../src/config/config.js';
import { Crawler } from '../../src/crawl/pipeline.js';
import { startEarly } from '../../src/crawl/ports/early-robots.js';
import { parseCrawlLogLine } from '../../src/store/index.js';
import { extraAnswer } from '../../src/simweb/dns-server.js';
import { clock } from '../../src/threads/page/page-worker-floors.js';
import { tempDir, UA } from '../e2e/harness.js';
import { readWarcDir, warcProblems } from '../e2e/warc-read.js';

const dirs: string[] = [];
after(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

interface Hit { origin: string; path: string; at: number }

/**
 * A web server on `ip` serving every host name it is asked for: a chain of 6 pages (the last link a
 * 404) plus a robots.txt; every request recorded in `hits` with its origin (from the Host header).
 */
async function server(ip: string, hits: Hit[]): Promise<{ port: number; close: () => Promise<void> }> {
  const srv = http.createServer((req, res) => {
    hits.push({ origin: `http://${req.headers.host ?? ''}`, path: req.url ?? '', at: Date.now() });
    if (req.url === '/robots.txt') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('User-agent: *\nDisallow: /private/\n');
      return;
    }
    const m = /^\/(?:p(\d+)\.html)?$/.exec(req.url ?? '');
    const n = m === null ? -1 : Number(m[1] ?? 0);
    if (n < 0 || n >= 6) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('no');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<html><body><a href="/p${n + 1}.html">next</a> <a href="/private/x.html">x</a></body></html>`);
  });
  await new Promise<void>((r) => srv.listen(0, ip, r));
  return { port: (srv.address() as AddressInfo).port, close: () => new Promise<void>((r) => srv.close(() => r())) };
}

/** A DNS server on loopback answering A queries for `names` (simweb's extra records). */
async function dnsServer(names: Map<string, string>): Promise<{ server: string; close: () => Promise<void> }> {
  const sock = dgram.createSocket('udp4');
  sock.on('message', (msg, from) => {
    const reply = extraAnswer(names, msg);
    if (reply !== null) sock.send(reply, from.port, from.address);
  });
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
  return { server: `127.0.0.1:${sock.address().port}`, close: () => new Promise<void>((r) => sock.close(() => r())) };
}

/** Resolves once `ok()` holds; fails after `tries` polls (a generous bound, not a timing assertion). */
async function until(ok: () => boolean, what: string, tries = 3000): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (ok()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail(`never happened: ${what}`);
}

async function crawlEarly(o: { hosts: Record<string, string>; pageWorkers: 'on' | 'off'; name: string }): Promise<void> {
  const hits: Hit[] = [];
  const ips = new Set(Object.values(o.hosts));
  const servers = new Map<string, Awaited<ReturnType<typeof server>>>();
  for (const ip of ips) servers.set(ip, await server(ip, hits));
  const dns = await dnsServer(new Map(Object.entries(o.hosts)));
  const origins = Object.entries(o.hosts).map(([host, ip]) => `http://${host}:${servers.get(ip)!.port}`);
  const dir = await tempDir(o.name);
  dirs.push(dir);
  try {
    const hostFloor = 120;
    const ipFloor = 60;
    const cfg = resolveCrawlConfig({
      seeds: origins.map((x) => `${x}/`), stateDir: path.join(dir, 'state'), outDir: path.join(dir, 'out'), allowNetworks: ['127.0.0.0/8'],
      dnsServers: [dns.server], userAgent: UA, progress: 'none', workers: 1, ramBytes: 256 * 2 ** 20, hostDelayMs: hostFloor, minHostDelayMs: hostFloor,
      ipDelayMs: ipFloor, minIpDelayMs: ipFloor, pageWorkers: o.pageWorkers,
    });
    const early = startEarly(cfg);
    // One early robots.txt request per IP, on the wire before the crawler (and any of its threads) exists.
    await early.sending(600_000); // (every early request sent, or left to the frontier)
    assert.equal(early.sent, ips.size, 'sent by the time sending() resolves');
    await until(() => hits.filter((h) => h.path === '/robots.txt').length >= ips.size, 'the early robots.txt requests');
    const openAt = clock();
    const crawler = await Crawler.open(cfg, { early });
    const sends: { at: number; url: string; ip: string; robots: boolean }[] = [];
    crawler.on('dispatch', (d: { at: number; url: string; ip: string; robots: boolean }) => sends.push(d));
    const summary = await crawler.run();

    for (const origin of origins) {
      const mine = hits.filter((h) => h.origin === origin);
      assert.equal(mine.filter((h) => h.path === '/robots.txt').length, 1, `${origin}: robots.txt requested once`);
      assert.equal(mine[0]!.path, '/robots.txt', `${origin}: robots.txt before any page`);
      assert.equal(mine.filter((h) => h.path.startsWith('/private/')).length, 0, `${origin}: its robots.txt obeyed`);
      // (the pages, and the chain's last link: a 404)
      assert.equal(mine.filter((h) => /^\/(p\d+\.html)?$/.test(h.path)).length, 7, `${origin}: every page fetched (links followed)`);
    }
    assert.equal(summary.pages - summary.requisites, 7 * origins.length);

    // The floors, from the actual send stamps (robots.txt requests count on their host and IP).
    assert.equal(sends.length, hits.length, 'every request reported once, the early ones too');
    const before = sends.filter((x) => x.at < openAt);
    assert.equal(before.length, ips.size, 'one request per IP before the crawler opened');
    assert.ok(before.every((x) => x.robots && x.url.endsWith('/robots.txt')), 'and only robots.txt');
    assert.equal(early.sent, ips.size, 'one early request per IP in all');
    for (const origin of origins) {
      const at = sends.filter((x) => x.url.startsWith(`${origin}/`)).map((x) => x.at).sort((a, b) => a - b);
      for (let i = 1; i < at.length; i++) assert.ok(at[i]! - at[i - 1]! >= hostFloor, `${origin}: ${at[i]! - at[i - 1]!} ms between requests`);
    }
    for (const ip of ips) {
      const at = sends.filter((x) => x.ip === ip).map((x) => x.at).sort((a, b) => a - b);
      for (let i = 1; i < at.length; i++) assert.ok(at[i]! - at[i - 1]! >= ipFloor, `${ip}: ${at[i]! - at[i - 1]!} ms between requests`);
    }

    // Archived and logged like any robots.txt fetch.
    const recs = await readWarcDir(summary.warcDir);
    assert.deepEqual(warcProblems(recs), []);
    for (const origin of origins) {
      assert.equal(recs.filter((r) => r.type === 'response' && r.uri === `${origin}/robots.txt`).length, 1, `${origin}: its robots.txt archived once`);
    }
    const log = readFileSync(path.join(summary.warcDir, 'crawl.log'), 'utf8').split('\n').filter((l) => l !== '').map(parseCrawlLogLine);
    for (const origin of origins) {
      assert.equal(log.filter((e) => e.url === `${origin}/robots.txt` && e.status === 200).length, 1, `${origin}: its robots.txt in crawl.log`);
    }
  } finally {
    for (const s of servers.values()) await s.close();
    await dns.close();
  }
}

test('early robots.txt: sent before the crawler opens, taken over once, archived, polite (page workers)', { timeout: 600_000 }, async () => {
  await crawlEarly({ hosts: { 'a.test': '127.0.0.6', 'b.test': '127.0.0.7' }, pageWorkers: 'on', name: 'early-robots-pw' });
});

test('early robots.txt: two hosts on one IP — one early request, the other the frontier\'s (parse pool)', { timeout: 600_000 }, async () => {
  await crawlEarly({ hosts: { 'c.test': '127.0.0.8', 'd.test': '127.0.0.8' }, pageWorkers: 'off', name: 'early-robots-ip' });
});
