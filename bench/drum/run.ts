/**
 * DRUM URLseen benchmark (issue 4): sustained check+update rate with 110-byte aux and uniqueness
 * p = 1/9 against U keys already on disk, RSS against the RAM budget R, measured alpha against
 * Theorem 2, and the CLOCK cache's hit rate.
 *
 *   npm run bench:drum                          # U = 1e7 and 1e8, cache off and on at 1e7
 *   npm run bench:drum -- --U 1e9 --D 16e9      # one U (each U runs in its own process)
 *   options: --U a,b,c  --R bytes  --D bytes  --M bytes  --rounds n  --cache entries  --dir path
 *            --out file (default bench/results/drum-urlseen.json)  --zstd
 *            --no-cache-run (skip the extra run of the smallest U with a 4M-entry CLOCK cache)
 *            --z-cache dir (bulk-load Z once per U/k into dir, hard-link it into each run)
 *            --semi MiB (child's V8 semi-space: 8, the default = the product's URLseen host worker;
 *            4 = its other DRUM hosts; 0 = node's default)
 *            --malloc launcher|default (child's glibc env: bin/drumcrawl's settings, the default, or glibc's)
 *            --results chunks|objects (DRUM's onResultChunk struct-of-arrays form, the default, or
 *            onResults with one object per result)
 *            --commit-per chunk|bucket (the consumer's queue commit: per onResults chunk, default,
 *            or once per bucket merge in DrumOptions.beforeCommit)
 *
 * Workload. Z is pre-populated with U keys written directly as sorted runs (Drum.bulkLoad): key j
 * has hi = ⌊j·2^32/U⌋ and lo = mix(j), so every old key can be regenerated without storing it.
 * Each tuple is check+update of a key with a 110-byte aux: with probability p a fresh random key
 * (unique), otherwise a duplicate: a random old key (1/3), one of 50,000 "popular" old keys (1/3),
 * or a recent fresh key (1/3). Unique aux goes to a DiskQueue that commits before onResults
 * resolves, as URLseen's consumer would (its bytes are the thesis' p·b term). The run feeds
 * `rounds` merge rounds (a round is triggered by DRUM's needsMerge) and reports the rate over the
 * whole run including merges.
 */
import { fork } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DiskQueue, IoCounters } from '../../src/disk/index.js';
import { Drum, drumAlpha, type DrumResult, type DrumResultChunk } from '../../src/drum/index.js';

interface Args {
  U: number[];
  R: number;
  D: number;
  M: number;
  rounds: number;
  cache: number;
  dir: string;
  out: string;
  zstd: boolean;
  one: boolean;
  cacheRun: boolean;
  commitPer: 'chunk' | 'bucket';
  /** Directory of pristine bulk-loaded Z files, reused across runs through hard links ('' = off). */
  zCache: string;
  /** glibc malloc settings of the child: 'launcher' = those bin/drumcrawl sets, 'default' = glibc's. */
  malloc: 'launcher' | 'default';
  /** V8 semi-space of the child in MiB (young generation = 3×): 8 = the product's URLseen host
   *  worker (src/threads/drum/drum-proxy.ts, youngGenMb 24; the default since 0ffd85f), 4 = its other DRUM
   *  hosts (12); 0 = node's default (16). */
  semi: number;
  /** How DRUM hands results to the consumer: 'chunks' (onResultChunk, default) or 'objects' (onResults). */
  results: 'chunks' | 'objects';
}

function parseArgs(argv: string[]): Args {
  const a: Args = {
    U: [1e7, 1e8],
    R: 256 * 1024 * 1024,
    D: 2e9,
    M: 256 * 1024,
    rounds: 3,
    cache: 0,
    dir: path.join(os.tmpdir(), 'drum-bench'),
    out: fileURLToPath(new URL('../results/drum-urlseen.json', import.meta.url)),
    zstd: false,
    one: false,
    cacheRun: true,
    commitPer: 'chunk',
    zCache: '',
    malloc: 'launcher',
    semi: 8,
    results: 'chunks',
  };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i]!;
    const v = argv[i + 1];
    const num = (): number => {
      i++;
      return Number(v);
    };
    if (k === '--U') {
      a.U = v!.split(',').map(Number);
      i++;
    } else if (k === '--R') a.R = num();
    else if (k === '--D') a.D = num();
    else if (k === '--M') a.M = num();
    else if (k === '--rounds') a.rounds = num();
    else if (k === '--cache') a.cache = num();
    else if (k === '--dir') {
      a.dir = v!;
      i++;
    } else if (k === '--out') {
      a.out = v!;
      i++;
    } else if (k === '--zstd') a.zstd = true;
    else if (k === '--one') a.one = true;
    else if (k === '--no-cache-run') a.cacheRun = false;
    else if (k === '--z-cache') {
      a.zCache = v!;
      i++;
    } else if (k === '--semi') a.semi = num();
    else if (k === '--malloc') {
      a.malloc = v === 'default' ? 'default' : 'launcher';
      i++;
    } else if (k === '--results') {
      a.results = v === 'objects' ? 'objects' : 'chunks';
      i++;
    } else if (k === '--commit-per') {
      a.commitPer = v === 'bucket' ? 'bucket' : 'chunk';
      i++;
    }
  }
  return a;
}

const mix = (j: number): number => {
  let x = Math.imul(j ^ 0x5bd1e995, 0x9e3779b1);
  x ^= x >>> 15;
  x = Math.imul(x, 0x85ebca6b);
  return (x ^ (x >>> 13)) >>> 0;
};
const oldHi = (j: number, U: number): number => Math.floor((j * 4294967296) / U) >>> 0;

function peakRss(): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
    return m ? Number(m[1]) * 1024 : process.memoryUsage().rss;
  } catch {
    return process.memoryUsage().rss;
  }
}

/** One U, in this process. */
async function runOne(a: Args, U: number): Promise<Record<string, unknown>> {
  const dir = path.join(a.dir, `U${U}`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const b = 110;
  const p = 1 / 9;
  // k from the model for (R, D) — open a throwaway instance to learn it, then bulk-load Z with it.
  const probe = await Drum.open(path.join(dir, 'probe'), { ramBytes: a.R, diskBytes: a.D, bufferBytes: a.M, cacheEntries: a.cache, deliver: 'unique', onResults: () => undefined });
  const k = probe.k;
  await probe.close({ flush: false });
  fs.rmSync(path.join(dir, 'probe'), { recursive: true, force: true });
  const t0 = Date.now();
  const shift = 32 - Math.log2(k);
  const fill = (i: number, append: (hi: number, lo: number) => void): void => {
    // Keys j with oldHi(j) in bucket i, in order.
    const first = Math.ceil((i * 2 ** shift * U) / 4294967296);
    for (let j = first; j < U; j++) {
      const hi = oldHi(j, U);
      if ((k === 1 ? 0 : hi >>> shift) !== i) break;
      append(hi, mix(j));
    }
  };
  const repo = path.join(dir, 'urlseen');
  let zCacheHit = false;
  if (a.zCache !== '') {
    // Bulk-load once per (U, k, Z format) into a pristine directory and hard-link its Z files into
    // each run's repository: a merge never writes a Z file in place (it writes Z' and unlinks Z), so
    // the pristine copy survives. Saves the ~10 min bulk load of U = 1e9 per run.
    const src = path.join(a.zCache, `U${U}-k${k}-zf${Drum.Z_FORMAT}`);
    if (!fs.existsSync(path.join(src, 'drum.json'))) {
      fs.rmSync(src, { recursive: true, force: true });
      await Drum.bulkLoad(src, { buckets: k, expectedKeys: U }, fill);
    } else zCacheHit = true;
    fs.mkdirSync(repo, { recursive: true });
    for (const f of fs.readdirSync(src)) {
      if (f.endsWith('.z')) fs.linkSync(path.join(src, f), path.join(repo, f));
      else fs.copyFileSync(path.join(src, f), path.join(repo, f));
    }
  } else await Drum.bulkLoad(repo, { buckets: k, expectedKeys: U }, fill);
  const loadSec = (Date.now() - t0) / 1000;
  // Reset the kernel's peak-RSS mark so that VmHWM covers the DRUM run, not the bulk load.
  try {
    fs.writeFileSync('/proc/self/clear_refs', '5');
  } catch {
    /* not Linux, or not permitted: VmHWM then includes the bulk load */
  }
  const rssBase = process.memoryUsage().rss;

  const io = new IoCounters();
  const queueIo = new IoCounters();
  const queue = await DiskQueue.open(path.join(dir, 'unique-queue'), { blockBytes: 1 << 20, io: queueIo });
  let uniquesOut = 0;
  // CPU inside the consumer's onResults (queue push, commit, drain): part of the delivery phase.
  let consumerCpuUs = 0;
  // Where the RAM goes (sampled at every onResults call, i.e. while a loaded bucket is delivered,
  // and after every merge round): maxima of process.memoryUsage() fields, minus the baseline.
  const mem0 = process.memoryUsage();
  const memMax = { rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 };
  const sampleMem = (): void => {
    const m = process.memoryUsage();
    memMax.rss = Math.max(memMax.rss, m.rss - mem0.rss);
    memMax.heapTotal = Math.max(memMax.heapTotal, m.heapTotal - mem0.heapTotal);
    memMax.heapUsed = Math.max(memMax.heapUsed, m.heapUsed - mem0.heapUsed);
    memMax.external = Math.max(memMax.external, m.external - mem0.external);
    memMax.arrayBuffers = Math.max(memMax.arrayBuffers, m.arrayBuffers - mem0.arrayBuffers);
  };
  const drum = await Drum.open(repo, {
    ramBytes: a.R,
    diskBytes: a.D,
    bufferBytes: a.M,
    cacheEntries: a.cache,
    compression: a.zstd ? 'zstd' : 'none',
    deliver: 'unique',
    io,
    // --results chunks (default): the struct-of-arrays form (DrumOptions.onResultChunk), the
    // consumer pushes each aux straight from the chunk's arena; objects: one DrumResult per result.
    ...(a.results === 'chunks'
      ? {
        onResultChunk: async (ch: DrumResultChunk) => {
          const c0 = process.cpuUsage();
          sampleMem();
          const st = ch.auxStart;
          for (let i = 0; i < ch.count; i++) queue.pushBytes(ch.auxBytes, st[i]!, st[i + 1]!);
          uniquesOut += ch.count;
          if (a.commitPer === 'chunk') await queue.commit();
          queue.shiftSync(ch.count);
          const c = process.cpuUsage(c0);
          consumerCpuUs += c.user + c.system;
        },
      }
      : {}),
    ...(a.results === 'objects' ? { onResults: async (batch: DrumResult[]) => {
      const c0 = process.cpuUsage();
      sampleMem();
      for (const r of batch) queue.push(r.aux!);
      uniquesOut += batch.length;
      if (a.commitPer === 'chunk') await queue.commit();
      // Drain: the next stage (STAR/BEAST) consumes the queue; here we just discard.
      queue.shiftSync(batch.length);
      const c = process.cpuUsage(c0);
      consumerCpuUs += c.user + c.system;
    } } : {}),
    // --commit-per bucket: one queue commit (fsync) per bucket merge instead of one per chunk.
    beforeCommit: a.commitPer === 'bucket' ? () => queue.commit() : undefined,
  });
  // Aux pool: 110-byte URL-like strings (content does not matter to DRUM).
  const auxPool: Uint8Array[] = [];
  for (let i = 0; i < 4096; i++) auxPool.push(new TextEncoder().encode(`http://www.host${i % 977}.example.com/path/${i}/${'x'.repeat(110)}`.slice(0, b)));
  let seed = 12345;
  const rnd = (): number => {
    seed = (seed + 0x6d2b79f5) >>> 0;
    let t = Math.imul(seed ^ (seed >>> 15), seed | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const recentHi = new Uint32Array(1 << 16);
  const recentLo = new Uint32Array(1 << 16);
  let recentN = 0;
  let fresh = 0;
  let n = 0;
  let mergeMs = 0;
  let mergeCpuUs = 0;
  let maxRss = 0;
  const start = Date.now();
  const cpu0 = process.cpuUsage();
  // The workload generator's CPU is measured separately (it is not DRUM's work): keys are made 4096
  // at a time into typed arrays, then fed.
  const genHi = new Uint32Array(4096);
  const genLo = new Uint32Array(4096);
  let genCpuUs = 0;
  // Per merge round: round 1 writes every bucket file and Z′ into new files; from
  // round 2 on DRUM recycles the spares (steady state), so the rounds are reported apart.
  const perRound: Record<string, unknown>[] = [];
  let roundMark = { n: 0, cpu: process.cpuUsage(), gen: 0, sys: { ...drum.stats().mergeSysMs }, cpuPh: { ...drum.stats().mergeCpuMs }, t: Date.now() };
  const phaseDiff = (x: Record<string, number>, y: Record<string, number>): Record<string, number> =>
    Object.fromEntries(Object.keys(x).map((k) => [k, Math.round(x[k]! - (y[k] ?? 0))]));
  while (drum.stats().rounds < a.rounds) {
    const g0 = process.cpuUsage();
    for (let c = 0; c < 4096; c++) {
      const u = rnd();
      let hi: number;
      let lo: number;
      if (u < p || recentN === 0) {
        hi = (rnd() * 4294967296) >>> 0;
        lo = (rnd() * 4294967296) >>> 0;
        recentHi[fresh & 0xffff] = hi;
        recentLo[fresh & 0xffff] = lo;
        fresh++;
        recentN = Math.min(recentN + 1, 1 << 16);
      } else {
        const w = (u - p) / (1 - p);
        if (w < 1 / 3) {
          const j = Math.floor(rnd() * U);
          hi = oldHi(j, U);
          lo = mix(j);
        } else if (w < 2 / 3) {
          const j = Math.floor(rnd() * 50000) * Math.floor(U / 50000);
          hi = oldHi(j, U);
          lo = mix(j);
        } else {
          const r = Math.floor(rnd() * recentN);
          hi = recentHi[r]!;
          lo = recentLo[r]!;
        }
      }
      genHi[c] = hi;
      genLo[c] = lo;
    }
    const g = process.cpuUsage(g0);
    genCpuUs += g.user + g.system;
    for (let c = 0; c < 4096; c++) {
      drum.checkUpdate(genHi[c]!, genLo[c]!, null, auxPool[n & 4095]!);
      n++;
    }
    if (drum.needsMerge) {
      const m0 = Date.now();
      const c0 = process.cpuUsage();
      await drum.merge();
      mergeMs += Date.now() - m0;
      const c = process.cpuUsage(c0);
      mergeCpuUs += c.user + c.system;
      maxRss = Math.max(maxRss, process.memoryUsage().rss);
      sampleMem();
      const st = drum.stats();
      const rc = process.cpuUsage(roundMark.cpu);
      const rCpu = (rc.user + rc.system) / 1e6;
      const rGen = (genCpuUs - roundMark.gen) / 1e6;
      const rn = n - roundMark.n;
      perRound.push({
        round: st.rounds,
        tuples: rn,
        seconds: (Date.now() - roundMark.t) / 1000,
        cpuSeconds: rCpu,
        userCpuSeconds: rc.user / 1e6,
        systemCpuSeconds: rc.system / 1e6,
        generatorCpuSeconds: rGen,
        ratePerCpuSecond: Math.round(rn / rCpu),
        ratePerDrumCpuSecond: Math.round(rn / (rCpu - rGen)),
        mergeCpuMsByPhase: phaseDiff(st.mergeCpuMs, roundMark.cpuPh),
        mergeSysMsByPhase: phaseDiff(st.mergeSysMs, roundMark.sys),
      });
      roundMark = { n, cpu: process.cpuUsage(), gen: genCpuUs, sys: { ...st.mergeSysMs }, cpuPh: { ...st.mergeCpuMs }, t: Date.now() };
    }
  }
  const sec = (Date.now() - start) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const cpuSec = (cpu.user + cpu.system) / 1e6;
  const s = drum.stats();
  await queue.close();
  await drum.close({ flush: false }); // the tail after the last round is not part of the measurement
  const dio = io.total();
  const qio = queueIo.total();
  const merged = s.merged;
  const bMeasured = b;
  const drumBytes = dio.bytesRead + dio.bytesWritten;
  const queueBytes = qio.bytesWritten; // appending unique URLs to the next queue (the p·b term)
  const kvPerTuple = 9;
  const model = {
    n: merged,
    U,
    b: bMeasured,
    p: s.uniques / merged,
    k: 1,
    r: (merged * kvPerTuple) / s.rounds,
    Hz: 8,
    Hb: kvPerTuple,
    auxOverhead: 1,
    queueBytes: queueBytes / Math.max(1, s.uniques),
  };
  const predictedTotal = drumAlpha(model);
  // The same with Z's measured bytes per key (delta-coded key-only Z: ~5 B at U = 1e9) for Hz.
  const predictedTotalZ = drumAlpha({ ...model, Hz: s.zBytesPerKey });
  const peak = peakRss();
  const res: Record<string, unknown> = {
    U,
    tuplesFed: n,
    tuplesMerged: merged,
    uniques: s.uniques,
    uniqueFraction: s.uniques / merged,
    cacheEntries: a.cache,
    cacheHitRate: s.cacheHitRate ?? null,
    seconds: sec,
    rateTuplesPerSec: Math.round(n / sec),
    // DRUM runs on one thread: tuples per CPU-second of this process is the per-core rate, robust
    // to other processes on a shared machine (wall-clock rate also waits for the CPU and the disk).
    cpuSeconds: cpuSec,
    userCpuSeconds: cpu.user / 1e6,
    systemCpuSeconds: cpu.system / 1e6,
    ratePerCpuSecond: Math.round(n / cpuSec),
    // The same without the workload generator's CPU (making random keys is not DRUM's work; the
    // consumer's DiskQueue, fsyncs included, stays in: it is URLseen's p·b term).
    generatorCpuSeconds: genCpuUs / 1e6,
    ratePerDrumCpuSecond: Math.round(n / (cpuSec - genCpuUs / 1e6)),
    mergeCpuSeconds: mergeCpuUs / 1e6,
    mergeCpuMsByPhase: (s as { mergeCpuMs?: unknown }).mergeCpuMs ?? null, // absent in older trees (A/B)
    consumerCpuSeconds: consumerCpuUs / 1e6,
    mergeSysMsByPhase: (s as { mergeSysMs?: unknown }).mergeSysMs ?? null, // system-CPU part
    // Per round (ingest of the round's tuples + its merge): round 1 writes new files, later rounds
    // overwrite the spares; with --z-cache round 1's old Z files are hard links and are
    // deleted, not recycled.
    perRound,
    loadavgAtEnd: os.loadavg(),
    mergeSeconds: mergeMs / 1000,
    ingestRateTuplesPerSec: Math.round(n / Math.max(1e-9, sec - mergeMs / 1000)),
    mergedRateTuplesPerSec: Math.round(merged / sec),
    rounds: s.rounds,
    k: s.k,
    rBytes: s.r,
    M: s.M,
    R: a.R,
    D: a.D,
    planRegime: s.plan.regime,
    planKModel: s.plan.kModel,
    bulkLoadSeconds: loadSec,
    rssBaselineBytes: rssBase,
    rssMaxBytes: Math.max(maxRss, process.memoryUsage().rss),
    rssPeakVmHWMBytes: peak,
    rssAboveBaselineBytes: peak - rssBase,
    withinR: peak - rssBase <= a.R,
    // Largest growth over the baseline of each process.memoryUsage() field seen in the samples
    // (not simultaneous; rss here is a sample, rssAboveBaselineBytes the kernel's peak).
    memAboveBaselineMaxBytes: memMax,
    memBaselineBytes: mem0,
    execArgv: process.execArgv,
    malloc: { MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? null, MALLOC_MMAP_THRESHOLD_: process.env.MALLOC_MMAP_THRESHOLD_ ?? null },
    zCacheHit,
    alphaDrum: s.alpha,
    alphaDrumPredicted: s.predictedAlpha,
    alphaTotal: (drumBytes + queueBytes) / (bMeasured * merged),
    alphaTotalPredicted: predictedTotal,
    alphaTotalPredictedZMeasured: predictedTotalZ,
    zBytesPerKey: s.zBytesPerKey,
    alphaDrumPredictedZMeasured: s.predictedAlphaZMeasured,
    alphaDiffPctZMeasured: (((drumBytes + queueBytes) / (bMeasured * merged)) / predictedTotalZ - 1) * 100,
    alphaDiffPct: (((drumBytes + queueBytes) / (bMeasured * merged)) / predictedTotal - 1) * 100,
    theorem2AlphaThesisSizes: null as number | null,
    ioBytes: { drum: io.snapshot().kinds, queueWritten: queueBytes },
  };
  fs.rmSync(dir, { recursive: true, force: true });
  return res;
}

async function main(): Promise<void> {
  const a = parseArgs(process.argv.slice(2));
  if (a.one) {
    const r = await runOne(a, a.U[0]!);
    process.stdout.write(JSON.stringify(r) + '\n');
    return;
  }
  const runs: Record<string, unknown>[] = [];
  const self = fileURLToPath(import.meta.url);
  const configs: { U: number; cache: number }[] = a.U.map((U) => ({ U, cache: a.cache }));
  // Unless told otherwise, also run the smallest U with a 4M-entry CLOCK cache in front.
  if (a.cache === 0 && a.cacheRun) configs.push({ U: a.U[0]!, cache: 4_000_000 });
  for (const c of configs) {
    const argv = ['--one', '--U', String(c.U), '--R', String(a.R), '--D', String(a.D), '--M', String(a.M), '--rounds', String(a.rounds), '--cache', String(c.cache), '--dir', a.dir, '--commit-per', a.commitPer, '--z-cache', a.zCache, '--results', a.results];
    if (a.zstd) argv.push('--zstd');
    // The product runs through bin/drumcrawl, which sets these before node starts (glibc reads them
    // once); the child is a fresh process, so the same settings apply to the measured DRUM.
    const env = { ...process.env };
    if (a.malloc === 'launcher') {
      env.MALLOC_ARENA_MAX ??= '2';
      env.MALLOC_MMAP_THRESHOLD_ ??= '131072';
    } else {
      delete env.MALLOC_ARENA_MAX;
      delete env.MALLOC_MMAP_THRESHOLD_;
    }
    const out = await new Promise<string>((resolve, reject) => {
      const execArgv = ['--import', 'tsx'];
      if (a.semi > 0) execArgv.push(`--max-semi-space-size=${a.semi}`);
      const cp = fork(self, argv, { env, execArgv, stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
      let o = '';
      cp.stdout!.on('data', (d: Buffer) => (o += d.toString()));
      cp.on('exit', (code) => (code === 0 ? resolve(o) : reject(new Error(`U=${c.U} failed with code ${code}`))));
    });
    const r = JSON.parse(out.trim().split('\n').pop()!) as Record<string, unknown>;
    console.error(`U=${c.U} cache=${c.cache}: ${r.rateTuplesPerSec} tuples/s (${r.ratePerCpuSecond} per CPU-s, ${r.ratePerDrumCpuSecond} per CPU-s without the generator), alpha ${Number(r.alphaTotal).toFixed(3)} vs ${Number(r.alphaTotalPredicted).toFixed(3)}, RSS peak ${(Number(r.rssPeakVmHWMBytes) / 2 ** 20).toFixed(0)} MiB`);
    runs.push(r);
  }
  const cpu = os.cpus()[0];
  const result = {
    bench: 'drum-urlseen',
    command: `npm run bench:drum -- ${process.argv.slice(2).join(' ')}`.trim(),
    date: new Date().toISOString(),
    machine: { cpu: cpu?.model, cores: os.cpus().length, node: process.version, memBytes: os.totalmem(), loadavg: os.loadavg() },
    note:
      'Shared, noisy 2-core machine (several engineers building and testing at once): absolute rates are low and vary run to run; compare within one run. Z is pre-populated by Drum.bulkLoad (sorted runs written directly), not by inserting U keys through the API.' +
      ' runs[].perRound splits the rate by merge round: round 1 writes every bucket file and Z′ into new files; from round 2 on, DRUM overwrites the spare bucket pair and spare Z instead (steady state).' +
      (a.zCache !== '' ? ' With --z-cache the Z files round 1 reads are hard links to the cache (nlink 2), so DRUM deletes them rather than recycling them: round 1 has no spare Z at all.' : ''),
    params: { R: a.R, D: a.D, M: a.M, rounds: a.rounds, auxBytes: 110, p: 1 / 9, zstd: a.zstd, commitPer: a.commitPer, malloc: a.malloc, semiSpaceMiB: a.semi, zCache: a.zCache, results: a.results },
    runs,
  };
  fs.mkdirSync(path.dirname(a.out), { recursive: true });
  fs.writeFileSync(a.out, JSON.stringify(result, null, 2) + '\n');
  process.stdout.write(JSON.stringify(result, null, 2) + '\n');
}

await main();
