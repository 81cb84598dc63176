/**
 * Leases (src/cluster/view.ts takeLease / releaseLease) on a real nats-server's KV bucket, against
 * a model of the lease table: the compare-and-set on the revision gives each partition to at most
 * one node however the takes and releases of several nodes interleave, including takes racing on
 * the same free lease; a taker learns the snapshot a released lease carries.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startNats } from './nats-server.js';
import { openEngine } from '../../src/cluster/engine.js';
import { takeLease, releaseLease, type Lease } from '../../src/cluster/view.js';

type Op = { kind: 'take'; nodes: number[] } | { kind: 'release'; to: number | null };

test('leases: at most one holder per partition, whatever the interleaving (model)', { timeout: 180_000 }, async () => {
  const nats = await startNats();
  const e = await openEngine(nats.url, 'leasetest', 'test');
  const NODES = ['a', 'b', 'c'];
  let run = 0;
  try {
    await fc.assert(fc.asyncProperty(
      fc.array(fc.oneof(
        fc.record({ kind: fc.constant('take' as const), nodes: fc.uniqueArray(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 3 }) }),
        fc.record({ kind: fc.constant('release' as const), to: fc.option(fc.integer({ min: 0, max: 2 })) }),
      ), { minLength: 1, maxLength: 12 }),
      async (ops: Op[]) => {
        const p = run++;
        // model: holder (null: absent), state, to, snapshot; and the holder's revision
        type Model = { node: string; state: 'held' | 'free'; to?: string; snapshot?: string } | null;
        let model: Model = null as Model;
        let rev = 0;
        let snapSeq = 0;
        for (const op of ops) {
          if (op.kind === 'take') {
            const takers = op.nodes.map((i) => NODES[i]!);
            const got = await Promise.all(takers.map((n) => takeLease(e, p, n)));
            const winners = takers.filter((_, i) => got[i] !== null);
            const m: Model = model;
            const eligible = takers.filter((n) => m === null || (m.state === 'held' && m.node === n) || (m.state === 'free' && (m.to === undefined || m.to === n)));
            if (eligible.length === 0) assert.deepEqual(winners, [], `nobody may take ${JSON.stringify(m)}`);
            else {
              assert.equal(winners.length, 1, `exactly one of ${eligible.join(',')} takes ${JSON.stringify(m)} (won: ${winners.join(',')})`);
              assert.ok(eligible.includes(winners[0]!));
              const g = got[takers.indexOf(winners[0]!)]!;
              if (m !== null && m.state === 'free') assert.equal(g.restore, m.snapshot, 'the taker learns the released snapshot');
              model = { node: winners[0]!, state: 'held' };
              rev = g.revision;
            }
          } else if (model !== null && model.state === 'held') {
            const to = op.to === null ? undefined : NODES[op.to];
            const snapshot = `s${p}.${snapSeq++}`;
            assert.equal(await releaseLease(e, p, model.node, rev, snapshot, to), true);
            // a second release with the same (now stale) revision loses
            assert.equal(await releaseLease(e, p, model.node, rev, snapshot, to), false);
            model = { node: model.node, state: 'free', snapshot, ...(to !== undefined ? { to } : {}) };
          }
          const cur = await e.kv.get(`lease.${p}`);
          if (model === null) assert.equal(cur, null);
          else {
            const l = cur!.json<Lease>();
            assert.equal(l.node, model.node);
            assert.equal(l.state, model.state);
          }
        }
      },
    ), { numRuns: 40 });
  } finally {
    await e.close();
    await nats.stop();
  }
});
