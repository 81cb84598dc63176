/**
 * The host table's idle ring (src/frontier/politeness/idle-ring.ts): an eviction finds an evictable
 * host behind any number of held ones, never skips one that can go (a dry turn is sound, checked
 * against a model of the hosts' states by fast-check), and a table full of held hosts refuses new
 * hosts without looking at its ring again for each (the cost bench:soak found in a resumed crawl).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { EVICT_SCAN, IDLE_FREE, IDLE_GONE, IDLE_LATER, IdleRing } from '../../src/frontier/politeness/idle-ring.js';
import { FrontierUrl } from '../../src/frontier/index.js';
import { AddResult, Politeness } from '../../src/frontier/politeness/politeness.js';
import { resolveFrontierOptions } from '../../src/frontier/options.js';
import { fastOptions } from './fast-options.js';

/** A host as the model knows it: not idle, held until QR is read to `mark`, in a window until `due`, or free to go. */
type HostState = { k: 'gone' } | { k: 'held'; mark: number } | { k: 'window'; due: number } | { k: 'free' };

type Op =
  | { t: 'set'; h: number; s: HostState }
  | { t: 'tick'; ms: number }
  | { t: 'read'; n: number }
  | { t: 'evict'; want: number };

const HOSTS = 1500;
const stateArb: fc.Arbitrary<HostState> = fc.oneof(
  fc.constant({ k: 'gone' as const }),
  fc.record({ k: fc.constant('held' as const), mark: fc.integer({ min: 0, max: 40 }) }),
  fc.record({ k: fc.constant('window' as const), due: fc.integer({ min: 0, max: 400 }) }), // due: ms from the set
  fc.constant({ k: 'free' as const }),
);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ t: fc.constant('set' as const), h: fc.integer({ min: 0, max: HOSTS - 1 }), s: stateArb }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('tick' as const), ms: fc.integer({ min: 1, max: 60 }) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('read' as const), n: fc.integer({ min: 1, max: 5 }) }) },
  { weight: 4, arbitrary: fc.record({ t: fc.constant('evict' as const), want: fc.integer({ min: 1, max: 64 }) }) },
);

test('idle ring: a call that looks at nothing leaves no evictable host in the ring; a freeable host goes within ⌈ring / EVICT_SCAN⌉ + 1 calls (model)', () => {
  fc.assert(fc.property(fc.array(opArb, { minLength: 1, maxLength: 600 }), fc.integer({ min: 0, max: 1200 }), (ops, bulk) => {
    const ring = new IdleRing();
    const state = new Map<number, HostState>();
    const inRing = new Set<number>();
    let now = 1000;
    let qr = 0;
    const can = (h: number): boolean => {
      const s = state.get(h)!;
      return s.k === 'free' || (s.k === 'held' && qr >= s.mark) || (s.k === 'window' && now >= s.due);
    };
    const look = (h: number): number => {
      const s = state.get(h)!;
      if (s.k === 'gone') {
        inRing.delete(h);
        return IDLE_GONE;
      }
      return can(h) ? IDLE_FREE : IDLE_LATER;
    };
    const dueOf = (h: number): number => {
      const s = state.get(h)!;
      return s.k === 'window' ? s.due : 0;
    };
    const free = (h: number): void => {
      assert.ok(inRing.delete(h), `host ${h} freed once, from the ring`);
      state.set(h, { k: 'gone' });
    };
    const set = (h: number, s: HostState): void => {
      state.set(h, s.k === 'window' ? { k: 'window', due: now + s.due } : s);
      if (s.k !== 'gone') {
        ring.changed(h);
        inRing.add(h);
      }
    };
    // Many held hosts first, so that a turn takes several calls.
    for (let h = 0; h < bulk; h++) set(h, { k: 'held', mark: 30 });
    let fruitless = 0;
    for (const o of ops) {
      if (o.t === 'set') set(o.h, o.s);
      else if (o.t === 'tick') now += o.ms;
      else if (o.t === 'read') qr += o.n;
      else {
        const before = ring.looks;
        const anyCan = [...inRing].some(can);
        const size = ring.length;
        const freed = ring.evict(now, o.want, qr, look, dueOf, free);
        if (ring.looks === before) assert.ok(!anyCan, 'a call that looked at nothing while a host could go');
        fruitless = freed === 0 && anyCan ? fruitless + 1 : 0;
        assert.ok(fruitless <= Math.ceil(size / EVICT_SCAN) + 1, `${fruitless} calls freed nothing while a host could go (ring ${size})`);
        assert.ok(ring.looks - before <= EVICT_SCAN);
      }
      assert.equal(ring.length >= inRing.size, true);
    }
  }), { numRuns: 150 });
});

test('idle ring: a host that can go behind 2,000 held ones is freed by the fourth call at most', () => {
  const ring = new IdleRing();
  for (let h = 0; h < 2000; h++) ring.changed(h);
  ring.changed(5000);
  const freed: number[] = [];
  let calls = 0;
  while (freed.length === 0 && calls < 10) {
    calls++;
    ring.evict(0, 1, 0, (h) => (h === 5000 ? IDLE_FREE : IDLE_LATER), () => 0, (h) => freed.push(h));
  }
  assert.deepEqual(freed, [5000]);
  assert.ok(calls <= Math.ceil(2001 / EVICT_SCAN), `${calls} calls`);
});

test('a table full of held hosts refuses 20,000 new hosts after one turn of its ring, and takes one as soon as QR is read past them', () => {
  const HELD = 300;
  const pol = new Politeness(resolveFrontierOptions(fastOptions({ maxHosts: HELD, ramUrls: 1000 })), () => {});
  pol.qrMark = () => 1; // every answer is held until QR has been read to 1
  const now = 1_000_000;
  const url = (h: number): FrontierUrl => new FrontierUrl({ url: `http://h${h}.test/`, hostHi: h, hostLo: 7, pldHi: h, pldLo: 7, budget: 10, admitted: 1 });
  for (let h = 0; h < HELD; h++) assert.equal(pol.add(url(h), now), AddResult.NeedRobots);
  for (const q of pol.takeRobotsRequests(HELD)) pol.robotsKnown(q.hostHi, q.hostLo, { rules: null, ip: '10.0.0.1', expiresAt: now + 3_600_000 }, now);
  const looks0 = pol.evictLooks;
  let refused = 0;
  for (let h = HELD; h < HELD + 20_000; h++) if (!pol.hostRoom(h, 7, now)) refused++;
  assert.equal(refused, 20_000, 'no room: every host is held');
  const looks = pol.evictLooks - looks0;
  assert.ok(looks <= HELD + EVICT_SCAN, `${looks} ring entries looked at for 20,000 refusals (one turn is ${HELD})`);
  pol.qrVisited = 1;
  assert.equal(pol.hostRoom(HELD + 20_000, 7, now), true, 'QR read past the answers: an entry is free');
});

test('idle ring: a dry turn ends when the earliest politeness window it saw ends, when QR is read further, or when a host changes', () => {
  const ring = new IdleRing();
  const due = (h: number): number => 5000 + h;
  for (let h = 0; h < 1000; h++) ring.changed(h);
  /** Which hosts can go: at first those whose window has ended; then none (held); then host 5. */
  let can = (h: number, now: number): boolean => now >= due(h);
  const evict = (now: number, qr = 0): number => ring.evict(now, 1, qr, (h) => (can(h, now) ? IDLE_FREE : IDLE_LATER), due, () => undefined);
  /** Calls until one looks at nothing (the turn is dry); returns the looks then. */
  const dryAt = (now: number, qr: number): number => {
    for (let before = -1; before !== ring.looks; ) {
      before = ring.looks;
      assert.equal(evict(now, qr), 0);
    }
    return ring.looks;
  };
  /** Hosts freed by the calls of one turn (⌈1,000 / EVICT_SCAN⌉ = 2). */
  const turn = (now: number, qr: number): number => evict(now, qr) + evict(now, qr);
  let looks = dryAt(1000, 0);
  assert.equal(evict(4999), 0);
  assert.equal(ring.looks, looks, 'before the earliest window seen ends, a call looks at nothing');
  assert.equal(turn(5000, 0), 1, "host 0's window has ended");
  can = () => false; // held: every window has ended, QR not read past the answers
  looks = dryAt(1e9, 7);
  assert.equal(evict(1e9, 7), 0);
  assert.equal(ring.looks, looks, 'dry until QR is read further');
  can = () => true;
  assert.equal(evict(1e9, 8), 1, 'QR read further: a held host goes');
  can = () => false;
  looks = dryAt(2e9, 8);
  can = (h) => h === 5;
  assert.equal(evict(2e9, 8), 0);
  assert.equal(ring.looks, looks, 'no change reported: nothing looked at');
  ring.changed(5);
  assert.equal(turn(2e9, 8), 1, 'a host that changed ends the dry turn');
});
