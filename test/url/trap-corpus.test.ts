/**
 * The trap rule's false-positive rate on real URLs (src/url/traps.ts): every URL of the real
 * manuals in test/fixtures/realweb (each page's own URL and every link, script, style sheet and
 * image it names, resolved as the crawler resolves them) and the public URL lists in
 * test/fixtures/urls (README files of three public repositories: SOURCE.md there). All of them are
 * real URLs a person wrote or a documentation generator made; none is a trap, so every trap verdict
 * is a false positive. The criterion is none.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { canonicalizeUrl, trapCheck } from '../../src/url/index.js';
import { extractLinks } from '../../src/html/index.js';
import { decodeHtml } from '../../src/html/charset.js';
import { manualsRoot } from '../realweb/harness.js';
import { MANUAL_HOSTS, filesUnder } from '../realweb/manuals.js';

const LISTS = fileURLToPath(new URL('../fixtures/urls/', import.meta.url));

/** Every distinct canonical URL of the manuals: pages, and what their HTML names (links, requisites). */
async function manualUrls(): Promise<Set<string>> {
  const root = await manualsRoot();
  const out = new Set<string>();
  for (const host of MANUAL_HOSTS) {
    for (const rel of await filesUnder(path.join(root, host))) {
      const pageUrl = canonicalizeUrl(`http://${host}/${rel}`)!;
      out.add(pageUrl);
      if (!rel.endsWith('.html')) continue;
      const { text } = decodeHtml(await readFile(path.join(root, host, rel)), undefined);
      const r = extractLinks(text, { images: true, requisites: true });
      const base = r.baseHref !== null ? (canonicalizeUrl(r.baseHref, pageUrl) ?? pageUrl) : pageUrl;
      for (const l of r.links) {
        const u = canonicalizeUrl(l.value, base);
        if (u !== null) out.add(u);
      }
    }
  }
  return out;
}

async function listUrls(): Promise<Set<string>> {
  const out = new Set<string>();
  for (const f of ['public-apis.txt', 'awesome.txt', 'awesome-falsehood.txt']) {
    for (const line of (await readFile(path.join(LISTS, f), 'utf8')).split('\n')) {
      const u = line.trim() === '' ? null : canonicalizeUrl(line.trim());
      if (u !== null) out.add(u);
    }
  }
  return out;
}

test('trap rule: no false positive on the real manuals\' URLs and three public URL lists', { timeout: 600_000 }, async () => {
  const manuals = await manualUrls();
  const lists = await listUrls();
  // The corpus is what it claims to be (a few thousand URLs each, external ones among the manuals').
  assert.ok(manuals.size > 7_000, `manual URLs: ${manuals.size}`);
  assert.ok([...manuals].filter((u) => !MANUAL_HOSTS.some((h) => u.startsWith(`http://${h}/`))).length > 500, 'the manuals link out');
  assert.ok(lists.size > 2_500, `list URLs: ${lists.size}`);
  console.log(`real URLs: ${manuals.size} of the manuals, ${lists.size} of the lists`);
  const flagged = [...manuals, ...lists].map((u) => [u, trapCheck(u)] as const).filter(([, why]) => why !== null);
  assert.deepEqual(flagged.map(([u, why]) => `${why}: ${u}`), [], `${flagged.length} false positives in ${manuals.size + lists.size} real URLs`);
});
