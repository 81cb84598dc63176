/**
 * bench/beast — disk bytes per URL of BEAST (thesis VII.2) versus the naive Q/QF re-scan, as the
 * crawl size N grows, beside Theorems 6 and 7.
 *
 * Model (the theorems' assumptions): V PLDs with budget E[B] each; every crawled page yields L
 * unique new URLs on uniformly random PLDs; STAR gives each its P (count per PLD). BEAST is the
 * real src/frontier Beast; the naive design keeps Q and QF and re-reads all of QF whenever Q
 * empties. Bytes are counted by the queue store (record bytes + a 4-byte frame, no compression),
 * i.e. b in the theorems is the mean framed record size measured here.
 *
 *   npm run bench:beast -- [--V 2000] [--B 10] [--L 6.5] [--max-n 320000] [--disk-max-n 80000]
 *   npm run bench:beast -- --commit …   (commit cost on the main thread: see bench/beast/commit.ts)
 *
 * Up to --disk-max-n the BEAST run is repeated on real queue files (FileBeastStore, uncompressed
 * blocks) and the bytes their IoCounters report are given beside the counted ones (block headers).
 *
 * Writes bench/results/beast-io.json and bench/results/beast-io.svg.
 */
import os from 'node:os';
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { mulberry32 as rng } from '../../src/simweb/model/hash.js';
import {
  Beast,
  FileBeastStore,
  FrontierUrl,
  MemoryBeastStore,
  MemoryQueueStore,
  encodeFrontierUrl,
  peekFrontierUrl,
  type BeastStore,
  type UrlQueue,
} from '../../src/frontier/index.js';

if (process.argv.includes('--commit')) {
  // The commit-cost bench (bench/beast/commit.ts) instead of the I/O-volume one.
  await import('./commit.js');
  process.exit(0);
}

const arg = (name: string, def: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
};
const V = arg('V', 2000);
const B = arg('B', 10);
const L = arg('L', 6.5);
const MAX_N = arg('max-n', 320_000);
const DISK_MAX_N = arg('disk-max-n', 80_000);


/** A URL discovery process shared by both designs: same PLDs, same order, same P. */
function discoverer(seed: number): { next(): FrontierUrl } {
  const r = rng(seed);
  const P = new Uint32Array(V);
  let id = 0;
  const d = {
    next(): FrontierUrl {
      const pld = Math.floor(r() * V);
      const p = ++P[pld]!;
      const u = new FrontierUrl({
        url: `http://www${pld % 7}.pld${pld}.example/dir/page-${id++}.html`,
        hops: 3,
        hostHi: pld,
        hostLo: pld % 7,
        pldHi: pld,
        pldLo: 1,
        budget: B,
        admitted: p,
        discoveredAt: 1_700_000_000_000 + id,
      });
      return u;
    },
  };
  return d;
}

async function runBeast(n: number, disk?: string): Promise<{ bytes: number; admitted: number; j: number; recordBytes: number }> {
  const store: BeastStore = disk ? new FileBeastStore(disk, { compression: 'none' }) : new MemoryBeastStore();
  const beast = await Beast.open(store, { initialQueues: 1, maxQueues: 1 << 20 });
  const disc = discoverer(7);
  let admitted = 0;
  let recBytes = 0;
  for (let i = 0; i < V; i++) {
    const u = disc.next();
    u.admitted = 1;
    const rec = encodeFrontierUrl(u);
    recBytes += rec.length + 4;
    beast.place(u, rec);
    admitted++;
  }
  let crawled = 0;
  let carry = 0;
  while (crawled < n) {
    const got = await beast.next(Math.min(1000, n - crawled));
    if (got.length === 0) break;
    for (let k = 0; k < got.length; k++) {
      crawled++;
      carry += L;
      while (carry >= 1) {
        carry -= 1;
        const u = disc.next();
        const rec = encodeFrontierUrl(u);
        recBytes += rec.length + 4;
        beast.place(u, rec);
        admitted++;
      }
    }
  }
  const io = store.io();
  return { bytes: io.bytesRead + io.bytesWritten, admitted, j: beast.stats().j, recordBytes: recBytes / admitted };
}

/** The same BEAST run on real queue files (uncompressed blocks): bytes from their IoCounters. */
async function runBeastOnDisk(n: number): Promise<number> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-beast-'));
  try {
    const r = await runBeast(n, dir);
    return r.bytes;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function runNaive(n: number): Promise<{ bytes: number; admitted: number; passes: number }> {
  const store = new MemoryQueueStore();
  let q: UrlQueue = await store.open('q0');
  let qf: UrlQueue = await store.open('f0');
  let seq = 1;
  const count = new Uint32Array(V);
  const disc = discoverer(7);
  const place = (u: FrontierUrl, rec: Uint8Array): void => {
    const pld = u.pldHi;
    if (count[pld]! < B) {
      count[pld]!++;
      q.push(rec);
    } else qf.push(rec);
  };
  let admitted = 0;
  for (let i = 0; i < V; i++) {
    const u = disc.next();
    place(u, encodeFrontierUrl(u));
    admitted++;
  }
  let crawled = 0;
  let carry = 0;
  let passes = 0;
  while (crawled < n) {
    let got = await q.shift(Math.min(1000, n - crawled));
    if (got.length === 0) {
      // Q is empty: a new pass re-reads QF in its entirety and splits it again (Theorem 6).
      passes++;
      count.fill(0);
      const old = qf;
      q = await store.open(`q${seq}`);
      qf = await store.open(`f${seq++}`);
      for (;;) {
        const recs = await old.shift(4096);
        if (recs.length === 0) break;
        for (const rec of recs) {
          const pld = decodePld(rec);
          if (count[pld]! < B) {
            count[pld]!++;
            q.push(rec);
          } else qf.push(rec);
        }
      }
      got = await q.shift(Math.min(1000, n - crawled));
      if (got.length === 0) break;
    }
    for (let k = 0; k < got.length; k++) {
      crawled++;
      carry += L;
      while (carry >= 1) {
        carry -= 1;
        const u = disc.next();
        place(u, encodeFrontierUrl(u));
        admitted++;
      }
    }
  }
  const io = store.io();
  return { bytes: io.bytesRead + io.bytesWritten, admitted, passes };
}

const peek = new Float64Array(6);
function decodePld(rec: Uint8Array): number {
  peekFrontierUrl(rec, peek);
  return peek[2]!;
}


const EBV = B * V;
const ns: number[] = [];
for (let n = Math.max(EBV, 5_000); n <= MAX_N; n *= 2) ns.push(n);

const rows: Record<string, number>[] = [];
for (const n of ns) {
  const t0 = performance.now();
  const be = await runBeast(n);
  const t1 = performance.now();
  const na = await runNaive(n);
  const t2 = performance.now();
  // Cross-check the counted bytes against real queue-file I/O on the smaller sizes.
  const diskBytes = n <= DISK_MAX_N ? await runBeastOnDisk(n) : undefined;
  const b = be.recordBytes;
  // Theorem 6 and 7 give λ/S in bytes per crawled page; divide by L for bytes per admitted URL.
  const th6 = n >= EBV ? (2 * b * n * (L - 1)) / EBV : 2 * b * (L - 1);
  const beta = n >= EBV ? (2 * EBV) / (n + EBV) : 1;
  const th7 = 2 * b * ((2 - beta) * (L - 1) + 1);
  rows.push({
    N: n,
    beastBytesPerCrawled: Math.round(be.bytes / n),
    naiveBytesPerCrawled: Math.round(na.bytes / n),
    theorem7BytesPerCrawled: Math.round(th7),
    theorem6BytesPerCrawled: Math.round(th6),
    beastBytesPerAdmitted: Math.round(be.bytes / be.admitted),
    naiveBytesPerAdmitted: Math.round(na.bytes / na.admitted),
    ...(diskBytes === undefined ? {} : { beastDiskQueueBytesPerCrawled: Math.round(diskBytes / n) }),
    beastJ: be.j,
    naivePasses: na.passes,
    meanRecordBytes: Math.round(b),
    beastMs: Math.round(t1 - t0),
    naiveMs: Math.round(t2 - t1),
  });
  console.error(JSON.stringify(rows[rows.length - 1]));
}

// Marginal cost over the last doubling of N: the theorems give the disk rate needed at size N
// (the end of the crawl), whereas bytes / N is the average over the whole crawl — for the naive
// design, whose rate grows linearly, the average is half the final rate.
for (let i = 1; i < rows.length; i++) {
  const a = rows[i - 1]!;
  const b = rows[i]!;
  const dn = b.N! - a.N!;
  b.beastMarginalBytesPerCrawled = Math.round((b.beastBytesPerCrawled! * b.N! - a.beastBytesPerCrawled! * a.N!) / dn);
  b.naiveMarginalBytesPerCrawled = Math.round((b.naiveBytesPerCrawled! * b.N! - a.naiveBytesPerCrawled! * a.N!) / dn);
}

// ---- SVG chart (hand-written, no dependencies): bytes per crawled page vs N, log2 x axis.
function svg(): string {
  const W = 720;
  const H = 420;
  const m = { l: 80, r: 190, t: 40, b: 60 };
  const xs = rows.map((r) => Math.log2(r.N!));
  const x0 = Math.min(...xs);
  const x1 = Math.max(...xs);
  const ymax = Math.max(...rows.flatMap((r) => [r.naiveBytesPerCrawled!, r.naiveMarginalBytesPerCrawled ?? 0, r.theorem6BytesPerCrawled!])) * 1.05;
  const X = (n: number): number => m.l + ((Math.log2(n) - x0) / Math.max(1e-9, x1 - x0)) * (W - m.l - m.r);
  const Y = (v: number): number => H - m.b - (v / ymax) * (H - m.t - m.b);
  const series: [string, string, string, boolean][] = [
    ['naiveBytesPerCrawled', 'naive, average', '#d62728', false],
    ['naiveMarginalBytesPerCrawled', 'naive, last doubling', '#ff9896', false],
    ['theorem6BytesPerCrawled', 'Theorem 6', '#d62728', true],
    ['beastBytesPerCrawled', 'BEAST, average', '#1f77b4', false],
    ['beastMarginalBytesPerCrawled', 'BEAST, last doubling', '#9edae5', false],
    ['theorem7BytesPerCrawled', 'Theorem 7', '#1f77b4', true],
  ];
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`);
  parts.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  parts.push(`<text x="${m.l}" y="22" font-size="14">Disk bytes per crawled page vs crawl size N (V=${V}, E[B]=${B}, L=${L})</text>`);
  parts.push(`<line x1="${m.l}" y1="${H - m.b}" x2="${W - m.r}" y2="${H - m.b}" stroke="black"/>`);
  parts.push(`<line x1="${m.l}" y1="${m.t}" x2="${m.l}" y2="${H - m.b}" stroke="black"/>`);
  for (const r of rows) {
    const x = X(r.N!);
    parts.push(`<line x1="${x}" y1="${H - m.b}" x2="${x}" y2="${H - m.b + 5}" stroke="black"/>`);
    parts.push(`<text x="${x}" y="${H - m.b + 18}" text-anchor="middle">${r.N! >= 1e6 ? r.N! / 1e6 + 'M' : r.N! / 1e3 + 'k'}</text>`);
  }
  for (let k = 0; k <= 5; k++) {
    const v = (ymax * k) / 5;
    const y = Y(v);
    parts.push(`<line x1="${m.l - 5}" y1="${y}" x2="${W - m.r}" y2="${y}" stroke="#ddd"/>`);
    parts.push(`<text x="${m.l - 8}" y="${y + 4}" text-anchor="end">${Math.round(v / 1000)}k</text>`);
  }
  parts.push(`<text x="${(m.l + W - m.r) / 2}" y="${H - 15}" text-anchor="middle">N (pages crawled, log scale)</text>`);
  parts.push(`<text transform="translate(18 ${(m.t + H - m.b) / 2}) rotate(-90)" text-anchor="middle">bytes read + written per crawled page</text>`);
  series.forEach(([key, label, color, dashed], i) => {
    const have = rows.filter((r) => r[key] !== undefined);
    const pts = have.map((r) => `${X(r.N!).toFixed(1)},${Y(r[key]!).toFixed(1)}`).join(' ');
    parts.push(`<polyline points="${pts}" fill="none" stroke="${color}" stroke-width="2"${dashed ? ' stroke-dasharray="6 4"' : ''}/>`);
    if (!dashed) for (const r of have) parts.push(`<circle cx="${X(r.N!).toFixed(1)}" cy="${Y(r[key]!).toFixed(1)}" r="3" fill="${color}"/>`);
    const ly = m.t + 10 + i * 20;
    parts.push(`<line x1="${W - m.r + 15}" y1="${ly}" x2="${W - m.r + 45}" y2="${ly}" stroke="${color}" stroke-width="2"${dashed ? ' stroke-dasharray="6 4"' : ''}/>`);
    parts.push(`<text x="${W - m.r + 50}" y="${ly + 4}">${label}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}

const report = {
  bench: 'beast',
  what: 'disk bytes (read + written) per crawled page and per admitted URL: BEAST vs naive Q/QF re-scan, with Theorems 6 and 7',
  command: `npm run bench:beast -- --V ${V} --B ${B} --L ${L} --max-n ${MAX_N} --disk-max-n ${DISK_MAX_N}`,
  model: { V, EB: B, L, EBV },
  machine: { cpu: os.cpus()[0]?.model, cores: os.cpus().length, node: process.version, date: new Date().toISOString(), loadavg: os.loadavg() },
  note:
    'bytes counted by the queue store (record + 4-byte frame, no compression); deterministic, so machine load does not affect them. ' +
    '*BytesPerCrawled = total bytes / N (average over the crawl); *MarginalBytesPerCrawled = bytes over the last doubling of N / its pages, ' +
    'the quantity Theorems 6 and 7 bound (disk rate needed at size N divided by S). BEAST approaches 2b(2L-1) and stays there; naive grows linearly in N.',
  rows,
};
console.log(JSON.stringify(report, null, 2));
const dir = new URL('../results/', import.meta.url);
mkdirSync(dir, { recursive: true });
writeFileSync(new URL('beast-io.json', dir), JSON.stringify(report, null, 2) + '\n');
writeFileSync(new URL('beast-io.svg', dir), svg());
