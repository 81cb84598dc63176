/**
 * The retry policy of docs/errors.md in a real crawl, judged from simweb's request log: resets are
 * retried after backoff(1) = 2 min and backoff(2) = 4 min (scaled), twice and no more; a 429's
 * Retry-After in seconds and a 503's Retry-After as an HTTP-date hold the host that long (longer
 * than the scaled backoff); a response head over the cap costs its host the 1-minute penalty.
 * `retryDelayScale` shrinks the table's minutes so the test runs in seconds; Retry-After is the
 * server's figure and is not scaled.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { WebGraph, ipString } from '../../src/simweb/model/graph.js';
import { RequestLog, type RequestLogEntry } from '../../src/simweb/request-log.js';
import { resolveParams } from '../../src/simweb/model/params.js';
import { SimHttpServer } from '../../src/simweb/http-server.js';
import { SimDnsServer } from '../../src/simweb/dns-server.js';
import { resolveCrawlConfig } from '../../src/config/config.js';
import { Crawler } from '../../src/crawl/pipeline.js';
import { parseCrawlLogLine } from '../../src/store/index.js';
import { OUTCOME_POLICY, FETCH_OUTCOMES as O } from '../../src/fetch/index.js';
import { tempDir, UA } from '../e2e/harness.js';

const SCALE = 1 / 500; // 2 min → 240 ms
const HOST_MS = 20;

test('retry policy over real sockets: backoff table, retry count, Retry-After (seconds and HTTP-date), host penalty', { timeout: 900_000 }, async () => {
  const params = resolveParams('tiny');
  const log = new RequestLog({ capacity: 10_000 });
  const ips: string[] = [];
  for (let k = 0; k < params.ips; k++) ips.push(ipString(k));
  let web!: WebGraph;
  const http = await SimHttpServer.listen(ips, 0, (port) => { web = new WebGraph(params, 1, port); return { web, log }; });
  const names = ['reset.test', 'dead.test', 'busy.test', 'date.test', 'large.test'];
  const dns = await SimDnsServer.listen(web, 0, '127.0.0.1', new Map(names.map((n, i) => [n, ips[i % ips.length]!])));
  const dir = await tempDir('retry-crawl');
  try {
    const port = http.port;
    const u = (host: string, p: string): string => `http://${host}:${port}${p}`;
    const page = (p: string): { status: number; body: string } => ({ status: 200, body: `<!DOCTYPE html><title>${p}</title>\n` });
    http.setFixedResponse('reset.test', '/r', { ...page('r'), failFirst: 2, failWith: 'reset' });
    http.setFixedResponse('dead.test', '/r', { ...page('r'), failFirst: 1000, failWith: 'reset' });
    http.setFixedResponse('busy.test', '/b', { ...page('b'), failFirst: 1, failWith: { status: 429, headers: { 'Retry-After': '1' } } });
    const until = Math.ceil((Date.now() + 3000) / 1000) * 1000; // HTTP-dates have whole seconds
    http.setFixedResponse('date.test', '/d', { ...page('d'), failFirst: 1, failWith: { status: 503, headers: { 'Retry-After': new Date(until).toUTCString() } } });
    const bigHead = { 'X-Filler': 'x'.repeat(40 * 1024) }; // over the fetcher's 32 KiB head cap
    http.setFixedResponse('large.test', '/x1', { status: 200, headers: bigHead, body: 'a' });
    http.setFixedResponse('large.test', '/x2', { status: 200, headers: bigHead, body: 'b' });
    const links = [u('reset.test', '/r'), u('dead.test', '/r'), u('busy.test', '/b'), u('date.test', '/d'), u('large.test', '/x1'), u('large.test', '/x2')];
    http.setFixedResponse('www.pld0.test', '/seed', { status: 200, body: links.map((l) => `<a href="${l}">x</a>`).join('\n') });

    const crawler = await Crawler.open(resolveCrawlConfig({
      seeds: [`${web.origin('www.pld0.test')}/seed`], stateDir: path.join(dir, 'state'), outDir: path.join(dir, 'warc'),
      dnsServers: [`127.0.0.1:${dns.port}`], allowNetworks: ['127.0.0.0/8'], retryDelayScale: SCALE,
      scope: 'any', // the seed page links to hosts of other PLDs
      userAgent: UA, maxDepth: 1, hostDelayMs: HOST_MS, minHostDelayMs: HOST_MS, ipDelayMs: 5, minIpDelayMs: 5, progress: 'none',
      workers: 1, ramBytes: 256 * 2 ** 20, fetchTimeoutMs: 3000,
    }));
    const summary = await crawler.run();
    assert.equal(summary.stopReason, 'done');

    const starts = (host: string, p?: string): number[] =>
      log.entries().filter((e: RequestLogEntry) => e.host === host && (p === undefined ? e.path !== '/robots.txt' : e.path === p)).map((e) => e.start).sort((a, b) => a - b);
    const gaps = (t: number[]): number[] => t.slice(1).map((x, i) => x - t[i]!);
    const reset = OUTCOME_POLICY[O.RESET]!;

    // A reset: retried after backoff(1), then backoff(2) = backoff(1) · factor; it answers the third time.
    const r = starts('reset.test', '/r');
    assert.equal(r.length, 3, `reset.test/r requested ${r.length} times`);
    const g = gaps(r);
    assert.ok(g[0]! >= reset.backoffMs * SCALE, `first retry after ${g[0]} ms ≥ ${reset.backoffMs * SCALE}`);
    assert.ok(g[1]! >= reset.backoffMs * reset.backoffFactor * SCALE, `second retry after ${g[1]} ms ≥ ${reset.backoffMs * reset.backoffFactor * SCALE}`);
    // A host that always resets: the first attempt and maxRetries retries, then given up.
    assert.equal(starts('dead.test', '/r').length, 1 + reset.maxRetries, 'dead.test: 1 + maxRetries requests');

    // 429 with Retry-After: 1 (seconds): the host waits the server's second, longer than the scaled backoff.
    const b = starts('busy.test', '/b');
    assert.equal(b.length, 2);
    assert.ok(OUTCOME_POLICY[O.HTTP_429]!.backoffMs * SCALE < 1000);
    assert.ok(b[1]! - b[0]! >= 1000, `429 retried after ${b[1]! - b[0]!} ms ≥ 1000 (Retry-After: 1)`);

    // 503 with Retry-After as an HTTP-date: not before that date.
    const d = starts('date.test', '/d');
    assert.equal(d.length, 2);
    assert.ok(d[1]! >= until - 1, `503 retried ${d[1]! - until} ms after the Retry-After date`);

    // Response head over the cap (CRAWL_FETCH_TOO_LARGE, not retried): its host pays the penalty.
    const x = starts('large.test');
    assert.equal(x.length, 2, 'both oversized pages requested once (no retry)');
    const penalty = OUTCOME_POLICY[O.TOO_LARGE]!.hostPenaltyMs * SCALE;
    assert.ok(x[1]! - x[0]! >= penalty, `next request to the penalized host after ${x[1]! - x[0]!} ms ≥ ${penalty}`);
    assert.ok(penalty > 4 * HOST_MS, 'the penalty is what separates them, not τh');

    const lines = readFileSync(path.join(dir, 'warc', 'crawl.log'), 'utf8').split('\n').filter((l) => l !== '').map(parseCrawlLogLine);
    const last = new Map(lines.map((l) => [l.url, l.outcome]));
    assert.equal(last.get(u('reset.test', '/r')), 'ok');
    assert.equal(last.get(u('dead.test', '/r')), O.RESET);
    assert.equal(last.get(u('busy.test', '/b')), 'ok');
    assert.equal(last.get(u('date.test', '/d')), 'ok');
    assert.equal(last.get(u('large.test', '/x1')), O.TOO_LARGE);
  } finally {
    await http.close();
    await dns.close();
    await rm(dir, { recursive: true, force: true });
  }
});
