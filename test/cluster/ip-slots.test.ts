/**
 * The per-IP slot rule across nodes (src/cluster/engine/ip-slots.ts) against simple models: slotStart is
 * the earliest allowed millisecond a brute-force scan finds; requests that k nodes start under the
 * rule are at least τ + ε apart across nodes, hence ≥ τ on any clock when the nodes' clocks differ
 * by at most ε; and two gates on a real nats-server register for an IP so that, once both are
 * effective, their windows never come closer than that.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { slotStart, defaultSlotMs, NodeIpGate, JOIN_MS, ipKey, type SlotRule } from '../../src/cluster/engine/ip-slots.js';
import { startNats } from './nats-server.js';
import { openEngine } from '../../src/cluster/engine/engine.js';
import { ClusterView } from '../../src/cluster/engine/view.js';

const rules = fc.record({ floorMs: fc.integer({ min: 1, max: 200 }), skewMs: fc.integer({ min: 0, max: 100 }) }).map(({ floorMs, skewMs }): SlotRule => ({ floorMs, skewMs, slotMs: defaultSlotMs(floorMs, skewMs) }));

test('slotStart: the first millisecond a scan of the slots allows (model)', () => {
  fc.assert(fc.property(rules, fc.integer({ min: 1, max: 6 }), fc.nat({ max: 5 }), fc.integer({ min: 0, max: 1e7 }), (rule, k, r0, t) => {
    const r = r0 % k;
    const model = (from: number): number => {
      if (k <= 1) return from;
      for (let x = from; ; x++) {
        const s = Math.floor(x / rule.slotMs);
        if (s % k === r && x - s * rule.slotMs < rule.slotMs - rule.floorMs - rule.skewMs) return x;
      }
    };
    assert.equal(slotStart(t, r, k, rule), model(t));
  }), { numRuns: 300 });
});

test('slotStart: across k nodes, starts are ≥ τ + ε apart; with clocks off by ≤ ε, ≥ τ', () => {
  fc.assert(fc.property(rules, fc.integer({ min: 2, max: 5 }), fc.array(fc.tuple(fc.nat({ max: 4 }), fc.integer({ min: 0, max: 200_000 })), { minLength: 2, maxLength: 200 }), fc.array(fc.double({ min: -0.5, max: 0.5, noNaN: true }), { minLength: 5, maxLength: 5 }), (rule, k, asks, offs) => {
    const starts = asks.map(([n, t]) => ({ n: n % k, at: slotStart(t, n % k, k, rule) }));
    for (const a of starts) {
      for (const b of starts) {
        if (a.n === b.n || b.at < a.at) continue;
        assert.ok(b.at - a.at >= rule.floorMs + rule.skewMs, `${a.n}@${a.at} then ${b.n}@${b.at}`);
        // node i's clock reads true time + offs[i]·ε: true gap = (b.at − ε·ob) − (a.at − ε·oa)
        const gap = (b.at - offs[b.n]! * rule.skewMs) - (a.at - offs[a.n]! * rule.skewMs);
        assert.ok(gap >= rule.floorMs - 1e-9, `true gap ${gap} < τ ${rule.floorMs}`);
      }
    }
  }), { numRuns: 200 });
});

test('registration: the first node is effective at once, a joiner from a slot boundary ≥ JOIN_MS ahead; then the windows alternate', { timeout: 60_000 }, async () => {
  const nats = await startNats();
  const ea = await openEngine(nats.url, 'slots', 'a');
  const eb = await openEngine(nats.url, 'slots', 'b');
  const va = new ClusterView(ea);
  const vb = new ClusterView(eb);
  await va.start();
  await vb.start();
  const rule: SlotRule = { floorMs: 70, skewMs: 50, slotMs: defaultSlotMs(70, 50) };
  const errors: unknown[] = [];
  const a = new NodeIpGate(ea, 'a', rule, 2, (k) => va.ips.get(k), (e) => errors.push(e));
  const b = new NodeIpGate(eb, 'b', rule, 2, (k) => vb.ips.get(k), (e) => errors.push(e));
  try {
    const ip = '127.1.0.9';
    const until = async (f: () => boolean, what: string): Promise<void> => {
      for (let i = 0; i < 400 && !f(); i++) await new Promise((r) => setTimeout(r, 25));
      assert.ok(f(), what);
    };
    const t0 = Date.now();
    a.earliest(ip, t0); // registers a
    await until(() => a.earliest(ip, Date.now()) <= Date.now(), 'a alone goes at once once registered');
    const tb = Date.now();
    b.earliest(ip, tb); // b joins
    await until(() => (va.ips.get(ipKey(ip))?.value as { m: unknown[] } | undefined)?.m.length === 2, 'a hears of b');
    const reg = va.ips.get(ipKey(ip))!.value as { m: { n: string; f: number }[] };
    const fb = reg.m.find((x) => x.n === 'b')!.f;
    assert.ok(fb >= tb + JOIN_MS && fb % rule.slotMs === 0, `b from ${fb}: a slot boundary ≥ ${tb + JOIN_MS}`);
    assert.ok(b.earliest(ip, fb - 1) >= fb, 'b does not start before it is effective');
    // From fb on, the two windows alternate: walk each node's allowed starts and check the gap,
    // from two slots before fb (a alone, unslotted: its last start must be τ + ε before b's first).
    const startsA: number[] = [];
    const startsB: number[] = [];
    for (let t = fb - 2 * rule.slotMs; t < fb + 20 * rule.slotMs; t += 7) {
      if (a.window(ip, t) === t) startsA.push(t);
      if (b.window(ip, t) === t) startsB.push(t);
    }
    assert.ok(startsA.length > 0 && startsB.length > 0, 'both get windows');
    for (const x of startsA) for (const y of startsB) assert.ok(Math.abs(x - y) >= rule.floorMs + rule.skewMs, `a@${x} b@${y}`);
    // Before fb, a alone: at once.
    assert.equal(a.window(ip, fb - rule.slotMs), fb - rule.slotMs);
    assert.deepEqual(errors, []);
  } finally {
    a.close();
    b.close();
    await va.stop();
    await vb.stop();
    await ea.close();
    await eb.close();
    await nats.stop();
  }
});

test('a joiner effective at a boundary it owns: the node alone before it stops starting τ + ε before it (both parities of the boundary)', () => {
  const rule: SlotRule = { floorMs: 70, skewMs: 50, slotMs: defaultSlotMs(70, 50) };
  const L = rule.slotMs;
  for (const fb of [101 * L, 102 * L]) {
    // a alone from 0, b from fb: b (rank 1 of 2) owns the slot at fb when fb / L is odd.
    const reg = { m: [{ n: 'a', f: 0 }, { n: 'b', f: fb }] };
    const watched = (): { value: unknown; revision: number } => ({ value: reg, revision: 1 });
    const engine = {} as never; // never used: both are registered already
    const a = new NodeIpGate(engine, 'a', rule, 2, watched, () => undefined);
    const b = new NodeIpGate(engine, 'b', rule, 2, watched, () => undefined);
    try {
      const ip = '127.1.0.9';
      const startsA: number[] = [];
      const startsB: number[] = [];
      for (let t = fb - 2 * L; t < fb + 4 * L; t += 1) {
        if (a.window(ip, t) === t) startsA.push(t);
        if (b.window(ip, t) === t) startsB.push(t);
      }
      assert.ok(startsA.some((x) => x < fb) && startsB.length > 0, 'a starts alone before fb, b after');
      let closest = Infinity;
      for (const x of startsA) for (const y of startsB) closest = Math.min(closest, Math.abs(x - y));
      assert.ok(closest >= rule.floorMs + rule.skewMs, `fb = ${fb / L}·L: a and b start ${closest} ms apart (τ + ε = ${rule.floorMs + rule.skewMs})`);
    } finally {
      a.close();
      b.close();
    }
  }
});
