/**
 * End-to-end crawl throughput against simweb's bench preset (thousands of hosts on 256 IPs),
 * politeness delays zero: pages/s, crawler CPU ms per page (process.cpuUsage of the crawler
 * process, worker threads included), peak RSS. simweb runs in its own process (its CPU is reported
 * separately: on this 2-core box the two compete, so pages/s is a lower bound for the crawler).
 * Also CPU per page per thread role over a steady window (`roleCpu`: main, parse workers, each DRUM
 * thread, runtime; bench/lib/thread-cpu.ts) and from it the projected ceiling of one process on
 * 8–64 cores (`projection`, bench/lib/amdahl.ts). docs/performance.md explains both.
 *
 *   npm run bench:e2e -- [--seconds 30] [--max-pages 30000] [--workers <cores>] [--concurrency 256] [--warmup 5] [--page-workers on|off] [--web <shape>] [--ram 1.5G] [--out bench/results/e2e-throughput.json] [--from-src] [--no-build]
 *
 * `--web` picks the web's shape: `bench` (simweb's bench preset, the default) or `hosts2000`
 * (2,000 hosts, one per PLD, over 64 IPs, 59 links and ~21.5 KB per page: simweb's defaults for
 * those; a web whose IPs each serve ~31 hosts, so more of the crawl waits on the IP floors).
 *
 * `--page-workers` sets the crawler's option of that name (config.ts; absent: the crawler's default).
 *
 * By default it measures the product as users run it: `npm run build` (tsc → dist/) first, then
 * the crawler is loaded from dist/ (compiled JS; its worker threads run `<name>.js` directly, no
 * tsx loader in any thread). `--from-src` drives src/ through tsx instead (what the tests run;
 * every worker thread then loads tsx, ~1 s of CPU each at open). `--no-build` skips the build
 * (dist/ must be current). Only the bench itself and simweb (its own process) run through tsx.
 */
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { forkSimweb, tempDir, SIMWEB_NETWORKS } from '../../test/e2e/harness.js';
import { CLK_TCK, ThreadCpuSampler, type CpuSample } from '../lib/thread-cpu.js';
import { projectCeiling } from '../lib/amdahl.js';
import { launcherEnv, launcherDefaults, startedWithLauncherEnv } from '../lib/launcher-env.js';

type CrawlModule = typeof import('../../src/crawl/index.js');

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : def;
}

const seconds = Number(arg('seconds', '30'));
const maxPages = Number(arg('max-pages', '30000'));
// Default: the product's default (config.ts: one parse worker per core), so the bench measures the
// crawler as users run it. On the 2-core box, 2 workers vs 1 (cores − 1) gave 331 vs 299 and 359 vs
// 345 pages/s at equal CPU per page (tree fe3fc53).
const workers = Number(arg('workers', String(Math.max(1, os.availableParallelism()))));
const concurrency = Number(arg('concurrency', '256'));
const warmupS = Number(arg('warmup', '5'));
const outFile = arg('out', 'bench/results/e2e-throughput.json');
const pageWorkers = arg('page-workers', '');
// --ram (the crawler's option; the bench's default 1.5G, above the crawler's own default)
const ramArg = arg('ram', '');
// WARC options (defaults: the crawler's): --warc-compression gzip|zstd|none, --warc-zstd-level n,
// --warc-zstd-dictionary train|off|<file>
const warcArgs = Object.fromEntries(
  ([['warc-compression', 'warcCompression'], ['warc-zstd-level', 'warcZstdLevel'], ['warc-zstd-dictionary', 'warcZstdDictionary']] as const)
    .filter(([f]) => process.argv.includes(`--${f}`))
    .map(([f, k]) => [k, f === 'warc-zstd-level' ? Number(arg(f, '')) : arg(f, '')]),
);
const fromSrc = process.argv.includes('--from-src');
/** The web's shapes (simweb's bench preset with these params over it). */
const WEBS: Record<string, object | undefined> = {
  bench: undefined,
  hosts2000: { plds: 2000, hostsPerPldMean: 1, hostsPerPldMax: 1, ips: 64 },
};
const webName = arg('web', 'bench');
if (!(webName in WEBS)) {
  process.stderr.write(`bench:e2e: --web ${webName}: one of ${Object.keys(WEBS).join(', ')}\n`);
  process.exit(2);
}
const noBuild = process.argv.includes('--no-build');

// The crawler as bin/drumcrawl starts it: glibc reads the launcher's malloc settings only when the
// process starts, so without them the bench runs itself again with them (bench/lib/launcher-env.ts).
// The main thread's V8 limits stay node's own: the launcher's for the bench's --ram 1.5G (672 MiB
// old space, 16 MiB semi-spaces) are far above the 100–150 MiB the main heap reaches here.
if (!startedWithLauncherEnv()) {
  const again = spawnSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], { env: launcherEnv(), stdio: 'inherit' });
  process.exit(again.status ?? 1);
}

const root = fileURLToPath(new URL('../../', import.meta.url));
let buildMs: number | null = null;
if (!fromSrc && !noBuild) {
  const b0 = performance.now();
  try {
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  } catch (e) {
    // tsc still emits on type errors (no noEmitOnError): another module's work in progress must not
    // stop the bench, but say so.
    process.stderr.write(`bench:e2e: npm run build reported errors (${(e as Error).message.split('\n')[0]}); dist/ as emitted is used\n`);
  }
  buildMs = performance.now() - b0;
}
const base = fromSrc ? '../../src/crawl/' : '../../dist/crawl/';
const { resolveCrawlConfig, Crawler } = (await import(`${base}index.js`)) as CrawlModule;
const { parseSize } = (await import(`${base.replace('crawl/', 'config/')}config-values.js`)) as typeof import('../../src/config/config-values.js');

function childCpuMs(pid: number): number | null {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK;
  } catch {
    return null;
  }
}

const web = await forkSimweb('bench', WEBS[webName], { log: false });
const dir = await tempDir('bench-e2e');
const cfg = resolveCrawlConfig({
  seeds: web.seeds, stateDir: path.join(dir, 'state'), outDir: path.join(dir, 'warc'), dnsServers: [web.dnsServer], allowNetworks: SIMWEB_NETWORKS,
  userAgent: 'drumcrawl-bench/0.1 (+https://example.test/bench)',
  scope: 'any', // the whole bench web, as in every committed result
  hostDelayMs: 0, ipDelayMs: 0, minHostDelayMs: 0, minIpDelayMs: 0,
  maxTimeMs: seconds * 1000, maxPages, workers, fetchConcurrency: concurrency, progress: 'plain', progressIntervalMs: 5000,
  ramBytes: ramArg !== '' ? parseSize(ramArg, 'ram') : 1.5 * 2 ** 30, checkpointIntervalMs: 600_000,
  ...(pageWorkers !== '' ? { pageWorkers: pageWorkers as 'on' | 'off' } : {}),
  ...warcArgs,
});
// CPU per page per thread role (bench/lib/thread-cpu.ts): the crawler's worker threads announce
// their thread ids and roles (src/threads/thread-role.ts) when this variable is set before they start.
process.env.DRUMCRAWL_THREAD_ROLES = '1';
const sampler = new ThreadCpuSampler();
const serverCpu0 = childCpuMs(web.pid);
const cpu0 = process.cpuUsage();
const crawler = await Crawler.open(cfg);
// Opening starts the worker threads (2 DRUM threads, the parse pool) and loads their modules (through
// tsx with --from-src: ~4–5 s of CPU on this box) — fixed per run: reported apart from the crawl.
const cpuOpen = process.cpuUsage();
const t0 = performance.now();
// One sample a second while the crawl runs; the steady window goes from the first sample after
// --warmup seconds to the last one taken while the crawler was still 'running' (so neither the
// open, the JIT's first seconds, nor the drain and final checkpoint are in it).
const openSample = sampler.sample(0);
const samples: { s: CpuSample; running: boolean }[] = [];
let snapshotMs = 0;
// Peak RSS sampled every 500 ms and at each snapshot, not the summary's kernel high-water mark: the
// trees an A/B compares (ab.ts runs each tree's own run.ts) then measure it alike.
let peakRss = 0;
const rssTimer = setInterval(() => void (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 500);
const cpuTimer = setInterval(() => {
  const s0 = performance.now();
  let snap: ReturnType<typeof crawler.snapshot>;
  try {
    snap = crawler.snapshot();
  } catch {
    // the crawl is closing (its frontier already closed: Beast.stats reads a freed queue); the
    // steady window ends at the last sample taken while it ran
    return;
  }
  snapshotMs += performance.now() - s0;
  peakRss = Math.max(peakRss, snap.rssBytes);
  samples.push({ s: sampler.sample(snap.pages), running: snap.state === 'running' });
}, 1000);
// DRUMCRAWL_BENCH_TRACE=1: one line per second of the scheduler's state (what holds dispatch back).
// eld: the event loop's longest delay in that second (ms; the main thread blocked by synchronous work).
const eld = process.env.DRUMCRAWL_BENCH_TRACE ? monitorEventLoopDelay({ resolution: 5 }) : null;
eld?.enable();
const trace = process.env.DRUMCRAWL_BENCH_TRACE
  ? setInterval(() => {
    const s = crawler.snapshot();
    process.stderr.write(`trace t=${(s.elapsedMs / 1000).toFixed(0)} pages=${s.pages} inFlight=${s.inFlight} parsing=${s.parsing} queued=${s.urlsQueued} hosts=${s.hosts.active}/${s.hosts.waiting} ips=${s.ips.active}/${s.ips.waiting} qr=${s.beast.qrSize} eldMaxMs=${(eld!.max / 1e6).toFixed(0)}\n`);
    eld!.reset();
  }, 1000)
  : null;
const summary = await crawler.run();
if (trace !== null) clearInterval(trace);
const wallMs = performance.now() - t0;
clearInterval(cpuTimer);
clearInterval(rssTimer);
sampler.close();
const running = samples.filter((x) => x.running).map((x) => x.s);
const lastRunning = running.at(-1) ?? openSample;
const steadyFrom = running.find((x) => x.t - t0 >= warmupS * 1000) ?? openSample;
const steadyCosts = sampler.roleCosts(steadyFrom, lastRunning);
const fromOpenCosts = sampler.roleCosts(openSample, lastRunning);
const perThread = [...lastRunning.threads]
  .map(([tid, c]) => {
    const a = steadyFrom.threads.get(tid);
    const ms = a === undefined ? 0 : c.user + c.sys - a.user - a.sys;
    return { tid, role: sampler.roles.get(tid) ?? 'runtime', msPerPage: ms / Math.max(1, lastRunning.pages - steadyFrom.pages) };
  })
  .filter((t) => t.msPerPage >= 0.002)
  .sort((a, b) => a.tid - b.tid);
const cpu = process.cpuUsage(cpu0);
const cpuAfterOpen = process.cpuUsage(cpuOpen);
const serverCpu1 = childCpuMs(web.pid);
await web.close();

const cpuMs = (cpu.user + cpu.system) / 1000;
// the archive written: its WARC files' bytes (CDXJ and crawl log apart)
let warcBytes = 0;
for (const f of readdirSync(path.join(dir, 'warc'))) if (/\.warc(\.gz|\.zst)?$/.test(f)) warcBytes += statSync(path.join(dir, 'warc', f)).size;
const result = {
  bench: 'e2e-throughput',
  command: `npm run bench:e2e -- --seconds ${seconds} --max-pages ${maxPages} --workers ${workers} --concurrency ${concurrency} --warmup ${warmupS}${pageWorkers !== '' ? ` --page-workers ${pageWorkers}` : ''}${webName !== 'bench' ? ` --web ${webName}` : ''}${ramArg !== '' ? ` --ram ${ramArg}` : ''}${Object.entries(warcArgs).map(([k, v]) => ` --${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} ${v}`).join('')}${fromSrc ? ' --from-src' : ''}`,
  /** dist: the built crawler (compiled JS, what `drumcrawl` runs); src: TypeScript through tsx */
  crawlerFrom: fromSrc ? 'src (tsx)' : 'dist',
  buildMs,
  date: new Date().toISOString(),
  machine: { cpu: os.cpus()[0]?.model, cores: os.cpus().length, node: process.version, loadavg: os.loadavg() },
  preset: webName === 'bench' ? 'simweb bench (2000 PLDs, ~5000 hosts, 256 IPs), politeness delays 0, one connection per IP'
    : `simweb bench with ${JSON.stringify(WEBS[webName])}, politeness delays 0, one connection per IP`,
  config: { workers, fetchConcurrency: concurrency, ramBytes: cfg.ramBytes, warcCompression: cfg.warcCompression, warcZstdLevel: cfg.warcZstdLevel, warcZstdDictionary: cfg.warcZstdDictionary, pageWorkers: cfg.pageWorkers },
  /** the launcher's environment the crawler ran with (bin/drumcrawl; bench/lib/launcher-env.ts) */
  env: Object.fromEntries(Object.keys(launcherDefaults()).map((k) => [k, process.env[k] ?? null])),
  stopReason: summary.stopReason,
  pages: summary.pages,
  wallSeconds: wallMs / 1000,
  pagesPerSec: (summary.pages * 1000) / wallMs,
  mbPerSec: summary.bytes / 1e6 / (wallMs / 1000),
  crawlerCpuMsPerPage: cpuMs / Math.max(1, summary.pages),
  /** the same without Crawler.open (thread start-up, module loading): the per-page cost proper */
  crawlerCpuMsPerPageAfterOpen: (cpuAfterOpen.user + cpuAfterOpen.system) / 1000 / Math.max(1, summary.pages),
  openCpuMs: (cpu.user + cpu.system - cpuAfterOpen.user - cpuAfterOpen.system) / 1000,
  crawlerCpuCoresUsed: cpuMs / wallMs,
  simwebCpuMsPerPage: serverCpu0 !== null && serverCpu1 !== null ? (serverCpu1 - serverCpu0) / Math.max(1, summary.pages) : null,
  peakRssMB: peakRss / 2 ** 20,
  /** bytes of the WARC files written, per page crawled */
  warcBytesPerPage: warcBytes / Math.max(1, summary.pages),
  /**
   * CPU ms per page per thread role (utime + stime from /proc/self/task/<tid>/stat, bench/lib/thread-cpu.ts):
   * main; parse (all parse workers); each DRUM thread by the DRUMs it hosts; runtime = process total
   * − the named threads (V8 platform threads: GC, TurboFan; the libuv pool: fsync, async fs).
   * steady: from the first sample after the warm-up to the last one while running; fromOpen: from
   * the end of Crawler.open to the same end.
   */
  roleCpu: {
    clockTicksPerSecond: CLK_TCK,
    steady: {
      seconds: (lastRunning.t - steadyFrom.t) / 1000,
      pages: lastRunning.pages - steadyFrom.pages,
      pagesPerSec: ((lastRunning.pages - steadyFrom.pages) * 1000) / Math.max(1, lastRunning.t - steadyFrom.t),
      /** the window on the monotonic clock, µs (to cut a --cpu-prof profile to it: bench/e2e/profile-groups.ts) */
      monoUs: { from: steadyFrom.monoUs, to: lastRunning.monoUs },
      roles: steadyCosts,
    },
    fromOpen: { seconds: (lastRunning.t - openSample.t) / 1000, pages: lastRunning.pages, roles: fromOpenCosts },
    /** busy threads in the steady window (≥ 0.002 ms/page) */
    threads: perThread,
    /** wall time of the sampler itself on the main thread: the /proc reads, and crawler.snapshot() for the page count */
    samplerMainMsPerPage: sampler.sampleCostMs / Math.max(1, summary.pages),
    snapshotMainMsPerPage: snapshotMs / Math.max(1, summary.pages),
    samples: sampler.samples,
  },
  /** projected ceiling of one process on 8–64 cores from the steady per-role costs (bench/lib/amdahl.ts) */
  projection: projectCeiling(steadyCosts),
  urlsSeen: summary.urlsSeen,
  duplicates: summary.duplicates,
  outcomes: summary.outcomes,
  targets: { pagesPerSec: 2500, crawlerCpuMsPerPage: 0.5 },
  note: 'Shared 2-core box (several engineers running tests and benches at once; see loadavg): absolute numbers are low and noisy. simweb (server) runs in a separate process on the same 2 cores; its CPU per page is reported separately. Includes startup (worker/DRUM threads) and the final checkpoint in wall time.',
};
mkdirSync(path.dirname(outFile), { recursive: true });
writeFileSync(outFile, JSON.stringify(result, null, 2) + '\n');
console.log(JSON.stringify(result, null, 2));
