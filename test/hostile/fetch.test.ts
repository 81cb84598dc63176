/**
 * The hostile-site suite, fetch level (issue #30): what a server can do to one fetch — its framing,
 * its interim heads, its transfer-codings, its compression, its head — over real sockets on
 * loopback (src/simweb/hostile-server.ts writes each behaviour byte for byte). Each case ends with
 * its documented outcome code (docs/errors.md), the body the fetcher keeps stays within its caps,
 * and the body budget (src/fetch/memory-budget.ts) counts every byte and gets every one back.
 * The crawl-level cases (the process lives, every page has its crawl.log line, the normal host keeps
 * its pace, --max-time ends the run) are in crawl.test.ts.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHostileServers, type HostileServers } from '../../src/simweb/hostile-server.js';
import { Fetcher, FETCH_OUTCOMES as O, LOOPBACK_NETWORKS, fetchRobots, type FetcherOptions, type FetchResult } from '../../src/fetch/index.js';
import { MemoryBudget } from '../../src/fetch/memory-budget.js';

const UA = 'drumcrawl-test/0.1 (+https://example.test/bot)';
const MiB = 1024 * 1024;
const IPS = ['127.88.0.1', '127.88.0.2', '127.88.0.3', '127.88.0.4', '127.88.0.5', '127.88.0.6', '127.88.0.7', '127.88.0.8'];
const [A, SELF, CHAIN6, CHAIN5] = IPS as [string, string, string, string];
let srv: HostileServers;

before(async () => {
  srv = await startHostileServers({
    ips: IPS, floodMs: 8000, slowMs: 1500, bigBytes: 2 * MiB,
    robots: { [SELF]: 'self', [CHAIN6]: 'chain:6', [CHAIN5]: 'chain:5' },
  });
});
after(async () => {
  await srv.close();
});

function fetcher(o: Partial<FetcherOptions> = {}): Fetcher {
  return new Fetcher({
    userAgent: UA, allowedNetworks: LOOPBACK_NETWORKS, connectTimeoutMs: 2000, headersTimeoutMs: 3000, bodyTimeoutMs: 3000,
    totalTimeoutMs: 20_000, maxBodyBytes: 2 * MiB, maxDecodedBytes: 16 * MiB, ...o,
  });
}

const get = (f: Fetcher, path: string, ip = A): Promise<FetchResult> => f.fetch({ url: srv.url(ip, path), ip });
const text = (b: Uint8Array): string => Buffer.from(b).toString('latin1');

test('chunk floods (1-byte, 2-byte, gzip sent one byte a chunk): cut as CRAWL_FETCH_CHUNK_FLOOD, the body kept to what came before the cut', { timeout: 600_000 }, async () => {
  const f = fetcher();
  try {
    for (const p of ['/flood/1/0', '/flood/2/0', '/flood/gzip/0']) {
      const r = await get(f, p);
      assert.equal(r.outcome, O.CHUNK_FLOOD, `${p}: ${r.outcome} ${r.errorCode ?? ''}`);
      assert.equal(r.status, 200);
      assert.ok(r.body.byteLength <= 64 * 16_384, `${p}: ${r.body.byteLength} bytes kept`);
    }
  } finally {
    await f.close();
  }
});

test('transfer-codings: gzip and deflate undone (the payload is the page, never the coded bytes), also read to the close; an unknown one refused', { timeout: 600_000 }, async () => {
  const f = fetcher();
  try {
    for (const p of ['/te/gzip/0', '/te/deflate/0', '/te/gzip-close/0']) {
      const r = await get(f, p);
      assert.equal(r.outcome, O.OK, `${p}: ${r.outcome} ${r.errorCode ?? ''}`);
      assert.match(text(r.body), /^<!DOCTYPE html>/, `${p}: the payload is the HTML`);
      assert.equal(r.decoded, r.body);
      assert.match(text(r.responseHead!), /X-Crawler-Transfer-Encoding: gzip|X-Crawler-Transfer-Encoding: deflate/, `${p}: the WARC head names the header as not applying`);
    }
    const u = await get(f, '/te/unknown/0');
    assert.equal(u.outcome, O.TRANSFER_CODING);
    assert.equal(u.body.byteLength, 0);
  } finally {
    await f.close();
  }
});

test('interim heads: a flood of 103 Early Hints is cut as CRAWL_FETCH_INTERIM_LIMIT; a few before the final head are passed over', { timeout: 600_000 }, async () => {
  const f = fetcher();
  try {
    const r = await get(f, '/hints/flood/0');
    assert.equal(r.outcome, O.INTERIM_LIMIT, `${r.outcome} ${r.errorCode ?? ''}`);
    const ok = await get(f, '/hints/5/0');
    assert.equal(ok.outcome, O.OK);
    assert.match(text(ok.body), /^<!DOCTYPE html>/);
  } finally {
    await f.close();
  }
});

test('decompression bombs in other encodings (brotli, deflate, gzip inside gzip) stop at the decoded cap; a 15 MiB decode under the cap is kept', { timeout: 600_000 }, async () => {
  const f = fetcher({ maxDecodedBytes: 16 * MiB });
  try {
    for (const p of ['/bomb/br/0', '/bomb/deflate/0', '/bomb/gzip/0']) {
      const r = await get(f, p);
      assert.equal(r.outcome, O.BOMB, `${p}: ${r.outcome} ${r.errorCode ?? ''}`);
      assert.equal(r.decoded.byteLength, 0);
    }
    // gzip(gzip(15 MiB)): the outer layer is small, the inner one decodes to 15 MiB: under the cap
    const nested = await get(f, '/bomb/gzip-gzip/0');
    assert.equal(nested.outcome, O.OK, `${nested.outcome} ${nested.errorCode ?? ''}`);
    assert.equal(nested.decoded.byteLength, 15 * MiB);
    const big = await get(f, '/gzip-big/0');
    assert.equal(big.outcome, O.OK);
    assert.ok(big.body.byteLength < 100_000 && big.decoded.byteLength > 15 * MiB - 4096, `${big.body.byteLength} → ${big.decoded.byteLength}`);
    const small = fetcher({ maxDecodedBytes: 4 * MiB });
    try {
      const cut = await get(small, '/bomb/gzip-gzip/0');
      assert.equal(cut.outcome, O.BOMB, 'the second layer is held to the cap too');
    } finally {
      await small.close();
    }
  } finally {
    await f.close();
  }
});

test('heads and framing: endless header lines, endless trailers, a head one byte per 500 ms, an endless chunk extension, a chunk size past 64 bits', { timeout: 600_000 }, async () => {
  const f = fetcher({ headersTimeoutMs: 2000, bodyTimeoutMs: 2000, totalTimeoutMs: 6000 });
  try {
    const cases: Array<[string, string[]]> = [
      ['/head/huge/0', [O.TOO_LARGE]],
      ['/trailers/0', [O.TOO_LARGE]],
      ['/head/slow/0', [O.HEADERS_TIMEOUT, O.TOTAL_TIMEOUT]],
      ['/chunk/ext/0', [O.BODY_TIMEOUT, O.TOTAL_TIMEOUT, O.BAD_RESPONSE]],
      ['/chunk/huge-size/0', [O.BAD_RESPONSE]],
    ];
    for (const [p, want] of cases) {
      const r = await get(f, p, IPS[7]!);
      assert.ok(want.includes(r.outcome), `${p}: ${r.outcome} (${r.errorCode ?? ''}), expected one of ${want.join(', ')}`);
    }
  } finally {
    await f.close();
  }
});

test('the body budget: concurrent large bodies are read a few at a time within it, every one completes, and every byte comes back', { timeout: 600_000 }, async () => {
  // 8 slow 2 MiB bodies on 8 IPs against a budget of 8 MiB with a 4 MiB reserve (the largest one
  // body can need: 2 MiB body + 2 MiB decoded): 2 MiB of large bytes for ordinary takes, so one
  // body at a time there and one in the reserve.
  const budget = MemoryBudget.create(8 * MiB, 4 * MiB);
  const f = fetcher({ budget, maxBodyBytes: 2 * MiB, maxDecodedBytes: 2 * MiB, totalTimeoutMs: 60_000 });
  try {
    const rs = await Promise.all(IPS.map(async (ip) => {
      const r = await get(f, '/slow-big/0', ip);
      const held = r.hold?.kib ?? 0;
      f.release(r);
      return { r, held };
    }));
    for (const { r, held } of rs) {
      assert.equal(r.outcome, O.OK, `${r.url}: ${r.outcome} ${r.errorCode ?? ''}`);
      assert.equal(r.body.byteLength, 2 * MiB);
      assert.ok(held * 1024 >= 2 * MiB, 'the body was counted while the caller held it');
    }
    assert.ok(budget.peakBytes <= budget.capacityBytes, `peak ${budget.peakBytes} ≤ capacity ${budget.capacityBytes}`);
    assert.ok(budget.waits > 0, 'the budget made bodies wait');
    assert.equal(budget.usedBytes, 0, 'every byte came back');
    // and the decodes of compressed bodies wait their turn the same way
    const gz = await Promise.all(IPS.slice(0, 4).map((ip) => get(f, '/bomb/gzip-gzip/0', ip)));
    for (const r of gz) {
      assert.equal(r.outcome, O.BOMB);
      f.release(r);
    }
    assert.equal(budget.usedBytes, 0);
  } finally {
    await f.close();
  }
});

test('robots.txt: a redirect to itself is a loop, treated as more than five redirects (allow all), as a chain of six is; a chain of five is followed', { timeout: 600_000 }, async () => {
  const f = fetcher();
  try {
    const port = srv.port;
    const self = await fetchRobots(f, SELF, SELF, port, UA);
    const six = await fetchRobots(f, CHAIN6, CHAIN6, port, UA);
    const five = await fetchRobots(f, CHAIN5, CHAIN5, port, UA);
    assert.equal(self.outcome, 'CRAWL_ROBOTS_REDIRECT_LIMIT');
    assert.equal(six.outcome, 'CRAWL_ROBOTS_REDIRECT_LIMIT');
    assert.equal(self.rules.isAllowed('/n/1'), true);
    assert.equal(six.rules.isAllowed('/n/1'), true);
    assert.equal(five.outcome, 'ok');
    assert.equal(five.rules.isAllowed('/n/1'), false, 'the rules at the end of five redirects apply');
    assert.equal(srv.log.filter((e) => e.ip === SELF && e.path.startsWith('/robots')).length, 1, 'the loop was not asked again');
  } finally {
    await f.close();
  }
});
