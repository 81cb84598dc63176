/**
 * bench:hostile — what hostile web servers do to the crawler's memory and to the end of its run
 * (issue #30). A crawl through `bin/drumcrawl` (the launcher users run, over the built dist/ of a
 * commit) of hostile servers on loopback (src/simweb/hostile-server.ts), one scenario at a time, at
 * each `--ram`:
 *
 *   slow    150 server IPs, each streaming 8 MiB HTML bodies slowly (over 20 s), 2 pages each
 *   gzip    150 server IPs, each sending 89 KB gzip bodies that decode to 15 MiB, 3 pages each
 *   chunked 150 server IPs, each streaming 8 MiB HTML bodies slowly, chunked (no Content-Length), 2 pages each
 *   both    slow, chunked and gzip at the same time (3 × 150 server IPs)
 *   flood   chunk floods (1-byte, 2-byte, gzip in 1-byte chunks), 30 URLs each on its own IP,
 *           beside an ordinary host (its pace is read from the servers' request log)
 *   links   an 8 MiB page of 490,000 links beside an ordinary host
 *
 * Each run has `--max-time` (default 30 s). The harness reads VmHWM of the crawler process (all its
 * threads) from /proc/<pid>/status every 100 ms until it exits (VmHWM only grows: the last reading
 * is the process' peak), and its CPU time (user + sys, /proc/<pid>/stat: the last reading, ≤ 100 ms
 * before the exit), the time from the spawn to the exit, and judges the crawl log against
 * the servers' request log: every page a server was asked for must have a crawl.log line.
 *
 *   npm run bench:hostile                                   # HEAD, --ram 512M,1G,1.5G, all scenarios, page workers off and on
 *   npm run bench:hostile -- --tree 865745a --ram 512M --scenarios slow --modes off
 *
 * Writes bench/results/hostile-<commit>.json (or --out). Exit 1 when a run broke an acceptance
 * bound (VmHWM > --ram, a fetched page without a crawl.log line, a run not ended within
 * max-time + 10 s of its start, a crash). The start is when the crawler's status server answers
 * (the run's clock starts then); the process' own start-up before it is reported beside.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startHostileServers, type HostileRobots } from '../../src/simweb/hostile-server.js';
import { SHARED_MACHINE_NOTE, args, machineInfo, resultFile, sig, writeResult } from '../lib/report.js';
import { startCrawlChild } from '../lib/crawl-child.js';
import { statCpu } from '../lib/thread-cpu.js';
import { buildTree, snapshotTree } from '../lib/snapshot.js';

const a = args();
const rams = (a.get('ram') ?? '512M,1G,1.5G').split(',');
const scenarios = (a.get('scenarios') ?? 'slow,chunked,gzip,both,flood,links').split(',');
const modes = (a.get('modes') ?? 'off,on').split(',');
const maxTimeS = a.num('max-time', 30);
const ipCount = a.num('ips', 150);
const UA = 'drumcrawl-bench/0.1 (+https://example.test/bench)';
const MiB = 2 ** 20;

function log(s: string): void {
  process.stderr.write(`[hostile] ${new Date().toISOString().slice(11, 19)} ${s}\n`);
}

function parseSize(s: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?$/i.exec(s.trim());
  if (!m) throw new Error(`--ram: bad size ${s}`);
  return Math.round(Number(m[1]) * 1024 ** ' KMGT'.indexOf((m[2] || ' ').toUpperCase()));
}

/** CPU ms (user + sys, all threads) of the process so far, 0 once it is gone. */
function cpuMs(pid: number): number {
  try {
    const c = statCpu(fs.readFileSync(`/proc/${pid}/stat`, 'latin1'));
    return c.user + c.sys;
  } catch {
    return 0;
  }
}

function vmHwm(pid: number): number {
  try {
    const m = /^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'latin1'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Server IPs of a scenario: 127.<block>.<i / 250>.<1 + i % 250>, away from simweb's 127.1.x.x. */
function ipsOf(block: number, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `127.${block}.${Math.floor(i / 250)}.${1 + (i % 250)}`);
}

interface Scenario {
  name: string;
  ips: string[];
  seeds: (url: (ip: string, p: string) => string) => string[];
  flags: string[];
  robots?: Record<string, HostileRobots>;
  /** the ordinary host whose pace is reported */
  normal?: string;
}

function scenario(name: string): Scenario {
  const slowDelays = ['--host-delay', '0', '--min-host-delay', '0', '--ip-delay', '0', '--min-ip-delay', '0'];
  const paced = ['--host-delay', '100', '--min-host-delay', '100', '--ip-delay', '100', '--min-ip-delay', '100'];
  switch (name) {
    case 'slow': {
      const ips = ipsOf(71, ipCount);
      return { name, ips, flags: slowDelays, seeds: (u) => ips.flatMap((ip) => [u(ip, '/slow-big/0'), u(ip, '/slow-big/1')]) };
    }
    case 'gzip': {
      const ips = ipsOf(72, ipCount);
      return { name, ips, flags: slowDelays, seeds: (u) => ips.flatMap((ip) => [0, 1, 2].map((k) => u(ip, `/gzip-big/${k}`))) };
    }
    case 'chunked': {
      const ips = ipsOf(75, ipCount);
      return { name, ips, flags: slowDelays, seeds: (u) => ips.flatMap((ip) => [u(ip, '/slow-chunked/0'), u(ip, '/slow-chunked/1')]) };
    }
    case 'both': {
      const parts = ['slow', 'chunked', 'gzip'].map(scenario);
      return { name, ips: parts.flatMap((x) => x.ips), flags: slowDelays, seeds: (u) => parts.flatMap((x) => x.seeds(u)) };
    }
    case 'flood': {
      const ips = ipsOf(73, 4);
      const [one, two, gz, normal] = ips as [string, string, string, string];
      return {
        name, ips, flags: paced, normal,
        seeds: (u) => [u(normal, '/n/0'), ...Array.from({ length: 30 }, (_, k) => [u(one, `/flood/1/${k}`), u(two, `/flood/2/${k}`), u(gz, `/flood/gzip/${k}`)]).flat()],
      };
    }
    case 'links': {
      const ips = ipsOf(74, 2);
      const [big, normal] = ips as [string, string];
      return { name, ips, flags: paced, normal, seeds: (u) => [u(normal, '/n/0'), u(big, '/links/0')] };
    }
    default: throw new Error(`unknown scenario ${name}`);
  }
}

const tree = snapshotTree(a.get('tree') ?? 'HEAD');
// The result's name is checked before the runs, not after them.
const outName = a.get('out') ?? `hostile-${tree.commit.slice(0, 7)}`;
resultFile(outName, 'json');
log(`building ${tree.commit.slice(0, 10)} (${tree.subject})`);
const buildMs = buildTree(tree.dir);
const loadBefore = os.loadavg();
const runs: Record<string, unknown>[] = [];
let failed = false;

for (const mode of modes) {
  for (const ram of rams) {
    for (const name of scenarios) {
      const sc = scenario(name);
      const srv = await startHostileServers({ ips: sc.ips, robots: sc.robots, normalPages: 5000 });
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dc-hostile-'));
      const out = path.join(dir, 'out');
      const argv = [...sc.seeds(srv.url), '--allow-network', '127.0.0.0/8', '--scope', 'any', '--state', path.join(dir, 'state'), '--out', out,
        '--user-agent', UA, '--ram', ram, '--max-time', String(maxTimeS), '--progress', 'none', '--page-workers', mode, '--status-port', '0', ...sc.flags];
      const t0 = performance.now();
      const child = startCrawlChild(argv, { root: tree.dir, product: true });
      // the status server starts with the run (its --max-time counts from about then)
      let runStart = NaN;
      void child.statusUrl.then(() => { runStart = performance.now(); });
      let hwm = 0;
      let cpu = 0;
      let maxLoad = 0;
      let killed = false;
      const killAt = setTimeout(() => { killed = true; child.child.kill('SIGKILL'); }, (maxTimeS + 90) * 1000);
      while (child.isRunning()) {
        hwm = Math.max(hwm, vmHwm(child.pid));
        cpu = Math.max(cpu, cpuMs(child.pid));
        maxLoad = Math.max(maxLoad, os.loadavg()[0]!);
        await new Promise((r) => setTimeout(r, 100));
      }
      clearTimeout(killAt);
      const exitCode = await child.exited;
      const tEnd = performance.now();
      const wallS = (tEnd - t0) / 1000;
      const afterMaxTimeS = (tEnd - runStart) / 1000 - maxTimeS;
      await srv.close();
      // Every page a server was asked for (robots.txt aside) must have a crawl.log line.
      const logText = fs.existsSync(path.join(out, 'crawl.log')) ? fs.readFileSync(path.join(out, 'crawl.log'), 'utf8') : '';
      const logged = new Set<string>();
      const outcomes: Record<string, number> = {};
      for (const line of logText.split('\n')) {
        const f = line.split('\t');
        if (f.length < 8 || f[5] === '-') continue; // robots.txt lines have hops '-'
        logged.add(f[4]!);
        outcomes[f[7]!] = (outcomes[f[7]!] ?? 0) + 1;
      }
      const asked = new Set(srv.log.filter((e) => !e.path.startsWith('/robots')).map((e) => srv.url(e.ip, e.path)));
      const missing = [...asked].filter((u) => !logged.has(u));
      let pace: Record<string, number> | undefined;
      if (sc.normal !== undefined) {
        const times = srv.log.filter((e) => e.ip === sc.normal && e.path.startsWith('/n/')).map((e) => e.start).sort((x, y) => x - y);
        let gap = 0;
        for (let i = 1; i < times.length; i++) gap = Math.max(gap, times[i]! - times[i - 1]!);
        const span = times.length > 1 ? (times[times.length - 1]! - times[0]!) / 1000 : 0;
        pace = { normalPages: times.length, normalPagesPerSec: sig(span > 0 ? (times.length - 1) / span : 0, 3), longestGapMs: sig(gap, 4) };
      }
      const ramBytes = parseSize(ram);
      const run = {
        scenario: name, pageWorkers: mode, ram, ramBytes, exitCode, killed, wallSeconds: sig(wallS, 4),
        startSeconds: sig((runStart - t0) / 1000, 3), exitAfterMaxTimeSeconds: sig(afterMaxTimeS, 3),
        vmHwmMiB: sig(hwm / MiB, 5), vmHwmOverRam: sig(hwm / ramBytes, 3), cpuSeconds: sig(cpu / 1000, 4),
        pagesAsked: asked.size, pagesLogged: logged.size, askedWithoutLogLine: missing.length, missingSample: missing.slice(0, 5),
        outcomes, pace, maxLoadavg1: sig(maxLoad, 3), stderrTail: exitCode === 0 ? undefined : child.stderrTail().slice(-1500),
      };
      const ok = !killed && exitCode === 0 && hwm <= ramBytes && missing.length === 0 && afterMaxTimeS <= 10;
      if (!ok) failed = true;
      log(`${name} --page-workers ${mode} --ram ${ram}: exit ${exitCode}${killed ? ' (killed)' : ''} after ${wallS.toFixed(1)} s (${afterMaxTimeS.toFixed(1)} s after max-time), VmHWM ${(hwm / MiB).toFixed(0)} MiB, ` +
        `CPU ${(cpu / 1000).toFixed(1)} s, ${asked.size} pages asked, ${missing.length} without a log line${pace ? `, normal host ${pace.normalPages} pages, longest gap ${pace.longestGapMs} ms` : ''} ${ok ? 'ok' : 'FAILED'}`);
      runs.push(run);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
}
tree.remove();

const result = {
  bench: 'hostile',
  command: `npm run bench:hostile${process.argv.length > 2 ? ' -- ' + process.argv.slice(2).join(' ') : ''}`,
  machine: { ...machineInfo(), loadavgBefore: loadBefore.map((x) => sig(x, 3)) },
  note: SHARED_MACHINE_NOTE + ' VmHWM is what this bench judges (not speed); wall time includes the crawler\'s start (~2-5 s) and its final checkpoint.',
  crawler: { commit: tree.commit, subject: tree.subject, how: '<git archive of the commit>/bin/drumcrawl crawl … (the launcher over the built dist/; its own process)', buildMs: sig(buildMs, 4) },
  setup: {
    maxTimeS, ips: ipCount,
    vmHwm: 'VmHWM of the crawler process (all threads) from /proc/<pid>/status every 100 ms until it exits',
    cpuSeconds: 'user + sys CPU of the crawler process (all threads) from /proc/<pid>/stat, the last reading before it exits',
    pass: 'exit 0, VmHWM ≤ --ram, every page a server was asked for has a crawl.log line, exit within max-time + 10 s of the run\'s start (the status server\'s line)',
  },
  verdict: failed ? 'some run broke a bound (see runs)' : 'every run within its bounds',
  runs,
};
const file = writeResult(outName, result);
log(`${result.verdict}; wrote ${file}`);
process.exitCode = failed ? 1 : 0;
