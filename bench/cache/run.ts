/**
 * bench/cache — URL-cache hit rates vs cache size on the link stream of a simweb crawl (thesis
 * Table IV's shape), insert speeds μ(E) (Table V) and the crawl rate they allow, S_cache from eq. (21)
 * (bench/models cacheRateLinear, S_max = 4000 pages/s, l = 59 as in Table V).
 *
 * Caches: CLOCK = src/drum's ClockCache (the implementation DRUM puts in front of URLseen);
 * LRU = bench/cache/lru.ts (same table and hash, doubly linked recency list); Map-LRU = the
 * idiomatic JS Map LRU, for speed only. Each link is looked up; a miss is inserted (what a URLseen
 * cache does). Hit rates are measured over the second half of the stream (warm cache — Table IV
 * seeks to N0 crawled pages before measuring).
 *
 *   npm run bench:cache                            # bench preset, 50,000 pages (~2.9M links)
 *   npm run bench:cache -- --pages 100000 --speed-e 16777216
 */
import { ClockCache } from '../../src/drum/index.js';
import { cacheRateLinear } from '../models/model.js';
import { SHARED_MACHINE_NOTE, args, commandLine, machineInfo, mdTable, sig, writeResult, writeSvg } from '../lib/report.js';
import { lineChart } from '../lib/svg.js';
import { crawlOrderStream } from './crawl-order.js';
import { LruCache, MapLru } from './lru.js';

const a = args();
const pages = a.num('pages', 50_000);
const seed = a.num('seed', 1);
const preset = (a.get('preset') ?? 'bench') as 'bench';
const speedE = a.num('speed-e', 1 << 22);
const S_MAX = 4000;
const L = 59;

interface Cache { lookup(hi: number, lo: number): boolean; insert(hi: number, lo: number): void }

function log(s: string): void {
  process.stderr.write(s + '\n');
}

const t0 = performance.now();
const st = crawlOrderStream({ preset, seed, maxPages: pages });
const keys = st.keys;
const n = st.links;
log(`stream: ${st.pages} pages, ${n} links (${(n / st.pages).toFixed(1)}/page), ${st.uniqueLinks} unique, ` +
  `mean active hosts ${st.meanActiveHosts.toFixed(0)}, ${((performance.now() - t0) / 1000).toFixed(1)}s`);

/** Hit rate over the second half of the stream (the first half warms the cache). */
function hitRate(c: Cache): number {
  const half = n >>> 1;
  let hits = 0;
  for (let i = 0; i < n; i++) {
    const hi = keys[2 * i]!, lo = keys[2 * i + 1]!;
    if (c.lookup(hi, lo)) {
      if (i >= half) hits++;
    } else c.insert(hi, lo);
  }
  return hits / (n - half);
}

const sizes: number[] = [];
for (let e = 1 << 8; e <= 1 << 22; e *= 4) sizes.push(e);
// Link-level upper bound: a cache of infinite size hits every non-first occurrence.
const infHit = (() => {
  const half = n >>> 1;
  const seen = new Set<string>();
  let hits = 0;
  for (let i = 0; i < n; i++) {
    const k = keys[2 * i] + ':' + keys[2 * i + 1];
    if (seen.has(k)) {
      if (i >= half) hits++;
    } else seen.add(k);
  }
  return hits / (n - half);
})();

const hitRows: Array<{ E: number; lru: number; clock: number; eOverHostsL: number }> = [];
for (const E of sizes) {
  const lru = hitRate(new LruCache(E));
  const clock = hitRate(new ClockCache(E));
  hitRows.push({ E, lru: sig(lru, 4), clock: sig(clock, 4), eOverHostsL: sig(E / (st.meanActiveHosts * L), 3) });
  log(`E=${E} LRU ${(lru * 100).toFixed(1)} % CLOCK ${(clock * 100).toFixed(1)} %`);
}

/** CPU-seconds of `fn` (process.cpuUsage: user+system; the machine is shared, wall time is not ours). */
function cpuSeconds(fn: () => void): { cpu: number; wall: number } {
  const c0 = process.cpuUsage();
  const w0 = performance.now();
  fn();
  const c = process.cpuUsage(c0);
  return { cpu: (c.user + c.system) / 1e6, wall: (performance.now() - w0) / 1000 };
}

/**
 * μ: (1) inserts/s of fresh random keys into a full cache of E entries — Table V's "insertion rate"
 * (every insert evicts); (2) links/s through lookup+insert on the crawl stream.
 */
function speeds(name: string, make: (E: number) => Cache, E: number, inserts: number, streamLinks = n) {
  const c = make(E);
  let x = 0x12345678;
  const rnd = (): number => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x >>> 0;
  };
  for (let i = 0; i < E; i++) c.insert(rnd(), rnd()); // fill
  const ins = cpuSeconds(() => {
    for (let i = 0; i < inserts; i++) c.insert(rnd(), rnd());
  });
  const c2 = make(E);
  const str = cpuSeconds(() => {
    for (let i = 0; i < streamLinks; i++) {
      const hi = keys[2 * i]!, lo = keys[2 * i + 1]!;
      if (!c2.lookup(hi, lo)) c2.insert(hi, lo);
    }
  });
  const muInsert = inserts / ins.cpu;
  const muStream = streamLinks / str.cpu;
  const row = {
    structure: name, E, muInsertPerCpuSecond: Math.round(muInsert), muStreamPerCpuSecond: Math.round(muStream),
    muInsertPerWallSecond: Math.round(inserts / ins.wall),
    sCacheInsert: sig(cacheRateLinear(muInsert, L, S_MAX), 5), sCacheStream: sig(cacheRateLinear(muStream, L, S_MAX), 5),
  };
  log(`${name} E=${E}: insert ${(muInsert / 1e6).toFixed(2)} M/s (S_cache ${row.sCacheInsert}), stream ${(muStream / 1e6).toFixed(2)} M/s`);
  return row;
}

const speedRows = [] as Array<ReturnType<typeof speeds>>;
for (const E of [1 << 16, speedE]) {
  speedRows.push(speeds('CLOCK (src/drum ClockCache)', (e) => new ClockCache(e), E, 2_000_000));
  speedRows.push(speeds('LRU (typed arrays, bench)', (e) => new LruCache(e), E, 2_000_000));
}
speedRows.push(speeds('LRU (JS Map, bench)', (e) => new MapLru(e), 1 << 16, 200_000, Math.min(n, 300_000)));

const clockBig = speedRows.find((r) => r.E === speedE && r.structure.startsWith('CLOCK'))!;
const lruBig = speedRows.find((r) => r.E === speedE && r.structure.startsWith('LRU (typed'))!;
const result = {
  bench: 'cache',
  command: commandLine('bench:cache'),
  machine: machineInfo(),
  note: SHARED_MACHINE_NOTE + ' Speeds are per CPU-second of this process (process.cpuUsage), which is less sensitive to the load than wall time; hit rates do not depend on the machine.',
  stream: {
    source: `simweb preset '${preset}' seed ${seed}: breadth-first with per-host round-robin (a polite crawler's order), generator link graph, no crawler`,
    pages: st.pages, links: n, linksPerPage: sig(n / st.pages, 4), uniqueLinks: st.uniqueLinks,
    pUnique: sig(st.uniqueLinks / n, 4), intraPageDuplicateShare: sig(st.intraPageDuplicates / n, 4),
    meanActiveHosts: Math.round(st.meanActiveHosts), tauHLS: Math.round(st.meanActiveHosts * L),
    infiniteCacheHitRate: sig(infHit, 4),
  },
  hitRates: { measuredOver: 'second half of the stream (first half warms the cache)', rows: hitRows },
  speeds: { S_max: S_MAX, l: L, eq21: 'S_cache = μ·S_max / (l·S_max + μ)', rows: speedRows },
  summary: {
    clockOverLruInsertSpeedAtSpeedE: sig(clockBig.muInsertPerCpuSecond / lruBig.muInsertPerCpuSecond, 3),
    clockMinusLruHitRateMaxAbs: sig(Math.max(...hitRows.map((r) => Math.abs(r.clock - r.lru))), 3),
  },
  totalSeconds: sig((performance.now() - t0) / 1000, 3),
};
const jf = writeResult('cache-hitrate', result);
const sf = writeSvg('cache-hitrate', lineChart({
  title: `URL cache hit rate vs size (simweb '${preset}', ${st.pages.toLocaleString('en')} pages, crawl order)`,
  xLabel: 'cache entries E', yLabel: 'hit rate', logX: true, yMin: 0, yMax: 1,
  series: [
    { name: 'LRU', points: hitRows.map((r) => [r.E, r.lru] as [number, number]) },
    { name: 'CLOCK (src/drum)', points: hitRows.map((r) => [r.E, r.clock] as [number, number]) },
    { name: 'infinite cache (every repeat hits)', dashed: true, color: '#999', points: hitRows.map((r) => [r.E, infHit] as [number, number]) },
  ],
}));
console.log(mdTable(['E', 'E / (hosts·l)', 'LRU hit', 'CLOCK hit'], hitRows.map((r) => [r.E.toLocaleString('en'), r.eOverHostsL, `${(r.lru * 100).toFixed(1)} %`, `${(r.clock * 100).toFixed(1)} %`])));
console.log(mdTable(['structure', 'E', 'μ insert (M/CPU-s)', 'μ stream (M/CPU-s)', 'S_cache (21) pages/s'],
  speedRows.map((r) => [r.structure, r.E.toLocaleString('en'), (r.muInsertPerCpuSecond / 1e6).toFixed(2), (r.muStreamPerCpuSecond / 1e6).toFixed(2), r.sCacheInsert])));
console.log(`wrote ${jf} and ${sf}`);
