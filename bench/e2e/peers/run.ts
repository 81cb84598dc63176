/**
 * bench/e2e/peers — drumcrawl beside wget2, Scrapy and Crawlee (CheerioCrawler) on the same simweb,
 * in one run: pages/s, crawler CPU per page, peak RSS, with politeness off (throughput) and on
 * (for those that support per-host politeness), and ratios to drumcrawl.
 *
 *   npm run bench:peers                                  # bench preset, ≤ 5,000 pages or 90 s per run
 *   npm run bench:peers -- --pages 20000 --time 300 --polite-pages 3000 --polite-delay 1
 *   npm run bench:peers -- --only wget2,scrapy           # a subset
 *
 * Setup done by this script when missing: `apt-get install -y wget2 python3-scrapy`;
 * `npm i --prefix bench/.peers crawlee@3` (git-ignored folder). drumcrawl is built (tsc) from a clean
 * `git archive` of HEAD in a temporary directory (`--tree <ref>`; `--tree working-tree` uses the
 * checkout's dist/ and, without --no-build, rebuilds it).
 *
 * Name resolution: simweb's hosts resolve only through simweb's DNS server. drumcrawl gets it with
 * `--dns-server`; the peers go through a resolving HTTP forward proxy in its own process
 * (proxy.ts: absolute-form requests, DNS via simweb, forwarded to the host's 127.x IP with the same
 * Host header). Measured on the server side (simweb's request log): a page is a 2xx response to a
 * non-robots.txt path; pages/s counts from the crawler's first request to its budget-th page.
 * CPU and peak RSS are the crawler process tree's, from /proc (proxy and server excluded).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startSimweb, type RequestLogEntry, type SimwebPreset } from '../../../src/simweb/index.js';
import { SIMWEB_ALLOW_FLAGS } from '../../../test/e2e/harness.js';
import { REPO_ROOT, SHARED_MACHINE_NOTE, args, commandLine, machineInfo, mdTable, sig, writeResult } from '../../lib/report.js';
import { TreeSampler } from './proc.js';
import { snapshotTree } from '../../lib/snapshot.js';

const a = args();
const preset = (a.get('preset') ?? 'bench') as SimwebPreset;
const budget = a.num('pages', 5_000);
const timeLimit = a.num('time', 90);
const politeBudget = a.num('polite-pages', 2_000);
const politeTime = a.num('polite-time', 45);
const politeDelay = a.num('polite-delay', 1);
const concurrency = a.num('concurrency', 32);
const only = a.get('only')?.split(',') ?? null;
const skipPolite = a.has('no-polite');
// drumcrawl's "politeness off" delays (ms): 0 by default; see docs/benchmarks.md for why a 1 ms
// variant is also worth running.
const drumOffDelay = a.get('drum-off-delay') ?? '0';
const PEERS_DIR = path.join(REPO_ROOT, 'bench/.peers');
const UA = 'drumcrawl-bench (+https://example.org/drumcrawl-bench)';
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'drumcrawl-peers-'));

function log(s: string): void {
  process.stderr.write(`[peers] ${s}\n`);
}

function have(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

function versionOf(cmd: string, argv: string[]): string {
  const r = spawnSync(cmd, argv, { encoding: 'utf8' });
  return ((r.stdout || r.stderr || '').split('\n').find((l) => l.trim()) ?? 'unknown').trim();
}

// ---- setup ----------------------------------------------------------------------------------------
if (!have('wget2') || !have('scrapy')) {
  log('installing wget2 and python3-scrapy (apt-get)');
  spawnSync('apt-get', ['install', '-y', 'wget2', 'python3-scrapy'], { stdio: 'inherit' });
}
const crawleePkg = path.join(PEERS_DIR, 'node_modules/crawlee/package.json');
if (!fs.existsSync(crawleePkg)) {
  log('installing crawlee@3 into bench/.peers');
  fs.mkdirSync(PEERS_DIR, { recursive: true });
  if (!fs.existsSync(path.join(PEERS_DIR, 'package.json'))) {
    fs.writeFileSync(path.join(PEERS_DIR, 'package.json'), JSON.stringify({ name: 'drumcrawl-bench-peers', private: true, type: 'module' }) + '\n');
  }
  spawnSync('npm', ['i', '--prefix', PEERS_DIR, '--no-audit', '--no-fund', 'crawlee@3'], { stdio: 'inherit' });
}
fs.copyFileSync(path.join(REPO_ROOT, 'bench/e2e/peers/crawlee_peer.mjs'), path.join(PEERS_DIR, 'crawlee_peer.mjs'));
// drumcrawl is built from a clean extract of a commit (default HEAD; --tree working-tree builds the
// checkout's dist/ as before): the checkout is shared with engineers editing src/ at the same time.
const tree = snapshotTree(a.get('tree') ?? 'HEAD');
const drumcrawlCli = path.join(tree.dir, 'dist/cli/main.js');
const drumcrawlLauncher = path.join(tree.dir, 'bin/drumcrawl');
if (!a.has('no-build') || tree.commit !== 'working-tree') {
  log(`building drumcrawl (${tree.commit === 'working-tree' ? 'working tree' : tree.commit.slice(0, 10)})`);
  const b = spawnSync(process.execPath, [path.join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: tree.dir, stdio: ['ignore', 'ignore', 'inherit'] });
  if (b.status !== 0) log('build reported errors; using what it emitted');
}
const drumcrawlReady = fs.existsSync(drumcrawlCli) &&
  spawnSync('node', [drumcrawlCli, 'crawl', '--help'], { encoding: 'utf8' }).stdout.includes('--dns-server');

const versions: Record<string, string> = {
  wget2: versionOf('wget2', ['--version']),
  scrapy: versionOf('scrapy', ['version']),
  python: versionOf('python3', ['--version']),
  crawlee: fs.existsSync(crawleePkg) ? `crawlee ${JSON.parse(fs.readFileSync(crawleePkg, 'utf8')).version}` : 'missing',
  drumcrawl: drumcrawlReady ? `drumcrawl ${JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')).version} (${tree.commit === 'working-tree' ? 'working tree at ' + spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).stdout.trim() : tree.commit.slice(0, 10) + ': ' + tree.subject})` : 'pending',
};

// ---- simweb + proxy -------------------------------------------------------------------------------
const sim = await startSimweb({ preset, seed: 1, logCapacity: 1000 } as Parameters<typeof startSimweb>[0]);
// Count pages as the server completes them (a wrapper around the log, not a change to simweb).
let pages = 0, requests = 0, firstStart = Infinity, budgetAt = 0, watchBudget = Infinity;
const origAdd = sim.log.add.bind(sim.log);
sim.log.add = (e: RequestLogEntry): void => {
  origAdd(e);
  requests++;
  if (e.start < firstStart) firstStart = e.start;
  if (e.status >= 200 && e.status < 300 && e.path !== '/robots.txt') {
    pages++;
    if (pages === watchBudget) budgetAt = e.end;
  }
};
const seedsFile = path.join(tmp, 'seeds.txt');
fs.writeFileSync(seedsFile, sim.seeds.join('\n') + '\n');
log(`simweb '${preset}' on port ${sim.httpPort}, DNS ${sim.dnsServer}, ${sim.seeds.length} seeds`);

const proxy = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'bench/e2e/peers/proxy.ts'), sim.dnsServer, String(sim.httpPort)], {
  cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'],
});
const proxyPort = await new Promise<number>((resolve, reject) => {
  let buf = '';
  proxy.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    const m = /PROXY (\d+)/.exec(buf);
    if (m) resolve(Number(m[1]));
  });
  proxy.on('exit', () => reject(new Error('proxy exited')));
});
const proxyUrl = `http://127.0.0.1:${proxyPort}`;
const proxySampler = new TreeSampler(proxy.pid!);
log(`proxy on ${proxyUrl}`);

// ---- the runs -------------------------------------------------------------------------------------
interface RunSpec {
  crawler: string;
  politeness: 'off' | 'on';
  how: string;
  cmd: string;
  argv: string[];
  env?: Record<string, string>;
  cwd?: string;
  budget: number;
  timeLimit: number;
  viaProxy: boolean;
}

function specs(): RunSpec[] {
  const out: RunSpec[] = [];
  const proxyEnv = { http_proxy: proxyUrl, HTTP_PROXY: proxyUrl, no_proxy: '', NO_PROXY: '' };
  const wget = (polite: boolean): RunSpec => {
    const dir = path.join(tmp, `wget2-${polite ? 'on' : 'off'}`);
    return {
      crawler: 'wget2', politeness: polite ? 'on' : 'off', viaProxy: true,
      how: polite ? `robots on, --wait ${politeDelay} per thread, 1 thread (wget2 has no per-host delay)` : `${concurrency} threads, robots off`,
      cmd: 'wget2',
      // --opt=value throughout: wget2 1.99's boolean options take the next argument as their value.
      argv: ['--recursive', '--level=inf', '--span-hosts', '--domains=test', `--robots=${polite ? 'on' : 'off'}`,
        `--max-threads=${polite ? 1 : concurrency}`, ...(polite ? [`--wait=${politeDelay}`] : []), '--delete-after', '--no-directories',
        `--directory-prefix=${dir}`, '--quiet', '--tries=1', '--timeout=15', '--max-redirect=5', `--http-proxy=${proxyUrl}`,
        `--user-agent=${UA}`, `--input-file=${seedsFile}`],
      budget: polite ? politeBudget : budget, timeLimit: polite ? politeTime : timeLimit,
    };
  };
  const scrapy = (polite: boolean): RunSpec => ({
    crawler: 'Scrapy', politeness: polite ? 'on' : 'off', viaProxy: true,
    how: polite ? `robots on, DOWNLOAD_DELAY ${politeDelay} s, 1 request per domain at a time, ${concurrency} total` : `${concurrency} concurrent, no delay, robots off`,
    cmd: 'scrapy', cwd: tmp, env: proxyEnv,
    argv: ['runspider', path.join(REPO_ROOT, 'bench/e2e/peers/scrapy_peer.py'), '-a', `seeds=${seedsFile}`,
      '-s', `CLOSESPIDER_PAGECOUNT=${polite ? politeBudget : budget}`, '-s', `CONCURRENT_REQUESTS=${concurrency}`,
      '-s', `CONCURRENT_REQUESTS_PER_DOMAIN=${polite ? 1 : concurrency}`, '-s', `DOWNLOAD_DELAY=${polite ? politeDelay : 0}`,
      '-s', 'RANDOMIZE_DOWNLOAD_DELAY=False', '-s', `ROBOTSTXT_OBEY=${polite ? 'True' : 'False'}`, '-s', 'LOG_LEVEL=WARNING',
      '-s', 'TELNETCONSOLE_ENABLED=False', '-s', 'COOKIES_ENABLED=False', '-s', 'RETRY_TIMES=1', '-s', 'DOWNLOAD_TIMEOUT=15',
      '-s', 'DEPTH_PRIORITY=1', '-s', 'SCHEDULER_DISK_QUEUE=scrapy.squeues.PickleFifoDiskQueue',
      '-s', 'SCHEDULER_MEMORY_QUEUE=scrapy.squeues.FifoMemoryQueue', '-s', `USER_AGENT=${UA}`, '-s', 'REACTOR_THREADPOOL_MAXSIZE=4'],
    budget: polite ? politeBudget : budget, timeLimit: polite ? politeTime : timeLimit,
  });
  const crawlee = (polite: boolean): RunSpec => ({
    crawler: 'Crawlee', politeness: polite ? 'on' : 'off', viaProxy: true,
    how: polite ? `sameDomainDelaySecs ${politeDelay}, respectRobotsTxtFile, maxConcurrency ${concurrency}` : `CheerioCrawler, maxConcurrency ${concurrency}, robots off`,
    cmd: process.execPath, cwd: PEERS_DIR, env: { CRAWLEE_STORAGE_DIR: path.join(tmp, `crawlee-${polite ? 'on' : 'off'}`) },
    argv: [path.join(PEERS_DIR, 'crawlee_peer.mjs'), seedsFile, proxyUrl, String(polite ? politeBudget : budget), String(concurrency), String(polite ? politeDelay : 0)],
    budget: polite ? politeBudget : budget, timeLimit: polite ? politeTime : timeLimit,
  });
  const drum = (polite: boolean): RunSpec => {
    const d = path.join(tmp, `drumcrawl-${polite ? 'on' : 'off'}`);
    const ms = String(Math.round(politeDelay * 1000));
    return {
      crawler: 'drumcrawl', politeness: polite ? 'on' : 'off', viaProxy: false,
      how: polite ? `robots on (always), --host-delay ${ms} ms, --ip-delay 0, concurrency ${concurrency}, WARC gzip written` : `--host-delay ${drumOffDelay} --ip-delay ${drumOffDelay} (robots.txt still obeyed: not switchable), concurrency ${concurrency}, WARC gzip written`,
      // bin/drumcrawl, as users start it: the main heap's limits from --ram, the malloc settings.
      cmd: drumcrawlLauncher,
      argv: ['crawl', ...sim.seeds, '--dns-server', sim.dnsServer, ...SIMWEB_ALLOW_FLAGS, '--state', path.join(d, 'state'), '--out', path.join(d, 'out'),
        '--host-delay', polite ? ms : drumOffDelay, '--ip-delay', polite ? '0' : drumOffDelay,
        '--min-host-delay', polite ? ms : drumOffDelay, '--min-ip-delay', polite ? '0' : drumOffDelay,
        '--max-pages', String(polite ? politeBudget : budget), '--concurrency', String(concurrency), '--progress', 'none', '--scope', 'any',
        '--user-agent', UA, '--ram', '512M'],
      budget: polite ? politeBudget : budget, timeLimit: polite ? politeTime : timeLimit,
    };
  };
  const all = [wget(false), scrapy(false), crawlee(false), drum(false)];
  if (!skipPolite) all.push(wget(true), scrapy(true), crawlee(true), drum(true));
  for (const s of all) {
    if (only && !only.some((o) => s.crawler.toLowerCase().startsWith(o.toLowerCase()))) continue;
    if (s.crawler === 'drumcrawl' && !drumcrawlReady) continue;
    out.push(s);
  }
  return out;
}

interface RunResult {
  crawler: string;
  politeness: string;
  how: string;
  viaProxy: boolean;
  budget: number;
  pages: number;
  requests: number;
  seconds: number;
  pagesPerSecond: number;
  cpuSeconds: number;
  cpuMsPerPage: number;
  /** CPU from the first request to the budget, per page (start-up excluded). */
  cpuMsPerPageSteady: number;
  startupCpuSeconds: number;
  peakRssMiB: number;
  stoppedBy: string;
  exitCode: number | null;
  stderrTail: string;
  /** 1-minute load average when the run ended (the box is shared). */
  loadavg1AtEnd: number;
}

async function runOne(s: RunSpec): Promise<RunResult> {
  pages = 0;
  requests = 0;
  firstStart = Infinity;
  budgetAt = 0;
  watchBudget = s.budget;
  sim.log.clear();
  const t0 = performance.timeOrigin + performance.now();
  const child: ChildProcess = spawn(s.cmd, s.argv, { cwd: s.cwd ?? tmp, env: { ...process.env, ...(s.env ?? {}) }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  let exited = false;
  let exitCode: number | null = null;
  const exitP = new Promise<void>((r) => child.on('exit', (c) => {
    exited = true;
    exitCode = c;
    r();
  }));
  const sampler = new TreeSampler(child.pid!);
  let stoppedBy = 'exit';
  let cpuAtBudget = -1;
  let cpuAtFirst = -1;
  for (;;) {
    await new Promise((r) => setTimeout(r, 100));
    if (!exited) sampler.sample();
    if (cpuAtFirst < 0 && requests > 0) cpuAtFirst = sampler.cpuSeconds;
    proxySampler.sample();
    if (pages >= s.budget) {
      stoppedBy = 'budget';
      cpuAtBudget = sampler.cpuSeconds;
      break;
    }
    if (exited) break;
    if ((performance.timeOrigin + performance.now() - t0) / 1000 > s.timeLimit) {
      stoppedBy = 'time-limit';
      break;
    }
  }
  const tEnd = stoppedBy === 'budget' && budgetAt > 0 ? budgetAt : performance.timeOrigin + performance.now();
  const counted = Math.min(pages, s.budget);
  if (!exited) {
    child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exitP;
    clearTimeout(t);
  }
  const seconds = (tEnd - Math.min(firstStart, tEnd)) / 1000;
  const cpu = cpuAtBudget >= 0 ? cpuAtBudget : sampler.cpuSeconds;
  const r: RunResult = {
    crawler: s.crawler, politeness: s.politeness, how: s.how, viaProxy: s.viaProxy, budget: s.budget, pages: counted, requests,
    seconds: sig(seconds, 4), pagesPerSecond: sig(counted / Math.max(seconds, 1e-9), 4), cpuSeconds: sig(cpu, 4),
    cpuMsPerPage: sig((cpu * 1000) / Math.max(counted, 1), 4),
    cpuMsPerPageSteady: sig(((cpu - Math.max(0, cpuAtFirst)) * 1000) / Math.max(counted, 1), 4),
    startupCpuSeconds: sig(Math.max(0, cpuAtFirst), 3), peakRssMiB: sig(Math.max(sampler.peakRssBytes, sampler.hwmBytes) / 2 ** 20, 4),
    stoppedBy, exitCode, stderrTail: stderr.split('\n').filter(Boolean).slice(-3).join(' | ').slice(0, 400),
    loadavg1AtEnd: sig(os.loadavg()[0]!, 3),
  };
  log(`${s.crawler} politeness ${s.politeness}: ${counted} pages in ${r.seconds}s = ${r.pagesPerSecond}/s, CPU ${r.cpuMsPerPage} ms/page, peak RSS ${r.peakRssMiB} MiB (${stoppedBy})`);
  return r;
}

const loadBefore = os.loadavg();
const results: RunResult[] = [];
for (const s of specs()) {
  try {
    results.push(await runOne(s));
  } catch (err) {
    log(`${s.crawler}: ${String(err)}`);
  }
  await new Promise((r) => setTimeout(r, 1000));
}
proxy.kill('SIGTERM');
await sim.close();
fs.rmSync(tmp, { recursive: true, force: true });
tree.remove();

// ---- ratios and output ----------------------------------------------------------------------------
const ratios = (['off', 'on'] as const).map((pol) => {
  const ref = results.find((r) => r.crawler === 'drumcrawl' && r.politeness === pol);
  return {
    politeness: pol,
    reference: ref ? 'drumcrawl' : 'none (drumcrawl pending)',
    rows: results.filter((r) => r.politeness === pol).map((r) => ({
      crawler: r.crawler,
      pagesPerSecondVsDrumcrawl: ref ? sig(r.pagesPerSecond / ref.pagesPerSecond, 3) : null,
      cpuPerPageVsDrumcrawl: ref ? sig(r.cpuMsPerPage / ref.cpuMsPerPage, 3) : null,
      steadyCpuPerPageVsDrumcrawl: ref ? sig(r.cpuMsPerPageSteady / ref.cpuMsPerPageSteady, 3) : null,
      peakRssVsDrumcrawl: ref ? sig(r.peakRssMiB / ref.peakRssMiB, 3) : null,
    })),
  };
});
const result = {
  bench: 'peers',
  command: commandLine('bench:peers'),
  machine: { ...machineInfo(), loadavgBefore: loadBefore.map((x) => sig(x, 3)) },
  note: SHARED_MACHINE_NOTE + ' Runs are sequential in one process tree that also hosts simweb, so each crawler competes with the same server and the same neighbours; compare the ratios. CPU per page includes each crawler\'s start-up.',
  setup: {
    simweb: { preset, seed: 1, seeds: sim.seeds.length, port: sim.httpPort },
    nameResolution: 'drumcrawl: --dns-server (simweb DNS). wget2, Scrapy, Crawlee: resolving HTTP forward proxy in its own process (bench/e2e/peers/proxy.ts), DNS via simweb, same Host header, keep-alive to the host IP',
    proxyCpuSeconds: sig(proxySampler.cpuSeconds, 4),
    pageDefinition: 'server-side 2xx response to a path other than /robots.txt (simweb request log)',
    pagesPerSecond: "counted from the crawler's first request to its budget-th page (server clock)",
    cpu: 'utime+stime of the crawler process tree from /proc at the moment the budget was reached (threads included)',
    peakRss: 'max of summed VmRSS over 100 ms samples of the tree, or the root VmHWM if larger',
    budget, timeLimit, politeBudget, politeTime, politeDelaySeconds: politeDelay, concurrency,
    versions,
  },
  drumcrawl: drumcrawlReady ? 'measured' : 'pending (dist/cli/main.js crawl not available)',
  results,
  ratios,
};
// --out names the result file (bench/results/peers-<out>.json) for partial or exploratory runs.
const jf = writeResult(`peers-${a.get('out') ?? 'e2e'}`, result);
console.log(mdTable(['crawler', 'politeness', 'pages', 's', 'pages/s', 'CPU ms/page', 'CPU ms/page after start-up', 'peak RSS MiB', 'stopped by'],
  results.map((r) => [r.crawler, r.politeness, r.pages, r.seconds, r.pagesPerSecond, r.cpuMsPerPage, r.cpuMsPerPageSteady, r.peakRssMiB, r.stoppedBy])));
console.log(`wrote ${jf}`);
