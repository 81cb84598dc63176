import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import {
  RateMeter, renderPrometheus, formatPlainLine, ProgressPrinter, type StatusSnapshot, type CrawlState,
} from '../../src/monitor/stats.js';

function snap(over: Partial<StatusSnapshot> = {}): StatusSnapshot {
  return {
    state: 'running', stopReason: null, startedAt: new Date(0).toISOString(), elapsedMs: 65000, pages: 1234, requisites: 34, pagesOk: 1200,
    bytes: 5_000_000, pagesPerSec: 12.5, mbPerSec: 0.5, urlsSeen: 9000, urlsDiscovered: 40000, urlsQueued: 7000,
    duplicates: 3, inFlight: 4, parsing: 1, robotsFetches: 20, beast: { j: 2, qfSize: 10, qrSize: 5 },
    hosts: { active: 3, waiting: 7 }, ips: { active: 2, waiting: 1 }, dns: { lookups: 20, hitRate: 0.5 },
    robots: { lookups: 100, hitRate: 0.9 }, workers: { size: 2, replaced: 1 }, outcomes: { ok: 1200, 'CRAWL_FETCH_TIMEOUT': 34 },
    rssBytes: 100e6, cpuMsPerPage: 0.7, cpuSeconds: 0.9, urlsReady: 40, topPlds: [], checkpoints: 1, lastCheckpointAt: null, ...over,
  };
}

test('RateMeter: rate over the window', () => {
  const m = new RateMeter();
  assert.equal(m.rate(), 0);
  m.sample(0, 0);
  m.sample(1000, 100);
  m.sample(2000, 300);
  assert.equal(m.rate(), 150);
  for (let i = 3; i < 40; i++) m.sample(i * 1000, 300 + (i - 2) * 10);
  assert.equal(m.rate(), 10);
});

test('Prometheus text: HELP/TYPE per metric, escaped labels, numeric values', () => {
  const t = renderPrometheus(snap({ outcomes: { ok: 5, 'a"b': 1 } }));
  assert.match(t, /^# HELP drumcrawl_state /m);
  assert.match(t, /^# TYPE drumcrawl_pages_total counter$/m);
  assert.match(t, /^drumcrawl_pages_total 1234$/m);
  assert.match(t, /^drumcrawl_beast_j 2$/m);
  assert.match(t, /^drumcrawl_outcomes_total\{outcome="ok"\} 5$/m);
  assert.match(t, /^drumcrawl_outcomes_total\{outcome="a\\"b"\} 1$/m);
  for (const line of t.trim().split('\n')) {
    if (line.startsWith('#')) continue;
    assert.match(line, /^drumcrawl_[a-z_]+(\{[^}]*\})? -?[0-9.e+]+$/, line);
  }
});

test('progress printer: plain lines off a TTY, ANSI block on a TTY', () => {
  const out = new PassThrough();
  let text = '';
  out.on('data', (d: Buffer) => (text += d.toString()));
  const p = new ProgressPrinter(() => snap(), out, 'plain', 1000);
  p.print();
  p.print();
  assert.equal(text.split('\n').filter(Boolean).length, 2);
  assert.ok(!text.includes('\x1b['));
  assert.match(formatPlainLine(snap()), /pages=1234 \(12\.5\/s, 0\.50 MB\/s\) seen=9000 queued=7000/);
  text = '';
  const t = new ProgressPrinter(() => snap(), out, 'tty', 1000);
  t.print();
  t.print();
  // eslint-disable-next-line no-control-regex -- ESC is the terminal's cursor-up sequence under test
  assert.match(text, /\x1b\[4F/); // second draw moves up over the 4-line block
  assert.match(text, /BEAST j=2 QF 10/);
});
