/**
 * The stop/resume suite's judge (stop-resume-judge.ts) on hand-made request logs: it lets through
 * exactly a SIGKILL's in-flight window and fetches a graceful stop aborted in that same run, and
 * flags every other repeat — within a run, of a page durable at the kill, of a page finished
 * before the last checkpoint, after a graceful stop that did not abort it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IN_FLIGHT_SLACK_MS, repeatedRequests, type RunRecord } from './stop-resume-judge.js';

const run = (stop: string, from: number, to: number, kill?: { done: string[]; checkpointStart: number }): RunRecord => ({
  stop, spawnedAt: from, exitedAt: to, readyAt: null,
  killedAt: kill !== undefined ? to - 1 : null,
  doneAtKill: kill !== undefined ? new Set(kill.done) : null,
  checkpointStartAtKill: kill?.checkpointStart ?? null,
});

/** Requests (url, start) in start order. */
const log = (...reqs: [string, number][]) => ({ pageFetches: reqs.map(([u]) => u), pageStarts: reqs.map(([, t]) => t) });

const killed = run('sigkill', 0, 10_000, { done: ['/durable'], checkpointStart: 8_000 });
const graceful = run('sigint', 0, 10_000);
const next = run('end', 11_000, 20_000);

test('a SIGKILL\'s in-flight window may be fetched again in the next run; nothing else may', () => {
  const ok = repeatedRequests(log(['/a', 9_500], ['/b', 8_000 - IN_FLIGHT_SLACK_MS], ['/a', 12_000], ['/b', 12_500]), [killed, next], new Map());
  assert.deepEqual(ok.bad, []);
  assert.equal(ok.allowed, 2);
  const bad = repeatedRequests(log(['/durable', 9_500], ['/old', 8_000 - IN_FLIGHT_SLACK_MS - 1], ['/durable', 12_000], ['/old', 12_500]), [killed, next], new Map());
  assert.equal(bad.bad.length, 2, bad.bad.join('\n'));
  assert.match(bad.bad[0]!, /durable \(in done\.log\)/);
  assert.match(bad.bad[1]!, /before the last checkpoint/);
});

test('within one run no URL is fetched twice, whatever ended the run', () => {
  for (const r of [killed, graceful]) {
    const j = repeatedRequests(log(['/a', 9_000], ['/a', 9_400]), [r, next], new Map([['/a', [9_300]]]));
    assert.deepEqual(j.bad, ['/a: requested twice within run 1 (' + r.stop + '), 400 ms apart']);
  }
});

test('after a graceful stop only a fetch that stop aborted (in that run) is fetched again', () => {
  const reqs = log(['/x', 9_000], ['/x', 12_000]);
  assert.deepEqual(repeatedRequests(reqs, [graceful, next], new Map([['/x', [9_900]]])).bad, []);
  assert.equal(repeatedRequests(reqs, [graceful, next], new Map()).bad.length, 1, 'not aborted');
  assert.equal(repeatedRequests(reqs, [graceful, next], new Map([['/x', [15_000]]])).bad.length, 1, 'aborted, but in another run');
});

test('a URL fetched once, or in no run at all, is judged accordingly', () => {
  assert.deepEqual(repeatedRequests(log(['/a', 1], ['/b', 2], ['/c', 12_000]), [killed, next], new Map()), { bad: [], allowed: 0, windowMs: [] });
  assert.equal(repeatedRequests(log(['/a', 10_500], ['/a', 10_600]), [killed, next], new Map()).bad.length, 1, 'between runs');
});
