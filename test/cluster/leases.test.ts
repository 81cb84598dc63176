/**
 * Leases (src/cluster/engine/view.ts takeLease / releaseLease) on a real nats-server's KV bucket, against
 * a model of the lease table: the compare-and-set on the revision gives each partition to at most
 * one node however the takes and releases of several nodes interleave, including takes racing on
 * the same free lease; a taker learns the snapshot a released lease carries. `cluster forget`
 * frees a lost node's leases and ends its IP registrations, and refuses a live node.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startNats } from './nats-server.js';
import { openEngine, jsonBytes } from '../../src/cluster/engine/engine.js';
import { takeLease, releaseLease, LIVE_MS, type CrawlMeta, type Lease } from '../../src/cluster/engine/view.js';
import { forgetNode } from '../../src/cluster/forget.js';
import { JOIN_MS, ipKey } from '../../src/cluster/engine/ip-slots.js';

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

test('forget: a lost node\'s held leases become free to any node (a restore under way keeps its snapshot), hand-offs to it are redirected, its IP registrations end a boundary ≥ JOIN_MS ahead; a live node is refused', { timeout: 60_000 }, async () => {
  const nats = await startNats();
  const e = await openEngine(nats.url, 'forgettest', 'test');
  try {
    const meta = { version: 1, crawl: 'forgettest', partitions: 5, config: {}, expect: 1, slotMs: 500, floorMs: 20, skewMs: 50, createdAt: new Date().toISOString() } as CrawlMeta;
    const at = new Date().toISOString();
    const lease = (l: Lease): Uint8Array => jsonBytes(l);
    await e.kv.put('node.a', jsonBytes({ id: 'a', state: 'active', at: Date.now(), hosted: [0, 3], settled: [], quiet: false, acked: 0 }));
    await e.kv.put('lease.0', lease({ node: 'a', state: 'held', at }));
    await e.kv.put('lease.1', lease({ node: 'b', state: 'held', at }));
    await e.kv.put('lease.2', lease({ node: 'b', state: 'free', snapshot: 's2', to: 'a', at }));
    await e.kv.put('lease.3', lease({ node: 'a', state: 'held', snapshot: 's3', at }));
    await e.kv.put('lease.4', lease({ node: 'b', state: 'free', snapshot: 's4', to: 'c', at }));
    await e.kv.put(ipKey('127.0.0.9'), jsonBytes({ m: [{ n: 'a', f: 0 }, { n: 'b', f: 0 }] }));
    await e.kv.put(ipKey('127.0.0.10'), jsonBytes({ m: [{ n: 'b', f: 0 }] }));

    await assert.rejects(forgetNode(e, meta, 'a'), (err: Error & { code?: string }) => err.code === 'CRAWL_CLUSTER_CONFIG' && /live/.test(err.message));
    assert.equal((await e.kv.get('lease.0'))!.json<Lease>().state, 'held', 'a refused forget changes nothing');

    const now = Date.now() + LIVE_MS + 1000;
    const r = await forgetNode(e, meta, 'a', now);
    assert.deepEqual(r, { released: [0, 3], redirected: [2], ips: 1 });
    assert.equal(await takeLease(e, 1, 'c'), null, 'another node\'s held lease stays its own');
    assert.equal(await takeLease(e, 4, 'b'), null, 'a hand-off to another node stays that node\'s');
    const t0 = await takeLease(e, 0, 'b');
    assert.ok(t0 !== null && t0.restore === undefined, 'a held lease: free to any node, nothing to restore');
    const t3 = await takeLease(e, 3, 'c');
    assert.equal(t3?.restore, 's3', 'a restore cut short: its snapshot is still the state');
    const t2 = await takeLease(e, 2, 'c');
    assert.equal(t2?.restore, 's2', 'a hand-off to the lost node: any node takes it with its snapshot');
    const reg = (await e.kv.get(ipKey('127.0.0.9')))!.json<{ m: { n: string; f: number; u?: number }[] }>();
    const ua = reg.m.find((x) => x.n === 'a')!.u!;
    assert.ok(ua >= now + JOIN_MS && ua % meta.slotMs === 0 && ua < now + JOIN_MS + meta.slotMs, `a leaves the IP at a slot boundary ≥ JOIN_MS ahead (${ua - now} ms)`);
    assert.equal(reg.m.find((x) => x.n === 'b')!.u, undefined);
    assert.equal((await e.kv.get('node.a'))?.operation ?? 'DEL', 'DEL', 'its member record is gone (out of the placement)');
  } finally {
    await e.close();
    await nats.stop();
  }
});
