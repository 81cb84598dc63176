/**
 * What a crawl of simweb leaves in its output directory (docs/output-format.md), over real
 * sockets: every 2xx body whatever its type (HTML, text, PDF, PNG — binary bytes) is archived as
 * simweb sent it, up to --max-body and then with `WARC-Truncated: length`; outlinks are recorded
 * only for HTML; every robots.txt answer is archived as request + response; every DNS answer is a
 * `dns:` record naming the address the host's pages came from (and none with warcDns off); the
 * CDXJ beside each WARC file equals warcio's index of it, and 20 random captured URLs, looked up
 * in the CDXJ by SURT key (binary search, as pywb does), lead to records whose payload digest is
 * the digest of simweb's body.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readdir, readFile, rm } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import { CDXIndexer } from 'warcio';
import { resolveCrawlConfig } from '../../src/config/config.js';
import { Crawler } from '../../src/crawl/pipeline.js';
import { startSimweb, type Simweb } from '../../src/simweb/index.js';
import { cdxjPathFor, parseCdxjLine, surtKey } from '../../src/store/index.js';
import { readWarc, sha1, type ReadRecord } from '../store/helpers.js';
import { tempDir, UA, SIMWEB_NETWORKS } from '../e2e/harness.js';

const MAX_BODY = 6 * 1024;

/** simweb's body for a URL it serves as a page (/p/n), concatenated. */
function simwebBody(web: Simweb, url: string): Buffer | null {
  const u = new URL(url);
  const m = /^\/p\/(\d+)$/.exec(u.pathname);
  const info = web.web.hostInfo(u.hostname);
  if (m === null || !info || u.search !== '') return null;
  const b = web.web.renderPage(info, Number(m[1]));
  return b === null ? null : Buffer.concat(b.chunks);
}

async function crawl(web: Simweb, dir: string, over: object): Promise<{ out: string; recs: (ReadRecord & { file: string })[] }> {
  const out = path.join(dir, 'warc');
  const crawler = await Crawler.open(resolveCrawlConfig({
    seeds: web.seeds, stateDir: path.join(dir, 'state'), outDir: out, dnsServers: [web.dnsServer], allowNetworks: SIMWEB_NETWORKS,
    userAgent: UA, hostDelayMs: 10, minHostDelayMs: 5, ipDelayMs: 0, minIpDelayMs: 0, progress: 'none', workers: 1,
    ramBytes: 256 * 2 ** 20, fetchTimeoutMs: 5000, scope: 'any', ...over,
  }));
  await crawler.run();
  const recs: (ReadRecord & { file: string })[] = [];
  for (const f of (await readdir(out)).filter((x) => x.endsWith('.warc.gz')).sort()) {
    for (const r of await readWarc(path.join(out, f))) recs.push({ ...r, file: f });
  }
  return { out, recs };
}

const uri = (r: ReadRecord): string => r.headers.get('warc-target-uri') ?? '';
const httpHead = (r: ReadRecord): string => Buffer.from(r.block.subarray(0, r.block.length - (r.payload?.length ?? 0))).toString('latin1');

test('capture: every body archived as sent (binary types too), robots.txt and DNS answers, CDXJ = warcio, 20 URLs resolved through the CDXJ', { timeout: 900_000 }, async () => {
  const web = await startSimweb({ preset: 'tiny', seed: 7, params: { nonHtmlShare: 0.35, pagesPerHostMin: 10, pagesPerHostMax: 16 } });
  const dir = await tempDir('capture-archive');
  try {
    const { out, recs } = await crawl(web, dir, { maxBodyBytes: MAX_BODY, maxPages: 400 });
    const responses = recs.filter((r) => r.type === 'response' && /^https?:/.test(uri(r)));

    // 1. bodies: every 200 page's payload is simweb's body, whole or cut at --max-body with WARC-Truncated
    const byType = new Map<string, { whole: number; cut: number }>();
    for (const r of responses) {
      const body = simwebBody(web, uri(r));
      if (body === null || !/^HTTP\/1\.1 200/.test(httpHead(r))) continue;
      const type = /content-type: ([^;\r\n]+)/i.exec(httpHead(r))![1]!;
      const t = byType.get(type) ?? { whole: 0, cut: 0 };
      byType.set(type, t);
      assert.equal(r.headers.get('warc-payload-digest'), sha1(r.payload!), `${uri(r)}: payload digest`);
      if (body.length > MAX_BODY) {
        assert.equal(r.headers.get('warc-truncated'), 'length', `${uri(r)}: ${body.length} bytes, cut`);
        assert.equal(sha1(r.payload!), sha1(body.subarray(0, MAX_BODY)), `${uri(r)}: the first ${MAX_BODY} bytes`);
        t.cut++;
      } else {
        assert.equal(r.headers.get('warc-truncated'), undefined, uri(r));
        assert.equal(sha1(r.payload!), sha1(body), `${uri(r)} (${type}): simweb's body`);
        t.whole++;
      }
    }
    for (const type of ['text/html', 'text/plain', 'application/pdf', 'image/png']) {
      const t = byType.get(type);
      assert.ok(t !== undefined && t.whole > 0, `${type} captured whole: ${JSON.stringify([...byType])}`);
    }
    assert.ok([...byType.values()].some((t) => t.cut > 0), 'some bodies were cut at --max-body');
    // outlinks (metadata records) for HTML pages only
    const htmlUrls = new Set(responses.filter((r) => /content-type: text\/html/i.test(httpHead(r))).map(uri));
    const metas = recs.filter((r) => r.type === 'metadata');
    assert.ok(metas.length > 0);
    for (const m of metas) assert.ok(htmlUrls.has(uri(m)), `outlinks only for HTML: ${uri(m)}`);

    // 2. robots.txt: request + response for every host whose pages were captured
    const hosts = new Map<string, string>(); // host:port → page IP
    for (const r of responses) {
      if (!uri(r).endsWith('/robots.txt')) hosts.set(new URL(uri(r)).host, r.headers.get('warc-ip-address')!);
    }
    for (const host of hosts.keys()) {
      const robots = `http://${host}/robots.txt`;
      const resp = recs.find((r) => r.type === 'response' && uri(r) === robots);
      assert.ok(resp !== undefined, `${robots} archived`);
      assert.ok(recs.some((r) => r.type === 'request' && uri(r) === robots && r.headers.get('warc-concurrent-to') === resp.headers.get('warc-record-id')));
    }
    // 3. DNS: a dns: record per host, Heritrix's block, naming the page's IP
    for (const [host, ip] of hosts) {
      const name = host.replace(/:\d+$/, '');
      const d = recs.find((r) => r.type === 'response' && uri(r) === `dns:${name}`);
      assert.ok(d !== undefined, `dns:${name} archived`);
      assert.equal(d.headers.get('content-type'), 'text/dns');
      const text = Buffer.from(d.block).toString('utf8');
      assert.match(text, /^\d{14}\n/);
      assert.ok(text.split('\n').some((l) => new RegExp(`^${name.replace(/\./g, '\\.')}\\.\\t+\\d+\\tIN\\tA\\t${ip.replace(/\./g, '\\.')}$`).test(l)), `dns:${name} names ${ip}: ${text}`);
      assert.equal(d.headers.get('warc-payload-digest'), sha1(d.block));
    }

    // what the DNS records cost (docs/output-format.md quotes this line)
    const dnsBytes = recs.filter((r) => uri(r).startsWith('dns:')).reduce((n, r) => n + r.length, 0);
    const allBytes = recs.reduce((n, r) => n + r.length, 0);
    console.log(`# dns: records ${dnsBytes} of ${allBytes} WARC bytes (${((100 * dnsBytes) / allBytes).toFixed(2)} %), ${hosts.size} hosts, ${responses.length} responses`);

    // 4. CDXJ: warcio's lines (dns: lines aside, see test/store/cdxj.test.ts), sorted
    const lines: { key: string; timestamp: string; json: Record<string, string> }[] = [];
    const files = (await readdir(out)).filter((x) => x.endsWith('.warc.gz')).sort();
    for (const f of files) {
      const ours = (await readFile(cdxjPathFor(path.join(out, f)), 'utf8')).split('\n').filter((l) => l !== '');
      const data = await readFile(path.join(out, f));
      const ix = new CDXIndexer({ format: 'cdxj' });
      const theirs: string[] = [];
      for await (const c of ix.iterIndex([{ filename: f, reader: (async function* () { yield data; })() }])) theirs.push(ix.serialize(c).trimEnd());
      const strip = (l: string) => l.replace(/"mime":"text\/dns",/, '').replace(/"status":"",/, '');
      assert.deepEqual(ours.map(strip), theirs.sort().map(strip), `${f}: CDXJ = warcio's`);
      lines.push(...ours.map(parseCdxjLine));
    }
    // 20 random captured URLs (seeded; the seed is printed) through the CDXJ to their records
    const seed = Number(process.env.CAPTURE_SEED ?? Date.now() % 100_000);
    let x = seed || 1;
    const rand = (n: number): number => { x = (x * 48271) % 2147483647; return x % n; };
    const captured = [...new Set(responses.filter((r) => simwebBody(web, uri(r)) !== null).map(uri))].sort();
    assert.ok(captured.length >= 20, `${captured.length} captured pages`);
    const keys = lines.map((l) => l.key);
    for (let i = 0; i < 20; i++) {
      const url = captured[rand(captured.length)]!;
      const key = surtKey(url);
      let lo = 0;
      let hi = keys.length;
      while (lo < hi) { const mid = (lo + hi) >> 1; if (keys[mid]! < key) lo = mid + 1; else hi = mid; }
      assert.equal(keys[lo], key, `seed ${seed}: ${url} in the CDXJ`);
      const j = lines[lo]!.json;
      const data = await readFile(path.join(out, j.filename!));
      const rec = gunzipSync(data.subarray(Number(j.offset), Number(j.offset) + Number(j.length)));
      const headEnd = rec.indexOf('\r\n\r\n');
      assert.match(rec.subarray(0, headEnd).toString('latin1'), new RegExp(`WARC-Target-URI: ${url.replace(/[.?]/g, '\\$&')}\r\n`));
      const block = rec.subarray(headEnd + 4, rec.length - 4);
      const payload = block.subarray(block.indexOf('\r\n\r\n') + 4);
      assert.equal(sha1(payload), `sha1:${j.digest}`, `seed ${seed}: ${url}: the record's payload has the CDXJ's digest`);
      const body = simwebBody(web, url)!;
      assert.equal(sha1(payload), sha1(body.subarray(0, Math.min(body.length, MAX_BODY))), `seed ${seed}: ${url}: simweb's body`);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
    await web.close();
  }
});

test('capture: --warc-dns=false archives no dns: record', { timeout: 900_000 }, async () => {
  const web = await startSimweb({ preset: 'tiny', seed: 7 });
  const dir = await tempDir('capture-nodns');
  try {
    const { recs } = await crawl(web, dir, { maxPages: 20, warcDns: false });
    assert.ok(recs.some((r) => r.type === 'response' && uri(r).startsWith('http')), 'pages captured');
    assert.deepEqual(recs.filter((r) => uri(r).startsWith('dns:')).map(uri), []);
  } finally {
    await rm(dir, { recursive: true, force: true });
    await web.close();
  }
});
