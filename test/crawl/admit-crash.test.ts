/**
 * URLseen → BEAST across crashes (src/state/admit-log.ts, resume-dedup.ts): the unique URLs of a
 * URLseen bucket merge are made durable in BEAST before DRUM commits the bucket, so a crash between
 * the two makes the next run's first merge report them unique again; the admit log must name them
 * so that they are not admitted a second time (two copies in BEAST are two requests within one
 * run), and must never name a URL that is not in BEAST (that URL would be lost).
 *
 * The model is the pipeline's wiring of the real parts — a URLseen DRUM (4 buckets, key-only,
 * deliver 'unique'), the Frontier on disk, AdmitLog and ResumeDedup — fed URLs in slices, each
 * slice followed by a merge round, with a frontier checkpoint now and then. A run crashes at the
 * n-th passage of a crash point: a step of the per-bucket commit chain (delivery, before BEAST's
 * commit, after it, after the admit log's part), the end of a merge round, a checkpoint, or the
 * opening of a resumed run. The crash is a run abandoned at an await where no I/O is in flight, so
 * the files are what a SIGKILL there leaves (the page cache keeps every completed write); the
 * next run reopens them. After a last run without a crash, every URL in BEAST is drained:
 *   - no URL is there twice;
 *   - every URL submitted is there (nothing lost: the URLs of a merge round a crash cut short are
 *     submitted again by the next run, as the pipeline fetches their pages again);
 *   - nothing else is there.
 * fast-check chooses the URL streams and the crash points (its seed is printed on failure); the
 * examples pin the sequences that reach a re-delivered bucket which another bucket's commit follows.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { Drum, type DrumResult } from '../../src/drum/index.js';
import { Frontier, FrontierUrl, UrlKind, encodeFrontierUrl } from '../../src/frontier/index.js';
import { AdmitLog } from '../../src/state/admit-log.js';
import { ResumeDedup } from '../../src/state/resume-dedup.js';
import { fastOptions } from '../frontier/fast-options.js';

const LONG = process.env.DRUMCRAWL_LONG !== undefined && process.env.DRUMCRAWL_LONG !== '';
const HOSTS = 12;
const POINTS = ['opened', 'deliver', 'before-beast', 'beast-committed', 'admits-done', 'merged', 'checkpointed'] as const;
type Point = (typeof POINTS)[number];
/** Crash at the n-th (1-based) passage of `point` (of its passages for `bucket` when given). */
interface Crash { point: Point; n: number; bucket?: number }

const keyOf = (id: number): [number, number] => [Math.imul(id + 1, 0x9e3779b1) >>> 0, id];
const frontierOpts = fastOptions({ ramUrls: 500, maxUrlsPerHost: 50, beast: { initialQueues: 2, maxQueues: 16 } });

function record(id: number): Uint8Array {
  const h = id % HOSTS;
  return encodeFrontierUrl(new FrontierUrl({ url: `http://h${h}.test/u${id}`, hostHi: 0x1000 + h, hostLo: h, pldHi: h, pldLo: 7, budget: 10, admitted: 1 }));
}

class Crashed extends Error {}

/**
 * One run of the model: open the state in `dir`, submit `slices` (a merge round after each, a
 * checkpoint after every second one), or crash at `crash`. Returns the URLs of the slices whose
 * merge round did not complete (the pipeline fetches their pages again, so the next run submits
 * them again).
 */
async function run(dir: string, slices: number[][], crash: Crash | null): Promise<number[]> {
  const seen = new Map<string, number>();
  let signal!: (e: Crashed) => void;
  const crashed = new Promise<never>((_, reject) => { signal = reject; });
  crashed.catch(() => undefined);
  /** Resolves, or never does (the run ends here: a SIGKILL at this await). */
  const at = (point: Point, bucket?: number): Promise<void> => {
    if (crash === null || crash.point !== point || (crash.bucket !== undefined && crash.bucket !== bucket)) return Promise.resolve();
    const k = `${point}:${crash.bucket ?? ''}`;
    const n = (seen.get(k) ?? 0) + 1;
    seen.set(k, n);
    if (n !== crash.n) return Promise.resolve();
    signal(new Crashed(`${point} ${n}`));
    return new Promise<void>(() => undefined);
  };
  let completed = 0;
  const body = async (): Promise<void> => {
    let now = 1e9;
    const frontier = await Frontier.open(path.join(dir, 'frontier'), frontierOpts, () => now);
    const again = new ResumeDedup();
    const { log, redelivered } = await AdmitLog.open(dir, frontier.admitMark);
    again.setRedelivered(redelivered);
    await at('opened');
    const aux = new Uint8Array(4);
    const view = new DataView(aux.buffer);
    const drum = await Drum.open(path.join(dir, 'urlseen'), {
      buckets: 4, valueBytes: 0, deliver: 'unique', bufferBytes: 4096, bucketBytes: 1 << 20, resultChunk: 7,
      onResults: async (batch: DrumResult[]) => {
        for (const r of batch) {
          log.add(r.keyHi, r.keyLo);
          if (!again.keepUnique(r.keyHi, r.keyLo)) continue;
          const id = new DataView(r.aux!.buffer, r.aux!.byteOffset, 4).getUint32(0, true);
          frontier.admitRecord(record(id), 10, 1);
        }
        await at('deliver');
      },
      beforeCommit: async (bucket: number) => {
        await log.beforeCommit(bucket, async (mark) => {
          await at('before-beast', bucket);
          await frontier.commitAdmits(mark);
          await at('beast-committed', bucket);
        });
        await at('admits-done', bucket);
      },
    });
    for (let s = 0; s < slices.length; s++) {
      for (const id of slices[s]!) {
        const [hi, lo] = keyOf(id);
        view.setUint32(0, id, true);
        drum.checkUpdate(hi, lo, null, aux);
      }
      await drum.merge();
      again.mergeEnded();
      completed = s + 1;
      await at('merged');
      if (s % 2 === 1) {
        await frontier.commit();
        await at('checkpointed');
      }
      now += 1000;
    }
    await drum.close();
    await frontier.close();
  };
  try {
    await Promise.race([body(), crashed]);
  } catch (e) {
    if (!(e instanceof Crashed)) throw e;
  }
  return slices.slice(completed).flat();
}

/** Every URL left in the frontier, in hand-out order (a drain without crash). */
async function drain(dir: string): Promise<number[]> {
  let now = 2e9;
  const f = await Frontier.open(path.join(dir, 'frontier'), frontierOpts, () => now);
  const got: number[] = [];
  for (let i = 0; i < 100_000 && !f.isEmpty(); i++) {
    await f.refill();
    for (const r of f.takeRobotsRequests(1000)) f.scheduleRobotsFetch(r.hostHi, r.hostLo, `10.0.0.${r.hostLo % 5}`);
    for (const u of f.nextReady(now, 10_000)) {
      if (u.kind === UrlKind.Robots) f.robotsKnown(u.hostHi, u.hostLo, { rules: null, ip: u.ip, expiresAt: Infinity });
      else got.push(Number(u.url.slice(u.url.lastIndexOf('/u') + 2)));
      f.fetchDone(u);
    }
    now += 1000;
  }
  assert.ok(f.isEmpty(), 'drained');
  await f.close();
  return got;
}

/** The runs (each crashing at its point), a last run without a crash, the drain; the verdict. */
async function scenario(runs: { slices: number[][]; crash: Crash | null }[]): Promise<void> {
  // On tmpfs when there is one: the model's fsyncs (DRUM's and BEAST's commits) cost nothing there,
  // and a crash here is a process-level one, which the page cache survives all the same.
  const dir = mkdtempSync(path.join(existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), 'dc-admit-crash-'));
  try {
    const submitted = new Set<number>();
    let resubmit: number[] = [];
    for (const r of [...runs, { slices: [], crash: null }]) {
      for (const s of r.slices) for (const id of s) submitted.add(id);
      resubmit = await run(dir, [resubmit, ...r.slices], r.crash);
    }
    const got = await drain(dir);
    const count = new Map<number, number>();
    for (const id of got) count.set(id, (count.get(id) ?? 0) + 1);
    const twice = [...count].filter(([, n]) => n > 1).map(([id]) => id).sort((a, b) => a - b);
    assert.deepEqual(twice, [], 'no URL is in BEAST twice');
    const lost = [...submitted].filter((id) => !count.has(id)).sort((a, b) => a - b);
    assert.deepEqual(lost, [], 'every URL submitted is in BEAST');
    assert.deepEqual([...count.keys()].filter((id) => !submitted.has(id)), [], 'nothing else is in BEAST');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const slicesArb = fc.array(fc.array(fc.integer({ min: 0, max: 400 }), { minLength: 1, maxLength: 120 }), { minLength: 1, maxLength: 5 });
const crashArb: fc.Arbitrary<Crash> = fc.record({
  point: fc.constantFrom(...POINTS),
  n: fc.integer({ min: 1, max: 6 }),
  bucket: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
}).map((c) => (c.bucket === undefined ? { point: c.point, n: c.n } : c));

/** Three slices of URLs spread over the four buckets (ids 0–199), then more (200–399). */
const wide = (from: number): number[][] => [0, 1, 2].map((s) => Array.from({ length: 60 }, (_, i) => from + s * 60 + i));

test('URLseen → BEAST: after crashes at any step of the commit chain, BEAST holds every merged URL exactly once', { timeout: LONG ? 1_200_000 : 300_000 }, async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(fc.record({ slices: slicesArb, crash: crashArb }), { minLength: 1, maxLength: 4 }), async (runs) => {
      await scenario(runs);
    }),
    {
      numRuns: LONG ? 400 : 60,
      examples: [
        // A kill after BEAST's commit of a bucket, before the admit log recorded it.
        [[{ slices: wide(0), crash: { point: 'beast-committed', n: 2 } }]],
        // A kill after bucket 3's part of the chain, before DRUM committed it; the resumed run's
        // first round commits bucket 0 (new URLs) and is killed before it re-delivers bucket 3.
        [[{ slices: wide(0), crash: { point: 'admits-done', n: 1, bucket: 3 } }, { slices: wide(200), crash: { point: 'admits-done', n: 1, bucket: 0 } }]],
        // The same, the second kill right after bucket 0's BEAST commit.
        [[{ slices: wide(0), crash: { point: 'admits-done', n: 1, bucket: 3 } }, { slices: wide(200), crash: { point: 'beast-committed', n: 1, bucket: 1 } }]],
        // A kill between writing the admit log's record and BEAST's commit, then one in the next run.
        [[{ slices: wide(0), crash: { point: 'before-beast', n: 1, bucket: 2 } }, { slices: wide(200), crash: { point: 'admits-done', n: 1, bucket: 1 } }]],
      ],
    },
  );
});
