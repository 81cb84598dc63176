/**
 * bench/frontier --pipeline — the frontier on disk driven as src/crawl drives it, without the
 * network: main-thread time per crawled page spent in the frontier (admissions + their commits,
 * refill, the robots gate, release, fetchDone) and in making admissions durable.
 *
 * A synthetic web of `--hosts` hosts in `--plds` PLDs on `--ips` IPs with a skewed link
 * distribution (a few big hosts get most links, so hosts fill up in RAM as on simweb). Each
 * "fetched" page yields L = 6.5 new unique URLs carrying STAR-like (B = 10, P = count per PLD).
 * Discovered URLs are admitted per "URLseen merge" of 12 result chunks:
 *   per-chunk   admit(chunk) durable, 12 commits per merge (one commit per result chunk)
 *   per-merge   admit(chunk, { durable: false }) × 12 + one commitAdmits() (the new API)
 * Politeness delays 0 (as bench:e2e), robots answered at once, a virtual clock.
 *
 * Main-thread time = event-loop utilisation (busy, not idle), i.e. CPU plus synchronous waits
 * such as fsync; the libuv pool's fsyncs do not count, which is the point of the new scheme.
 *
 *   npm run bench:frontier -- --pipeline [--pages 30000] [--links 6.5] [--mode per-merge|per-chunk] [--horizon 5000] [--compression zstd|none] [--out file]
 */
import os from 'node:os';
import path from 'node:path';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Frontier, FrontierUrl, UrlKind } from '../../src/frontier/index.js';
import { mulberry32 as rng } from '../../src/simweb/model/hash.js';

const argS = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : def;
};
const PAGES = Number(argS('pages', '30000'));
const HOSTS = Number(argS('hosts', '5000'));
const PLDS = Number(argS('plds', '2000'));
const IPS = Number(argS('ips', '256'));
/** New unique URLs per crawled page: 6.5 (IRLbot's L) by default; bench:e2e on simweb sees ~28. */
const L = Number(argS('links', '6.5'));
const MERGE_URLS = Number(argS('merge-urls', '6000'));
/** Small enough that big hosts fill their RAM share (HostFull → deferral), as on simweb. */
const PER_HOST = Number(argS('max-per-host', '100'));
const CHUNKS = 12;
const hasCommitAdmits = typeof (Frontier.prototype as { commitAdmits?: unknown }).commitAdmits === 'function';
const MODE = argS('mode', hasCommitAdmits ? 'per-merge' : 'per-chunk');
const OUT = argS('out', '');
/** Refill pacing horizon (FrontierOptions.refillHorizonMs; 0 = fill RAM whenever it has room). */
const HORIZON = Number(argS('horizon', '5000'));
/** Block compression of BEAST's files, QR and snapshots (FrontierOptions.disk.compression). */
const COMPRESSION = argS('compression', 'zstd') as 'zstd' | 'none';

const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-frontier-pipeline-'));
let now = 1_000_000;
const f = await Frontier.open(
  dir,
  { preset: 'default', hostDelayMs: 0, minHostDelayMs: 0, ipDelayMs: 0, minIpDelayMs: 0, ramUrls: 200_000, maxUrlsPerHost: PER_HOST, maxConnectionsPerIp: 1, refillHorizonMs: HORIZON, disk: { compression: COMPRESSION } } as Parameters<typeof Frontier.open>[1],
  () => now,
);
const r = rng(99);
const P = new Uint32Array(PLDS);
let id = 0;
/** A link target: host rank skewed (r² puts ~30 % of links on the first 10 % of hosts). */
function discover(): FrontierUrl {
  const h = Math.floor(r() * r() * HOSTS);
  const pld = h % PLDS;
  const p = ++P[pld]!;
  return new FrontierUrl({ url: `http://h${h}.pld${pld}.example/dir/page-${id++}.html`, hops: 2, hostHi: 0x1000 + h, hostLo: h, pldHi: pld, pldLo: 3, budget: 10, admitted: p, discoveredAt: 1.7e12 + id });
}

let discovered: FrontierUrl[] = [];
let admitMs = 0;
let commitWaitMs = 0;
async function merge(): Promise<void> {
  const urls = discovered;
  discovered = [];
  const per = Math.ceil(urls.length / CHUNKS);
  const t0 = performance.now();
  for (let c = 0; c < CHUNKS; c++) {
    const chunk = urls.slice(c * per, (c + 1) * per);
    if (chunk.length === 0) continue;
    if (MODE === 'per-merge') await f.admit(chunk, { durable: false });
    else await f.admit(chunk);
  }
  const t1 = performance.now();
  if (MODE === 'per-merge') await (f as unknown as { commitAdmits(): Promise<void> }).commitAdmits();
  commitWaitMs += performance.now() - t1;
  admitMs += t1 - t0;
}

// Seeds: one URL on each of the first 200 hosts.
for (let h = 0; h < 200; h++) {
  const pld = h % PLDS;
  discovered.push(new FrontierUrl({ url: `http://h${h}.pld${pld}.example/`, hostHi: 0x1000 + h, hostLo: h, pldHi: pld, pldLo: 3, budget: 10, admitted: ++P[pld]! }));
}
await merge();

const e0 = performance.eventLoopUtilization();
const c0 = process.cpuUsage();
const t0 = performance.now();
let pages = 0;
let carry = 0;
let refillMs = 0;
let turns = 0;
const out: FrontierUrl[] = [];
while (pages < PAGES) {
  turns++;
  const tr = performance.now();
  await f.refill();
  refillMs += performance.now() - tr;
  for (const q of f.takeRobotsRequests(1000)) f.scheduleRobotsFetch(q.hostHi, q.hostLo, `10.0.${(q.hostLo % IPS) >> 8}.${q.hostLo % IPS % 256}`);
  const n = f.nextReadyInto(now, 256, out);
  for (let i = 0; i < n; i++) {
    const u = out[i]!;
    if (u.kind === UrlKind.Robots) {
      f.robotsKnown(u.hostHi, u.hostLo, { rules: null, ip: u.ip, expiresAt: Infinity });
      f.fetchDone(u);
      continue;
    }
    f.fetchDone(u);
    pages++;
    carry += L;
    while (carry >= 1) {
      carry--;
      discovered.push(discover());
    }
  }
  if (discovered.length >= MERGE_URLS || (n === 0 && discovered.length > 0)) await merge();
  if (n === 0 && discovered.length === 0 && f.isEmpty()) break;
  // Let the thread pool's completions run (the crawl's loop yields to sockets likewise).
  await new Promise((res) => setImmediate(res));
  now += 1;
}
const wall = performance.now() - t0;
const e = performance.eventLoopUtilization(e0);
const cpu = process.cpuUsage(c0);
const tc = performance.now();
await f.commit();
const checkpointMs = performance.now() - tc;
const st = f.stats();
const io = f.io();
await f.close({ commit: false });
rmSync(dir, { recursive: true, force: true });

const result = {
  bench: 'frontier-pipeline',
  mode: MODE,
  command: `npm run bench:frontier -- --pipeline --pages ${PAGES} --links ${L} --max-per-host ${PER_HOST} --mode ${MODE} --horizon ${HORIZON} --compression ${COMPRESSION}`,
  pages,
  turns,
  wallSeconds: +(wall / 1000).toFixed(2),
  pagesPerWallSecond: Math.round(pages / (wall / 1000)),
  mainThreadMsPerPage: +(e.active / pages).toFixed(3),
  processCpuMsPerPage: +((cpu.user + cpu.system) / 1000 / pages).toFixed(3),
  admitMsPerPage: +(admitMs / pages).toFixed(3),
  commitWaitMsPerPage: +(commitWaitMs / pages).toFixed(3),
  refillMsPerPage: +(refillMs / pages).toFixed(3),
  finalCheckpointMs: Math.round(checkpointMs),
  beastBytesWrittenPerPage: Math.round(io.beast.bytesWritten / pages),
  beast: { j: st.j, doublings: st.doublings, switches: st.switches, qf: st.qf - st.qh, qh: st.qh, deferred: st.deferred, admitted: st.admitted },
  machine: { cpu: os.cpus()[0]?.model, cores: os.cpus().length, node: process.version, loadavg: os.loadavg() },
  date: new Date().toISOString(),
};
if (OUT !== '') {
  mkdirSync(path.dirname(OUT), { recursive: true });
  writeFileSync(OUT, JSON.stringify(result, null, 2) + '\n');
}
console.log(JSON.stringify(result));
