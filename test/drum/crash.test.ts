/**
 * Crash campaign: child processes run DRUM and are SIGKILLed at random instants (mid-append,
 * mid-sort, mid-merge, mid-rename, mid-recovery — wherever the clock lands); the next child reopens
 * the crashed repository and carries on. After EVERY kill, a copy of the crashed repository is
 * checked (crash-common.ts verifyCrashed, in a worker thread, while the next child runs):
 *
 *   1. every key any sink committed as unique is in the repository (no reported-unique key lost);
 *   2. every key in the repository was reported unique to some sink (no unique result lost);
 *   3. per bucket and epoch, the stored counts equal the counts of a PREFIX of that bucket's
 *      tuple stream (add-merge values: nothing merged twice, nothing skipped in the middle);
 *   4. that prefix covers everything before the child's last completed flush() or persist()
 *      (half the epochs call persist() every few hundred tuples while merges run beside the ingest).
 *
 * DRUM recycles files (a merged generation's bucket pair and the superseded Z are
 * overwritten by later ones), so half the epochs use tiny buckets (many merges per child, a longer
 * kill window): kills land mid-ingest and mid-merge over recycled files holding stale blocks of
 * older generations, and the campaign fails unless spares were made and recycled files were left
 * pending by some kill.
 *
 * Normal suite: 100 kills aimed at (4 per repository, 25 repositories; ≥ 85 % of the children must
 * be killed, not finish): on seeds 1000–1024 they leave merges in progress, spares made and
 * recycled files pending, each many times over (a run left 34 orphan Z files, 12 + 37 spares, 380
 * pending recycled files), so every kind of crash point the campaign asserts is hit; DRUMCRAWL_LONG:
 * 2000 (8 per repository).
 *
 * Kill instants are counted in the child's own progress, not in wall time, so that what the
 * campaign covers does not depend on the box's load (a 300 ms window reached no spare bucket pair in
 * 200 kills at load 30): a fifth of the kills come at a random instant in the first 40 ms after the
 * child's 'ready' (sent before Drum.open: they land in start-up and recovery), the others once the
 * child reports having passed a random tuple (it reports every 64 tuples; the report's trip adds a
 * random lag), uniform in [0, 1200) for the small-bucket epochs (≈ 14 merges per bucket per 1,000
 * tuples) and [0, 2000) for the others.
 *
 * What makes 100 kills fit the time: (a) Node spends ~60 ms of CPU at start-up reading the
 * NODE_EXTRA_CA_CERTS bundle (this machine sets it), so children run without it; (b) children are
 * killed within their first 2,000 tuples, with small flush intervals, so merges, flushes and
 * recovery are all hit early; (c) checking after every kill in the test's
 * own thread would hold its event loop (kill timers fire seconds late and children run to
 * completion), and in a fresh process costs ~0.4 s of cold-JIT CPU, hence one long-lived verifier
 * thread.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { mulberry32, type CrashChildArgs, type CrashEpochArgs, type VerifyRequest } from './crash-common.js';

const LONG = !!process.env.DRUMCRAWL_LONG;
// Kills the campaign aims at (it starts repositories until they are reached or under way).
const TARGET_KILLS = Number(process.env.DRUM_CRASH_KILLS ?? (LONG ? 2000 : 100));
// Children (kills) per repository: each carries on from the previous one's crash state.
const EPOCHS = LONG ? 8 : 4;
// Share of the kills timed from the child's 'ready' (sent before Drum.open), uniform in
// [0, EARLY_KILL_MS): start-up and recovery.
const EARLY_KILLS = 0.2;
const EARLY_KILL_MS = 40;
// The others: once the child has passed a tuple uniform in [0, KILL_TUPLES) ...
const KILL_TUPLES = 2000;
// ... or, for the small-bucket epochs (many merges each, so that spares are made and recycled
// several times per child), in [0, KILL_TUPLES_SMALL).
const KILL_TUPLES_SMALL = 1200;
// CPU-bound children on 2 shared cores: more in parallel only slows each one down.
const PARALLEL = 4;
// The child and the verifier are bundled to plain JS once (esbuild): a tsx child spends ~0.5 s of
// CPU compiling before it runs, a bundled one ~0.05 s. The bundles live under node_modules/.cache
// so that their bare imports (zstd-napi) resolve.
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const outdir = path.join(repoRoot, 'node_modules', '.cache', 'drumcrawl-test');
const child = path.join(outdir, 'crash-child.mjs');
const verifierFile = path.join(outdir, 'crash-verifier.mjs');

async function bundle(): Promise<void> {
  const { build } = await import('esbuild');
  const entryPoints = ['crash-child', 'crash-verifier'].map((f) => fileURLToPath(new URL(`./${f}.ts`, import.meta.url)));
  await build({ entryPoints, bundle: true, platform: 'node', format: 'esm', target: 'node20', outdir, outExtension: { '.js': '.mjs' }, external: ['zstd-napi'], logLevel: 'error' });
}

/** The verifier thread; verify() resolves when a crash state passed, rejects with the failure. */
class Verifier {
  private readonly w = new Worker(verifierFile);
  private readonly waiting = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  private nextId = 1;
  constructor() {
    this.w.on('message', (m: { id: number; ok: boolean; error?: string }) => {
      const p = this.waiting.get(m.id)!;
      this.waiting.delete(m.id);
      if (m.ok) p.resolve();
      else p.reject(new Error(m.error));
    });
    this.w.on('error', (e) => {
      for (const p of this.waiting.values()) p.reject(e);
      this.waiting.clear();
    });
  }
  verify(r: Omit<VerifyRequest, 'id'>): Promise<void> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.w.postMessage({ ...r, id });
    });
  }
  close(): Promise<number> {
    return this.w.terminate();
  }
}

// The child makes no TLS connection: without NODE_EXTRA_CA_CERTS Node starts ~60 ms (CPU) faster.
const childEnv = { ...process.env };
delete childEnv.NODE_EXTRA_CA_CERTS;

interface Phase {
  orphanZ: number;
  multiGen: number;
  tmpManifest: number;
  tornTail: number;
  halfPair: number;
  noRepo: number;
  /** Spare files (recycled bucket pair / Z) present at the crash. */
  spareB: number;
  spareZ: number;
  /** Pending bucket files holding blocks of another generation after their own: recycled files
   *  that recovery must cut at the live end. */
  recycledLive: number;
  /** Merges committed in the repository (sum over buckets of Z generations) at its last crash. */
  merges: number;
  /** Deep-part files (src/drum/deep.ts) of another generation than the manifest's: a kill inside a settling. */
  orphanDeep: number;
}

/** When a child is killed: `ms` after its 'ready', or once it reports having passed tuple `tuple`. */
type KillAt = { ms: number } | { tuple: number };

/** Runs one child of slot s; SIGKILLs it at `kill` (never, when null). */
function runChild(s: number, args: CrashChildArgs, kill: KillAt | null): Promise<'killed' | 'finished'> {
  return new Promise((resolve, reject) => {
    const cp = fork(child, [JSON.stringify(args)], { execArgv: [], env: childEnv, stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    let err = '';
    cp.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    let timer: NodeJS.Timeout | null = null;
    let killed = false;
    const killNow = (): void => {
      if (killed) return;
      killed = true;
      cp.kill('SIGKILL');
    };
    cp.on('message', (m) => {
      if (kill === null) return;
      if (m === 'ready' && 'ms' in kill) timer = setTimeout(killNow, kill.ms);
      else if (typeof m === 'number' && 'tuple' in kill && m >= kill.tuple) killNow();
    });
    cp.on('exit', (code, signal) => {
      if (timer !== null) clearTimeout(timer);
      if (killed && signal === 'SIGKILL') resolve('killed');
      else if (code === 0) resolve('finished');
      else reject(new Error(`crash child of slot ${s} failed (code ${code}, signal ${signal}): ${err}`));
    });
  });
}

/** What the crash left behind (diagnostics: which crash points the campaign hit). */
function inspect(dir: string, phase: Phase): void {
  if (!fs.existsSync(path.join(dir, 'drum.json'))) {
    phase.noRepo++;
    return;
  }
  const files = fs.readdirSync(dir);
  const m = JSON.parse(fs.readFileSync(path.join(dir, 'drum.json'), 'utf8')) as { buckets: { bgen: number; zgen: number; dgen?: number }[] };
  if (files.includes('bspare.kv')) phase.spareB++;
  if (files.includes('zspare.z')) phase.spareZ++;
  const gens = new Map<number, Set<number>>();
  for (const f of files) {
    if (f.endsWith('.tmp')) phase.tmpManifest++;
    const md = /^d(\d{4})-(\d+)\.z$/.exec(f);
    if (md !== null && Number(md[2]) !== (m.buckets[Number(md[1])]!.dgen ?? 0)) phase.orphanDeep++;
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
  const blocks = new Map<string, number>();
  for (const f of files) {
    const mg = /^b\d{4}-(\d+)\.(kv|aux)$/.exec(f);
    if (mg === null) continue;
    // The live chain: blocks tagged with the file's generation (flag bit 2, tag at bytes 6–7).
    // A block of another generation after it: a recycled file's stale data. A tail that ends
    // inside a block: a torn write.
    const b = fs.readFileSync(path.join(dir, f));
    const tag = Number(mg[1]) & 0xffff;
    let p = 0;
    let n = 0;
    let stale = false;
    for (; p + 24 <= b.length; n++) {
      if ((b[p + 4]! & 4) !== 0 && b.readUInt16LE(p + 6) !== tag) {
        stale = true;
        break;
      }
      p += 24 + b.readUInt32LE(p + 16);
    }
    if (stale) phase.recycledLive++;
    else if (p !== b.length) phase.tornTail++;
    // Half a pair: the kill fell between the kv and the aux block of one buffer flush.
    const stem = f.replace(/\.(kv|aux)$/, '');
    if (blocks.has(stem) && blocks.get(stem) !== n) phase.halfPair++;
    blocks.set(stem, n);
  }
}

/** One repository: EPOCHS children, each SIGKILLed at a random instant (or finishing), each crash checked. */
async function slot(s: number, phase: Phase, verifier: Verifier): Promise<{ kills: number; children: number }> {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'drum-crash-'));
  const dir = path.join(base, 'repo');
  const rnd = mulberry32(1000 + s);
  // Every third repository keeps first values in a deep part settled every few dozen keys per
  // bucket (src/drum/deep.ts), so that kills land inside settlings too.
  const settleKeys = s % 3 === 2 ? 8 + Math.floor(rnd() * 56) : 0;
  const epochs: CrashEpochArgs[] = [];
  const checks: Promise<void>[] = [];
  let kills = 0;
  try {
    for (let e = 0; e < EPOCHS; e++) {
      const ep: CrashEpochArgs = {
        sink: path.join(base, `sink-${e}`),
        markers: path.join(base, `markers-${e}`),
        seed: s * 100 + e + 1,
        pool: 300 + Math.floor(rnd() * 2000),
        bufferBytes: 256 + Math.floor(rnd() * 2048),
        // Half the epochs with small buckets: many merges per child, so spares are made and
        // recycled (and killed mid-ingest / mid-merge over recycled files) within the kill window.
        bucketBytes: rnd() < 0.5 ? 100 + Math.floor(rnd() * 500) : 2000 + Math.floor(rnd() * 20000),
        maxTuples: 60000,
        flushEvery: 1000 + Math.floor(rnd() * 4000),
        // Half the epochs persist() between flushes, with merges running beside the ingest.
        persistEvery: rnd() < 0.5 ? 40 + Math.floor(rnd() * 300) : 0,
        settleKeys,
      };
      epochs.push(ep);
      const early = rnd() < EARLY_KILLS;
      const u = rnd();
      const kill: KillAt = early ? { ms: Math.floor(u * EARLY_KILL_MS) } : { tuple: Math.floor(u * (ep.bucketBytes < 2000 ? KILL_TUPLES_SMALL : KILL_TUPLES)) };
      const outcome = await runChild(s, { ...ep, dir }, kill);
      if (outcome === 'killed') kills++;
      inspect(dir, phase);
      if (e === EPOCHS - 1 && fs.existsSync(path.join(dir, 'drum.json'))) {
        const m = JSON.parse(fs.readFileSync(path.join(dir, 'drum.json'), 'utf8')) as { buckets: { zgen: number }[] };
        phase.merges += m.buckets.reduce((t, bk) => t + bk.zgen, 0);
      }
      // Check this crash state on a copy, in the verifier thread, while the next child runs. The
      // sinks and markers of earlier epochs are final (their children are dead); the copy is too.
      const copy = path.join(base, `verify-${e}`);
      if (fs.existsSync(dir)) fs.cpSync(dir, copy, { recursive: true });
      else fs.mkdirSync(copy); // killed before Drum.open created the repository
      checks.push(verifier.verify({ slot: s, copy, epochs: epochs.slice() }));
    }
    await Promise.all(checks);
    return { kills, children: EPOCHS };
  } finally {
    await Promise.allSettled(checks);
    fs.rmSync(base, { recursive: true, force: true });
  }
}

test(`crash campaign: ${TARGET_KILLS} SIGKILLed children (${EPOCHS} per repository), invariants checked after each`, async () => {
  await bundle();
  const verifier = new Verifier();
  const phase: Phase = { orphanZ: 0, multiGen: 0, tmpManifest: 0, tornTail: 0, halfPair: 0, noRepo: 0, spareB: 0, spareZ: 0, recycledLive: 0, merges: 0, orphanDeep: 0 };
  let next = 0;
  let kills = 0;
  let children = 0;
  const start = Date.now();
  const worker = async (): Promise<void> => {
    // Each repository under way will add up to EPOCHS kills.
    while (next * EPOCHS < TARGET_KILLS) {
      const r = await slot(next++, phase, verifier);
      kills += r.kills;
      children += r.children;
    }
  };
  try {
    await Promise.all(Array.from({ length: PARALLEL }, worker));
  } finally {
    await verifier.close();
  }
  const sec = (Date.now() - start) / 1000;
  console.log(`# crash campaign: ${kills} kills of ${children} children in ${sec.toFixed(1)} s (${next} repositories); left behind: ${JSON.stringify(phase)}`);
  assert.ok(kills >= children * 0.85, `only ${kills} of ${children} children were killed before finishing`);
  assert.ok(children >= TARGET_KILLS, `only ${children} children ran`);
  // The campaign must actually hit merges in progress, not only appends.
  assert.ok(phase.orphanZ + phase.multiGen > 0, 'no kill landed inside a merge');
  // ... and over recycled files: spares made, and pending generations written over
  // the stale blocks of older ones when the child died.
  assert.ok(phase.spareB > 0 && phase.spareZ > 0, 'no spare files were made');
  assert.ok(phase.recycledLive > 0, 'no kill left a recycled bucket file pending');
  // (A SIGKILL does not tear a single write(2) of a regular file, so tornTail stays 0 here; torn
  // tails are made by hand in formats.test.ts.)
});
