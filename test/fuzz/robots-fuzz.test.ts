/**
 * Fuzz: the robots.txt parser and matcher (src/robots). Any body — bytes or text, up to 5 MB —
 * parses without throwing; every answer is a boolean; the compiled, serialized and deserialized
 * rules answer alike; and on small single-group files the matcher agrees with a regular-expression
 * model of RFC 9309 §2.2.2–2.2.3 (canonical forms from normalize.ts, longest match, allow on ties).
 * Parsing stays linear on hostile bodies.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseRobotsTxt, compileRobots, deserializeRobotsRules, escapePattern, canonicalPath } from '../../src/robots/index.js';
import { params, runs, amplified, amplifiedBytes, assertLinear, LONG } from './fuzz.js';

const patChar = fc.constantFrom('/', 'a', 'b', 'A', '*', '$', '%', '2', 'F', '?', '=', ':', '.', 'ツ', '%41', '%2F', '%2a', '%24', ' ', '#');
const pattern = fc.array(patChar, { maxLength: 12 }).map((a) => a.join(''));
const pathChar = fc.constantFrom('/', 'a', 'b', 'A', '*', '$', '%2F', '%41', '?', '=', ':', '.', 'ツ', '%', '2F');
const urlPath = fc.array(pathChar, { maxLength: 14 }).map((a) => '/' + a.join(''));

const line = fc.oneof(
  fc.constantFrom('user-agent: *', 'User-Agent: FooBot', 'user-agent: foobot/1.0', 'useragent: x', 'crawl-delay: 5', 'Crawl-delay: -1', 'sitemap: http://s.test/x', '# c', '', '\uFEFF', 'disallow /x'),
  pattern.map((p) => `allow: ${p}`),
  pattern.map((p) => `Disallow:${p}`),
  fc.string({ maxLength: 20 }),
);
const eol = fc.constantFrom('\n', '\r\n', '\r');
const body = amplified(fc.tuple(line, eol).map(([l, e]) => l + e));

test('robots fuzz: any body parses; answers are booleans; serialized rules answer alike', () => {
  fc.assert(fc.property(fc.oneof(body, amplifiedBytes()), fc.array(urlPath, { minLength: 1, maxLength: 6 }), (b, paths) => {
    const txt = parseRobotsTxt(b);
    for (const agent of ['FooBot', 'drumcrawl/0.1 (+http://x.test/)', '*', '']) {
      const rules = compileRobots(txt, agent);
      const again = deserializeRobotsRules(rules.serialize());
      for (const p of paths) {
        const a = rules.isAllowed(p);
        assert.equal(typeof a, 'boolean');
        assert.equal(again.isAllowed(p), a, `serialized rules differ on ${p}`);
        assert.equal(txt.isAllowed(agent === '' ? 'x' : agent, 'http://h.test' + p), compileRobots(txt, agent === '' ? 'x' : agent).isAllowed(p));
      }
      const d = txt.crawlDelay(agent);
      assert.ok(d === undefined || (typeof d === 'number' && Number.isFinite(d) && d >= 0), `crawl delay ${d}`);
    }
  }), params('robots parse', runs(300, 20_000)));
});

/** RFC 9309 §2.2.2–2.2.3 as regular expressions over the canonical forms: the model. */
function modelAllowed(rules: { allow: boolean; pattern: string }[], path: string): boolean {
  if (path === '/robots.txt') return true;
  const c = canonicalPath(path);
  let best: { len: number; allow: boolean } | null = null;
  for (const r of rules) {
    const p = escapePattern(r.pattern);
    const anchored = p.endsWith('$');
    const body = anchored ? p.slice(0, -1) : p;
    const re = new RegExp('^' + body.split('*').map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*') + (anchored ? '$' : ''), 's');
    if (!re.test(c)) continue;
    if (best === null || p.length > best.len || (p.length === best.len && r.allow)) best = { len: p.length, allow: r.allow };
  }
  return best === null ? true : best.allow;
}

test('robots fuzz: the matcher agrees with the RFC 9309 model on one-group files', () => {
  const rule = fc.record({ allow: fc.boolean(), pattern: fc.array(patChar.filter((c) => c !== ' ' && c !== '#'), { maxLength: 10 }).map((a) => '/' + a.join('')) });
  fc.assert(fc.property(fc.array(rule, { maxLength: 8 }), fc.array(urlPath, { minLength: 1, maxLength: 8 }), (rules, paths) => {
    const txt = parseRobotsTxt('user-agent: *\n' + rules.map((r) => `${r.allow ? 'allow' : 'disallow'}: ${r.pattern}`).join('\n') + '\n');
    const compiled = compileRobots(txt, 'anybot');
    for (const p of paths) assert.equal(compiled.isAllowed(p), modelAllowed(rules, p), `${JSON.stringify(rules)} on ${p}`);
  }), params('robots model', runs(1000, 100_000)));
});

// A CPU-time measurement (fuzz.ts assertLinear): under load its ratios swing, so it runs in
// `npm run test:long` (DRUMCRAWL_LONG=1); bench/ is where speeds are judged.
test('robots fuzz: parsing is linear on hostile bodies (long lines, wildcard runs, no newlines, CR only)', { skip: !LONG && 'a CPU-time measurement: DRUMCRAWL_LONG=1' }, () => {
  const shapes: [string, (n: number) => string][] = [
    ['one line of wildcards', (n) => 'user-agent: *\ndisallow: /' + '*a'.repeat(n / 2)],
    ['many wildcard rules', (n) => 'user-agent: *\n' + 'disallow: /*a*b*c*d$\n'.repeat(n / 21)],
    ['CR-only lines', (n) => 'user-agent: x\r'.repeat(n / 14)],
    ['no newline, spaces', (n) => 'disallow:' + ' '.repeat(n)],
  ];
  for (const [name, make] of shapes) {
    assertLinear(`robots ${name}`, make, (b) => {
      const r = compileRobots(parseRobotsTxt(b), 'x');
      r.isAllowed('/' + 'a'.repeat(2000));
    }, 0.5);
  }
});

test('robots fuzz: canonical forms — a path and a pattern spelling it agree, and canonical is a fixed point', () => {
  fc.assert(fc.property(urlPath, (p) => {
    const c = canonicalPath(p);
    assert.equal(canonicalPath(c), c, `canonicalPath not idempotent on ${p}`);
    if (!p.includes('*') && !p.includes('$')) assert.equal(escapePattern(p), c, `pattern and path forms differ on ${p}`);
  }), params('robots canonical forms', runs(2000, 200_000)));
});
