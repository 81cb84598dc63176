/**
 * bench/beast --commit — what making BEAST admissions durable costs the crawler's main thread.
 *
 * The workload of the e2e profile (docs/performance.md, "Main thread": BEAST commits): a URLseen
 * merge reports its unique URLs in ~12 result chunks; each chunk's URLs are admitted into the ring
 * (spread over the j queues by k = ceil(P/B)) and QF. Three schemes, same records, same disk:
 *
 *   perQueueDiskQueue   one DiskQueue per queue: each touched queue is a src/disk DiskQueue whose
 *                       commit fsyncs its data and atomically replaces its own manifest (temp file,
 *                       fsync, rename, directory fsync), synchronously, after every chunk
 *   combinedPerChunk    now: one combined BEAST manifest, one fdatasync per touched queue file + one
 *                       for the manifest, on the libuv pool; a commit after every chunk
 *   combinedPerMerge    now, as the pipeline should use it: chunks admitted with durable:false,
 *                       one commitAdmits per merge
 *
 * Reported per scheme: main-thread busy ms (event-loop utilisation: time the loop was NOT idle,
 * i.e. what sockets and parse replies would have waited for), wall ms, fsync count, all per merge.
 *
 *   npm run bench:beast -- --commit [--merges 20] [--chunk 600] [--j 32]
 *
 * Writes bench/results/beast-commit.json.
 */
import os from 'node:os';
import path from 'node:path';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { DiskQueue, IoCounters } from '../../src/disk/index.js';
import { Beast, FileBeastStore, FrontierUrl, encodeFrontierUrl } from '../../src/frontier/index.js';
import { mulberry32 as rng } from '../../src/simweb/model/hash.js';

const arg = (name: string, def: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
};
const MERGES = arg('merges', 20);
const CHUNKS = 12;
const CHUNK = arg('chunk', 600);
const J = arg('j', 32);
const B = 10;
const PLDS = 500;

/** The URLs of one run: merge → chunk → records with (B, P) from a per-PLD counter. */
function workload(): FrontierUrl[][][] {
  const r = rng(17);
  const P = new Uint32Array(PLDS);
  let id = 0;
  const merges: FrontierUrl[][][] = [];
  for (let m = 0; m < MERGES; m++) {
    const chunks: FrontierUrl[][] = [];
    for (let c = 0; c < CHUNKS; c++) {
      const us: FrontierUrl[] = [];
      for (let k = 0; k < CHUNK; k++) {
        const pld = Math.floor(r() * r() * PLDS);
        const p = ++P[pld]!;
        us.push(new FrontierUrl({ url: `http://www.pld${pld}.example/a/b/page-${id++}.html`, hops: 2, hostHi: pld, hostLo: 1, pldHi: pld, pldLo: 2, budget: B, admitted: p, discoveredAt: 1.7e12 + id }));
      }
      chunks.push(us);
    }
    merges.push(chunks);
  }
  return merges;
}

interface Row {
  scheme: string;
  mainThreadMsPerMerge: number;
  wallMsPerMerge: number;
  fsyncsPerMerge: number;
  urlsPerMerge: number;
}

async function measure(scheme: string, run: () => Promise<number>): Promise<Row> {
  const e0 = performance.eventLoopUtilization();
  const t0 = performance.now();
  const syncs = await run();
  const wall = performance.now() - t0;
  const e = performance.eventLoopUtilization(e0);
  return {
    scheme,
    mainThreadMsPerMerge: +(e.active / MERGES).toFixed(2),
    wallMsPerMerge: +(wall / MERGES).toFixed(2),
    fsyncsPerMerge: +(syncs / MERGES).toFixed(1),
    urlsPerMerge: CHUNKS * CHUNK,
  };
}

const data = workload();

/** DiskQueue per ring queue + QF, each touched one committed after every chunk. */
async function perQueueDiskQueue(dir: string): Promise<number> {
  const io = new IoCounters();
  const qs: DiskQueue[] = [];
  for (let i = 0; i <= J; i++) qs.push(await DiskQueue.open(path.join(dir, `q${i}`), { blockBytes: 65536, compression: 'zstd', io }));
  const s0 = io.total().syncs;
  for (const chunks of data) {
    for (const us of chunks) {
      const touched = new Set<DiskQueue>();
      for (const u of us) {
        const k = Math.ceil(u.admitted / u.budget);
        const q = k < J ? qs[k]! : qs[J]!;
        q.push(encodeFrontierUrl(u));
        touched.add(q);
      }
      for (const q of touched) await q.commit();
      // Yield like the pipeline does between chunks (the worker waits for the ack).
      await new Promise((r) => setImmediate(r));
    }
  }
  // Each DiskQueue commit: data fsync + manifest temp fsync + directory fsync (IoCounters count
  // the first two; add the directory fsync of the atomic replace).
  const t = io.total();
  const commits = t.syncs - s0;
  for (const q of qs) await q.close({ commit: false });
  return commits + commits / 2;
}

async function combined(dir: string, perMerge: boolean): Promise<number> {
  const store = new FileBeastStore(dir, { compression: 'zstd' });
  const beast = await Beast.open(store, { initialQueues: J, maxQueues: J });
  const s0 = store.counters.total().syncs;
  for (const chunks of data) {
    for (const us of chunks) {
      for (const u of us) beast.place(u);
      if (!perMerge) await beast.commitAppends();
      await new Promise((r) => setImmediate(r));
    }
    if (perMerge) await beast.commitAppends();
  }
  const syncs = store.counters.total().syncs - s0;
  await beast.close();
  return syncs;
}

const rows: Row[] = [];
for (const [name, fn] of [
  ['perQueueDiskQueue', (d: string) => perQueueDiskQueue(d)],
  ['combinedPerChunk', (d: string) => combined(d, false)],
  ['combinedPerMerge', (d: string) => combined(d, true)],
] as const) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-beast-commit-'));
  try {
    rows.push(await measure(name, () => fn(dir)));
    console.error(JSON.stringify(rows[rows.length - 1]));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const base = rows[0]!;
const report = {
  bench: 'beast-commit',
  what: 'cost of making BEAST admissions durable, per URLseen merge (12 result chunks): main-thread busy ms (event-loop utilisation), wall ms, fsyncs',
  command: `npm run bench:beast -- --commit --merges ${MERGES} --chunk ${CHUNK} --j ${J}`,
  rows,
  ratios: Object.fromEntries(
    rows.slice(1).map((r) => [
      r.scheme,
      {
        mainThreadVsPerQueue: +(base.mainThreadMsPerMerge / r.mainThreadMsPerMerge).toFixed(2),
        wallVsPerQueue: +(base.wallMsPerMerge / r.wallMsPerMerge).toFixed(2),
        fsyncsVsPerQueue: +(base.fsyncsPerMerge / r.fsyncsPerMerge).toFixed(2),
      },
    ]),
  ),
  machine: { cpu: os.cpus()[0]?.model, cores: os.cpus().length, node: process.version, loadavg: os.loadavg() },
  date: new Date().toISOString(),
  note: 'Shared 2-core box (several engineers benchmarking at once): absolute ms are noisy; compare the ratios within this run. perQueueDiskQueue fsyncs include the directory fsync of each atomic manifest replace.',
};
mkdirSync('bench/results', { recursive: true });
writeFileSync('bench/results/beast-commit.json', JSON.stringify(report, null, 2) + '\n');
console.log(JSON.stringify(report, null, 2));
