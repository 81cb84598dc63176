/**
 * Every example in the text of RFC 9309 (Robots Exclusion Protocol, September 2022), asserted as
 * the RFC says — where Google's robotstxt library answers otherwise (conformance.test.ts lists
 * those cases), the RFC is the bar. The examples are written out here from the RFC's figures and
 * prose, section by section; no file outside the repository is read.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRobotsTxt, compileRobots, DISALLOW_ALL, ALLOW_ALL } from '../../src/robots/index.js';
import { robotsUrl } from '../../src/fetch/index.js';

const SITE = 'https://www.example.com';

/** Assert `agent`'s verdict for each path (a path, or a full URL) under `body`. */
function verdicts(body: string, agent: string, expected: Record<string, boolean>, what: string): void {
  const txt = parseRobotsTxt(body);
  const got: Record<string, boolean> = {};
  for (const p of Object.keys(expected)) got[p] = txt.isAllowed(agent, p.startsWith('/') ? SITE + p : p);
  assert.deepEqual(got, expected, `${what} (agent ${agent})`);
}

test('§2.2.1 product token: the User-Agent header "Mozilla/5.0 (compatible; ExampleBot/0.1; …)" and "user-agent: ExampleBot", matched case-insensitively', () => {
  const header = 'Mozilla/5.0 (compatible; ExampleBot/0.1; https://www.example.com/bot.html)';
  assert.ok(header.includes('ExampleBot')); // "the product token (ExampleBot) is a substring of the User-Agent HTTP header"
  const body = 'user-agent: ExampleBot\ndisallow: /private\n';
  for (const agent of ['ExampleBot', 'examplebot', 'EXAMPLEBOT']) verdicts(body, agent, { '/private/x': false, '/public': true }, 'case-insensitive group match');
  // our own crawler: its User-Agent header is reduced to its product token
  const rules = compileRobots(parseRobotsTxt(body), 'ExampleBot/0.1 (+https://www.example.com/bot.html)');
  assert.deepEqual([rules.isAllowed('/private/x'), rules.isAllowed('/public')], [false, true]);
});

test('§2.2.1 two groups that match the same product token are merged', () => {
  const body = 'user-agent: ExampleBot\ndisallow: /foo\ndisallow: /bar\n\nuser-agent: ExampleBot\ndisallow: /baz\n';
  verdicts(body, 'ExampleBot', { '/foo': false, '/bar': false, '/baz': false, '/qux': true }, 'merged group');
});

test('§2.2.1 no group matches the product token: the "*" group applies (and not BazBot\'s)', () => {
  const body = 'user-agent: *\ndisallow: /foo\ndisallow: /bar\n\nuser-agent: BazBot\ndisallow: /baz\n';
  verdicts(body, 'ExampleBot', { '/foo': false, '/bar': false, '/baz': true }, '"*" group');
  // "If no group matches the product token and there is no group with a user-agent line with the
  // "*" value, or no groups are present at all, no rules shall apply."
  verdicts('user-agent: BazBot\ndisallow: /\n', 'ExampleBot', { '/': true, '/baz': true }, 'no matching group, no "*"');
  verdicts('', 'ExampleBot', { '/': true }, 'no groups');
});

test('§2.2.2 matching: case-sensitive, from the first octet, most octets win, allow wins a tie, empty group allows', () => {
  verdicts('user-agent: *\ndisallow: /Foo\n', 'a', { '/Foo': false, '/foo': true, '/x/Foo': true }, 'case and anchoring');
  verdicts('user-agent: *\ndisallow: /a\nallow: /a/b\n', 'a', { '/a/c': false, '/a/b/c': true }, 'longest match');
  verdicts('user-agent: *\ndisallow: /a/b\nallow: /a/b\n', 'a', { '/a/b': true }, 'equivalent rules: allow');
  verdicts('user-agent: *\ndisallow:\n', 'a', { '/anything': true }, 'empty pattern');
  verdicts('user-agent: a\n', 'a', { '/anything': true }, 'group without rules');
});

test('§2.2.2 the /robots.txt URI is implicitly allowed', () => {
  verdicts('user-agent: *\ndisallow: /\n', 'a', { '/robots.txt': true, '/robots.txt.bak': false, '/x': false }, 'disallow all');
  verdicts('user-agent: *\ndisallow: /robots.txt\n', 'a', { '/robots.txt': true }, 'disallowed by name');
  const rules = compileRobots(parseRobotsTxt('user-agent: *\ndisallow: /\n'), 'drumcrawl');
  assert.equal(rules.isAllowed('/robots.txt'), true);
  assert.equal(rules.isAllowed(`${SITE}/robots.txt`), true);
  // an unreachable robots.txt disallows everything (§2.3.1.4) — but the file itself may be fetched again
  assert.deepEqual([DISALLOW_ALL.isAllowed('/robots.txt'), DISALLOW_ALL.isAllowed('/x')], [true, false]);
  // and the rules survive serialization (the RobotsCache form) with the same answer
  assert.equal(ALLOW_ALL.isAllowed('/robots.txt'), true);
});

test('§2.2.2 figure "Examples of matching percent-encoded URI components", every row, rule and URI written either way', () => {
  // Path | Encoded Path | Path to Match (a rule written as one of the left two columns matches a
  // URI written as any of them: all are compared in the right column's form)
  const rows: [string, string, string][] = [
    ['/foo/bar?baz=quz', '/foo/bar?baz=quz', '/foo/bar?baz=quz'],
    ['/foo/bar?baz=https://foo.bar', '/foo/bar?baz=https%3A%2F%2Ffoo.bar', '/foo/bar?baz=https%3A%2F%2Ffoo.bar'],
    ['/foo/bar/ツ', '/foo/bar/%E3%83%84', '/foo/bar/%E3%83%84'],
    ['/foo/bar/%E3%83%84', '/foo/bar/%E3%83%84', '/foo/bar/%E3%83%84'],
    ['/foo/bar/%62%61%7A', '/foo/bar/%62%61%7A', '/foo/bar/baz'],
  ];
  for (const [path, encoded, toMatch] of rows) {
    for (const rule of [path, encoded]) {
      const body = `user-agent: *\ndisallow: /\nallow: ${rule}\n`;
      const expected: Record<string, boolean> = {};
      for (const uri of [path, encoded, toMatch]) expected[uri] = true;
      expected['/foo/other'] = false;
      verdicts(body, 'ExampleBot', expected, `row ${path}, rule ${rule}`);
    }
  }
  // lower-case hex is the same octet
  verdicts('user-agent: *\ndisallow: /\nallow: /foo/bar?baz=https%3a%2f%2ffoo.bar\n', 'a', { '/foo/bar?baz=https://foo.bar': true }, 'lower-case hex');
  // a reserved character is not decoded: in the path, %2F is not a segment delimiter
  verdicts('user-agent: *\ndisallow: /a%2Fb\n', 'a', { '/a/b': true, '/a%2Fb': false, '/a%2fb': false }, 'reserved %2F in a path');
});

test('§2.2.3 special characters: "#" comments, "$" end of pattern, "*" any octets', () => {
  verdicts('user-agent: *\ndisallow: /\nallow: / # comment in line\n', 'a', { '/x': true }, '# in line');
  verdicts('# comment on its own line\nuser-agent: *\n# another\ndisallow: /x\n', 'a', { '/x': false, '/y': true }, '# own line');
  verdicts('user-agent: *\ndisallow: /\nallow: /this/path/exactly$\n', 'a',
    { '/this/path/exactly': true, '/this/path/exactly/more': false, '/this/path/exactly?q': false }, '$');
  verdicts('user-agent: *\ndisallow: /\nallow: /this/*/exactly\n', 'a',
    { '/this/a/exactly': true, '/this/a/b/exactly': true, '/this//exactly': true, '/this/exactly': false, '/that/a/exactly': false }, '*');
});

test('§2.2.3 figure "Example of percent-encoding": %2A and %24 in a pattern match "*" and "$" verbatim', () => {
  verdicts('user-agent: *\ndisallow: /path/file-with-a-%2A.html\n', 'a', {
    'https://www.example.com/path/file-with-a-*.html': false,
    'https://www.example.com/path/file-with-a-x.html': true,
  }, '%2A');
  verdicts('user-agent: *\ndisallow: /path/foo-%24\n', 'a', {
    'https://www.example.com/path/foo-$': false,
    'https://www.example.com/path/foo-': true,
    'https://www.example.com/path/foo-$x': false,
  }, '%24');
});

test('§2.2.2 rules outside any group are ignored', () => {
  verdicts('disallow: /\nuser-agent: *\ndisallow: /x\n', 'a', { '/': true, '/y': true, '/x': false }, 'rule before the first user-agent');
});

test('§2.3 access method: the file is /robots.txt at the top level of the service', () => {
  assert.equal(robotsUrl('https', 'www.example.com', 443), 'https://www.example.com/robots.txt');
  assert.equal(robotsUrl('http', 'www.example.com', 8080), 'http://www.example.com:8080/robots.txt');
  // (the RFC's ftp://ftp.example.com/robots.txt: drumcrawl crawls http and https only)
});

test('§5.1 simple example: the "*", foobot, barbot/bazbot and quxbot groups', () => {
  const body = [
    'User-Agent: *', 'Disallow: *.gif$', 'Disallow: /example/', 'Allow: /publications/', '',
    'User-Agent: foobot', 'Disallow:/', 'Allow:/example/page.html', 'Allow:/example/allowed.gif', '',
    'User-Agent: barbot', 'User-Agent: bazbot', 'Disallow: /example/page.html', '',
    'User-Agent: quxbot', '',
  ].join('\n');
  const urls = ['/publications/a.html', '/publications/a.gif', '/example/x', '/example/page.html', '/example/page.html.bak',
    '/example/allowed.gif', '/a/b.gif', '/a/b.gif?x', '/other'];
  const table: Record<string, boolean[]> = {
    // "*": /publications/ allowed, /example/ and any .gif suffix ("*" matches "/" too) disallowed;
    // /publications/a.gif: the longer allow rule wins over "*.gif$"
    otherbot: [true, true, false, false, false, false, false, true, true],
    // foobot: only the two allowed prefixes
    foobot: [false, false, false, true, true, true, false, false, false],
    // barbot and bazbot: everything but the /example/page.html prefix
    barbot: [true, true, true, false, false, true, true, true, true],
    bazbot: [true, true, true, false, false, true, true, true, true],
    // quxbot: an empty group at the end of the file: unrestricted (the "*" group does not apply)
    quxbot: [true, true, true, true, true, true, true, true, true],
  };
  for (const [agent, want] of Object.entries(table)) {
    verdicts(body, agent, Object.fromEntries(urls.map((u, i) => [u, want[i]!])), '§5.1');
  }
});

test('§5.2 longest match: /example/page/disallowed.gif is decided by the longer disallow rule', () => {
  const body = 'User-Agent: foobot\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n';
  verdicts(body, 'foobot', {
    '/example/page/disallowed.gif': false,
    '/example/page/other.gif': true,
    // the RFC's prose names the URI "example.com/example/page/disallow.gif", which the disallow
    // rule (a longer path) does not match: only the allow rule matches it
    '/example/page/disallow.gif': true,
  }, '§5.2');
});
