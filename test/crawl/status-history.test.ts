/**
 * StatusHistory (src/monitor/status-history.ts), the samples behind the status page's 30-minute and
 * 24-hour views: bounded however long the crawl, and a pause (URLseen merge, checkpoint) shows in
 * the sample of the period it ended in — in the coarse (24-hour) ring too, although the coarse
 * sample is taken seconds later, when the fine sample's own maxima are 0 again.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StatusHistory } from '../../src/monitor/status-history.js';
import type { StatusSnapshot } from '../../src/monitor/stats.js';

interface Fake { pages: number; merges: { at: number; ms: number }[]; checkpoints: { at: number; ms: number }[] }

function snapshot(f: Fake): StatusSnapshot {
  const list = (recent: { at: number; ms: number }[]) => ({ count: recent.length, totalMs: 0, lastMs: 0, maxMs: 0, recent });
  return {
    pages: f.pages, bytes: 0, urlsSeen: f.pages * 10, urlsQueued: 0, outcomes: {}, cpuSeconds: f.pages / 1000, rssBytes: 1 << 28,
    run: {
      pagesStarted: f.pages, dueNow: true, heap: { usedBytes: 1 << 26, totalBytes: 1 << 27, limitBytes: 1 << 29 },
      loopDelay: { lastSecMaxMs: 3, maxMs: 3, p99Ms: 2 }, merges: { urlSeen: list(f.merges), contentSeen: list([]) }, checkpoints: list(f.checkpoints),
      frontier: {}, dns: { entries: 0, waiting: 0 }, threads: {}, ramBytes: 1 << 30,
    },
  } as unknown as StatusSnapshot;
}

test('status history: a pause is in the sample of the period it ended in, fine and coarse; the rings stay bounded', () => {
  const f: Fake = { pages: 0, merges: [], checkpoints: [] };
  const h = new StatusHistory(() => snapshot(f), { fineMs: 2000, fineSize: 30, coarseMs: 60_000, coarseSize: 10 });
  const t0 = 1_000_000;
  // A fine sample every 2 s for 20 minutes; a 7 s checkpoint ends at 10 s into minute 3, a 900 ms
  // URLseen merge at 40 s into minute 5.
  for (let t = t0; t <= t0 + 20 * 60_000; t += 2000) {
    f.pages += 100;
    if (t === t0 + 3 * 60_000 + 10_000) f.checkpoints.push({ at: t - 500, ms: 7000 });
    if (t === t0 + 5 * 60_000 + 40_000) f.merges.push({ at: t - 100, ms: 900 });
    h.sample(t);
  }
  const { fine, coarse } = h.read();
  assert.equal(fine.length, 30, 'the fine ring keeps its size');
  assert.equal(coarse.length, 10, 'the coarse ring keeps its size');
  const h2 = new StatusHistory(() => snapshot(f), { fineMs: 2000, fineSize: 1000, coarseMs: 60_000, coarseSize: 100 });
  f.pages = 0;
  f.merges = [];
  f.checkpoints = [];
  for (let t = t0; t <= t0 + 20 * 60_000; t += 2000) {
    f.pages += 100;
    if (t === t0 + 3 * 60_000 + 10_000) f.checkpoints.push({ at: t - 500, ms: 7000 });
    if (t === t0 + 5 * 60_000 + 40_000) f.merges.push({ at: t - 100, ms: 900 });
    h2.sample(t);
  }
  const r = h2.read();
  // Fine: exactly one sample carries each pause (the one right after it ended), never again.
  assert.deepEqual(r.fine.filter((s) => s.checkpointMs > 0).map((s) => [s.t - t0, s.checkpointMs]), [[3 * 60_000 + 10_000, 7000]]);
  assert.deepEqual(r.fine.filter((s) => s.mergeMs > 0).map((s) => [s.t - t0, s.mergeMs]), [[5 * 60_000 + 40_000, 900]]);
  // Coarse (one per minute, taken on the minute): the pauses show in the minute they ended in.
  assert.deepEqual(r.coarse.filter((s) => s.checkpointMs > 0).map((s) => [s.t - t0, s.checkpointMs]), [[4 * 60_000, 7000]]);
  assert.deepEqual(r.coarse.filter((s) => s.mergeMs > 0).map((s) => [s.t - t0, s.mergeMs]), [[6 * 60_000, 900]]);
  // The gauges the page charts: CPU, RSS, heap, the RAM budget.
  const last = r.coarse[r.coarse.length - 1]!;
  assert.equal(last.ramBytes, 1 << 30);
  assert.equal(last.rssBytes, 1 << 28);
  assert.equal(last.heapBytes, 1 << 26);
  assert.equal(last.cpuMs, Math.round(last.pages));
});
