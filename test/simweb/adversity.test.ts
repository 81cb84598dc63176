/** Every adversity of the hostile/spam presets, shown to really happen over real sockets. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { request } from 'undici';
import { startSimweb, type Simweb, type HostInfo } from '../../src/simweb/index.js';
import { simFetch, parse5Links, resolveCanonical, resolverFor } from './helpers.js';

let sw: Simweb;
before(async () => {
  sw = await startSimweb({
    preset: 'hostile',
    params: { bombDecodedBytes: 64 << 20, trickleBytes: 2048, trickleIntervalMs: 25, retryAfterS: 3, spamFarms: 1 },
  });
});
after(async () => { await sw.close(); });

const by = (pred: (h: HostInfo) => boolean): HostInfo => {
  const h = sw.web.findHost(pred);
  assert.ok(h, 'the hostile preset has such a host');
  return h;
};
const url = (h: HostInfo, path: string) => `${sw.web.origin(h.name)}${path}`;
const robotsOf = (v: HostInfo['robots']) => simFetch(sw, url(by((h) => h.robots === v), '/robots.txt'), { headersTimeout: 400 });

test('robots.txt: absent 404, 401, 403, 5xx, rules with groups/wildcards/Crawl-delay', async () => {
  assert.equal((await robotsOf('absent')).status, 404);
  assert.equal((await robotsOf('unauthorized')).status, 401);
  assert.equal((await robotsOf('forbidden')).status, 403);
  assert.equal((await robotsOf('server-error')).status, 503);
  const rules = await robotsOf('rules');
  assert.equal(rules.status, 200);
  const text = rules.body.toString();
  assert.match(text, /^user-agent: otherbot$/im);
  assert.match(text, /^user-agent: \*$/im);
  assert.match(text, /^Disallow: \/\*\d\$$/im);
  assert.match(text, /^Allow: \/p\/\d\d$/m);
  const withDelay = await startSimweb({ preset: 'tiny', params: { robots: { rules: 1 }, crawlDelayShare: 1, crawlDelaySeconds: 2 } });
  try {
    const h = withDelay.web.findHost((x) => x.robots === 'rules')!;
    const body = (await simFetch(withDelay, `${withDelay.web.origin(h.name)}/robots.txt`)).body.toString();
    assert.match(body, /^Crawl-delay: 2$/m);
    assert.equal(h.crawlDelay, 2);
  } finally {
    await withDelay.close();
  }
});

test('robots.txt: timeout (no answer), redirect to another host, > 500 KiB body, garbage bytes', async () => {
  await assert.rejects(robotsOf('timeout'), { code: 'UND_ERR_HEADERS_TIMEOUT' });
  const h = by((x) => x.robots === 'redirect');
  const r = await robotsOf('redirect');
  assert.equal(r.status, 301);
  const loc = new URL(String(r.headers.location));
  assert.notEqual(loc.hostname, h.name);
  const target = await simFetch(sw, loc.href);
  assert.equal(target.status, 200);
  assert.equal(target.body.toString(), sw.web.robotsRulesText(h));
  const huge = await robotsOf('huge');
  assert.equal(huge.status, 200);
  assert.ok(huge.body.length > 500 * 1024);
  assert.match(huge.body.subarray(0, 2000).toString(), /Disallow: \/p\/\d/i);
  const garbage = await robotsOf('garbage');
  assert.equal(garbage.status, 200);
  assert.ok(garbage.body.length > 1000);
  assert.doesNotMatch(garbage.body.toString('latin1'), /[A-Za-z:/]/);
});

const page = (b: HostInfo['behaviour'], path = '/p/1', opts = {}) => simFetch(sw, url(by((h) => h.behaviour === b), path), opts);

test('hostile servers: reset, no response, 5xx, 429 + Retry-After when too fast', async () => {
  await assert.rejects(page('reset'), (e: NodeJS.ErrnoException) => /ECONNRESET|UND_ERR_SOCKET|other side closed/.test(`${e.code} ${e.message}`));
  await assert.rejects(page('no-response', '/p/1', { headersTimeout: 300 }), { code: 'UND_ERR_HEADERS_TIMEOUT' });
  const statuses = new Set<number>();
  for (const n of [0, 1, 2]) statuses.add((await page('server-error', `/p/${n}`)).status);
  assert.deepEqual([...statuses].sort(), [500, 502, 503]);
  const first = await page('too-many-requests', '/p/1');
  const second = await page('too-many-requests', '/p/2');
  assert.equal(first.status, 200);
  assert.equal(second.status, 429);
  assert.equal(second.headers['retry-after'], '3');
});

test('slow trickle: the body arrives in small pieces spread over time', async () => {
  const h = by((x) => x.behaviour === 'trickle');
  const [ip] = await resolverFor(sw).resolve4(h.name);
  const t0 = performance.now();
  const res = await request(`http://${ip}:${sw.httpPort}/p/1`, { headers: { host: h.name } });
  let pieces = 0, bytes = 0;
  for await (const c of res.body) { pieces++; bytes += (c as Buffer).length; }
  const ms = performance.now() - t0;
  const expected = Math.ceil(bytes / 2048);
  // Spread over time: a lower bound, which a loaded box only lengthens. (How many reads the client
  // needed is printed, not judged: a client that falls behind reads several pieces at once.)
  console.log(`trickle: ${bytes} bytes in ${pieces} reads over ${ms.toFixed(0)} ms (${expected} pieces sent)`);
  assert.ok(ms >= (expected - 2) * 25 * 0.8, `${ms} ms`);
});

test('content: wrong/missing Content-Type, gzip, deflate, br, decompression bomb, huge body', async () => {
  const wrong = await page('wrong-type', '/p/0');
  assert.equal(wrong.headers['content-type'], 'image/jpeg');
  assert.match(wrong.body.toString(), /^<!DOCTYPE html>/);
  const none = await page('no-type', '/p/0');
  assert.equal(none.headers['content-type'], undefined);
  for (const [b, dec] of [['gzip', zlib.gunzipSync], ['deflate', zlib.inflateSync], ['br', zlib.brotliDecompressSync]] as const) {
    const r = await page(b, '/p/0');
    assert.equal(r.headers['content-encoding'], b);
    const html = dec(r.body).toString();
    assert.match(html, /^<!DOCTYPE html>/);
    assert.ok(r.body.length < html.length / 2, `${b} compresses`);
  }
  const bomb = await page('bomb');
  assert.equal(bomb.headers['content-encoding'], 'gzip');
  assert.ok(bomb.body.length < 1 << 20, `compressed ${bomb.body.length}`);
  assert.throws(() => zlib.gunzipSync(bomb.body, { maxOutputLength: 32 << 20 }), { code: 'ERR_BUFFER_TOO_LARGE' });
  assert.equal(zlib.gunzipSync(bomb.body).length, 64 << 20);
  const huge = await page('huge-body', '/p/1', { maxBytes: 1 << 20 });
  assert.equal(Number(huge.headers['content-length']), 1 << 30);
  assert.ok(huge.body.length >= 1 << 20);
});

test('redirect chains end on the page; redirect loops come back', async () => {
  const h = by((x) => x.behaviour === 'redirect-chain');
  let u = url(h, '/p/1');
  let hops = 0;
  for (;;) {
    const r = await simFetch(sw, u);
    if (r.status !== 301) { assert.equal(r.status, 200); break; }
    u = new URL(String(r.headers.location), u).href;
    hops++;
  }
  assert.equal(hops, sw.web.params.redirectChainLength);
  const l = by((x) => x.behaviour === 'redirect-loop');
  const a = await simFetch(sw, url(l, '/p/1'));
  assert.equal(a.status, 302);
  const b = await simFetch(sw, new URL(String(a.headers.location), url(l, '/p/1')).href);
  assert.equal(b.status, 302);
  assert.equal(new URL(String(b.headers.location), url(l, '/')).pathname, '/p/1');
});

test('malformed HTML keeps its real links for a conforming parser and hides decoys; legacy charsets', async () => {
  const h = by((x) => x.behaviour === 'malformed');
  const r = await simFetch(sw, url(h, '/p/0'));
  const html = r.body.toString('latin1');
  assert.match(html, /<A HREF=|&#x2F;|<\/a\t>/);
  const { base, links } = parse5Links(html);
  const got = new Set(links.map((l) => resolveCanonical(l, url(h, '/p/0'), base)));
  const want = new Set(sw.web.pageLinks(h, 0).links.map((l) => sw.web.origin(l.host) + l.path));
  assert.deepEqual(got, want);
  assert.ok(html.includes(`/p/${h.pages + 1000}`), 'decoy in a comment is present but not a link');
  const c = by((x) => x.behaviour === 'charset');
  const cr = await simFetch(sw, url(c, '/p/0'));
  const declared = `${cr.headers['content-type']} ${cr.body.subarray(0, 300).toString('latin1')}`;
  assert.ok(declared.includes(c.charset!.name), declared);
  assert.ok(cr.body.some((b) => b >= 0x80), 'non-ASCII bytes');
  assert.ok(cr.body.toString('utf8').includes('\ufffd'), 'not valid UTF-8');
  const text = new TextDecoder(c.charset!.name).decode(cr.body);
  assert.ok(text.includes(`<title>${c.name} page 0</title>`));
});

test('traps: infinite calendar, repeated path segments, session ids', async () => {
  const cal = by((x) => x.trap === 'calendar');
  const home = (await simFetch(sw, url(cal, '/p/0'))).body.toString();
  assert.ok(home.includes('/cal/2026/1'));
  const far = await simFetch(sw, url(cal, '/cal/99999/12'));
  assert.equal(far.status, 200);
  assert.ok(far.body.toString().includes('/cal/100000/1'));
  const rep = by((x) => x.trap === 'repeat');
  const deep = await simFetch(sw, url(rep, '/t/a/b/a/b/a/b/a/'));
  assert.equal(deep.status, 200);
  const next = parse5Links(deep.body.toString()).links.map((l) => new URL(l, url(rep, '/t/a/b/a/b/a/b/a/')).pathname);
  assert.ok(next.includes('/t/a/b/a/b/a/b/a/a/'));
  const ses = by((x) => x.trap === 'session');
  const p0 = (await simFetch(sw, url(ses, '/p/0'))).body.toString();
  const sids = [...p0.matchAll(/\?sid=([0-9a-f]{8})/g)].map((m) => m[1]);
  assert.ok(sids.length > 0);
  const again = (await simFetch(sw, url(ses, `/p/0?sid=${sids[0]}`))).body.toString();
  assert.notEqual(again, p0, 'same page, new session ids: an infinite URL space');
});

test('spam farm: unbounded hosts × pages, tiny in-degree from the normal web', async () => {
  const name = 'h31337.farm0.test';
  const farmUrl = `${sw.web.origin(name)}/p/2000000000`;
  const r = await simFetch(sw, farmUrl);
  assert.equal(r.status, 200);
  const hosts = new Set(parse5Links(r.body.toString()).links.map((l) => new URL(l, farmUrl).hostname));
  assert.ok(hosts.size > 10 && [...hosts].every((x) => x.endsWith('.farm0.test')));
  let inLinks = 0;
  for (const h of sw.web.hosts()) {
    for (let n = 0; n < Math.min(h.pages, 3); n++) {
      inLinks += sw.web.pageLinks(h, n).links.filter((l) => l.host.endsWith('.farm0.test')).length;
    }
  }
  assert.ok(inLinks >= 1 && inLinks <= sw.web.params.spamInLinks, `${inLinks} in-links`);
});
