/**
 * Shared settings of the fuzz campaign (test/fuzz/*-fuzz.test.ts). `npm test` runs a short slice
 * of every target (a few seconds each); `npm run test:long` (DRUMCRAWL_LONG=1) runs the long
 * campaign. DRUMCRAWL_FUZZ_SEED=<n> replays a run: fast-check prints the seed and the shrunk
 * counterexample of any failure, and each target logs the seed it used.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';

export const LONG = process.env.DRUMCRAWL_LONG !== undefined && process.env.DRUMCRAWL_LONG !== '';
const envSeed = Number(process.env.DRUMCRAWL_FUZZ_SEED);
export const SEED = Number.isSafeInteger(envSeed) ? envSeed : (Date.now() ^ (process.pid << 8)) | 0;

/** Runs per target: `short` in npm test, `long` under DRUMCRAWL_LONG. */
export function runs(short: number, long: number): number {
  return LONG ? long : short;
}

/** fast-check parameters for a target (seed logged so that any run can be replayed). */
export function params(target: string, numRuns: number): fc.Parameters<unknown> {
  console.log(`fuzz ${target}: ${numRuns} inputs, seed ${SEED} (replay: DRUMCRAWL_FUZZ_SEED=${SEED})`);
  return { numRuns, seed: SEED, endOnFailure: true, includeErrorInReport: true };
}

export const KB = 1024;
export const MB = 1024 * KB;
/** Largest fuzz input. */
export const MAX_INPUT = 5 * MB;

/**
 * A string made of random pieces (from `piece`), the whole repeated until it is about `size`
 * characters: small inputs mostly, up to MAX_INPUT now and then (the amplification finds
 * super-linear behaviour that a small input hides).
 */
export function amplified(piece: fc.Arbitrary<string>, maxPieces = 30): fc.Arbitrary<string> {
  return fc.tuple(fc.array(piece, { maxLength: maxPieces }), fc.oneof(
    { weight: 30, arbitrary: fc.constant(0) },
    { weight: 3, arbitrary: fc.integer({ min: 1, max: 64 * KB }) },
    { weight: 1, arbitrary: fc.integer({ min: 64 * KB, max: MAX_INPUT }) },
  )).map(([pieces, size]) => {
    const unit = pieces.join('');
    if (size === 0 || unit.length === 0) return unit;
    return unit.repeat(Math.max(1, Math.floor(size / unit.length))).slice(0, MAX_INPUT);
  });
}

/** Bytes: random, or a random unit repeated up to MAX_INPUT. */
export function amplifiedBytes(maxUnit = 256): fc.Arbitrary<Uint8Array> {
  return fc.tuple(fc.uint8Array({ maxLength: maxUnit }), fc.oneof(
    { weight: 30, arbitrary: fc.constant(0) },
    { weight: 3, arbitrary: fc.integer({ min: 1, max: 64 * KB }) },
    { weight: 1, arbitrary: fc.integer({ min: 64 * KB, max: MAX_INPUT }) },
  )).map(([unit, size]) => {
    if (size === 0 || unit.length === 0) return unit;
    const out = new Uint8Array(Math.min(MAX_INPUT, Math.max(unit.length, size)));
    for (let o = 0; o < out.length; o += unit.length) out.set(unit.subarray(0, Math.min(unit.length, out.length - o)), o);
    return out;
  });
}

/**
 * Assert that `work` is linear on the inputs `make(size)` builds: CPU ms per KB at 1 MB and at 12 MB
 * (best of `tries` runs each, the two sizes taking turns so that a busy spell of the box falls on
 * both) — the 12 MB input costs at most `ratio` × per KB what the 1 MB one costs (a quadratic cost
 * would be 12×: far from the ≤ 4.4× a linear parser was measured to swing by at load 15–40 when the
 * sizes were 1 MB and 5 MB, measured one after the other), and at most `maxMsPerKb`. Smaller inputs
 * are not compared: one that fits in the CPU's caches costs less per KB than one that does not, by
 * how much depending on what else the box runs.
 */
export function assertLinear(name: string, make: (size: number) => string | Uint8Array, work: (input: string | Uint8Array) => void, maxMsPerKb: number, ratio = 4, tries = 3): number[] {
  const inputs = [make(MB), make(12 * MB)];
  const best = [Infinity, Infinity];
  for (let k = 0; k < tries; k++) {
    for (let i = 0; i < inputs.length; i++) {
      const t0 = process.cpuUsage();
      work(inputs[i]!);
      const t = process.cpuUsage(t0);
      best[i] = Math.min(best[i]!, (t.user + t.system) / 1000);
    }
  }
  const perKb = best.map((ms, i) => ms / (inputs[i]!.length / KB));
  const msg = `${name}: ms per KB at 1 MB / 12 MB: ${perKb.map((x) => x.toFixed(5)).join(' / ')}`;
  console.log(msg);
  const floor = 0.001; // below this, timer resolution dominates
  assert.ok(perKb[1]! <= ratio * Math.max(perKb[0]!, floor), msg);
  assert.ok(perKb[1]! <= maxMsPerKb, msg);
  return perKb;
}
