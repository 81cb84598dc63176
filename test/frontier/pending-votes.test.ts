/**
 * STAR's pending votes (src/frontier/star/pending-votes.ts) against a simple model: a ring of
 * `capacity` slots, each vote held once while live, the slot at the head evicted when the ring is
 * full, and take() returning the live votes of the promoted sources in slot order. Every add is
 * also checked against the RAM bound: the key index holds exactly the live votes, however many
 * votes passed through.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { PendingVotes } from '../../src/frontier/star/pending-votes.js';
import { U64Map } from '../../src/util/u64-map.js';

type Vote = [number, number, number, number]; // [sHi, sLo ⊕ slot, tHi, tLo]
type Step = { t: 'add'; src: number; slot: number; dst: number } | { t: 'take'; srcs: number[] };

/** The model: slots of [source, vote] or null, the head, and the evictions. */
class Model {
  readonly slots: ({ src: number; vote: Vote } | null)[];
  head = 0;
  evicted = 0;
  constructor(readonly capacity: number) {
    this.slots = Array.from({ length: capacity }, () => null);
  }
  add(src: number, vote: Vote): void {
    if (this.slots.some((s) => s !== null && s.vote.every((w, i) => w === vote[i]))) return;
    if (this.slots[this.head] !== null) this.evicted++;
    this.slots[this.head] = { src, vote };
    this.head = (this.head + 1) % this.capacity;
  }
  take(srcs: Set<number>): Vote[] {
    const out: Vote[] = [];
    for (let i = 0; i < this.capacity; i++) {
      const s = this.slots[i];
      if (s !== null && srcs.has(s.src)) {
        out.push(s.vote);
        this.slots[i] = null;
      }
    }
    return out;
  }
  get size(): number {
    return this.slots.filter((s) => s !== null).length;
  }
}

/** Source n's key (hi, lo): distinct words per source. */
const srcKey = (n: number): [number, number] => [0x1000 + n, (Math.imul(n + 1, 0x9e3779b1) >>> 0)];

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ t: fc.constant('add' as const), src: fc.nat({ max: 5 }), slot: fc.nat({ max: 3 }), dst: fc.nat({ max: 5 }) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('take' as const), srcs: fc.uniqueArray(fc.nat({ max: 5 }), { maxLength: 3 }) }) },
);

test('pending votes equal the ring model through evictions and promotions, and index only the live votes', () => {
  fc.assert(fc.property(fc.integer({ min: 1, max: 8 }), fc.array(stepArb, { maxLength: 300 }), (capacity, steps) => {
    const pv = new PendingVotes(capacity);
    const model = new Model(capacity);
    const index = (pv as unknown as { byKey: U64Map }).byKey;
    for (const s of steps) {
      if (s.t === 'add') {
        const [hi, lo] = srcKey(s.src);
        const [dhi, dlo] = srcKey(s.dst + 100);
        const vote: Vote = [hi, (lo ^ s.slot) >>> 0, dhi, dlo];
        pv.add(hi, lo, Uint32Array.from(vote), 0);
        model.add(s.src, vote);
      } else {
        const trusted = new U64Map(8);
        for (const n of s.srcs) trusted.set(...srcKey(n), 1);
        const got = pv.take(trusted);
        const want = model.take(new Set(s.srcs));
        assert.deepEqual([...got], want.flat());
      }
      assert.equal(pv.size, model.size);
      assert.equal(pv.evicted, model.evicted);
      assert.equal(index.size, pv.size, 'the key index holds the live votes only');
    }
  }));
});
