import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  parseRobotsTxt, compileRobots, deserializeRobotsRules, ALLOW_ALL, DISALLOW_ALL, userAgentToken,
} from '../../src/robots/index.js';
import { isCrawlError } from '../../src/errors.js';

test('a rule just before the 500 KiB mark takes effect; one past the limit does not', () => {
  const head = 'User-agent: *\n';
  const rule = 'Disallow: /secret\n';
  const pad = '# ' + 'x'.repeat(98) + '\n'; // 101-byte comment lines
  let body = head;
  while (body.length + pad.length + rule.length <= 500 * 1024) body += pad;
  body += rule;
  assert.ok(body.length <= 500 * 1024 && body.length > 500 * 1024 - 200, `rule ends at byte ${body.length}`);
  const r = parseRobotsTxt(body);
  assert.equal(r.isAllowed('drumcrawl', 'http://a.test/secret/x'), false);
  assert.equal(r.isAllowed('drumcrawl', 'http://a.test/public'), true);
  // Pad past the 512 KiB parse limit: the rule is no longer read, and a line cut by the limit is dropped.
  let big = head;
  while (big.length < 512 * 1024 + 10) big += pad;
  big += rule;
  const r2 = parseRobotsTxt(big);
  assert.equal(r2.parsed.truncated, true);
  assert.equal(r2.isAllowed('drumcrawl', 'http://a.test/secret/x'), true);
  const cut = head + 'x'.repeat(512 * 1024 - head.length - 12) + '\nDisallow: /verylongpath\n';
  const r3 = parseRobotsTxt(cut);
  assert.equal(r3.isAllowed('drumcrawl', 'http://a.test/v'), true, 'cut "Disallow: /v" must not apply');
});

test('Uint8Array and string bodies, BOM and CR/LF/CRLF give the same rules', () => {
  const lines = ['User-agent: drumcrawl', 'Disallow: /a', 'Allow: /a/b', 'Crawl-delay: 2.5', 'Sitemap: http://x.test/s.xml'];
  for (const nl of ['\n', '\r', '\r\n']) {
    for (const bom of ['', '\ufeff']) {
      const txt = bom + lines.join(nl);
      for (const body of [txt, new TextEncoder().encode(txt)]) {
        const r = parseRobotsTxt(body);
        assert.equal(r.isAllowed('drumcrawl', 'http://x.test/a/c'), false);
        assert.equal(r.isAllowed('DrumCrawl', 'http://x.test/a/b/c'), true);
        assert.equal(r.crawlDelay('drumcrawl'), 2.5);
        assert.deepEqual(r.sitemaps, ['http://x.test/s.xml']);
      }
    }
  }
});

test('garbage lines, binary junk and repeated groups', () => {
  const junk = new Uint8Array(4096);
  for (let i = 0; i < junk.length; i++) junk[i] = (i * 7919) & 0xff;
  const txt = Buffer.concat([
    Buffer.from('User-agent: a\nDisallow: /x\n'), Buffer.from(junk),
    Buffer.from('\nUser-agent: b\nDisallow: /y\n\nUser-agent: A\nDisallow: /z\n'),
  ]);
  const r = parseRobotsTxt(new Uint8Array(txt));
  // Both "a" groups are merged (RFC 9309 §2.2.1); "b" only has /y.
  assert.equal(r.isAllowed('a', '/x'), false);
  assert.equal(r.isAllowed('a', '/z'), false);
  assert.equal(r.isAllowed('a', '/y'), true);
  assert.equal(r.isAllowed('b', '/y'), false);
});

test('percent-encoding equivalence and literal * / $ via %2A / %24 (RFC 9309 §2.2.2–2.2.3)', () => {
  const r = parseRobotsTxt('User-agent: *\nDisallow: /path/file-with-a-%2A.html\nDisallow: /path/foo-%24\nDisallow: /%7esite\nDisallow: /caf%c3%a9\nAllow: /\n');
  assert.equal(r.isAllowed('x', 'https://w.test/path/file-with-a-*.html'), false);
  assert.equal(r.isAllowed('x', 'https://w.test/path/file-with-a-x.html'), true);
  assert.equal(r.isAllowed('x', 'https://w.test/path/foo-$'), false);
  assert.equal(r.isAllowed('x', 'https://w.test/~site/x'), false);
  assert.equal(r.isAllowed('x', 'https://w.test/%7Esite/x'), false);
  assert.equal(r.isAllowed('x', 'https://w.test/café'), false);
  assert.equal(r.isAllowed('x', 'https://w.test/caf%C3%A9'), false);
});

// A backtracking matcher takes time exponential in the stars here (it would not finish in years):
// the test's timeout catches it. How fast the linear matcher is, is measured in bench/, not here.
test('many-star patterns match in linear time (no backtracking blow-up)', { timeout: 120_000 }, () => {
  const pat = '/' + 'a*'.repeat(2000) + 'b$';
  const r = compileRobots(parseRobotsTxt(`User-agent: *\nDisallow: ${pat}\n`), 'drumcrawl');
  const path = '/' + 'a'.repeat(20000);
  for (let i = 0; i < 20; i++) assert.equal(r.isAllowed(path), true);
  assert.equal(r.isAllowed(path + 'b'), false);
});

test('compileRobots selects by product token of a full User-Agent', () => {
  const txt = parseRobotsTxt('User-agent: *\nDisallow: /\n\nUser-agent: drumcrawl\nDisallow: /private\nCrawl-delay: 3\n');
  const r = compileRobots(txt, 'drumcrawl/0.1 (+https://example.test/bot)');
  assert.equal(userAgentToken('drumcrawl/0.1 (+https://example.test/bot)'), 'drumcrawl');
  assert.equal(r.isAllowed('/public'), true);
  assert.equal(r.isAllowed('/private/x?q=1'), false);
  assert.equal(r.crawlDelayMs, 3000);
  const other = compileRobots(txt, 'otherbot');
  assert.equal(other.isAllowed('/public'), false);
  assert.equal(other.crawlDelayMs, undefined);
});

test('ALLOW_ALL / DISALLOW_ALL and serialization round-trip', () => {
  assert.equal(ALLOW_ALL.isAllowed('/x'), true);
  assert.equal(DISALLOW_ALL.isAllowed('/x'), false);
  assert.equal(DISALLOW_ALL.isAllowed('/'), false);
  for (const r of [ALLOW_ALL, DISALLOW_ALL]) {
    const b = r.serialize();
    assert.ok(b.length <= 6, `constant rules serialize compactly (${b.length} B)`);
    const d = deserializeRobotsRules(b);
    assert.equal(d.isAllowed('/x'), r.isAllowed('/x'));
  }
  assert.throws(() => deserializeRobotsRules(new Uint8Array([1, 0, 5, 9])), (e: unknown) => isCrawlError(e, 'CRAWL_ROBOTS_BAD_SERIALIZED'));
  assert.throws(() => deserializeRobotsRules(new Uint8Array([9, 0, 0])), (e: unknown) => isCrawlError(e, 'CRAWL_ROBOTS_BAD_SERIALIZED'));
});

test('property: deserialize(serialize(rules)) answers like rules; size is compact', () => {
  const seg = fc.constantFrom('a', 'b', 'ab', '%2F', 'é', '*', '$', '.html', '?q=', '~', '%7e');
  const pattern = fc.array(seg, { minLength: 0, maxLength: 6 }).map((s) => '/' + s.join(''));
  const rule = fc.record({ allow: fc.boolean(), pattern });
  const urlPath = fc.array(fc.constantFrom('a', 'b', 'ab', '/', 'é', '.html', '?q=', '~', '%7E', '$', '*'), { maxLength: 8 }).map((s) => '/' + s.join(''));
  fc.assert(fc.property(fc.array(rule, { maxLength: 12 }), fc.option(fc.integer({ min: 0, max: 100 })), fc.array(urlPath, { minLength: 1, maxLength: 10 }), (rules, delay, paths) => {
    const body = 'User-agent: drumcrawl\n' + rules.map((r) => `${r.allow ? 'Allow' : 'Disallow'}: ${r.pattern}`).join('\n') +
      (delay === null ? '' : `\nCrawl-delay: ${delay}`);
    const txt = parseRobotsTxt(body);
    const c = compileRobots(txt, 'drumcrawl');
    const bytes = c.serialize();
    const patternBytes = rules.reduce((n, r) => n + Buffer.byteLength(r.pattern) * 3, 0);
    assert.ok(bytes.length <= 8 + patternBytes + 2 * rules.length);
    const d = deserializeRobotsRules(bytes);
    assert.equal(d.crawlDelayMs, c.crawlDelayMs);
    for (const p of paths) {
      assert.equal(d.isAllowed(p), c.isAllowed(p));
      assert.equal(txt.isAllowed('drumcrawl', 'http://h.test' + p), c.isAllowed(p));
    }
  }), { numRuns: 300 });
});

test('property: matcher agrees with a reference regex matcher (RFC semantics)', () => {
  const seg = fc.constantFrom('a', 'b', 'ab', '/', '*', 'x');
  const pat = fc.tuple(fc.array(seg, { maxLength: 6 }), fc.boolean()).map(([s, anchored]) => '/' + s.join('') + (anchored ? '$' : ''));
  const p = fc.array(fc.constantFrom('a', 'b', '/', 'x'), { maxLength: 10 }).map((s) => '/' + s.join(''));
  const toRe = (pattern: string): RegExp => {
    const anchored = pattern.endsWith('$');
    const body = anchored ? pattern.slice(0, -1) : pattern;
    return new RegExp('^' + body.split('*').map((s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('.*') + (anchored ? '$' : ''));
  };
  fc.assert(fc.property(fc.array(fc.record({ allow: fc.boolean(), pattern: pat }), { maxLength: 14 }), p, (rules, path) => {
    const txt = parseRobotsTxt('User-agent: *\n' + rules.map((r) => `${r.allow ? 'Allow' : 'Disallow'}: ${r.pattern}`).join('\n'));
    let best = -1;
    let allow = true;
    for (const r of rules) {
      if (!toRe(r.pattern).test(path)) continue;
      if (r.pattern.length > best || (r.pattern.length === best && r.allow)) { best = r.pattern.length; allow = r.allow; }
    }
    // RobotsRules.isAllowed takes a path (RobotsTxt.isAllowed takes a URL, where '//' starts an authority).
    assert.equal(compileRobots(txt, 'bot').isAllowed(path), allow);
  }), { numRuns: 500 });
});
