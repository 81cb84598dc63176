/**
 * BEAST across a SIGKILL, against a simple model: what comes out of a reopened BEAST is exactly
 * what its last checkpoint held plus what was admitted and committed since — every URL once.
 *
 * The frontier reads URLs out of BEAST (into RAM), puts back those it has no room for (defer:
 * their host is full in RAM), commits admissions after every URLseen bucket (commitAppends) and
 * checkpoints now and then (its RAM snapshot covers what is out at that moment). After a crash the
 * read cursors are those of the checkpoint, so a URL read since then comes back from where it was
 * read. A deferred copy that became durable before its source's cursor moved would come back a
 * second time — the URL fetched twice within the resumed run (issue 15, item 7).
 *
 * fast-check drives random sequences of admit / read / defer / commitAppends / checkpoint, then a
 * crash (the store's handles dropped, nothing written), a reopen and a drain; its seed is printed
 * on failure.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { Beast, FileBeastStore, FrontierUrl } from '../../src/frontier/index.js';

const LONG = process.env.DRUMCRAWL_LONG === '1';

type Op =
  | { t: 'admit'; n: number; pld: number }
  | { t: 'read'; n: number }
  | { t: 'defer'; pick: number[] }
  | { t: 'commitAppends' }
  | { t: 'checkpoint' };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ t: fc.constant('admit' as const), n: fc.integer({ min: 1, max: 40 }), pld: fc.integer({ min: 0, max: 5 }) }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant('read' as const), n: fc.integer({ min: 1, max: 30 }) }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('defer' as const), pick: fc.array(fc.nat(), { maxLength: 20 }) }) },
  { weight: 2, arbitrary: fc.constant({ t: 'commitAppends' as const }) },
  { weight: 1, arbitrary: fc.constant({ t: 'checkpoint' as const }) },
);

const idOf = (u: FrontierUrl): number => Number(u.url.slice(u.url.lastIndexOf('/') + 1));

async function drain(b: Beast): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < 10_000; i++) {
    const got = await b.next(64);
    if (got.length === 0) return out;
    for (const u of got) out.push(idOf(u));
  }
  throw new Error('BEAST did not run dry');
}

/** Runs `ops`, crashes, reopens; returns what came out and what the model expects. */
async function run(dir: string, ops: readonly Op[]): Promise<{ out: number[]; expected: number[] }> {
  const mkStore = (): FileBeastStore => new FileBeastStore(dir, { compression: 'none', blockBytes: 512 });
  const opts = { initialQueues: 2, maxQueues: 8 };
  const st = mkStore();
  const b = await Beast.open(st, opts);
  // The model: URLs in BEAST now, out of it (read, not deferred), admitted since the last commit,
  // committed since the last checkpoint, and in BEAST at the last checkpoint.
  const inBeast = new Set<number>();
  const held: number[] = [];
  let uncommitted: number[] = [];
  let sinceCk: number[] = [];
  let atCk = new Set<number>();
  const admittedOfPld = new Map<number, number>();
  let id = 0;
  for (const o of ops) {
    if (o.t === 'admit') {
      for (let k = 0; k < o.n; k++) {
        const p = (admittedOfPld.get(o.pld) ?? 0) + 1;
        admittedOfPld.set(o.pld, p);
        const n = id++;
        b.place(new FrontierUrl({ url: `http://h.pld${o.pld}.test/${n}`, hostHi: o.pld, hostLo: 1, pldHi: o.pld, pldLo: 7, budget: 3, admitted: p }));
        inBeast.add(n);
        uncommitted.push(n);
      }
    } else if (o.t === 'read') {
      for (const u of await b.next(o.n)) {
        const n = idOf(u);
        assert.ok(inBeast.delete(n), `read ${n}, which is not in BEAST`);
        held.push(n);
      }
    } else if (o.t === 'defer') {
      for (const k of o.pick) {
        if (held.length === 0) break;
        const n = held.splice(k % held.length, 1)[0]!;
        b.defer(new FrontierUrl({ url: `http://h.pld0.test/${n}`, hostHi: 0, hostLo: 1, pldHi: 0, pldLo: 7, budget: 3, admitted: 1 }));
        inBeast.add(n);
      }
    } else if (o.t === 'commitAppends') {
      await b.commitAppends();
      sinceCk.push(...uncommitted);
      uncommitted = [];
    } else {
      await b.checkpoint();
      atCk = new Set(inBeast);
      sinceCk = [];
      uncommitted = [];
    }
  }
  // Crash: every handle dropped, nothing written.
  st.releaseAll();
  const b2 = await Beast.open(mkStore(), opts);
  const out = await drain(b2);
  await b2.close();
  const expected = [...new Set([...atCk, ...sinceCk])];
  return { out, expected };
}

test('BEAST after a crash holds every URL of its last checkpoint and of the commits since, each once (deferred copies included)', { timeout: 600_000 }, async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'beast-crash-'));
  let k = 0;
  try {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40 }), async (ops) => {
        const dir = path.join(root, String(k++));
        try {
          const { out, expected } = await run(dir, ops);
          const sorted = [...out].sort((x, y) => x - y);
          const twice = sorted.filter((x, i) => i > 0 && sorted[i - 1] === x);
          assert.deepEqual(twice, [], 'no URL comes out twice');
          assert.deepEqual(sorted, [...expected].sort((x, y) => x - y), 'exactly the checkpointed and committed URLs come out');
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: LONG ? 2000 : 150 },
    );
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
