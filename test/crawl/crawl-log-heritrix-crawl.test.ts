/**
 * `--crawl-log-format heritrix` on a real crawl of simweb (its DNS server answers NXDOMAIN for some
 * hosts; robots.txt disallows some paths): every line has Heritrix's 12 fields, and they agree with
 * what the server logged (status per request), what the WARC holds (size, digest) and the link
 * graph (the via page links to the URL; the hop path has one letter per hop).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readFile, rm } from 'node:fs/promises';
import { resolveCrawlConfig } from '../../src/config/config.js';
import { Crawler } from '../../src/crawl/pipeline.js';
import { parseHeritrixLine } from '../../src/store/index.js';
import { startSimweb, type Simweb } from '../../src/simweb/index.js';
import { readWarcDir } from '../e2e/warc-read.js';
import { readdirSync, readFileSync } from 'node:fs';
import { WARCParser } from 'warcio';
import { tempDir, UA, SIMWEB_NETWORKS } from '../e2e/harness.js';

let web: Simweb | undefined;
const dirs: string[] = [];
after(async () => {
  await web?.close();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

test('heritrix crawl.log of a simweb crawl: 12 fields matching the server log, the WARC and the links', { timeout: 900_000 }, async () => {
  web = await startSimweb({ preset: 'tiny', params: { dns: { nxdomain: 0.3 } } });
  const dir = await tempDir('hlog-crawl');
  dirs.push(dir);
  const out = path.join(dir, 'out');
  const crawler = await Crawler.open(resolveCrawlConfig({
    seeds: web.seeds, stateDir: path.join(dir, 'state'), outDir: out, dnsServers: [web.dnsServer], allowNetworks: SIMWEB_NETWORKS,
    userAgent: UA, progress: 'none', workers: 1, ramBytes: 256 * 2 ** 20, hostDelayMs: 20, minHostDelayMs: 10, ipDelayMs: 0, minIpDelayMs: 0,
    maxPages: 150, fetchTimeoutMs: 3000, retryDelayScale: 0.002, crawlLogFormat: 'heritrix', budget: 'flat',
    scope: 'any', // the web's links cross PLDs; every line is judged
  }));
  await crawler.run();
  const text = await readFile(path.join(out, 'crawl.log'), 'utf8');
  const lines = text.split('\n').filter((l) => l !== '').map(parseHeritrixLine);
  assert.ok(lines.length >= 20, `lines: ${lines.length}`);

  // Server side: status per host+path as answered.
  const served = new Map<string, Set<number>>();
  for (const e of web.log.entries()) {
    const k = `${e.host}${e.path}`;
    served.set(k, (served.get(k) ?? new Set()).add(e.status));
  }
  // WARC side: payload size and digest per URL (response records).
  const warc = new Map<string, { bytes: number; digest: string }>();
  for (const r of await readWarcDir(out)) {
    if (r.type === 'response' && r.uri !== undefined) warc.set(r.uri, { bytes: r.payloadBytes!, digest: r.headers.get('warc-payload-digest')! });
  }

  // The page behind each URL (first answered line) and each page's outlinks from its metadata record.
  const byUrl = new Map<string, (typeof lines)[number]>();
  for (const h of lines) if (h.status > 0 && h.path !== 'P' && !byUrl.has(h.url)) byUrl.set(h.url, h);
  for (const h of lines) if (!byUrl.has(h.url) && h.path === '-') byUrl.set(h.url, h);
  const outlinks = await readOutlinks(out);
  let pages = 0, checkedVia = 0;
  const statuses = new Set<number>();
  for (const h of lines) {
    assert.match(h.logTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(h.thread, '#000');
    assert.equal(h.sourceTag, '-');
    statuses.add(h.status);
    const u = new URL(h.url);
    if (h.status > 0) {
      // A response: the server answered this URL with this status, at a time in the fetch field.
      assert.ok(served.get(`${u.hostname}${u.pathname}${u.search}`)?.has(h.status), `${h.url} ${h.status} is in the server's log`);
      assert.match(h.fetchTime, /^\d{17}\+\d+$/);
      assert.match(h.mime, /^[a-z]+\/[a-z0-9.+-]+$|^no-type$/);
      if (h.path === 'P') {
        assert.match(u.pathname, /^\/robots\.txt$|^\/robots-for\//);
        continue;
      }
      pages++;
      const w = warc.get(h.url);
      if (w !== undefined && h.digest !== '-') {
        assert.equal(h.digest, w.digest, `${h.url}: digest as in the WARC`);
        assert.equal(Number(h.size), w.bytes, `${h.url}: size as in the WARC`);
      }
    } else {
      // Never answered: a negative Heritrix code, and no fetch for robots/DNS drops.
      if (h.status === -9998 || h.status === -6) {
        assert.equal(h.fetchTime, '-');
        assert.equal(h.size, '-');
        assert.match(h.annotations, h.status === -9998 ? /^dropped:robots$/ : /^dropped:CRAWL_DNS_/);
      }
      if (h.status === -6) assert.equal(served.has(`${u.hostname}/robots.txt`), false, `${u.hostname} never resolved, never asked`);
      if (h.status === -9998) assert.equal(served.has(`${u.hostname}${u.pathname}${u.search}`), false, `${h.url} disallowed, never fetched`);
    }
    // Discovery: a seed has no path and no via; otherwise one letter per hop and a via page that links here.
    if (h.path === '-') {
      assert.equal(h.via, '-');
      assert.ok(web.seeds.includes(h.url), `${h.url} without a path is a seed`);
    } else {
      assert.match(h.path, /^[LR]+$/);
      assert.notEqual(h.via, '-');
      // The via page was fetched, one hop closer to the seed: its path is this path minus the last letter.
      const parent = byUrl.get(h.via);
      assert.ok(parent !== undefined, `${h.url}: via ${h.via} has a line of its own`);
      assert.equal(parent.path === '-' ? '' : parent.path, h.path.slice(0, -1), `${h.url}: path ${h.path} extends ${h.via}'s`);
      if (h.path.endsWith('L')) {
        // ... and its WARC metadata record lists this URL among its outlinks.
        assert.ok(outlinks.get(h.via)?.has(h.url), `${h.via} links to ${h.url}`);
        checkedVia++;
      } else assert.ok(parent.status >= 300 && parent.status < 400, `${h.url} is a redirect target of ${h.via}`);
    }
  }
  assert.ok(pages >= 10, `page lines: ${pages}`);
  assert.ok(statuses.has(200), 'some 200s');
  assert.ok(statuses.has(-9998), `robots drops logged as -9998: ${[...statuses].join(' ')}`);
  assert.ok(statuses.has(-6), `DNS drops logged as -6: ${[...statuses].join(' ')}`);
  assert.ok(checkedVia >= 10, `via checked on ${checkedVia} lines`);
});

/** Each page's `outlink:` lines from the WARC metadata records (WARC-Target-URI = the page). */
async function readOutlinks(dir: string): Promise<Map<string, Set<string>>> {
  const out = new Map<string, Set<string>>();
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.warc.gz'))) {
    const data = readFileSync(path.join(dir, f));
    for await (const rec of new WARCParser((async function* () { yield data; })(), { parseHttp: false })) {
      const block = Buffer.from(await rec.readFully(false)).toString('utf8');
      const uri = rec.warcTargetURI;
      if (rec.warcType !== 'metadata' || uri === undefined || uri === null) continue;
      const set = out.get(uri) ?? new Set<string>();
      for (const m of block.matchAll(/^outlink: (.*)$/gm)) set.add(m[1]!.trim());
      out.set(uri, set);
    }
  }
  return out;
}
