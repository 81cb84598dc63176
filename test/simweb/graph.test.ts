import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WebGraph, resolveParams, ADVERSITY_COUNT } from '../../src/simweb/index.js';
import { isCrawlError } from '../../src/errors.js';
import { parse5Links, resolveCanonical } from './helpers.js';

const PORT = 8123;
const bodyOf = (r: { chunks: Buffer[] } | null) => (r ? Buffer.concat(r.chunks) : null);

test('same seed and params → byte-identical pages and robots.txt; another seed differs', () => {
  const p = resolveParams('hostile');
  const a = new WebGraph(p, 42, PORT), b = new WebGraph(resolveParams('hostile'), 42, PORT), c = new WebGraph(p, 43, PORT);
  let differ = 0;
  for (const h of a.hosts()) {
    const hb = b.hostInfo(h.name)!;
    assert.deepEqual(hb, h);
    assert.deepEqual(b.robotsBody(hb), a.robotsBody(h));
    for (const n of [0, 1, 7]) {
      if (n >= h.pages) continue;
      const pa = bodyOf(a.renderPage(h, n)), pb = bodyOf(b.renderPage(hb, n));
      assert.ok(pa && pb && pa.equals(pb), `${h.name}/p/${n}`);
      const hc = c.hostInfo(h.name);
      if (hc && n < hc.pages && !bodyOf(c.renderPage(hc, n))!.equals(pa)) differ++;
    }
  }
  assert.ok(differ > 50, `seed 43 should change pages (${differ} differ)`);
});

test('params key order does not matter (rates are walked in a fixed order)', () => {
  const a = new WebGraph(resolveParams(undefined, { robots: { rules: 0.3, absent: 0.3 } }), 5, PORT);
  const b = new WebGraph(resolveParams(undefined, { robots: { absent: 0.3, rules: 0.3 } }), 5, PORT);
  for (const h of a.hosts()) assert.equal(b.hostInfo(h.name)!.robots, h.robots);
});

test('page sizes average ~21.5 KB and links per page average ~59 (IRLbot)', () => {
  const g = new WebGraph(resolveParams('bench'), 1, PORT);
  let bytes = 0, pages = 0, links = 0, html = 0, nonHtml = 0;
  for (let i = 0; i < 300; i++) {
    const h = g.hostInfo(g.hostName(i, 0))!;
    for (let n = 1; n < 11; n++) {
      const r = g.renderPage(h, n)!;
      bytes += r.length;
      pages++;
      if (r.contentType.startsWith('text/html')) { html++; links += g.pageLinks(h, n).links.length; } else nonHtml++;
    }
  }
  const meanBytes = bytes / pages, meanLinks = links / html;
  assert.ok(meanBytes > 0.9 * 22016 && meanBytes < 1.1 * 22016, `mean page ${meanBytes}`);
  assert.ok(meanLinks > 54 && meanLinks < 64, `mean links ${meanLinks}`);
  assert.ok(nonHtml > 0 && nonHtml < 0.1 * pages, `non-HTML ${nonHtml}/${pages}`);
});

test('PLD in-degree follows a power law; many hosts share an IP (virtual hosting)', () => {
  const g = new WebGraph(resolveParams('bench'), 1, PORT);
  const indeg = new Map<string, Set<string>>();
  for (let i = 0; i < 600; i++) {
    const h = g.hostInfo(g.hostName(i, 0))!;
    for (const l of g.pageLinks(h, 1).links) {
      const pld = l.host.split('.').slice(-2).join('.');
      if (pld === h.pld) continue;
      let s = indeg.get(pld);
      if (!s) indeg.set(pld, (s = new Set()));
      s.add(h.pld);
    }
  }
  const d = [...indeg.values()].map((s) => s.size).sort((a, b) => b - a);
  const median = d[Math.floor(d.length / 2)]!;
  assert.ok(d[0]! > 20 * median, `top in-degree ${d[0]} vs median ${median}`);
  const perIp = new Map<string, number>();
  let hosts = 0;
  for (const h of g.hosts()) { perIp.set(h.ip, (perIp.get(h.ip) ?? 0) + 1); hosts++; }
  assert.ok(hosts > 3000, `bench has thousands of hosts (${hosts})`);
  assert.ok(perIp.size <= 256);
  for (const ip of perIp.keys()) assert.match(ip, /^127\.(?!0\.)\d+\.\d+\.\d+$/);
  const counts = [...perIp.values()].sort((a, b) => b - a);
  assert.ok(counts[0]! > 5 * counts[counts.length - 1]!, 'skewed hosts-per-IP distribution');
});

test('every href parse5 finds resolves (with <base href>) to exactly the generator link list', () => {
  const g = new WebGraph(resolveParams('hostile', { pageBytesMean: 1500, baseHrefShare: 0.3, framesetShare: 0.1, behaviours: { malformed: 0.3 } }), 9, PORT);
  let checked = 0, withBase = 0, frames = 0, malformed = 0;
  for (const h of g.hosts()) {
    if (h.farm >= 0) continue;
    for (let n = 0; n < Math.min(h.pages, 6); n++) {
      const r = g.renderPage(h, n)!;
      if (!r.contentType.startsWith('text/html') && h.behaviour !== 'charset') continue;
      const html = Buffer.concat(r.chunks).toString('latin1');
      const page = `${g.origin(h.name)}/p/${n}`;
      const { base, links } = parse5Links(html);
      const got = links.map((l) => resolveCanonical(l, page, base));
      const want = g.pageLinks(h, n).links.map((l) => `${g.origin(l.host)}${l.path}`);
      assert.deepEqual(got.sort(), want.sort(), `${page}`);
      checked++;
      if (base) withBase++;
      if (html.includes('<frameset')) frames++;
      if (h.behaviour === 'malformed') malformed++;
    }
  }
  assert.ok(checked > 200 && withBase > 10 && frames > 3 && malformed > 10, `${checked} ${withBase} ${frames} ${malformed}`);
});

test('the hostile preset gives every adversity to some host; hostInfo finds them', () => {
  const g = new WebGraph(resolveParams('hostile'), 1, PORT);
  const seen = new Set<string>();
  for (const h of g.hosts()) {
    if (h.robots !== 'allow-all') seen.add(`robots:${h.robots}`);
    if (h.behaviour !== 'normal') seen.add(`behaviour:${h.behaviour}`);
    if (h.dns !== 'ok') seen.add(`dns:${h.dns}`);
    if (h.trap) seen.add(`trap:${h.trap}`);
  }
  assert.equal(seen.size, ADVERSITY_COUNT);
  assert.equal(g.hostInfo('www.pld0.test')!.behaviour, 'normal');
  assert.equal(g.hostInfo('h123456.farm0.test')!.pages, Infinity);
  assert.equal(g.hostInfo('www.pld99999.test'), null);
  assert.equal(g.hostInfo('h01.pld1.test'), null, 'leading zeros are not a valid spelling');
});

test('robots oracle: per-agent groups, longest match, Allow wins ties, * and $', () => {
  const g = new WebGraph(resolveParams('demo', { robots: { rules: 1 } }), 3, PORT);
  let specific = 0, starOnly = 0;
  for (const h of g.hosts()) {
    if (h.robots !== 'rules') continue;
    const text = g.robotsRulesText(h);
    const [, d1, d2] = /Disallow: \/p\/(\d)\nAllow: \/p\/\d(\d)\n/i.exec(text)!.map(String);
    const d3 = /Disallow: \/\*(\d)\$/i.exec(text)![1]!;
    const hasAgentGroup = /User-agent: drumcrawl\n/i.test(text);
    const ua = 'DrumCrawl/1.0 (+http://x.test)';
    // When our agent has its own group, the '*' group (Disallow /p/<d4>) must not apply to us.
    if (hasAgentGroup) {
      specific++;
      const d4 = /User-agent: \*\nDisallow: \/p\/(\d)/i.exec(text)![1]!;
      if (d4 !== d1 && d4 !== d3) assert.equal(g.robotsAllows(h, `/p/${d4}`, ua), true, 'our group replaces *');
      assert.equal(g.robotsAllows(h, `/p/${d4}`, 'somebot'), false, '* group applies to other agents');
    } else starOnly++;
    assert.equal(g.robotsAllows(h, `/p/${d1}`, ua), false, 'prefix disallow');
    assert.equal(g.robotsAllows(h, `/p/${d1}${d2}`, ua), true, 'longer Allow wins');
    assert.equal(g.robotsAllows(h, `/p/${d1}${d2}${d3}`, ua), true, 'Allow (5 chars) beats /*d$ (4 chars)');
    const x = d2 === '0' ? '1' : '0';
    if (x !== d3) assert.equal(g.robotsAllows(h, `/p/${d1}${x}`, ua), false);
    const y = [...'123456789'].find((c) => c !== d1)!;
    assert.equal(g.robotsAllows(h, `/p/${y}${d3}`, ua), false, '$-anchored wildcard');
    const z = [...'0123456789'].find((c) => c !== d3)!;
    assert.equal(g.robotsAllows(h, `/p/${y}${z}`, ua), true, 'no rule matches');
    assert.equal(g.robotsAllows(h, `/p/${y}${d3}?sid=1`, ua), false, '/*? blocks queries');
    assert.equal(g.robotsAllows(h, '/p/0', 'otherbot/1'), false, 'otherbot group disallows everything');
  }
  assert.ok(specific > 0 && starOnly > 0, `${specific} ${starOnly}`);
});

test('resolveParams validates with precise codes', () => {
  assert.throws(() => resolveParams(undefined, { plds: 0 }), (e) => isCrawlError(e, 'CRAWL_SIMWEB_BAD_PARAM'));
  assert.throws(() => resolveParams(undefined, { robots: { rules: 0.7, absent: 0.7 } }), /sum/);
  assert.throws(() => resolveParams('nope' as never), /preset/);
});

test('memory stays flat while rendering distinct pages of a >10^9-page web', async () => {
  const v8 = await import('node:v8');
  const vm = await import('node:vm');
  v8.setFlagsFromString('--expose_gc');
  const gc = vm.runInNewContext('gc') as () => void;
  const g = new WebGraph(resolveParams('bench', { plds: 400_000, pagesPerHostMin: 100, pagesPerHostMax: 100_000 }), 3, PORT);
  assert.ok(g.totalPages(20_000) * 20 > 1e9, 'the web has more than 10^9 pages');
  let x = 7;
  const batch = () => {
    for (let k = 0; k < 4000; k++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      const h = g.hostInfo(g.hostName(x % 400_000, 0))!;
      g.renderPage(h, (x >>> 7) % h.pages);
    }
  };
  batch(); // warm up: filler, caches, JIT
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < 4; i++) batch();
  gc();
  const grown = process.memoryUsage().heapUsed - before;
  // The only growing structure is the bounded hostInfo cache (≤ 32,768 entries, ~15 MB).
  assert.ok(grown < 16 * 2 ** 20, `heap grew by ${(grown / 2 ** 20).toFixed(1)} MB over 16,000 distinct pages`);
});
