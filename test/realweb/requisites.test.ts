/**
 * Whole captures of real sites: nginx serving three real manuals (harness.ts; no packet capture
 * needed here), crawled with the defaults (--requisites on) and by wget2 -r -p in the same network
 * namespace. The Python manual's robots.txt disallows a subtree and names a sitemap listing copies
 * of two real pages at another path, which no page links to (their relative links break there, as
 * on the real site the issue was seen on). Judged from the archive (WARC records read back with
 * warcio, and the CDXJ indexes):
 *  - replay: every page requisite of every archived page (script, style sheet, image, media,
 *    object, the URLs in its CSS; a revisit's too, resolved against its own URL) and every URL
 *    every archived style sheet names is archived and indexed, when in scope and allowed;
 *  - every link of every archived page (in scope, allowed) was fetched: a page whose content
 *    duplicates the sitemap's copy still has its links followed;
 *  - coverage: the crawl's 2xx captures are exactly the files wget2 -r -p saved;
 *  - provenance: the sitemap's entries are logged with the sitemap as via and M hops.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { manualSites, manualsRoot, startRealWeb } from './harness.js';
import { cdxjUrls, readArchive, type Capture } from './archive.js';
import { cliArgv, tempDir } from '../e2e/harness.js';
import { canonicalizeUrl, trapCheck } from '../../src/url/index.js';
import { cssUrls, decodeCss, decodeHtml, extractLinksReference } from '../../src/html/index.js';
import { parseCrawlLogLine } from '../../src/store/index.js';

const UA = 'drumcrawl-realweb/0.1 (+https://example.test/bot)';
const COPIES = ['library/os.html', 'library/pathlib.html'];

test('page requisites: every requisite of every archived page is in the archive; every link followed; the same files as wget2 -r -p', { timeout: 600_000 }, async () => {
  const sites = manualSites();
  const py = sites.find((s) => s.host === 'docs.python.test')!;
  const root = await manualsRoot();
  py.robots = 'User-agent: *\nDisallow: /library/idle\n\nSitemap: http://docs.python.test/sitemap.xml\n';
  py.files = {
    '/sitemap.xml': '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n' +
      COPIES.map((c) => `<url><loc>http://docs.python.test/sitemap-only/${path.basename(c)}</loc></url>\n`).join('') + '</urlset>\n',
  };
  for (const c of COPIES) py.files[`/sitemap-only/${path.basename(c)}`] = await readFile(path.join(root, py.root, c), 'latin1');
  const web = await startRealWeb({ sites, capture: false });
  try {
    const dir = await tempDir('realweb-requisites');
    const out = path.join(dir, 'out');
    const crawl = web.exec(process.execPath, [...cliArgv(), 'crawl', ...sites.map((s) => `http://${s.host}/`),
      '--state', path.join(dir, 'state'), '--out', out, '--dns-server', web.dnsServer, '--allow-network', '127.0.0.0/8',
      '--user-agent', UA, '--progress', 'none', '--host-delay', '0', '--min-host-delay', '0', '--ip-delay', '0', '--min-ip-delay', '0']);
    assert.equal(await crawl.done, 0, crawl.out());
    const wget = web.exec('wget2', ['-r', '-p', '-l', 'inf', '--no-verbose', '-e', 'robots=on', '-P', path.join(dir, 'wget'),
      ...sites.map((s) => `http://${s.host}/`)]);
    await wget.done; // 8: some answers were 404 (the links the sample leaves dangling)

    const arch = await readArchive(out);
    const indexed = cdxjUrls(out);
    const log = (await readFile(path.join(out, 'crawl.log'), 'utf8')).split('\n').filter((l) => l !== '').map(parseCrawlLogLine);
    const fetched = new Set(log.filter((e) => e.status !== null).map((e) => e.url));
    const hosts = new Set(sites.map((s) => s.host));
    // scope pld: the three PLDs are one host each here; the test's own robots rule
    const wanted = (u: string): boolean => hosts.has(new URL(u).hostname) && !u.startsWith('http://docs.python.test/library/idle') && trapCheck(u) === null;
    const bodyOf = (caps: Capture[]): Capture | undefined => caps.find((c) => c.type === 'response' && c.status !== null && c.status >= 200 && c.status < 300);

    const missing: string[] = [];
    const unfollowed: string[] = [];
    let pages = 0;
    let requisites = 0;
    for (const [url, caps] of arch) {
      // a revisit's content is its original's; its URLs resolve against its own URL
      let cap = bodyOf(caps);
      if (cap === undefined) {
        const rv = caps.find((c) => c.type === 'revisit' && c.refersTo !== null);
        if (rv !== undefined) cap = bodyOf(arch.get(rv.refersTo!) ?? []);
      }
      if (cap === undefined || cap.body === null) continue;
      const need: string[] = [];
      if (cap.mime === 'text/html') {
        pages++;
        const { text } = decodeHtml(cap.body, undefined);
        const r = extractLinksReference(text, { requisites: true });
        const base = r.baseHref !== null ? (canonicalizeUrl(r.baseHref, url) ?? url) : url;
        for (const l of r.links) {
          const u = canonicalizeUrl(l.value, base);
          if (u === null || !wanted(u)) continue;
          if (l.embed) need.push(u);
          else if (!l.nofollow && !r.metaRobots.nofollow && !fetched.has(u)) unfollowed.push(`${u} (linked from ${url})`);
        }
      } else if (cap.mime === 'text/css') {
        for (const raw of cssUrls(decodeCss(cap.body).text)) {
          const u = canonicalizeUrl(raw, url);
          if (u !== null && wanted(u)) need.push(u);
        }
      }
      for (const u of need) {
        requisites++;
        if (!arch.has(u)) missing.push(`${u} (of ${url}): not in the WARC files`);
        else if (!indexed.has(u)) missing.push(`${u} (of ${url}): not in the CDXJ index`);
      }
    }
    assert.ok(pages > 1_500 && requisites > 5_000, `archived pages ${pages}, requisites judged ${requisites}`);
    assert.deepEqual(missing, [], 'every requisite of every archived page is archived');
    assert.deepEqual(unfollowed, [], 'every link of every archived page was fetched');

    // The same files as wget2 -r -p saved (a URL ending in / is its index.html there).
    const saved = new Set<string>();
    const walk = async (d: string, rel: string): Promise<void> => {
      for (const e of await readdir(d, { withFileTypes: true })) {
        if (e.isDirectory()) await walk(path.join(d, e.name), `${rel}${e.name}/`);
        else saved.add(`http://${rel}${e.name}`);
      }
    };
    await walk(path.join(dir, 'wget'), '');
    // (a revisit is a capture too: the content of an earlier 2xx one)
    const ours = new Set([...arch].filter(([, caps]) => bodyOf(caps) !== undefined || caps.some((c) => c.type === 'revisit'))
      .map(([u]) => (u.endsWith('/') ? `${u}index.html` : u)));
    const sitemapOnly = COPIES.map((c) => `http://docs.python.test/sitemap-only/${path.basename(c)}`);
    assert.deepEqual([...saved].filter((u) => !ours.has(u)).sort(), [], 'files wget2 -r -p saved and the crawl did not archive');
    assert.deepEqual([...ours].filter((u) => !saved.has(u) && !sitemapOnly.includes(u) && !u.endsWith('/sitemap.xml')).sort(), [],
      'captures the crawl has and wget2 not (sitemaps and their pages aside)');

    // Provenance: the sitemap's entries, found through it.
    for (const u of sitemapOnly) {
      const e = log.find((x) => x.url === u && x.status !== null);
      assert.ok(e !== undefined, `${u} fetched`);
      assert.equal(e.via, 'http://docs.python.test/sitemap.xml', `via of ${u}`);
      assert.equal(e.path, 'MM', `hop path of ${u}`);
    }
  } finally {
    await web.close();
  }
});
