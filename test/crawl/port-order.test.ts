/**
 * The frontier port's operation order (src/crawl/ports/port-order.ts): admissions do not wait for a
 * refill under way (a QR pass held URLseen's result chunks for its whole length), but do wait for a
 * commit, a readmission or the close registered before them; commits and refills wait for
 * everything registered before them, admissions included. fast-check drives random sequences of
 * registrations and completions against that rule.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { PortOrder } from '../../src/crawl/ports/port-order.js';

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

test('an admission runs while a refill is under way, and a commit after both', async () => {
  const order = new PortOrder();
  const log: string[] = [];
  let endRefill!: () => void;
  const refill = order.refill(async () => {
    log.push('refill start');
    await new Promise<void>((r) => (endRefill = r));
    log.push('refill end');
  });
  await tick();
  const admitted = order.admit(() => void log.push('admit'));
  const commit = order.exclusive(async () => void log.push('commit'));
  const after = order.admit(() => void log.push('admit after commit'));
  await admitted;
  assert.deepEqual(log, ['refill start', 'admit'], 'the admission did not wait for the refill');
  endRefill();
  await Promise.all([refill, commit, after]);
  assert.deepEqual(log, ['refill start', 'admit', 'refill end', 'commit', 'admit after commit']);
});

type Op = { t: 'refill' | 'exclusive' | 'admit' } | { t: 'finish'; pick: number } | { t: 'tick' };

test('order model: an operation starts only after those it must follow have ended; admissions never wait for a refill', async () => {
  const opArb: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ t: fc.constantFrom('refill' as const, 'exclusive' as const, 'admit' as const) }),
    fc.record({ t: fc.constant('finish' as const), pick: fc.nat() }),
    fc.constant({ t: 'tick' as const }),
  );
  await fc.assert(fc.asyncProperty(fc.array(opArb, { maxLength: 40 }), async (ops) => {
    const order = new PortOrder();
    type Rec = { id: number; kind: 'refill' | 'exclusive' | 'admit'; started: boolean; ended: boolean; end?: () => void };
    const recs: Rec[] = [];
    const mustFollow = (r: Rec, before: Rec): boolean => r.kind !== 'admit' || before.kind !== 'refill';
    const onStart = (r: Rec): void => {
      for (const b of recs) {
        if (b.id >= r.id) break;
        if (mustFollow(r, b)) assert.ok(b.ended, `${r.kind} #${r.id} started before ${b.kind} #${b.id} ended`);
      }
      r.started = true;
    };
    const all: Promise<void>[] = [];
    for (const o of ops) {
      if (o.t === 'tick') {
        await tick();
        // Liveness: an admission whose earlier commits and admissions have ended has run, whatever refills are under way.
        for (const r of recs) {
          if (r.kind === 'admit' && !r.started) assert.ok(recs.some((b) => b.id < r.id && b.kind !== 'refill' && !b.ended), `admission #${r.id} waits for a refill`);
        }
      }
      else if (o.t === 'finish') {
        const open = recs.filter((r) => r.started && !r.ended && r.end !== undefined);
        if (open.length > 0) open[o.pick % open.length]!.end!();
      } else {
        const r: Rec = { id: recs.length, kind: o.t, started: false, ended: false };
        recs.push(r);
        if (o.t === 'admit') {
          all.push(order.admit(() => {
            onStart(r);
            r.ended = true;
          }));
        } else {
          const fn = async (): Promise<void> => {
            onStart(r);
            await new Promise<void>((res) => (r.end = res));
            r.ended = true;
          };
          all.push(o.t === 'refill' ? order.refill(fn) : order.exclusive(fn));
        }
      }
    }
    // Finish everything: each started operation ends in turn until all have run.
    for (let guard = 0; guard < 1000 && recs.some((r) => !r.ended); guard++) {
      await tick();
      for (const r of recs) if (r.started && !r.ended) r.end?.();
    }
    await Promise.all(all);
    assert.ok(recs.every((r) => r.started && r.ended));
  }), { numRuns: 200 });
});
