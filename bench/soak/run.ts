/**
 * bench:soak — one long crawl of a web of many hosts through `bin/drumcrawl`, as a user runs it,
 * sampled every second, with one SIGKILL and one SIGTERM (each followed by `drumcrawl resume`) during
 * the run; judged for a constant speed and bounded RAM (issue #31; thesis VIII.1: IRLbot's rate held
 * for 41 days while URLseen grew past 10^10). Charts and JSON go to bench/results/.
 *
 *   flock /tmp/heavy.lock npm run bench:soak -- [--minutes 60] [--ram 512M] [--hosts 1e6|1e7] [--out <name>]
 *                                              [--tree HEAD|working-tree] [--kill-at 0.4] [--stop-at 0.75] [--keep]
 *
 * The web: simweb's bench preset with ~4 hosts per PLD (plds = hosts/4) on 64 IPs, IRLbot's page
 * shape (21.5 KB, 59 links, Zipf-like links to other PLDs), robots.txt on every host (20 % with
 * rules, 30 % absent), 100–100,000 pages per host: ~10^10 pages at 10^6 hosts, so it never runs out.
 * simweb runs in its own process (web-child.ts) and logs every request to a file.
 *
 * The crawler: the commit (default HEAD) extracted and built (bench/lib/snapshot.ts), started as
 * `bin/drumcrawl crawl --seeds … --dns-server … --allow-network 127.0.0.0/8 --scope any` with the
 * politeness delays at 0 (a loopback web; the setting) and `--ram` only when given (the
 * default otherwise), `--status-port 0`; DRUMCRAWL_THREAD_ROLES=1 so that /status names its threads.
 * At --kill-at of the run it is SIGKILLed and resumed at once; at --stop-at it gets SIGTERM (drain,
 * checkpoint, exit 0) and is resumed; at the end, SIGTERM again.
 *
 * Each second: /status (pages, URLs seen, frontier depth, heap, loop delay, merge and checkpoint
 * durations) and /proc (VmRSS, VmHWM, CPU per thread role, open fds, load average). Verdicts:
 * judge.ts. Writes bench/results/<out>.json and <out>-{pages,cpu,rss,pauses,urlseen}.svg; exits 1
 * when a verdict fails (--keep then keeps the state, WARC and request log in its temporary directory).
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SHARED_MACHINE_NOTE, args, commandLine, machineInfo, writeResult, writeSvg } from '../lib/report.js';
import { buildTree, snapshotTree } from '../lib/snapshot.js';
import { parseSize } from '../../src/config/config-values.js';
import { Sampler, type Sample } from './sample.js';
import { judgeRequests, killWindow, stallSeconds, windowRates, type SoakEvent } from './judge.js';
import { soakCharts } from './charts.js';

const a = args();
const minutes = a.num('minutes', 60);
const ramArg = a.get('ram') ?? null;
const ramBytes = parseSize(ramArg ?? '1.5G');
const hosts = a.num('hosts', 1e6);
const killAt = a.num('kill-at', 0.4);
const stopAt = a.num('stop-at', 0.75);
const outName = a.get('out') ?? `soak-${ramArg ?? 'default'}-${hosts >= 1e7 ? '1e7' : '1e6'}`;
const UA = 'drumcrawl-soak/0.1 (+https://example.test/soak)';
const D = minutes * 60;

const params = { plds: Math.round(hosts / 4), hostsPerPldMean: 4, hostsPerPldMax: 200, ips: 64, seedCount: 20 };

function log(s: string): void {
  process.stderr.write(`[soak] ${new Date().toISOString().slice(11, 19)} ${s}\n`);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dc-soak-'));
const stateDir = path.join(dir, 'state');
const outDir = path.join(dir, 'out');
const requestLog = path.join(dir, 'requests.tsv');

const tree = snapshotTree(a.get('tree') ?? 'HEAD');
log(`building ${tree.commit.slice(0, 10)}`);
buildTree(tree.dir);

const web = fork(fileURLToPath(new URL('./web-child.ts', import.meta.url)), [JSON.stringify(params), requestLog], {
  execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});
const ready = await new Promise<{ dnsServer: string; httpPort: number; seeds: string[]; ips: number }>((resolve, reject) => {
  web.once('message', (m) => resolve(m as never));
  web.once('exit', (code) => reject(new Error(`simweb child exited ${code}`)));
});
const ask = <T>(cmd: string): Promise<T> => new Promise((resolve) => {
  web.once('message', (m) => resolve(m as T));
  web.send({ cmd });
});
fs.writeFileSync(path.join(dir, 'seeds.txt'), ready.seeds.join('\n') + '\n');
log(`simweb: ${hosts} hosts (${params.plds} PLDs) on ${ready.ips} IPs, DNS ${ready.dnsServer}; state in ${dir}`);

interface Run { child: ChildProcess; exited: Promise<number | null>; statusUrl: string | null; run: number }

function drumcrawl(argv: string[], run: number): Run {
  const child = spawn(path.join(tree.dir, 'bin/drumcrawl'), argv, {
    cwd: tree.dir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DRUMCRAWL_THREAD_ROLES: '1' },
  });
  const r: Run = { child, exited: new Promise((res) => child.once('exit', (code) => res(code))), statusUrl: null, run };
  const errFile = fs.createWriteStream(path.join(dir, `crawler-${run}.err`));
  const onData = (d: Buffer): void => {
    const m = /status server: (http:\/\/[^/\s]+)\/status/.exec(String(d));
    if (m !== null) r.statusUrl = m[1]!;
  };
  child.stdout!.on('data', (d: Buffer) => { errFile.write(d); onData(d); });
  child.stderr!.on('data', (d: Buffer) => { errFile.write(d); onData(d); });
  return r;
}

const base = Date.now();
// Event times to the millisecond: the judge compares them with simweb's request stamps (judge.ts, DRAIN_S).
const now = (): number => (Date.now() - base) / 1000;
const events: SoakEvent[] = [];
const sampler = new Sampler(base, web.pid!);
const common = ['--status-port', '0', '--progress', 'none'];
let run = 1;
let cur = drumcrawl([
  'crawl', '--seeds', path.join(dir, 'seeds.txt'), '--dns-server', ready.dnsServer, '--allow-network', '127.0.0.0/8', '--scope', 'any',
  '--host-delay', '0', '--ip-delay', '0', '--min-host-delay', '0', '--min-ip-delay', '0',
  '--state', stateDir, '--out', outDir, '--user-agent', UA, ...(ramArg !== null ? ['--ram', ramArg] : []), ...common,
], run);
events.push({ kind: 'start', run, t: now() });
sampler.start(cur.child.pid!, run, () => cur.statusUrl);

const sleepUntil = (t: number): Promise<void> => new Promise((r) => setTimeout(r, Math.max(0, (t - now()) * 1000)));
const exits: { run: number; code: number | null; signal: string; stopSeconds: number }[] = [];
let failedEarly: string | null = null;
cur.exited.then((code) => { if (code !== null && code !== 0 && failedEarly === null && run === 1) failedEarly = `crawl exited ${code}`; }, () => undefined);

async function signalAndResume(sig: 'SIGKILL' | 'SIGTERM', resume: boolean): Promise<void> {
  const t = now();
  events.push({ kind: sig === 'SIGKILL' ? 'sigkill' : 'sigterm', run, t });
  log(`${sig} to run ${run}`);
  cur.child.kill(sig);
  const code = await cur.exited;
  sampler.stop();
  const te = now();
  events.push({ kind: 'exit', run, t: te });
  exits.push({ run, code, signal: sig, stopSeconds: Math.round((te - t) * 10) / 10 });
  log(`run ${run} exited ${code} after ${(te - t).toFixed(1)} s`);
  if (!resume) return;
  run++;
  cur = drumcrawl(['resume', stateDir, ...common], run);
  events.push({ kind: 'resume', run, t: now() });
  sampler.start(cur.child.pid!, run, () => cur.statusUrl);
}

await sleepUntil(killAt * D);
if (failedEarly === null) await signalAndResume('SIGKILL', true);
await sleepUntil(stopAt * D);
if (failedEarly === null) await signalAndResume('SIGTERM', true);
await sleepUntil(D);
await signalAndResume('SIGTERM', false);
const counts = await ask<{ requests: number; robots: number; pages: number }>('close');
log(`simweb served ${counts.requests} requests (${counts.robots} robots.txt); judging`);

const samples: Sample[] = sampler.samples;
const early = windowRates(samples, D / 12, D / 4);
const late = windowRates(samples, (5 * D) / 6, D);
const killWindows = new Map<number, number>();
for (const e of events) if (e.kind === 'sigkill') killWindows.set(e.t, killWindow(sampler.pauses, e.t));
// Up to when each run's pages must be in the WARC: a SIGKILLed run's last completed checkpoint
// (the crawler's own durations list, by end time), a SIGTERMed run's whole life (its stop
// checkpoints) — unless the SIGTERM came before the crawler took the signal (while it opened its
// state: node's default action ends it as a kill would; `exits` shows no exit code).
const durableUntil = new Map<number, number>();
const lastCheckpoint = (e: SoakEvent): number => Math.max(-Infinity, ...sampler.pauses.filter((p) => p.kind === 'checkpoint' && p.run === e.run && p.t <= e.t).map((p) => p.t - p.ms / 1000));
for (const e of events) {
  const killedBySigterm = e.kind === 'sigterm' && exits.some((x) => x.run === e.run && x.signal === 'SIGTERM' && x.code === null);
  if (e.kind === 'sigterm') durableUntil.set(e.run, killedBySigterm ? lastCheckpoint(e) : e.t);
  if (e.kind === 'sigkill') durableUntil.set(e.run, lastCheckpoint(e));
}
const requests = await judgeRequests(requestLog, base, ready.httpPort, outDir, events, killWindows, durableUntil);
// A signal excuses the seconds until the next run's first request.
const excused = events.filter((e) => e.kind === 'sigkill' || e.kind === 'sigterm').map((e) => {
  const next = requests.firstAfter.find((f) => f.t >= e.t);
  return { from: e.t - 1, to: next === undefined ? Infinity : next.t + (next.firstPage ?? next.firstRequest ?? 60) };
});
const stalls = stallSeconds(samples, excused);
const hwmByRun = [...new Set(samples.map((s) => s.run))].map((r) => Math.max(...samples.filter((s) => s.run === r).map((s) => s.hwmMiB)));
const maxFds = (from: number, to: number): number => Math.max(0, ...samples.filter((s) => s.t >= from && s.t <= to).map((s) => s.fds));
const fdsEarly = maxFds(D / 12, D / 4), fdsLate = maxFds((5 * D) / 6, D);
const periodic = sampler.pauses.filter((p) => p.kind === 'checkpoint').filter((p) => {
  const start = events.find((e) => (e.kind === 'start' || e.kind === 'resume') && e.run === p.run);
  return start === undefined || p.t - start.t > 20; // not the run's first (start/resume) checkpoint
});
const mean = (xs: number[]): number => (xs.length === 0 ? NaN : Math.round((xs.reduce((x, y) => x + y, 0) / xs.length) * 10) / 10);
const ckFirst = mean(periodic.slice(0, 3).map((p) => p.ms)), ckLast = mean(periodic.slice(-3).map((p) => p.ms));
const holds = sampler.pauses.filter((p) => p.kind === 'hold').map((p) => p.ms);
const lateResume = requests.firstAfter[requests.firstAfter.length - 1];
const ramMiB = Math.round(ramBytes / 1048576);

const verdicts = {
  speed: { ok: late.pagesPerSec >= 0.9 * early.pagesPerSec && Math.abs(late.cpuMsPerPage / early.cpuMsPerPage - 1) <= 0.1, ratio: Math.round((late.pagesPerSec / early.pagesPerSec) * 1000) / 1000, cpuRatio: Math.round((late.cpuMsPerPage / early.cpuMsPerPage) * 1000) / 1000, early, late },
  rss: { ok: Math.max(...hwmByRun) <= ramMiB, ramMiB, hwmMiBByRun: hwmByRun },
  stalls: { ok: stalls.length === 0, seconds: stalls.length, list: stalls.slice(0, 50), excused },
  fds: { ok: fdsLate <= 1.1 * fdsEarly + 16, early: fdsEarly, late: fdsLate },
  checkpoints: { ok: !(ckLast > 1.5 * ckFirst), firstThreeMeanMs: ckFirst, lastThreeMeanMs: ckLast, periodic: periodic.length, maxMs: Math.max(0, ...periodic.map((p) => p.ms)), ...(holds.length > 0 ? { holdMaxMs: Math.max(...holds), holdsOver2s: holds.filter((ms) => ms > 2000).length } : {}) },
  resume: { ok: lateResume !== undefined && lateResume.firstRequest !== null && lateResume.firstRequest <= 2, runs: requests.firstAfter, stops: exits },
  lost: { ok: requests.missing.count === 0 && requests.digests.bad === 0, missing: requests.missing, digests: requests.digests },
  twice: { ok: requests.twice.count === 0, ...requests.twice, killWindowS: Object.fromEntries(killWindows) },
};
const ok = Object.values(verdicts).every((v) => v.ok);

const charts = soakCharts(`soak ${hosts >= 1e7 ? '10^7' : '10^6'} hosts, --ram ${ramArg ?? 'default (1.5G)'}`, samples, sampler.pauses, events, ramMiB);
for (const [k, svg] of Object.entries(charts)) writeSvg(`${outName}-${k}`, svg);
const cols = (k: keyof Sample): unknown[] => samples.map((s) => (typeof s[k] === 'number' && !Number.isFinite(s[k] as number) ? null : s[k]));
const file = writeResult(outName, {
  bench: 'soak', command: commandLine('bench:soak'), commit: tree.commit, subject: tree.subject, machine: machineInfo(), note: SHARED_MACHINE_NOTE,
  web: { ...params, hosts }, minutes, ram: ramArg ?? 'default (1.5G)', ok, verdicts, events, requests: { total: requests.requests, pages: requests.pageRequests, simweb: counts },
  pauses: sampler.pauses,
  samples: Object.fromEntries((['t', 'run', 'up', 'pages', 'started', 'seen', 'queued', 'ready', 'inFlight', 'robots', 'due', 'rssMiB', 'hwmMiB', 'heapMiB', 'cpuMs', 'roleMs', 'fds', 'loopMaxMs', 'ramUrls', 'hosts', 'hostMiB', 'beastQueued', 'qf', 'qh', 'qr', 'load1', 'simCpuMs'] as (keyof Sample)[]).map((k) => [k, cols(k)])),
});
log(`${ok ? 'PASS' : 'FAIL'}: ${file}`);
for (const [k, v] of Object.entries(verdicts)) log(`  ${v.ok ? 'ok  ' : 'FAIL'} ${k}`);
web.kill('SIGTERM');
if (ok || !a.has('keep')) fs.rmSync(dir, { recursive: true, force: true });
else log(`kept ${dir} (--keep)`);
process.exit(ok ? 0 : 1);
