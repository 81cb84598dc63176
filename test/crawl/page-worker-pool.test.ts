/**
 * The page workers (src/threads/page/page-worker-pool.ts) against simweb over loopback: a page comes back
 * as its fetch result first, then one buffer with its link table and encoded WARC group (the body
 * never crosses); a worker that dies or hangs while parsing a page is replaced, that page comes
 * back with CRAWL_PARSE_CRASH / CRAWL_PARSE_TIMEOUT, and the pages after it are served by the new
 * worker (test/crawl/faulty-page-worker.ts injects the faults).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSimweb, type Simweb, type HostInfo } from '../../src/simweb/index.js';
import { LOOPBACK_NETWORKS } from '../../src/fetch/index.js';
import { PageWorkerPool } from '../../src/threads/page/page-worker-pool.js';
import { workerFileFor } from '../../src/threads/worker-file.js';
import { splitParseOutput, LinkTable } from '../../src/threads/links-codec.js';
import { PARSE_CRASH, PARSE_OK, PARSE_TIMEOUT, type PageAnswer, type ParseNote } from '../../src/threads/page/page-worker-protocol.js';
import { startHostileServers } from '../../src/simweb/hostile-server.js';

const UA = 'drumcrawl/0.1 (+http://crawler.test/about)';
let sim: Simweb;
let host: HostInfo;

before(async () => {
  sim = await startSimweb({ preset: 'hostile' });
  const h = sim.web.findHost((x) => x.pldIndex >= 0 && x.dns === 'ok' && x.behaviour === 'normal');
  assert.ok(h);
  host = h;
});
after(async () => {
  await sim.close();
});

function pool(worker?: string, timeoutMs = 10_000): PageWorkerPool {
  return new PageWorkerPool(
    {
      images: false, include: [], exclude: [], scope: 'any', scopeHosts: [], scopePlds: [], refused: [],
      fetcher: { userAgent: UA, allowedNetworks: LOOPBACK_NETWORKS, acceptContentTypes: null, totalTimeoutMs: 5000 },
    },
    { threads: 1, timeoutMs, worker },
  );
}

let nextId = 1;
async function page(p: PageWorkerPool, url: string): Promise<{ a: PageAnswer; x: ParseNote | null }> {
  let a: PageAnswer | undefined;
  const x = await p.run({ id: nextId++, url, ip: host.ip, host: host.name, notBefore: -Infinity, hostGapMs: 0, ipGapMs: 0, follow: true, sitemap: false, requisites: false }, (f) => { a = f; });
  assert.ok(a, 'the fetch result came before the parse');
  return { a, x };
}

test('page worker: fetch result, then link table + WARC group; the body stays in the worker', { timeout: 600_000 }, async () => {
  const p = pool();
  try {
    await p.warmup();
    const { a, x } = await page(p, `${sim.web.origin(host.name)}/p/5`);
    assert.equal(a.status, 200, a.outcome);
    assert.ok(a.at > 0 && a.payloadBytes > 0);
    assert.equal(a.parses, true);
    assert.ok(x !== null && x.parse === PARSE_OK && x.out !== undefined);
    const { table, group } = splitParseOutput(x.out);
    const t = new LinkTable(table);
    assert.ok(t.count > 0, 'links extracted');
    assert.ok(group !== null && group.data.byteLength > 0 && group.payloadDigest.startsWith('sha1:'));
    assert.ok(x.heads !== undefined && x.requestHeadBytes! > 0, 'request and response heads for the CDXJ line and revisits');
    assert.match(Buffer.from(x.heads.subarray(0, x.requestHeadBytes)).toString('latin1'), /^GET \/p\/5 HTTP\/1\.1\r\n/);
    // A transport failure: a fetch result and no parse.
    const dead = await page(p, 'http://127.0.0.1:9/');
    assert.equal(dead.a.parses, false);
    assert.equal(dead.x, null);
    assert.equal(p.pending, 0);
  } finally {
    await p.close();
  }
});

// Two pools: a crash must not race the parse timeout (on a loaded box the worker's exit can be
// noticed after a short timeout has fired, and the page is then CRAWL_PARSE_TIMEOUT), so the crash
// runs under a timeout far above any load; the hang under one of 3 s, which a normal page's parse
// stays far below.
test('page worker supervision: a crash or a hang while parsing → that page CRAWL_PARSE_CRASH / TIMEOUT, the worker replaced, later pages served', { timeout: 600_000 }, async () => {
  const faulty = workerFileFor(new URL('./faulty-page-worker.ts', import.meta.url).href);
  const origin = sim.web.origin(host.name);
  let p = pool(faulty, 300_000);
  try {
    await p.warmup();
    const crash = await page(p, `${origin}/p/1?CRASH-ME`);
    assert.equal(crash.a.parses, true, 'reported as fetched (an HTTP response) before its parse result');
    assert.equal(crash.x?.parse, PARSE_CRASH);
    assert.equal(p.replaced, 1);
    const after1 = await page(p, `${origin}/p/2`);
    assert.equal(after1.x?.parse, PARSE_OK, 'the replacement worker serves the next page');
    assert.equal(p.pending, 0);
  } finally {
    await p.close();
  }
  p = pool(faulty, 3000);
  try {
    await p.warmup();
    const t0 = Date.now();
    const hang = await page(p, `${origin}/p/3?HANG-ME`);
    assert.equal(hang.x?.parse, PARSE_TIMEOUT);
    // Given up by the timeout (never before it; how long after it depends on the box's load).
    assert.ok(Date.now() - t0 >= 3000, 'not given up before the parse timeout');
    assert.equal(p.replaced, 1);
    const after2 = await page(p, `${origin}/p/4`);
    assert.equal(after2.x?.parse, PARSE_OK);
    assert.equal(p.pending, 0);
  } finally {
    await p.close();
  }
});

// Issue #30: a worker that dies on one page took the pages it had fetched and not yet parsed down
// with it (CRAWL_PARSE_CRASH). They are fetched again by its replacement and parsed there: the
// failure stays with the page that caused it. Five pages on five IPs go to one worker; the first
// parse blocks the worker for 500 ms, so the other four answers are read together and queue for
// their parse, the crashing page among them (where it falls in the queue decides how many are
// behind it: the verdict is the same for any order).
test('page worker supervision: pages fetched and queued behind a crashing page are fetched again and parsed, only that page is CRAWL_PARSE_CRASH', { timeout: 600_000 }, async () => {
  const ips = ['127.86.0.1', '127.86.0.2', '127.86.0.3', '127.86.0.4', '127.86.0.5'];
  const srv = await startHostileServers({ ips });
  const p = new PageWorkerPool(
    {
      images: false, include: [], exclude: [], scope: 'any', scopeHosts: [], scopePlds: [], refused: [],
      fetcher: { userAgent: UA, allowedNetworks: LOOPBACK_NETWORKS, acceptContentTypes: null, totalTimeoutMs: 10_000 },
    },
    { threads: 1, timeoutMs: 20_000, worker: workerFileFor(new URL('./faulty-page-worker.ts', import.meta.url).href) },
  );
  try {
    await p.warmup();
    for (let round = 0; round < 3; round++) {
      const urls = [srv.url(ips[0]!, `/n/${round}?SLOW-ME`), srv.url(ips[1]!, `/n/${round}?CRASH-ME`), ...ips.slice(2).map((ip) => srv.url(ip, `/n/${round}`))];
      const answers = await Promise.all(urls.map((url, i) => {
        let a: PageAnswer | undefined;
        const ip = ips[i]!;
        return p.run({ id: nextId++, url, ip, host: ip, notBefore: -Infinity, hostGapMs: 0, ipGapMs: 0, follow: true, sitemap: false, requisites: false }, (f) => { a = f; }).then((x) => ({ url, a, x }));
      }));
      for (const { url, a, x } of answers) {
        if (url.includes('CRASH-ME')) {
          assert.equal(x?.parse, PARSE_CRASH, url);
          continue;
        }
        // parsed (before the crash, or fetched again after it); or not fetched when the worker died:
        // then it comes back CRAWL_FETCH_ABORTED for the frontier to retry — never blamed
        if (a?.parses === false) assert.equal(a.outcome, 'CRAWL_FETCH_ABORTED', url);
        else assert.equal(x?.parse, PARSE_OK, `${url}: ${x?.message ?? ''}`);
      }
      assert.equal(p.pending, 0);
    }
    assert.equal(p.replaced, 3);
    // each innocent page was asked for once, or twice when its body died with the worker
    for (const ip of ips) {
      const asked = srv.log.filter((e) => e.ip === ip && e.path.startsWith('/n/')).length;
      assert.ok(asked >= 3 && asked <= 6, `${ip}: ${asked} requests for 3 pages`);
    }
  } finally {
    await p.close();
    await srv.close();
  }
});
