/**
 * bench/robots-drum/crawl.ts — robots.txt once per host per expiry period at 10^6 hosts with
 * `--ram 512M`, and the crawler's RSS throughout (issue #19; thesis VII.1, Fig. 2: RobotsCache and
 * RobotsRequested). A real crawl of a simweb of ~10^6 hosts (1–2 pages each, a robots.txt on each:
 * 30 % with rules, 20 % absent, the rest allow-all) served by its own process
 * (simweb-log-child.ts, which logs every robots.txt request to a file), the crawler in a child
 * process with a RAM host table far smaller than the hosts it reaches (`--host-table`), so hosts
 * leave RAM while links to their other pages still arrive and come back through RobotsCache. Three
 * runs on one state directory:
 *
 *   1. `crawl …`, SIGTERM after --run1 seconds (graceful stop: drain + checkpoint);
 *   2. `resume`, SIGKILL after --run2 seconds (no checkpoint: the last round's answers are lost);
 *   3. `resume --max-time <--last>` (the crawler stops itself).
 *
 * Each run's VmRSS (the whole process: parse workers and DRUM threads included) is read from
 * /proc/<pid>/status once per second, with VmHWM (the kernel's own peak, monotonic; the last value
 * read before exit). After the runs `drumcrawl stats` gives RobotsCache's checks and hits (a check
 * is a host that was not in the RAM host table: its first arrival or a return after an eviction or
 * a restart), and the whole robots log is judged by judgeRobotsOnce (test/e2e/robots-once-judge.ts):
 * two requests of one host within the period are a repeat unless the first was in flight at a kill
 * (its answer ended at the server less than the judge's allowance before it).
 *
 * By default the crawler runs as users run it: the commit (default HEAD, --tree) is extracted and
 * built (bench/lib/snapshot.ts) and started through `bin/drumcrawl`; `--from-src` runs
 * src/cli/main.ts through tsx instead. Run it at low priority on a shared box:
 *
 *   nice -n 5 node --import tsx bench/robots-drum/crawl.ts                     # 10^6 hosts, ~40 min
 *   nice -n 5 node --import tsx bench/robots-drum/crawl.ts --plds 40000 --run1 90 --run2 90 --last 120 --host-table 4000 --out robots-drum-crawl-trial
 *
 * Writes bench/results/<--out, default robots-drum-crawl-1e6>.json; exits 1 when a host was asked
 * twice without excuse, a page was fetched against robots.txt or the RSS went over --ram.
 */
import { spawn, fork, execFileSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SIMWEB_ALLOW_FLAGS } from '../../test/e2e/harness.js';
import { judgeRobotsOnce, ROBOTS_ANSWER_LAG_MS } from '../../test/e2e/robots-once-judge.js';
import { REPO_ROOT, SHARED_MACHINE_NOTE, args, machineInfo, sig, writeResult } from '../lib/report.js';
import { buildTree, snapshotTree } from '../lib/snapshot.js';
import { sampleMem, summarizeRss, type RssSample } from './rss-sampler.js';
import { parseSize } from '../../src/config/config-values.js';

const a = args();
const plds = a.num('plds', 410_000); // × ~2.46 hosts per PLD: ≥ 10^6 hosts (the count is printed and recorded)
const hostTable = a.num('host-table', 20_000);
const ramArg = a.get('ram') ?? '512M';
const ramBytes = parseSize(ramArg);
const run1S = a.num('run1', 540);
const run2S = a.num('run2', 540);
const lastS = a.num('last', 900);
const delayMs = a.num('delay', 40);
const concurrency = a.num('concurrency', 64);
const outName = a.get('out') ?? 'robots-drum-crawl-1e6';
const fromSrc = a.has('from-src');
const probeFile = a.get('probe');
const workers = a.get('workers'); // parse worker threads (default: the crawler's, one per core)
/** `--node-options='--max-old-space-size=224 …'` (the = form: the value starts with --) */
const nodeFlags = a.get('node-options');
const UA = 'drumcrawl-bench/0.1 (+https://example.test/bench)';
/** The judge's period: every robots answer of this web expires after ≥ 1 h, longer than the bench. */
const PERIOD_MS = 3_600_000;

/**
 * The web: ~2.5 hosts per PLD, 1–2 pages per host (a host has ⌊3^u⌋ pages for a uniform u: 63 % one,
 * 37 % two; src/simweb/model/host-model.ts pageCount), robots.txt on every host.
 */
const params = {
  plds, hostsPerPldMean: 2.5, hostsPerPldMax: 8, pagesPerHostMin: 1, pagesPerHostMax: 3, linksPerPageMean: 8,
  intraHostShare: 0.1, intraPldShare: 0.3, ips: 64, seedCount: 200, pageBytesMean: 1500, robots: { rules: 0.3, absent: 0.2 },
};

function log(s: string): void {
  process.stderr.write(`[robots-crawl] ${new Date().toISOString().slice(11, 19)} ${s}\n`);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dc-robots-crawl-'));
const robotsLog = path.join(dir, 'robots-requests.tsv');

interface Counts { count: number; robots: number; pages: number; violations: number }
interface Web {
  child: ChildProcess; dnsServer: string; httpPort: number; seeds: string[]; size: { hosts: number; pages: number };
  counts(): Promise<Counts>;
  close(): Promise<Counts & { violationSamples: string[] }>;
}

async function forkWeb(): Promise<Web> {
  const child = fork(fileURLToPath(new URL('./simweb-log-child.ts', import.meta.url)), [JSON.stringify(params), robotsLog, UA], {
    execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = await new Promise<{ dnsServer: string; httpPort: number; seeds: string[]; web: { hosts: number; pages: number } }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as never));
    child.once('exit', (code) => reject(new Error(`simweb child exited ${code}`)));
  });
  const ask = <T>(cmd: string): Promise<T> => new Promise((resolve) => {
    child.once('message', (m) => resolve(m as T));
    child.send({ cmd });
  });
  return { child, ...ready, size: ready.web, counts: () => ask<Counts>('count'), close: () => ask('close') };
}

const tree = snapshotTree(a.get('tree') ?? 'HEAD');
const buildMs = fromSrc ? null : buildTree(tree.dir);

/** `drumcrawl <argv>` from the snapshot, in its own process (the launcher execs node: one pid). */
function drumcrawl(argv: string[]): { child: ChildProcess; exited: Promise<number | null>; tail(): string } {
  const [cmd, full] = fromSrc
    ? [process.execPath, ['--import', 'tsx', path.join(tree.dir, 'src/cli/main.ts'), ...argv]]
    : [path.join(tree.dir, 'bin/drumcrawl'), argv];
  // --probe <file>: bench/mem/probe.cjs in every isolate of the crawler (per-thread heap,
  // ArrayBuffers and the process' VmRSS every 5 s, appended to <file>; read it with bench/mem/peek.py).
  // --node-options '<flags>': NODE_OPTIONS of the crawler process only (e.g. V8 heap flags).
  const nodeOptions = [nodeFlags ?? '', probeFile === undefined ? '' : `--require ${path.join(REPO_ROOT, 'bench/mem/probe.cjs')}`].join(' ').trim();
  const env = { ...process.env, ...(nodeOptions !== '' ? { NODE_OPTIONS: nodeOptions } : {}), ...(probeFile !== undefined ? { DRUMCRAWL_MEMPROBE: path.resolve(probeFile) } : {}) };
  const child = spawn(cmd, full, { cwd: tree.dir, stdio: ['ignore', 'pipe', 'pipe'], env });
  let tail = '';
  const onData = (d: Buffer): void => {
    const s = d.toString();
    process.stderr.write(s.replace(/^/gm, '    '));
    tail = (tail + s).slice(-8192);
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | null>((r) => child.on('exit', (code, signal) => r(signal === 'SIGKILL' ? -9 : code)));
  return { child, exited, tail: () => tail };
}

interface RunRecord {
  name: string; argv: string[]; stop: string; seconds: number; exit: number | null;
  serverRequests: number; robotsRequests: number; pages: number; pagesPerSecond: number;
  killedAt?: number; rss: ReturnType<typeof summarizeRss>;
}

/** One run: started, sampled each second, stopped by `signal` after `stopAfterS` (or by itself). */
async function run(web: Web, name: string, argv: string[], stopAfterS: number | null, signal: 'SIGTERM' | 'SIGKILL' | null): Promise<RunRecord> {
  log(`${name}: drumcrawl ${argv.filter((x) => !web.seeds.includes(x)).join(' ')} (seeds: the web's ${web.seeds.length})`);
  const before = await web.counts();
  const c = drumcrawl(argv);
  const t0 = performance.now();
  const samples: RssSample[] = [];
  let killedAt: number | undefined;
  let signalled = false;
  let exited = false;
  void c.exited.then(() => (exited = true));
  while (!exited) {
    await new Promise((r) => setTimeout(r, 1000));
    const t = (performance.now() - t0) / 1000;
    const m = sampleMem(c.child.pid!);
    if (m !== null) samples.push({ t, ...m });
    if (!signalled && stopAfterS !== null && signal !== null && t >= stopAfterS) {
      signalled = true;
      if (signal === 'SIGKILL') killedAt = Date.now();
      log(`${name}: ${signal} at ${t.toFixed(0)} s`);
      c.child.kill(signal);
      if (signal === 'SIGTERM') setTimeout(() => { if (!exited) c.child.kill('SIGKILL'); }, 180_000).unref();
    }
    if (!signalled && t > (stopAfterS ?? lastS) + 300) {
      signalled = true;
      log(`${name}: still running 300 s past its end; SIGKILL`);
      c.child.kill('SIGKILL');
    }
  }
  const exit = await c.exited;
  const seconds = (performance.now() - t0) / 1000;
  const after = await web.counts();
  const pages = after.pages - before.pages;
  const rec: RunRecord = {
    name, argv, stop: signal ?? 'by itself (--max-time)', seconds: sig(seconds, 4), exit,
    serverRequests: after.count - before.count, robotsRequests: after.robots - before.robots, pages,
    pagesPerSecond: sig(pages / seconds, 4), ...(killedAt !== undefined ? { killedAt } : {}), rss: summarizeRss(samples, ramBytes),
  };
  log(`${name}: exit ${exit} after ${seconds.toFixed(0)} s; ${rec.pages} pages (${rec.pagesPerSecond}/s), ${rec.robotsRequests} robots requests; RSS peak ${rec.rss.peakMiB} MiB, VmHWM ${rec.rss.hwmMiB} MiB`);
  return rec;
}

/** Every robots request of the log file, in log order. */
function readRobotsLog(): { host: string; start: number; end: number; status: number }[] {
  const out: { host: string; start: number; end: number; status: number }[] = [];
  for (const line of fs.readFileSync(robotsLog, 'utf8').split('\n')) {
    if (line === '') continue;
    const [host, start, status, , end] = line.split('\t');
    out.push({ host: host!, start: Number(start), end: Number(end), status: Number(status) });
  }
  return out;
}

const web = await forkWeb();
log(`simweb: ${web.size.hosts} hosts, ${web.size.pages} pages, ${params.ips} IPs; crawler from ${fromSrc ? 'src (tsx)' : 'the built product'} of ${tree.commit.slice(0, 12)}; state in ${dir}`);
const state = path.join(dir, 'state');
const common = ['--progress', 'plain', '--progress-interval', '60000'];
const crawlArgv = [
  'crawl', ...web.seeds, '--dns-server', web.dnsServer, ...SIMWEB_ALLOW_FLAGS, '--scope', 'any', '--state', state, '--out', path.join(dir, 'warc'),
  '--user-agent', UA, '--ram', ramArg, '--host-table', String(hostTable), '--concurrency', String(concurrency),
  '--host-delay', String(delayMs), '--ip-delay', String(delayMs), '--min-host-delay', String(delayMs), '--min-ip-delay', String(delayMs),
  '--warc-max-size', '256M', ...(workers !== undefined ? ['--workers', workers] : []), ...common,
];
const load0 = os.loadavg();
const t0 = performance.now();
const runs: RunRecord[] = [];
try {
  runs.push(await run(web, 'run 1 (crawl, SIGTERM)', crawlArgv, run1S, 'SIGTERM'));
  runs.push(await run(web, 'run 2 (resume, SIGKILL)', ['resume', state, ...common], run2S, 'SIGKILL'));
  runs.push(await run(web, 'run 3 (resume, --max-time)', ['resume', state, '--max-time', String(lastS), ...common], null, null));
} catch (err) {
  web.child.kill('SIGKILL');
  throw err;
}
const statsOut = execFileSync(fromSrc ? process.execPath : path.join(tree.dir, 'bin/drumcrawl'),
  fromSrc ? ['--import', 'tsx', path.join(tree.dir, 'src/cli/main.ts'), 'stats', state] : ['stats', state], { cwd: tree.dir, encoding: 'utf8' });
const final = await web.close();
const wall = (performance.now() - t0) / 1000;
const requests = readRobotsLog();
const kills = runs.flatMap((r) => (r.killedAt !== undefined ? [r.killedAt] : []));
const v = judgeRobotsOnce(requests, { periodMs: PERIOD_MS, kills });

const cache = /RobotsCache\s+(\d+) hosts; (\d+) checks, ([\d.]+) % hits, (\d+) expired; (\d+) merges, ([\d.]+) MB/.exec(statsOut);
const req = /RobotsReq\.\s+(\d+) hosts; (\d+) asks \((\d+) after a lost answer\); (\d+) merges, ([\d.]+) MB/.exec(statsOut);
const peak = Math.max(...runs.map((r) => r.rss.peakMiB));
const hwm = Math.max(...runs.map((r) => r.rss.hwmMiB));
const over = runs.reduce((n, r) => n + r.rss.samplesOverRam, 0);
const pagesTotal = runs.reduce((n, r) => n + r.pages, 0);
const crawlSeconds = runs.reduce((n, r) => n + r.seconds, 0);
const result = {
  bench: 'robots-drum-crawl',
  command: `nice -n 5 node --import tsx bench/robots-drum/crawl.ts${process.argv.length > 2 ? ' ' + process.argv.slice(2).join(' ') : ''}`,
  machine: { ...machineInfo(), loadavgBefore: load0.map((x) => sig(x, 3)) },
  note: SHARED_MACHINE_NOTE + ' Run at nice 5 beside other work; pages/s is this box\'s, not the crawler\'s ceiling.',
  crawler: { commit: tree.commit, subject: tree.subject, how: fromSrc ? 'src/cli/main.ts through tsx' : 'bin/drumcrawl over the built dist/ of the commit', buildMs: buildMs === null ? null : Math.round(buildMs) },
  web: { params, seed: 1, hosts: web.size.hosts, pages: web.size.pages },
  setup: { ram: ramArg, ramBytes, hostTable, workers: workers ?? 'default (cores)', nodeOptions: nodeFlags ?? null, delayMs, concurrency, run1S, run2S, lastS, periodMs: PERIOD_MS, allowanceMs: ROBOTS_ANSWER_LAG_MS,
    rss: 'VmRSS of the crawler process (all threads) from /proc/<pid>/status once per second; VmHWM the last value read before exit' },
  wallSeconds: sig(wall, 4),
  hostsReached: v.hosts,
  robotsRequests: v.requests,
  robotsRequestsNot200: requests.filter((r) => r.status !== 200 && r.status !== 404).length,
  hostsAskedTwice: v.repeated.length + v.excused.length,
  hostsAskedTwiceUnexcused: v.repeated.length,
  hostsAskedTwiceExcused: v.excused.length,
  repeatedSamples: v.repeated.slice(0, 20),
  excusedSamples: v.excused.slice(0, 20),
  robotsViolations: final.violations, robotsViolationSamples: final.violationSamples,
  pages: pagesTotal, pagesPerSecond: sig(pagesTotal / crawlSeconds, 4),
  robotsCache: cache === null ? null : { hosts: Number(cache[1]), checks: Number(cache[2]), hitPercent: Number(cache[3]), expired: Number(cache[4]), merges: Number(cache[5]), mbReadWritten: Number(cache[6]) },
  robotsRequested: req === null ? null : { hosts: Number(req[1]), asks: Number(req[2]), lostAsks: Number(req[3]), merges: Number(req[4]), mbReadWritten: Number(req[5]) },
  /** RobotsCache checks beyond the first of each host: returns of a host after it left RAM (eviction or restart). */
  hostReturns: cache === null ? null : Number(cache[2]) - v.hosts,
  stats: statsOut.trim().split('\n'),
  rssPeakMiB: peak, rssHwmMiB: hwm, samplesOverRam: over,
  verdict: [
    v.repeated.length === 0 ? `robots.txt at most once per host per period for ${v.hosts} hosts (${v.excused.length} excused by the kill window)` : `${v.repeated.length} hosts asked twice without excuse`,
    over === 0 && hwm * 2 ** 20 <= ramBytes ? `RSS under --ram ${ramArg} at every sample (peak ${peak} MiB, VmHWM ${hwm} MiB)` : `RSS over --ram ${ramArg}: ${over} samples, VmHWM ${hwm} MiB`,
  ],
  runs,
};
const jf = writeResult(outName, result);
log(`${result.verdict.join('; ')}; ${pagesTotal} pages; wrote ${jf}`);
fs.rmSync(dir, { recursive: true, force: true });
tree.remove();
process.exitCode = v.repeated.length > 0 || final.violations > 0 || over > 0 || hwm * 2 ** 20 > ramBytes ? 1 : 0;
