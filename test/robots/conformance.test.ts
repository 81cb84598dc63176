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
const load = (f: string): any => JSON.parse(readFileSync(path.join(dir, f), 'utf8')); // any: untyped JSON fixtures, fields checked by the assertions

interface Case { robotstxt: string; useragent: string; url: string; allowed: boolean; source_test_name: string;
  index_in_test: number; rfc9309_status: string; }

/** `${source_test_name}#${index_in_test}` → why RFC 9309 gives the opposite answer. */
const RFC_OVERRIDES: Record<string, string> = {
  'ID_Encoding#3': 'RFC 9309 §2.2.2: octets outside US-ASCII in the URI MUST be percent-encoded prior to comparison, so a raw "ツ" URL equals /foo/bar/%E3%83%84 and the allow rule matches.',
  'ID_Encoding#5': 'RFC 9309 §2.2.2: the raw non-ASCII URL is percent-encoded before comparison and then equals the allow pattern /foo/bar/%E3%83%84.',
  'ID_Encoding#6': 'RFC 9309 §2.2.2 table: pattern /foo/bar/%62%61%7A is matched as /foo/bar/baz (percent-encoded unreserved octets are decoded), so the longer allow rule wins.',
  'GoogleOnly_IndexHTMLisDirectory#1': 'RFC 9309 §2.2.2: the longest matching rule wins; "/allowed-slash/" is matched only by "Disallow: /" (an allow for /allowed-slash/index.html does not match a shorter path).',
  'GoogleOnly_LineTooLong#2': 'RFC 9309 has no per-line limit (§2.5 only sets a file parsing limit ≥ 500 KiB); the full disallow pattern ".../qux" does not match ".../fux".',
  'GoogleOnly_LineTooLong#5': 'RFC 9309 has no per-line limit; the full allow pattern ".../bbb.../qux" does not match ".../bbb.../fux", so "Disallow: /" applies.',
};

test('cases.json: all 145 Google cases (RFC answer where Google contradicts RFC 9309)', () => {
  const cases: Case[] = load('cases.json');
  assert.equal(cases.length, 145);
  let overridden = 0;
  const failures: string[] = [];
  for (const c of cases) {
    const id = `${c.source_test_name}#${c.index_in_test}`;
    const reason = RFC_OVERRIDES[id];
    const expected = reason === undefined ? c.allowed : !c.allowed;
    if (reason !== undefined) {
      overridden++;
      assert.ok(c.rfc9309_status !== 'rfc', `${id} is marked rfc but overridden`);
    }
    const got = parseRobotsTxt(c.robotstxt).isAllowed(c.useragent, c.url);
    if (got !== expected) failures.push(`${id} (${c.rfc9309_status}): expected ${expected}, got ${got}`);
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
