/**
 * bench/alpha — measured disk overhead α(n, R) = (bytes read + written) / (b·n) of three URL-check
 * methods on the same URL stream, as n grows, beside the analytic curves of Theorems 1–2 (bench/models):
 *   - DRUM: the real src/drum (URLseen as check+update, unique URL text appended to a queue file);
 *   - Mercator-B and Polybot: bench-only batch checks written from the thesis' description (§IV.1–2).
 * Same RAM R for all three; every byte through real files. Each n is a fresh run that ends with a
 * final flush, which is what ω(n) counts. The thesis' claim (Tables II–III): DRUM's α stays near
 * α''_min = 2 + p + 2H/b while Mercator-B's and Polybot's grow linearly in n (Polybot's much faster).
 *
 *   npm run bench:alpha                       # R = 256 KiB, M = 1 KiB, n = 62.5K … 4M links
 *   npm run bench:alpha -- --max-n 8000000 --R 1048576 --M 2048 --poly-budget 3e9
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Drum } from '../../src/drum/index.js';
import { drumAlpha, drumAlphaMin, mercatorAlpha, mercatorAlphaMin, polybotAlpha, type DrumParams } from '../models/model.js';
import { SHARED_MACHINE_NOTE, args, commandLine, machineInfo, mdTable, sig, writeResult, writeSvg } from '../lib/report.js';
import { lineChart, type Series } from '../lib/svg.js';
import { IoTally, SeqWriter } from './io.js';
import { MERC_H, MERC_P, MercatorB } from './mercator.js';
import { POLY_P, Polybot } from './polybot.js';
import { STREAM, UrlStream } from './stream.js';

const a = args();
const R = a.num('R', 256 * 1024);
const M = a.num('M', 1024);
const maxN = a.num('max-n', 4_000_000);
const minN = a.num('min-n', 62_500);
const polyBudget = a.num('poly-budget', 6e8);
const seed = a.num('seed', 1);
// tmpfs by default: α counts bytes through real files (open/read/write syscalls), which tmpfs does not
// change, and the shared machine's disk would only add noise to the wall-clock seconds.
const tmpBase = a.get('tmp') ?? (fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir());
const tmpRoot = fs.mkdtempSync(path.join(tmpBase, 'drumcrawl-alpha-'));

const points: number[] = [];
for (let n = minN; n <= maxN; n *= 2) points.push(n);

interface Row {
  method: 'DRUM' | 'Mercator-B' | 'Polybot';
  n: number;
  pages: number;
  b: number;
  uniques: number;
  p: number;
  bytesRead: number;
  bytesWritten: number;
  alpha: number;
  model: number;
  seconds: number;
  batches: number;
  /** Distinct URLs in the stream's first n links (ground truth for `uniques`). */
  streamDistinct: number;
  extra?: Record<string, number | string>;
}

const rows: Row[] = [];
const skipped: Array<{ method: string; n: number; why: string }> = [];

function log(s: string): void {
  process.stderr.write(s + '\n');
}

function q(b: number, p: number, bq = 5.5) {
  return { H: MERC_H, P: MERC_P, b, bq, l: STREAM.l, p, U: 0 };
}

async function runDrum(n: number): Promise<Row> {
  const dir = path.join(tmpRoot, `drum-${n}`);
  const io = new IoTally();
  const queue = new SeqWriter(path.join(tmpRoot, `drum-${n}.queue`), io);
  let uniques = 0;
  const drum = await Drum.open(dir, {
    ramBytes: R,
    bufferBytes: M,
    deliver: 'unique',
    auxBytesHint: 110,
    onResults: (batch) => {
      for (const r of batch) {
        queue.write(r.aux!);
        uniques++;
      }
    },
  });
  const s = new UrlStream(seed);
  const enc = new TextEncoder();
  const t0 = performance.now();
  const CH = 4096;
  for (let done = 0; done < n; done += CH) {
    s.run(Math.min(CH, n - done), (hi, lo, text) => drum.checkUpdate(hi, lo, undefined, enc.encode(text)));
    if (drum.needsMerge) await drum.merge();
  }
  await drum.flush();
  queue.close();
  const st = drum.stats();
  const tot = st.io.total();
  await drum.close();
  const secs = (performance.now() - t0) / 1000;
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(queue.file, { force: true });
  const b = s.textBytes / n;
  const p = uniques / n;
  const bytesRead = tot.bytesRead + io.read;
  const bytesWritten = tot.bytesWritten + io.written;
  // Eq. (7) with this implementation's entry sizes (H = bytes per bucket entry, P = RAM per loaded
  // entry beyond H, from DRUM's own plan) and its disk budget D; M as configured.
  const dq: DrumParams = { ...q(b, p), H: st.plan.H, P: st.plan.P, M, Delta: 0 };
  return {
    method: 'DRUM', n, pages: n / STREAM.l, b, uniques, p, bytesRead, bytesWritten,
    alpha: (bytesRead + bytesWritten) / (b * n), model: drumAlpha(n, st.plan.R, st.plan.D, dq), seconds: secs,
    batches: st.rounds, streamDistinct: s.distinct,
    extra: { k: st.k, r: st.r, regime: st.plan.regime, D: Math.round(st.plan.D), H: st.plan.H, P: st.plan.P,
      drumPredictedAlphaWithQueue: sig(st.predictedAlpha + p, 5),
      ioByKind: JSON.stringify(Object.fromEntries(Object.entries(st.io.kinds).map(([k2, v]) => [k2, sig((v.bytesRead + v.bytesWritten) / (b * n), 4)]))) },
  };
}

function runBatch(method: 'Mercator-B' | 'Polybot', n: number): Row {
  const dir = path.join(tmpRoot, `${method}-${n}`);
  const impl = method === 'Polybot' ? new Polybot(dir, R) : new MercatorB(dir, R);
  const s = new UrlStream(seed);
  const t0 = performance.now();
  s.run(n, (hi, lo, text) => impl.add(hi, lo, text));
  impl.finish();
  const secs = (performance.now() - t0) / 1000;
  fs.rmSync(dir, { recursive: true, force: true });
  const b = s.textBytes / n;
  const p = impl.uniques / n;
  const base: Row = {
    method, n, pages: n / STREAM.l, b, uniques: impl.uniques, p, bytesRead: impl.io.read, bytesWritten: impl.io.written,
    alpha: impl.io.total / (b * n), model: 0, seconds: secs, batches: impl.batches, streamDistinct: s.distinct,
  };
  if (impl instanceof Polybot) {
    base.model = polybotAlpha(n, R, q(b, p, impl.bq));
    base.extra = { bqMeasured: sig(impl.bq, 4), P: POLY_P };
  } else {
    base.model = mercatorAlpha(n, R, q(b, p));
    base.extra = { m: impl.m };
  }
  return base;
}

const t00 = performance.now();
for (const n of points) {
  const r = await runDrum(n);
  rows.push(r);
  log(`DRUM        n=${n} α=${r.alpha.toFixed(3)} model=${r.model.toFixed(3)} rounds=${r.batches} ${r.seconds.toFixed(1)}s`);
}
for (const n of points) {
  const r = runBatch('Mercator-B', n);
  rows.push(r);
  log(`Mercator-B  n=${n} α=${r.alpha.toFixed(3)} model=${r.model.toFixed(3)} batches=${r.batches} ${r.seconds.toFixed(1)}s`);
}
let lastBq = 0;
for (const n of points) {
  if (lastBq > 0) {
    const b = rows[0]!.b;
    const predicted = polybotAlpha(n, R, q(b, STREAM.p, lastBq)) * b * n;
    if (predicted > polyBudget) {
      const why = `predicted I/O ${(predicted / 1e9).toFixed(1)} GB (eq. 2 with the measured bq) exceeds --poly-budget ${(polyBudget / 1e9).toFixed(1)} GB`;
      skipped.push({ method: 'Polybot', n, why });
      log(`Polybot     n=${n} skipped: ${why}`);
      continue;
    }
  }
  const r = runBatch('Polybot', n);
  lastBq = Number(r.extra!.bqMeasured);
  rows.push(r);
  log(`Polybot     n=${n} α=${r.alpha.toFixed(3)} model=${r.model.toFixed(3)} batches=${r.batches} bq=${lastBq} ${r.seconds.toFixed(1)}s`);
}
fs.rmSync(tmpRoot, { recursive: true, force: true });

const b0 = rows[0]!.b;
const qq = q(b0, STREAM.p);
const byMethod = (m: Row['method']) => rows.filter((r) => r.method === m);
const last = (m: Row['method']) => byMethod(m).at(-1)!;
const first = (m: Row['method']) => byMethod(m)[0]!;
// Correctness: every method must find exactly the stream's distinct URLs (else its bytes mean nothing).
const wrong = rows.filter((r) => r.uniques !== r.streamDistinct);
for (const r of wrong) log(`ERROR: ${r.method} at n=${r.n} found ${r.uniques} unique URLs, the stream has ${r.streamDistinct}`);
if (wrong.length > 0) process.exitCode = 1;
const summary = {
  uniquesMatchStream: wrong.length === 0,
  growthAlphaFirstToLast: Object.fromEntries((['DRUM', 'Mercator-B', 'Polybot'] as const).map((m) => [m, {
    nFirst: first(m).n, alphaFirst: sig(first(m).alpha), nLast: last(m).n, alphaLast: sig(last(m).alpha),
    ratio: sig(last(m).alpha / first(m).alpha, 3),
  }])),
  mercatorOverDrumAtLargestN: sig(last('Mercator-B').alpha / byMethod('DRUM').find((r) => r.n === last('Mercator-B').n)!.alpha, 3),
  polybotOverDrumAtLargestPolybotN: sig(last('Polybot').alpha / byMethod('DRUM').find((r) => r.n === last('Polybot').n)!.alpha, 3),
  alphaMinMercator: sig(mercatorAlphaMin(qq)),
  alphaMinDrum: sig(drumAlphaMin(qq)),
};

const result = {
  bench: 'alpha',
  command: commandLine('bench:alpha'),
  machine: machineInfo(),
  note: SHARED_MACHINE_NOTE + ' α is a byte count, not a speed, so it does not depend on the machine load; seconds are shown for scale only.',
  parameters: {
    R, M, seed, tmp: tmpBase, l: STREAM.l, pUnique: STREAM.p, U: 0, points, polyBudget,
    stream: 'synthetic: l = 59 links/page, each link new with probability 1/9 else a uniform repeat; URL text 60–160 bytes (mean ≈ 110), key = xxhash64 (src/url fingerprintInto)',
    scaled: 'the thesis uses R = 1–8 GB, M = 256 KB, n up to 4.7·10^14; here R and M are scaled down by ~2000 and ~256 so that the quadratic terms show at n of a few million links',
  },
  models: {
    Mercator: 'eq. (1), H = 8, P = 4, U = 0, measured b and p',
    Polybot: 'eq. (2), P = 4, U = 0, bq = the measured mean compressed bytes per URL of URLseen',
    DRUM: "eq. (7) with DRUM's own plan (R, D, H = bytes per bucket entry, P = RAM per loaded entry), M as set",
  },
  rows: rows.map((r) => ({ ...r, b: sig(r.b, 5), p: sig(r.p, 5), alpha: sig(r.alpha, 5), model: sig(r.model, 5), seconds: sig(r.seconds, 3) })),
  skipped,
  summary,
  totalSeconds: sig((performance.now() - t00) / 1000, 3),
};
const jf = writeResult('alpha-overhead', result);

const colors = { DRUM: '#2ca02c', 'Mercator-B': '#1f77b4', Polybot: '#d62728' } as const;
const series: Series[] = (['DRUM', 'Mercator-B', 'Polybot'] as const).flatMap((m): Series[] => [
  { name: `${m} measured`, color: colors[m], points: byMethod(m).map((r) => [r.n, r.alpha] as [number, number]) },
  { name: `${m} model`, color: colors[m], dashed: true, points: byMethod(m).map((r) => [r.n, r.model] as [number, number]) },
]);
series.push({ name: 'α_min Mercator-B = 2 + p', color: '#999', dashed: true, points: points.map((n) => [n, mercatorAlphaMin(qq)] as [number, number]) });
const sf = writeSvg('alpha-overhead', lineChart({
  title: `Disk overhead α(n, R) at R = ${R / 1024} KiB (measured vs Theorems 1–2)`,
  xLabel: 'n = links checked', yLabel: 'α = bytes read+written / (b·n)', logX: true, logY: true, series,
}));

console.log(mdTable(['method', 'n', 'α measured', 'α model', 'batches', 's'],
  rows.map((r) => [r.method, r.n.toLocaleString('en'), r.alpha.toFixed(3), r.model.toFixed(3), r.batches, r.seconds.toFixed(1)])));
console.log(JSON.stringify(summary, null, 2));
console.log(`wrote ${jf} and ${sf}`);
