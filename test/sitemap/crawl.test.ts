/**
 * Sitemaps in a real crawl of simweb over loopback sockets (its own DNS server): pages that only
 * the sitemaps list are crawled (urlset, gzip urlset, text sitemap behind a nested index), the
 * protocol's location rule refuses other hosts' URLs, sitemap fetches obey robots.txt and the
 * politeness floors and are archived, lastmod reaches sitemaps.log, and the 50,000-entry cap holds.
 * The first crawl runs with the default scope (pld) and sitemap discovery (robots). simweb runs in
 * its own process (its request log's times are judged, see test/e2e/simweb-child.ts); the test
 * holds the same web's graph (same preset, params and seed) for the ground truth.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { WebGraph, resolveParams } from '../../src/simweb/index.js';
import { hasSitemaps, hiddenLastmod } from '../../src/simweb/model/sitemaps.js';
import { Crawler } from '../../src/crawl/pipeline.js';
import { resolveCrawlConfig, type CrawlConfigInput } from '../../src/config/config.js';
import { parseCrawlLogLine, type CrawlLogEntry } from '../../src/store/index.js';
import { SIMWEB_NETWORKS, UA, forkSimweb, tempDir, type SimwebChild } from '../e2e/harness.js';
import { readWarcDir } from '../e2e/warc-read.js';

const HOST_MS = 20;
const webs: SimwebChild[] = [];
const dirs: string[] = [];
after(async () => {
  for (const w of webs) await w.close();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const listingOf = (dir: string): string[][] => {
  let text = '';
  try {
    text = readFileSync(path.join(dir, 'out', 'sitemaps.log'), 'utf8');
  } catch {
    // not written yet
  }
  return text.split('\n').filter((l) => l !== '').map((l) => l.split('\t'));
};

/** crawl.log's lines of pages listed by a big.xml (/big/<n>) so far. */
const bigPagesLogged = (dir: string): number => {
  try {
    return readFileSync(path.join(dir, 'out', 'crawl.log'), 'utf8').split('\n').filter((l) => l.split('\t')[4]?.includes('/big/') === true).length;
  } catch {
    return 0;
  }
};

/**
 * A crawl of a tiny web that runs until its frontier is dry, or until `enough(sitemaps.log's
 * lines)` holds (then stopped): never to a time limit, whose reach would depend on the box's load.
 */
async function crawl(params: object, over: CrawlConfigInput, enough?: (listing: string[][], dir: string) => boolean): Promise<{ web: SimwebChild; g: WebGraph; dir: string; log: CrawlLogEntry[]; listing: string[][]; atStop: string[][] | null }> {
  const web = await forkSimweb('tiny', params);
  webs.push(web);
  const g = new WebGraph(resolveParams('tiny', params), 1, web.httpPort);
  const dir = await tempDir('sitemap');
  dirs.push(dir);
  // No scope and no sitemaps setting: the defaults (pld, robots) are what this test exercises.
  const crawler = await Crawler.open(resolveCrawlConfig({
    seeds: web.seeds, stateDir: path.join(dir, 'state'), outDir: path.join(dir, 'out'), dnsServers: [web.dnsServer],
    allowNetworks: SIMWEB_NETWORKS, userAgent: UA, progress: 'none', workers: 1, ramBytes: 256 * 2 ** 20,
    hostDelayMs: HOST_MS, minHostDelayMs: HOST_MS, ipDelayMs: 0, minIpDelayMs: 0, fetchTimeoutMs: 5000,
    ...over,
  }));
  let running = true;
  let atStop: string[][] | null = null;
  const watch = (async () => {
    while (running && enough !== undefined) {
      const l = listingOf(dir);
      if (enough(l, dir)) {
        atStop = l;
        crawler.stop('test');
        return;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  try {
    await crawler.run();
  } finally {
    running = false;
    await watch;
  }
  const log = readFileSync(path.join(dir, 'out', 'crawl.log'), 'utf8').split('\n').filter((l) => l !== '').map(parseCrawlLogLine);
  const listing = listingOf(dir);
  return { web, g, dir, log, listing, atStop };
}

test('pages listed only in sitemaps are crawled; cross-host entries refused; robots, politeness and WARC hold', { timeout: 900_000 }, async () => {
  const { web, g, dir, log, listing } = await crawl({ sitemapShare: 1, seedCount: 1 }, {});
  const fetched = new Set(log.filter((e) => e.status === 200 && e.hops !== null).map((e) => e.url));
  const robotsHosts = new Set(log.filter((e) => e.hops === null).map((e) => new URL(e.url).hostname));
  const smHosts = [...robotsHosts].filter((h) => g.hostInfo(h) !== null && hasSitemaps(g.seed, g.params, g.hostInfo(h)!));
  assert.ok(smHosts.length >= 1, `a host with sitemaps was crawled (robots of ${[...robotsHosts].join(', ')})`);
  let hidden = 0;
  for (const h of smHosts) {
    const origin = g.origin(h);
    for (let k = 0; k < g.params.sitemapHiddenPages; k++) {
      if (!g.robotsAllows(h, `/hidden/${k}`, UA)) continue;
      assert.ok(fetched.has(`${origin}/hidden/${k}`), `${origin}/hidden/${k} (sitemap part ${k % 3}) was crawled`);
      hidden++;
    }
    // Only robots.txt's sitemaps: the root /sitemap.xml (and the pages only it lists) are not fetched.
    assert.ok(!log.some((e) => e.url === `${origin}/sitemap.xml`));
    assert.ok(!fetched.has(`${origin}/hidden/${g.params.sitemapHiddenPages}`));
    for (const s of ['/sitemap_index.xml', '/sm/pages-0.xml', '/sm/pages-1.xml.gz', '/sm/nested.xml', '/sm/pages-2.txt']) {
      assert.ok(fetched.has(`${origin}${s}`), `${origin}${s} fetched`);
    }
    // Provenance: a URL found through a sitemap is logged with that sitemap as its via (robots.txt for
    // the sitemap it names), each such hop an M in the hop path.
    const entry = (u: string): CrawlLogEntry | undefined => log.find((e) => e.url === u && e.status !== null);
    const part = ['/sm/pages-0.xml', '/sm/pages-1.xml.gz', '/sm/pages-2.txt'];
    assert.equal(entry(`${origin}/sitemap_index.xml`)?.via, `${origin}/robots.txt`);
    assert.equal(entry(`${origin}/sitemap_index.xml`)?.path, 'M');
    assert.equal(entry(`${origin}/sm/pages-2.txt`)?.via, `${origin}/sm/nested.xml`);
    assert.equal(entry(`${origin}/sm/pages-2.txt`)?.path, 'MMM');
    for (let k = 0; k < g.params.sitemapHiddenPages; k++) {
      const e = entry(`${origin}/hidden/${k}`);
      if (e === undefined) continue;
      assert.equal(e.via, `${origin}${part[k % 3]}`, `via of ${origin}/hidden/${k}`);
      assert.equal(e.path, k % 3 === 2 ? 'MMMM' : 'MMM', `hop path of ${origin}/hidden/${k}`);
    }
    // The other host's URLs in this host's sitemaps: refused by the location rule, logged with the code.
    assert.ok(log.some((e) => e.url.startsWith(`http://elsewhere.${g.hostInfo(h)!.pld}`) && e.outcome === 'dropped:CRAWL_SITEMAP_CROSS_HOST' && e.via === `${origin}/sm/pages-0.xml`));
    // lastmod recorded
    const l0 = listing.find((f) => f[2] === `${origin}/hidden/0`);
    assert.ok(l0 !== undefined && l0[3] === hiddenLastmod(0) && l0[4] === 'queued', `sitemaps.log line of ${origin}/hidden/0: ${l0?.join(' ')}`);
  }
  assert.ok(hidden >= 6, `hidden pages checked: ${hidden}`);
  // Default scope pld: nothing outside the seed's PLD was fetched.
  const seedPld = g.hostInfo(new URL(web.seeds[0]!).hostname)!.pld;
  for (const u of fetched) assert.ok(new URL(u).hostname.endsWith(`.${seedPld}`) || new URL(u).hostname === seedPld, `in scope: ${u}`);
  // Every link out of the default scope is logged with its code: the seed page's links to other PLDs.
  const seedInfo = g.hostInfo(new URL(web.seeds[0]!).hostname)!;
  const outside = g.pageLinks(seedInfo, 0).links.filter((l) => g.hostInfo(l.host)?.pld !== seedPld).map((l) => `${g.origin(l.host)}${l.path}`);
  assert.ok(outside.length > 0, 'the seed page links out of its PLD');
  const scopeDrops = new Set(log.filter((e) => e.outcome === 'dropped:CRAWL_SCOPE_OUT').map((e) => e.url));
  for (const u of outside) assert.ok(scopeDrops.has(u), `dropped:CRAWL_SCOPE_OUT logged for ${u}`);
  // Sitemap fetches are archived like any page.
  const recs = await readWarcDir(path.join(dir, 'out'));
  for (const h of smHosts) {
    for (const s of ['/sitemap_index.xml', '/sm/pages-1.xml.gz']) {
      assert.ok(recs.some((r) => r.type === 'response' && r.uri === `${g.origin(h)}${s}`), `${s} archived`);
    }
  }
  // Robots and politeness, judged by the server's own request log.
  const r = await web.report({ hostMs: HOST_MS, ipMs: 0, slackMs: 2, reachable: false });
  assert.deepEqual(r.robotsViolations, []);
  assert.deepEqual(r.hostViolations, []);
  assert.deepEqual(r.duplicates, []);
});

test('caps: a 50,001-entry sitemap yields 50,000 entries and CRAWL_SITEMAP_TOO_MANY_URLS; --sitemaps robots+root reads /sitemap.xml', { timeout: 900_000 }, async () => {
  const hidden = resolveParams('tiny', {}).sitemapHiddenPages;
  // Stopped once a big.xml was cut at its cap and a root /sitemap.xml was read, or (the bound: the
  // 50,000 pages of a big.xml would take minutes) once 1,000 of big.xml's pages were fetched, by
  // when every line of the sitemaps read before them is in sitemaps.log (synced with the crawl log).
  const { g, atStop } = await crawl({ sitemapShare: 1, seedCount: 1, sitemapBigEntries: 50_001 }, { sitemaps: 'robots+root' },
    (l, dir) => (l.some((f) => f[4] === 'CRAWL_SITEMAP_TOO_MANY_URLS') && l.some((f) => f[1]!.endsWith('/sitemap.xml') && f[2]!.endsWith(`/hidden/${hidden}`) && f[4] === 'queued'))
      || bigPagesLogged(dir) >= 1000);
  // sitemaps.log as it was when the crawl was stopped (the crawl had not closed it yet).
  const listing = atStop!;
  // Every sitemap host lists a big.xml: each one the crawl read to its cap (one or more, by its
  // speed) yields exactly 50,000 entries and one CRAWL_SITEMAP_TOO_MANY_URLS, the cap's line after
  // them. Another host's big.xml may be mid-read at the stop (its lines so far synced, the rest not
  // yet read): it is judged only to be short of the cap, never over it.
  const bigs = new Map<string, string[][]>();
  for (const f of listing) {
    if (!f[1]!.endsWith('/sm/big.xml')) continue;
    const l = bigs.get(f[1]!);
    if (l === undefined) bigs.set(f[1]!, [f]);
    else l.push(f); // (a copy per line took minutes once two big.xml were read: 2 × 50,000 lines)
  }
  let capped = 0;
  for (const [url, big] of bigs) {
    const queued = big.filter((f) => f[4] === 'queued').length;
    const caps = big.filter((f) => f[4] === 'CRAWL_SITEMAP_TOO_MANY_URLS').length;
    assert.ok(caps <= 1, url);
    if (caps === 0) {
      assert.ok(queued < 50_000, `${url}: ${queued} entries and no cap line`);
      continue;
    }
    capped++;
    assert.equal(queued, 50_000, url);
    assert.equal(big.at(-1)![4], 'CRAWL_SITEMAP_TOO_MANY_URLS', `${url}: the cap's line follows the 50,000 entries`);
  }
  assert.ok(capped > 0, `a big.xml was read to its cap (${bigs.size} begun)`);
  const root = listing.filter((f) => f[1]!.endsWith('/sitemap.xml'));
  assert.ok(root.some((f) => f[2]!.endsWith(`/hidden/${g.params.sitemapHiddenPages}`) && f[4] === 'queued'), 'root sitemap read');
});
