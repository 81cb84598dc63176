/**
 * Ground truth: reachable() (a BFS over the generator's own link lists and robots model) must equal
 * what a real crawl over the sockets finds — DNS through simweb, HTTP with undici, links extracted
 * with parse5 and resolved browser-style (base href included), redirects followed as new URLs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { Agent, request } from 'undici';
import { startSimweb, type Simweb, type SimwebOptions } from '../../src/simweb/index.js';
import { parse5Links, resolveCanonical, resolverFor } from './helpers.js';

const UA = 'drumcrawl/0.1 (+http://example.test/bot)';

async function crawl(sw: Simweb, respectRobots: boolean): Promise<Set<string>> {
  const resolver = resolverFor(sw, 500);
  const ips = new Map<string, string | null>();
  const robots = new Map<string, 'all' | 'none' | 'rules'>();
  const agent = new Agent({ connections: 8, headersTimeout: 3000, bodyTimeout: 5000 });
  const ok = new Set<string>();
  const seen = new Set<string>(sw.seeds);
  const queue = [...sw.seeds];
  const get = async (ip: string, host: string, path: string) => {
    const r = await request(`http://${ip}:${sw.httpPort}${path}`, { headers: { host, 'user-agent': UA }, dispatcher: agent });
    return { status: r.statusCode, headers: r.headers, body: Buffer.from(await r.body.arrayBuffer()) };
  };
  try {
    while (queue.length > 0) {
      const url = queue.shift()!;
      const u = new URL(url);
      if (!ips.has(u.hostname)) {
        ips.set(u.hostname, await resolver.resolve4(u.hostname).then((a) => a[0]!, () => null));
      }
      const ip = ips.get(u.hostname);
      if (!ip) continue;
      if (respectRobots && !robots.has(u.hostname)) {
        let verdict: 'all' | 'none' | 'rules';
        try {
          const r = await get(ip, u.host, '/robots.txt');
          verdict = r.status >= 500 ? 'none' : r.status >= 400 ? 'all'
            : r.status === 200 && /allow/i.test(r.body.toString('latin1')) ? 'rules' : r.status === 200 ? 'all' : 'rules';
        } catch {
          verdict = 'none';
        }
        robots.set(u.hostname, verdict);
      }
      const path = u.pathname + u.search;
      const v = robots.get(u.hostname);
      if (respectRobots && (v === 'none' || (v === 'rules' && !sw.web.robotsAllows(u.hostname, path, UA)))) continue;
      let r;
      try {
        r = await get(ip, u.host, path);
      } catch {
        continue;
      }
      const next: string[] = [];
      if (r.status >= 300 && r.status < 400 && r.headers.location) next.push(new URL(String(r.headers.location), url).href);
      if (r.status === 200) {
        ok.add(url);
        const ct = String(r.headers['content-type'] ?? '');
        if (ct.startsWith('text/html')) {
          const enc = r.headers['content-encoding'];
          const body = enc === 'gzip' ? zlib.gunzipSync(r.body) : enc === 'deflate' ? zlib.inflateSync(r.body)
            : enc === 'br' ? zlib.brotliDecompressSync(r.body) : r.body;
          const { base, links } = parse5Links(body.toString('latin1'));
          for (const l of links) next.push(resolveCanonical(l, url, base));
        }
      }
      for (const n of next) if (!seen.has(n)) { seen.add(n); queue.push(n); }
    }
  } finally {
    await agent.close();
  }
  return ok;
}

async function compare(opts: SimwebOptions, respectRobots: boolean, minPages: number) {
  const sw = await startSimweb(opts);
  try {
    const truth = sw.web.reachable(sw.seeds, { userAgent: UA, respectRobots });
    const found = await crawl(sw, respectRobots);
    assert.ok(truth.size >= minPages, `${truth.size} reachable pages`);
    assert.deepEqual([...found].sort(), [...truth].sort());
    return truth.size;
  } finally {
    await sw.close();
  }
}

test('tiny: a real crawl finds exactly reachable(), with and without robots', async () => {
  const withRobots = await compare({ preset: 'tiny' }, true, 50);
  const without = await compare({ preset: 'tiny' }, false, 50);
  assert.ok(without > withRobots, 'robots rules remove pages');
});

test('demo-sized web with gzip, malformed HTML, legacy charsets, base href, frames, robots 403/5xx', async () => {
  await compare({
    preset: 'demo', seed: 7,
    params: { plds: 12, pagesPerHostMin: 10, pagesPerHostMax: 30, pageBytesMean: 3000, baseHrefShare: 0.1, framesetShare: 0.05,
      behaviours: { gzip: 0.1, deflate: 0.05, br: 0.05, malformed: 0.1, charset: 0.1, 'redirect-chain': 0.05, 'wrong-type': 0.05 } },
  }, true, 200);
});
