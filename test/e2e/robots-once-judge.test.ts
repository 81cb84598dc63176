/**
 * The robots-once judge (robots-once-judge.ts) on hand-made logs: a repeat is excused only when the
 * earlier request was in flight at a kill (sent by the killed process — stamped before the kill or
 * within the allowance after it — its answer ending less than the allowance before the kill) and
 * the repeat came after that kill; everything else within the period is a
 * repeat, and requests a period apart are not.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { judgeRobotsOnce, ROBOTS_ANSWER_LAG_MS } from './robots-once-judge.js';

const K = 1_000_000; // the kill
const A = ROBOTS_ANSWER_LAG_MS;

test('robots-once judge: only a request in flight at a kill may be repeated', () => {
  const reqs = [
    { host: 'inflight.a', start: K - 30, end: K + 5 }, { host: 'inflight.a', start: K + 4000, end: K + 4001 },
    { host: 'justdone.a', start: K - 40, end: K - A + 1 }, { host: 'justdone.a', start: K + 4000, end: K + 4001 },
    { host: 'received.a', start: K - 300, end: K - A - 1 }, { host: 'received.a', start: K + 4000, end: K + 4001 },
    { host: 'beforekill.a', start: K - 500, end: K - 10 }, { host: 'beforekill.a', start: K - 5, end: K - 4 },
    { host: 'afterkill.a', start: K + A + 10, end: K + A + 20 }, { host: 'afterkill.a', start: K + 5000, end: K + 5001 },
    { host: 'noend.a', start: K - 30 }, { host: 'noend.a', start: K + 4000 },
    { host: 'period.a', start: K - 3_700_000, end: K - 3_699_999 }, { host: 'period.a', start: K + 10, end: K + 20 },
    { host: 'stamped.late.a', start: K + 3, end: K + 4 }, { host: 'stamped.late.a', start: K + 4000, end: K + 4001 },
    { host: 'once.a', start: K - 30, end: K + 5 },
  ];
  const v = judgeRobotsOnce(reqs, { periodMs: 3_600_000, kills: [K] });
  assert.equal(v.hosts, 9);
  assert.equal(v.requests, reqs.length);
  assert.deepEqual(v.excused.sort(), ['inflight.a (2 requests)', 'justdone.a (2 requests)', 'stamped.late.a (2 requests)']);
  assert.deepEqual(v.repeated.sort(), ['afterkill.a (2 requests)', 'beforekill.a (2 requests)', 'noend.a (2 requests)', 'received.a (2 requests)']);
  // Without the kill nothing is excused; a wider allowance excuses the answer received 101 ms before.
  assert.equal(judgeRobotsOnce(reqs, { periodMs: 3_600_000 }).repeated.length, 7);
  assert.ok(judgeRobotsOnce(reqs, { periodMs: 3_600_000, kills: [K], allowanceMs: A + 2 }).excused.includes('received.a (2 requests)'));
});

test('robots-once judge: a third request is a repeat even when the second was excused', () => {
  const reqs = [
    { host: 'x.a', start: K - 30, end: K + 5 }, { host: 'x.a', start: K + 500, end: K + 510 }, { host: 'x.a', start: K + 4000, end: K + 4001 },
  ];
  const v = judgeRobotsOnce(reqs, { periodMs: 3_600_000, kills: [K] });
  assert.deepEqual(v.repeated, ['x.a (3 requests)']);
  assert.deepEqual(v.excused, []);
});
