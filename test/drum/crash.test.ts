/**
 * Crash campaign: child processes run DRUM and are SIGKILLed at random instants (mid-append,
 * mid-sort, mid-merge, mid-rename — wherever the clock lands); the next child reopens the crashed
 * repository and carries on; finally the parent reopens it and checks the invariants against a
 * model rebuilt from the deterministic stream and from what the children's sinks committed:
 *
 *   1. every key any sink committed as unique is in the repository (no reported-unique key lost);
 *   2. every key in the repository was reported unique to some sink (no unique result lost);
 *   3. per bucket and epoch, the stored counts equal the counts of a PREFIX of that bucket's
 *      tuple stream (add-merge values: nothing merged twice, nothing skipped in the middle);
 *   4. that prefix covers everything before the child's last completed flush().
 *
 * Normal suite: up to 100 slots × 2 kills within a 45 s budget (at least 20 kills);
 * DRUMCRAWL_LONG: 200 slots × 3 kills.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Drum, type DrumResult } from '../../src/drum/index.js';
import { epochStream, mulberry32, type CrashChildArgs } from './crash-common.js';

const LONG = !!process.env.DRUMCRAWL_LONG;
const SLOTS = Number(process.env.DRUM_CRASH_SLOTS ?? (LONG ? 200 : 100));
const EPOCHS = LONG ? 3 : 2;
const PARALLEL = 8;
// The normal suite stops starting new repositories after this long (the shared 2-core machine can
// make a child's start take seconds); DRUMCRAWL_LONG runs all SLOTS.
const BUDGET_MS = LONG ? Infinity : Number(process.env.DRUM_CRASH_BUDGET_MS ?? 45000);
const MIN_KILLS = LONG ? SLOTS * EPOCHS * 0.8 : 20;
const K = 4;
const childSrc = fileURLToPath(new URL('./crash-child.ts', import.meta.url));
// The child is bundled to plain JS once (esbuild, which tsx ships): a tsx child spends ~0.5 s of CPU
// compiling before it runs, a bundled one ~0.05 s, so far more kills fit in the test budget. The
// bundle lives under node_modules/.cache so that its bare imports (zstd-napi) resolve.
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const child = path.join(repoRoot, 'node_modules', '.cache', 'drumcrawl-test', 'crash-child.mjs');

async function bundleChild(): Promise<void> {
  const { build } = await import('esbuild');
  await build({ entryPoints: [childSrc], bundle: true, platform: 'node', format: 'esm', target: 'node20', outfile: child, external: ['zstd-napi'], logLevel: 'error' });
}

interface Phase {
  orphanZ: number;
  multiGen: number;
  tmpManifest: number;
  tornTail: number;
}

function runChild(args: CrashChildArgs, killAfterMs: number): Promise<'killed' | 'finished'> {
  return new Promise((resolve, reject) => {
    const cp = fork(child, [JSON.stringify(args)], { execArgv: [], stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    let err = '';
    cp.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    let timer: NodeJS.Timeout | null = null;
    let killed = false;
    cp.on('message', (m) => {
      if (m === 'ready') {
        timer = setTimeout(() => {
          killed = true;
          cp.kill('SIGKILL');
        }, killAfterMs);
      }
    });
    cp.on('exit', (code, signal) => {
      if (timer !== null) clearTimeout(timer);
      if (killed && signal === 'SIGKILL') resolve('killed');
      else if (code === 0) resolve('finished');
      else reject(new Error(`crash child failed (code ${code}, signal ${signal}): ${err}`));
    });
  });
}

/** What the crash left behind (diagnostics: which crash points the campaign hit). */
function inspect(dir: string, phase: Phase): void {
  const files = fs.readdirSync(dir);
  const m = JSON.parse(fs.readFileSync(path.join(dir, 'drum.json'), 'utf8')) as { buckets: { bgen: number; zgen: number }[] };
  const gens = new Map<number, Set<number>>();
  for (const f of files) {
    if (f.endsWith('.tmp')) phase.tmpManifest++;
    let mm = /^z(\d{4})-(\d+)\.z$/.exec(f);
    if (mm !== null && Number(mm[2]) !== m.buckets[Number(mm[1])]!.zgen) phase.orphanZ++;
    mm = /^b(\d{4})-(\d+)\.kv$/.exec(f);
    if (mm !== null) {
      const s = gens.get(Number(mm[1])) ?? new Set();
      s.add(Number(mm[2]));
      gens.set(Number(mm[1]), s);
    }
  }
  for (const s of gens.values()) if (s.size > 1) phase.multiGen++;
  for (const f of files) {
    if (!f.endsWith('.kv') && !f.endsWith('.aux')) continue;
    // A torn tail: the file does not end on a block boundary.
    const b = fs.readFileSync(path.join(dir, f));
    let p = 0;
    while (p + 24 <= b.length) p += 24 + b.readUInt32LE(p + 16);
    if (p !== b.length) phase.tornTail++;
  }
}

function readRecords(file: string, size: number): Buffer[] {
  if (!fs.existsSync(file)) return [];
  const b = fs.readFileSync(file);
  const out: Buffer[] = [];
  for (let p = 0; p + size <= b.length; p += size) out.push(b.subarray(p, p + size));
  return out;
}

async function slot(s: number, phase: Phase): Promise<number> {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'drum-crash-'));
  const dir = path.join(base, 'repo');
  const rnd = mulberry32(1000 + s);
  const epochs: CrashChildArgs[] = [];
  let kills = 0;
  try {
    for (let e = 0; e < EPOCHS; e++) {
      const args: CrashChildArgs = {
        dir,
        sink: path.join(base, `sink-${e}`),
        markers: path.join(base, `markers-${e}`),
        seed: s * 100 + e + 1,
        pool: 300 + Math.floor(rnd() * 2000),
        k: K,
        bufferBytes: 256 + Math.floor(rnd() * 2048),
        bucketBytes: 2000 + Math.floor(rnd() * 20000),
        maxTuples: 60000,
        flushEvery: 3000 + Math.floor(rnd() * 6000),
      };
      epochs.push(args);
      const outcome = await runChild(args, 20 + Math.floor(rnd() * 700));
      if (outcome === 'killed') kills++;
      inspect(dir, phase);
    }
    // Recover and read back everything.
    const uniques2: DrumResult[] = [];
    const checks: DrumResult[] = [];
    const drum = await Drum.open(dir, {
      buckets: K,
      valueBytes: 4,
      merge: (x, y) => {
        const v = new DataView(x.buffer, x.byteOffset).getUint32(0, true) + new DataView(y.buffer, y.byteOffset).getUint32(0, true);
        const o = new Uint8Array(4);
        new DataView(o.buffer).setUint32(0, v, true);
        return o;
      },
      onResults: (b) => {
        for (const r of b) (r.op === 'check' ? checks : uniques2).push(r);
      },
    });
    await drum.flush();
    const reported = new Set<string>();
    for (const r of uniques2) if (r.unique) reported.add(`${r.keyHi}:${r.keyLo}`);
    for (const a of epochs) for (const rec of readRecords(a.sink, 8)) reported.add(`${rec.readUInt32LE(0)}:${rec.readUInt32LE(4)}`);
    const streams = epochs.map((a) => epochStream(a.seed, a.pool, a.maxTuples));
    const aux = new Uint8Array(8);
    streams.forEach((st, e) => {
      for (let i = 0; i < st.keys.length / 2; i++) {
        new DataView(aux.buffer).setUint32(0, e);
        new DataView(aux.buffer).setUint32(4, i);
        drum.check(st.keys[2 * i]!, st.keys[2 * i + 1]!, aux.slice());
      }
    });
    await drum.merge();
    const count = streams.map((st) => new Int32Array(st.keys.length / 2));
    let inRepo = 0;
    for (const r of checks) {
      const dv = new DataView(r.aux!.buffer, r.aux!.byteOffset);
      const e = dv.getUint32(0);
      const i = dv.getUint32(4);
      const key = `${r.keyHi}:${r.keyLo}`;
      if (r.unique) {
        assert.ok(!reported.has(key), `slot ${s}: key ${key} was reported unique but is not in the repository`);
      } else {
        assert.ok(reported.has(key), `slot ${s}: key ${key} is in the repository but no unique result for it was committed`);
        count[e]![i] = new DataView(r.value!.buffer, r.value!.byteOffset).getUint32(0, true);
        inRepo++;
      }
    }
    assert.equal(drum.stats().keys, inRepo, `slot ${s}: repository holds keys outside the streams`);
    // Invariants 3 and 4, per epoch and bucket.
    streams.forEach((st, e) => {
      const markers = readRecords(epochs[e]!.markers, 4).map((m) => m.readUInt32LE(0));
      const flushed = markers.length > 0 ? markers[markers.length - 1]! : 0;
      for (let b = 0; b < K; b++) {
        const inB = (i: number): boolean => st.keys[2 * i]! >>> 30 === b;
        let L = 0;
        for (let i = 0; i < count[e]!.length; i++) if (inB(i)) L += count[e]![i]!;
        const want = new Int32Array(count[e]!.length);
        let seen = 0;
        let beforeFlush = 0;
        for (let j = 0; j < st.seq.length && seen < L; j++) {
          const i = st.seq[j]!;
          if (!inB(i)) continue;
          want[i]!++;
          seen++;
        }
        for (let j = 0; j < flushed; j++) if (inB(st.seq[j]!)) beforeFlush++;
        assert.equal(seen, L, `slot ${s} epoch ${e} bucket ${b}: more merged tuples than submitted`);
        for (let i = 0; i < want.length; i++) {
          if (inB(i)) assert.equal(count[e]![i], want[i], `slot ${s} epoch ${e} bucket ${b}: count of key ${i} is not a prefix count`);
        }
        assert.ok(L >= beforeFlush, `slot ${s} epoch ${e} bucket ${b}: ${L} tuples merged but ${beforeFlush} were flushed`);
      }
    });
    await drum.close();
    return kills;
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
}

test(`crash campaign: repositories × ${EPOCHS} SIGKILLed children each, then the invariants`, async () => {
  await bundleChild();
  const phase: Phase = { orphanZ: 0, multiGen: 0, tmpManifest: 0, tornTail: 0 };
  let next = 0;
  let kills = 0;
  const start = Date.now();
  const worker = async (): Promise<void> => {
    while (next < SLOTS && Date.now() - start < BUDGET_MS) {
      const s = next++;
      const k = await slot(s, phase);
      kills += k;
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  console.log(`# crash campaign: ${kills} kills; left behind: ${JSON.stringify(phase)}`);
  assert.ok(kills >= MIN_KILLS, `only ${kills} children were killed before finishing`);
  // The campaign must actually hit merges in progress, not only appends.
  assert.ok(phase.orphanZ + phase.multiGen > 0, 'no kill landed inside a merge');
});
