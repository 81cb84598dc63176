/**
 * The metrics text follows Prometheus' conventions: every snapshot renders to text the in-repo
 * promtool-equivalent checker (promlint.ts) accepts with no problem; states are one labelled
 * gauge; the builder refuses the names promtool warns about; the checker itself catches them.
 * (metrics-promtool.test.ts runs promtool on a live crawl's /metrics.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Exposition, namingProblem } from '../../src/monitor/metrics-exposition.js';
import { renderPrometheus, type CrawlState, type StatusSnapshot } from '../../src/monitor/stats.js';
import { promlint } from './promlint.js';

const STATES: CrawlState[] = ['starting', 'running', 'paused', 'stopping', 'done', 'stopped'];
const count = fc.nat({ max: 2 ** 40 });
const ratio = fc.double({ min: 0, max: 1, noNaN: true });

/** Any snapshot: counts, ratios, any outcome code (quotes, backslashes, newlines, Unicode), any state. */
const snapshotArb: fc.Arbitrary<StatusSnapshot> = fc.record({
  state: fc.constantFrom(...STATES), stopReason: fc.option(fc.string(), { nil: null }),
  startedAt: fc.integer({ min: 0, max: 4e12 }).map((t) => new Date(t).toISOString()), elapsedMs: count, pages: count, requisites: count, pagesOk: count,
  bytes: count, pagesPerSec: ratio, mbPerSec: ratio, urlsSeen: count, urlsDiscovered: count, urlsQueued: count, urlsReady: count,
  duplicates: count, inFlight: count, parsing: count, robotsFetches: count,
  beast: fc.record({ j: count, qfSize: count, qrSize: count }), hosts: fc.record({ active: count, waiting: count }),
  ips: fc.record({ active: count, waiting: count }), dns: fc.record({ lookups: count, hitRate: ratio }),
  robots: fc.record({ lookups: count, hitRate: ratio }), workers: fc.record({ size: count, replaced: count }),
  outcomes: fc.dictionary(fc.string({ unit: 'grapheme', minLength: 1 }), count), rssBytes: count, cpuMsPerPage: ratio,
  cpuSeconds: fc.double({ min: 0, max: 1e9, noNaN: true }), topPlds: fc.constant([]), checkpoints: count,
  lastCheckpointAt: fc.option(fc.integer({ min: 0, max: 4e12 }).map((t) => new Date(t).toISOString()), { nil: null }),
  backlog: fc.record({ pendingPages: count, pendingBound: count, contentBytes: count, contentBound: count }),
});

test('every snapshot renders to metrics text with no parse error and no lint problem', () => {
  fc.assert(fc.property(snapshotArb, (s) => {
    const text = renderPrometheus(s, { version: '0.1.0', commit: 'unknown', node: 'v20.0.0' });
    assert.deepEqual(promlint(text), { errors: [], problems: [] }, text);
    // One series per state, exactly one of them 1.
    const states = [...text.matchAll(/^drumcrawl_state\{state="([a-z]+)"\} ([01])$/gm)];
    assert.deepEqual(states.map((m) => m[1]), STATES);
    assert.deepEqual(states.filter((m) => m[2] === '1').map((m) => m[1]), [s.state]);
    // Counts are counters, sizes gauges; no rate, no scaled unit.
    assert.match(text, /^# TYPE drumcrawl_urls_seen_total counter$/m);
    assert.match(text, new RegExp(`^drumcrawl_urls_seen_total ${s.urlsSeen}$`, 'm'));
    assert.doesNotMatch(text, /per_second|megabytes|_ms_/);
    const ckpt = s.lastCheckpointAt === null ? 0 : Date.parse(s.lastCheckpointAt) / 1000;
    assert.match(text, new RegExp(`^drumcrawl_last_checkpoint_timestamp_seconds ${String(ckpt).replace('.', '\\.')}$`, 'm'));
    // The batch stages' backlogs and bounds (backlog-pace.ts) are gauges of the snapshot's numbers.
    assert.match(text, /^# TYPE drumcrawl_pending_pages gauge$/m);
    assert.match(text, new RegExp(`^drumcrawl_pending_pages_bound ${s.backlog!.pendingBound}$`, 'm'));
    assert.match(text, new RegExp(`^drumcrawl_content_backlog_bytes ${s.backlog!.contentBytes}$`, 'm'));
    // Every outcome code is one series, whatever characters it holds.
    assert.equal([...text.matchAll(/^drumcrawl_outcomes_total\{/gm)].length, Object.keys(s.outcomes).length);
  }), { numRuns: 300 });
});

test('build info: one series with version, commit and node labels, value 1', () => {
  const text = renderPrometheus(fc.sample(snapshotArb, 1)[0]!, { version: '1.2.3', commit: 'abc"d', node: 'v20.1.0' });
  assert.match(text, /^# TYPE drumcrawl_build_info gauge$/m);
  assert.match(text, /^drumcrawl_build_info\{commit="abc\\"d",node="v20\.1\.0",version="1\.2\.3"\} 1$/m);
});

test('the builder refuses names promtool warns about', () => {
  const bad: [string, 'counter' | 'gauge', string[]][] = [
    ['drumcrawl_cpu_ms_per_page', 'gauge', []],
    ['drumcrawl_megabytes_per_second', 'gauge', []],
    ['drumcrawl_wait_milliseconds', 'gauge', []],
    ['drumcrawl_uptime_minutes', 'gauge', []],
    ['drumcrawl_size_kb', 'gauge', []],
    ['drumcrawl_pages', 'counter', []],
    ['drumcrawl_queued_total', 'gauge', []],
    ['drumcrawl_pages_count', 'gauge', []],
    ['drumcrawl_state_gauge', 'gauge', []],
    ['drumcrawl:pages_total', 'counter', []],
    ['drumcrawl_pagesSeen_total', 'counter', []],
    ['drumcrawl_x', 'gauge', ['stopReason']],
    ['drumcrawl_x', 'gauge', ['le']],
    ['1drumcrawl', 'gauge', []],
  ];
  for (const [name, type, labels] of bad) {
    assert.notEqual(namingProblem(name, type, labels), null, name);
    assert.throws(() => new Exposition().family(name, type, 'help', [{ value: 1, labels: Object.fromEntries(labels.map((l) => [l, 'v'])) }]), name);
  }
  assert.equal(namingProblem('drumcrawl_bytes_total', 'counter'), null);
  assert.equal(namingProblem('drumcrawl_last_checkpoint_timestamp_seconds', 'gauge'), null);
  assert.throws(() => new Exposition().gauge('drumcrawl_a', 'h', 1).gauge('drumcrawl_a', 'h', 2), /twice/);
  assert.throws(() => new Exposition().gauge('drumcrawl_a', '', 1), /no help/);
  assert.throws(() => new Exposition().counter('drumcrawl_a_total', 'h', -1), /-1/);
  assert.throws(() => new Exposition().family('drumcrawl_a', 'gauge', 'h', [{ value: 1, labels: { a: 'x' } }, { value: 2, labels: { a: 'x' } }]), /two samples/);
});

/** The metrics text the status server served before this convention (drumcrawl_ names as they were). */
const OLD_STYLE = [
  '# HELP drumcrawl_state Crawl state (0 starting, 1 running, 2 paused, 3 stopping, 4 done, 5 stopped).', '# TYPE drumcrawl_state gauge', 'drumcrawl_state 1',
  '# HELP drumcrawl_megabytes_per_second MB per second.', '# TYPE drumcrawl_megabytes_per_second gauge', 'drumcrawl_megabytes_per_second 0.5',
  '# HELP drumcrawl_cpu_ms_per_page CPU ms per page.', '# TYPE drumcrawl_cpu_ms_per_page gauge', 'drumcrawl_cpu_ms_per_page 0.7',
  '# HELP drumcrawl_urls_seen Unique URLs.', '# TYPE drumcrawl_urls_seen gauge', 'drumcrawl_urls_seen 9000',
  '',
].join('\n');

test('the in-repo checker reports what promtool reports on the old names', () => {
  assert.deepEqual(promlint(OLD_STYLE), {
    errors: [],
    problems: [
      { metric: 'drumcrawl_cpu_ms_per_page', text: 'metric names should not contain abbreviated units' },
      { metric: 'drumcrawl_megabytes_per_second', text: 'use base unit "bytes" instead of "megabytes"' },
    ],
  });
});

test('the in-repo checker: parse errors', () => {
  const cases: [string, RegExp][] = [
    ['# TYPE a gauge\na 1\n# TYPE a gauge\n', /second TYPE|not contiguous/],
    ['a 1\n# TYPE a gauge\n', /TYPE for a after its samples/],
    ['# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\na 2\n', /not contiguous/],
    ['a{x="1",x="2"} 1\n', /label x repeated/],
    ['a{x="\\q"} 1\n', /invalid escape/],
    ['a one\n', /not a float/],
    ['a 1', /newline/],
    ['a{x="1"} 1\na{x="1"} 2\n', /duplicate series/],
    ['# HELP a x\n# HELP a y\na 1\n', /second HELP/],
    ['# TYPE a widget\n', /unknown type/],
  ];
  for (const [text, re] of cases) assert.match(promlint(text).errors.join('; '), re, JSON.stringify(text));
  assert.deepEqual(promlint('# HELP a_total x\n# TYPE a_total counter\na_total{b="\\"\\\\\\n"} 1 123\n'), { errors: [], problems: [] });
});
