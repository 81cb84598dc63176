import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  OUTCOME_POLICY, FETCH_OUTCOMES, ROBOTS_OUTCOMES, renderOutcomePolicyTable, retryDelayMs, outcomePolicy, classifyFetchError,
} from '../../src/fetch/index.js';
import { DNS_CODES } from '../../src/dns/index.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

test('every outcome code has a policy, and docs/errors.md shows the table as the data says', () => {
  for (const c of [...Object.values(FETCH_OUTCOMES), ...Object.values(DNS_CODES), ...Object.values(ROBOTS_OUTCOMES)]) {
    assert.ok(OUTCOME_POLICY[c] !== undefined, `policy for ${c}`);
  }
  const doc = readFileSync(path.join(repoRoot, 'docs/errors.md'), 'utf8');
  assert.ok(doc.includes(renderOutcomePolicyTable()), 'docs/errors.md embeds renderOutcomePolicyTable() verbatim');
  assert.throws(() => { (OUTCOME_POLICY as Record<string, unknown>).x = 1; });
});

test('retryDelayMs: exponential backoff, limits, Retry-After wins when longer', () => {
  assert.equal(retryDelayMs('ok', 1), null);
  assert.equal(retryDelayMs(FETCH_OUTCOMES.HTTP_4XX, 1), null);
  const p = OUTCOME_POLICY[FETCH_OUTCOMES.HTTP_5XX]!;
  assert.equal(retryDelayMs(FETCH_OUTCOMES.HTTP_5XX, 1), p.backoffMs);
  assert.equal(retryDelayMs(FETCH_OUTCOMES.HTTP_5XX, 2), p.backoffMs * p.backoffFactor);
  assert.equal(retryDelayMs(FETCH_OUTCOMES.HTTP_5XX, p.maxRetries + 1), null);
  assert.equal(retryDelayMs(FETCH_OUTCOMES.HTTP_429, 1, 3_600_000), 3_600_000);
  assert.equal(retryDelayMs(FETCH_OUTCOMES.HTTP_429, 1, 1), OUTCOME_POLICY[FETCH_OUTCOMES.HTTP_429]!.backoffMs);
  assert.equal(outcomePolicy('CRAWL_NOPE'), OUTCOME_POLICY[FETCH_OUTCOMES.ERROR]);
});

test('transport error classification', () => {
  const e = (code: string): Error => Object.assign(new Error(code), { code });
  const table: Array<[string, string]> = [
    ['ECONNREFUSED', FETCH_OUTCOMES.CONNECT_REFUSED], ['UND_ERR_CONNECT_TIMEOUT', FETCH_OUTCOMES.CONNECT_TIMEOUT],
    ['EHOSTUNREACH', FETCH_OUTCOMES.CONNECT], ['UND_ERR_HEADERS_TIMEOUT', FETCH_OUTCOMES.HEADERS_TIMEOUT],
    ['UND_ERR_BODY_TIMEOUT', FETCH_OUTCOMES.BODY_TIMEOUT], ['ECONNRESET', FETCH_OUTCOMES.RESET], ['UND_ERR_SOCKET', FETCH_OUTCOMES.RESET],
    ['UND_ERR_HEADERS_OVERFLOW', FETCH_OUTCOMES.TOO_LARGE], ['HPE_INVALID_CONSTANT', FETCH_OUTCOMES.BAD_RESPONSE],
    ['UND_ERR_RES_CONTENT_LENGTH_MISMATCH', FETCH_OUTCOMES.BAD_RESPONSE], ['ERR_TLS_CERT_ALTNAME_INVALID', FETCH_OUTCOMES.TLS],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', FETCH_OUTCOMES.TLS], ['CERT_HAS_EXPIRED', FETCH_OUTCOMES.TLS], ['WHATEVER', FETCH_OUTCOMES.ERROR],
  ];
  for (const [code, out] of table) assert.equal(classifyFetchError(e(code)), out, code);
  assert.equal(classifyFetchError(null), FETCH_OUTCOMES.ERROR);
  assert.equal(classifyFetchError(Object.assign(new Error('x'), { name: 'HTTPParserError' })), FETCH_OUTCOMES.BAD_RESPONSE);
});
