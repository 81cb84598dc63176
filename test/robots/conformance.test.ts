/**
 * robots.txt conformance against Google's robotstxt test suite (test/fixtures/conformance/robots).
 *
 * Every case of cases.json is asserted. Where Google's expectation contradicts RFC 9309 the test
 * asserts the RFC answer instead (the opposite boolean), and the case is listed in RFC_OVERRIDES
 * with the RFC reason, so a change of behaviour on either side fails the test.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  parseRobotsTxt, parseRobotsBody, escapePattern, pathParamsQuery, isValidUserAgentToObey,
} from '../../src/robots/index.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dir = path.resolve(repoRoot, 'test/fixtures/conformance/robots');
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- untyped JSON fixtures, fields checked by the assertions
const load = (f: string): any => JSON.parse(readFileSync(path.join(dir, f), 'utf8'));

interface Case { robotstxt: string; useragent: string; url: string; allowed: boolean; source_test_name: string;
  index_in_test: number; rfc9309_status: string; }

interface Input { robotstxt: string; url: string }

/** Runs of one letter longer than 100 cut to 10: the same rules and path without the 16 KB lines. */
const shortRuns = (s: string): string => s.replace(/([ab])\1{100,}/g, (m) => m[0]!.repeat(10));

/**
 * `${source_test_name}#${index_in_test}` → why RFC 9309 gives the opposite answer, and a witness:
 * the case rewritten into the form the RFC rule says is equivalent, on which Google's library and
 * the RFC agree. The code must give the same (RFC) answer on the case and on its witness.
 */
const RFC_OVERRIDES: Record<string, { reason: string; witness: (c: Input) => Input }> = {
  'ID_Encoding#3': {
    reason: 'RFC 9309 §2.2.2: octets outside US-ASCII in the URI MUST be percent-encoded prior to comparison, so a raw "ツ" URL equals /foo/bar/%E3%83%84 and the allow rule matches.',
    witness: (c) => ({ robotstxt: c.robotstxt, url: encodeURI(c.url) }),
  },
  'ID_Encoding#5': {
    reason: 'RFC 9309 §2.2.2: the raw non-ASCII URL is percent-encoded before comparison and then equals the allow pattern /foo/bar/%E3%83%84.',
    witness: (c) => ({ robotstxt: c.robotstxt, url: encodeURI(c.url) }),
  },
  'ID_Encoding#6': {
    reason: 'RFC 9309 §2.2.2 table: pattern /foo/bar/%62%61%7A is matched as /foo/bar/baz (percent-encoded unreserved octets are decoded), so the longer allow rule wins.',
    witness: (c) => ({ robotstxt: c.robotstxt.replace('%62%61%7A', 'baz'), url: c.url }),
  },
  'GoogleOnly_IndexHTMLisDirectory#1': {
    reason: 'RFC 9309 §2.2.2: the longest matching rule wins; "/allowed-slash/" is matched only by "Disallow: /" (an allow for /allowed-slash/index.html does not match a shorter path).',
    witness: (c) => ({ robotstxt: c.robotstxt.replace('Allow: /allowed-slash/index.html\n', ''), url: c.url }),
  },
  'GoogleOnly_LineTooLong#2': {
    reason: 'RFC 9309 has no per-line limit (§2.5 only sets a file parsing limit ≥ 500 KiB); the full disallow pattern ".../qux" does not match ".../fux".',
    witness: (c) => ({ robotstxt: shortRuns(c.robotstxt), url: shortRuns(c.url) }),
  },
  'GoogleOnly_LineTooLong#5': {
    reason: 'RFC 9309 has no per-line limit; the full allow pattern ".../bbb.../qux" does not match ".../bbb.../fux", so "Disallow: /" applies.',
    witness: (c) => ({ robotstxt: shortRuns(c.robotstxt), url: shortRuns(c.url) }),
  },
};

test('cases.json: all 145 Google cases (RFC answer where Google contradicts RFC 9309)', () => {
  const cases: Case[] = load('cases.json');
  assert.equal(cases.length, 145);
  let overridden = 0;
  const failures: string[] = [];
  for (const c of cases) {
    const id = `${c.source_test_name}#${c.index_in_test}`;
    const override = RFC_OVERRIDES[id];
    const expected = override === undefined ? c.allowed : !c.allowed;
    const got = parseRobotsTxt(c.robotstxt).isAllowed(c.useragent, c.url);
    if (got !== expected) failures.push(`${id} (${c.rfc9309_status}): expected ${expected}, got ${got}`);
    if (override !== undefined) {
      overridden++;
      const w = override.witness(c);
      assert.notDeepEqual(w, { robotstxt: c.robotstxt, url: c.url }, `${id}: witness equals the case`);
      const onWitness = parseRobotsTxt(w.robotstxt).isAllowed(c.useragent, w.url);
      if (onWitness !== expected) failures.push(`${id} witness ${JSON.stringify(w).slice(0, 200)}: expected ${expected}, got ${onWitness}`);
    }
  }
  assert.deepEqual(failures, []);
  assert.equal(overridden, Object.keys(RFC_OVERRIDES).length);
});

test('parse_cases.json: directive counts, line numbers, BOM, sitemaps', () => {
  const file = load('parse_cases.json');
  for (const c of file.cases) {
    const body = Buffer.from(c.robotstxt_hex, 'hex');
    const p = parseRobotsBody(new Uint8Array(body));
    const e = c.expect;
    if (e.valid_directives !== undefined) assert.equal(p.validDirectives, e.valid_directives, c.note);
    if (e.unknown_directives !== undefined) assert.equal(p.unknownDirectives, e.unknown_directives, c.note);
    if (e.last_line_seen !== undefined) assert.equal(p.lastLineSeen, e.last_line_seen, c.note);
    if (e.sitemap !== undefined) assert.deepEqual(p.sitemaps, [e.sitemap], c.note);
    if (c.robotstxt !== null) {
      // The string form parses identically to the bytes.
      assert.deepEqual(parseRobotsBody(c.robotstxt), p);
    }
  }
});

test('path_params_query_cases.json', () => {
  for (const c of load('path_params_query_cases.json')) assert.equal(pathParamsQuery(c.input), c.expected, c.input);
});

test('escape_pattern_cases.json', () => {
  for (const c of load('escape_pattern_cases.json')) assert.equal(escapePattern(c.input), c.expected, c.input);
});

test('valid_useragent_cases.json', () => {
  for (const c of load('valid_useragent_cases.json')) assert.equal(isValidUserAgentToObey(c.useragent), c.valid, JSON.stringify(c.useragent));
});
