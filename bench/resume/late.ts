/**
 * A resume late in a crawl of many hosts: its time from launch to its first request, and where that
 * time goes (`npm run bench:resume-late`; issue #31: "the resume late in the run starts fetching
 * within 2 s").
 *
 *   flock /tmp/heavy.lock npm run bench:resume-late -- [--minutes 3] [--hosts 1e6] [--ram 1G]
 *       [--trees HEAD|<commit>,<commit>] [--rounds 2] [--watch <s>] [--out <name>]
 *
 * simweb's bench web of --hosts hosts (bench/soak's web and request log: web-child.ts) is crawled by
 * `bin/drumcrawl crawl` of the first tree (as bench/soak runs it: politeness floors 0, --ram) for
 * --minutes, then SIGKILLed; the state and output directories are copied aside. Then, --rounds
 * times and for each tree in turn (A B, B A, …: an A/B on one state): the copy is put back, and
 * `bin/drumcrawl resume` runs (DRUMCRAWL_TRACE_OPEN=1: src/monitor/open-trace.ts marks) until its first
 * request has been served plus a few seconds; SIGTERM then stops it (drain, checkpoint), and the
 * same tree resumes that stopped state too (the SIGTERM case). Each resume's first request is
 * taken from simweb's request log (its start, against the launch of the process); the marks say
 * what the opening spent its time on. The sizes of the files a resume may read (pending.bin,
 * done.log, admit log, warc-synced.bin, the DRUMs and frontier) are recorded beside them.
 *
 * With --watch, each resume runs that many seconds instead, its `/status` read every 0.5 s: pages
 * started, URLs in RAM and QR, the QR passes' reads, hosts asked and awaiting robots answers, the
 * DNS cache's entries and lookups waiting — how soon the resumed crawl has work again (bench:soak's
 * stall verdict after a SIGKILL over 10^7 hosts), summed up as the seconds from launch to the first
 * page started and to 1,000 and 10,000 URLs in RAM. The first tree crawls: with a tree that saves
 * state an older one does not read (the DNS cache's copy), name it first.
 * Result: bench/results/<out>.json with machine, load and commits.
 */
import { fork, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { SHARED_MACHINE_NOTE, args, commandLine, machineInfo, writeResult } from '../lib/report.js';
import { buildTree, snapshotTree, type TreeSnapshot } from '../lib/snapshot.js';

const a = args();
const minutes = a.num('minutes', 3);
const hosts = a.num('hosts', 1e6);
const ram = a.get('ram') ?? '1G';
const rounds = a.num('rounds', 2);
const watchS = a.num('watch', 0);
const outName = a.get('out') ?? `resume-late-${hosts >= 1e7 ? '1e7' : '1e6'}-${minutes}min`;
const UA = 'drumcrawl-resume-late/0.1 (+https://example.test/bench)';
const params = { plds: Math.round(hosts / 4), hostsPerPldMean: 4, hostsPerPldMax: 200, ips: 64, seedCount: 20 };

function log(s: string): void {
  process.stderr.write(`[resume-late] ${new Date().toISOString().slice(11, 19)} ${s}\n`);
}

const trees: TreeSnapshot[] = (a.get('trees') ?? 'HEAD').split(',').map((t) => snapshotTree(t));
for (const t of trees) {
  log(`building ${t.commit.slice(0, 10)}`);
  buildTree(t.dir);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dc-resume-late-'));
const stateDir = path.join(dir, 'state');
const outDir = path.join(dir, 'out');
const saved = path.join(dir, 'saved');
const requestLog = path.join(dir, 'requests.tsv');
const soakDir = fileURLToPath(new URL('../soak/', import.meta.url));
const web = fork(path.join(soakDir, 'web-child.ts'), [JSON.stringify(params), requestLog], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
process.once('exit', () => web.kill('SIGTERM')); // also when this bench fails
const ready = await new Promise<{ dnsServer: string; seeds: string[] }>((resolve, reject) => {
  web.once('message', (m) => resolve(m as never));
  web.once('exit', (code) => reject(new Error(`simweb child exited ${code}`)));
});
const flushLog = (): Promise<void> => new Promise((resolve) => {
  web.once('message', () => resolve());
  web.send({ cmd: 'count' });
});
fs.writeFileSync(path.join(dir, 'seeds.txt'), ready.seeds.join('\n') + '\n');
log(`simweb: ${hosts} hosts; state in ${dir}`);

interface Proc { exited: Promise<number | null>; kill(sig: NodeJS.Signals): void; marks: Record<string, number>; launchedAt: number; statusUrl(): string | null }

function drumcrawl(tree: TreeSnapshot, argv: string[], name: string): Proc {
  const launchedAt = performance.timeOrigin + performance.now();
  const child = spawn(path.join(tree.dir, 'bin/drumcrawl'), argv, { cwd: tree.dir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DRUMCRAWL_TRACE_OPEN: '1' } });
  const marks: Record<string, number> = {};
  let url: string | null = null;
  const err = fs.createWriteStream(path.join(dir, `${name}.err`));
  const onLine = (l: string): void => {
    err.write(l + '\n');
    const m = /^open (\S+) (\d+)$/.exec(l);
    if (m !== null && marks[m[1]!] === undefined) marks[m[1]!] = Number(m[2]);
    url ??= /status server: (http:\/\/[^/\s]+)\/status/.exec(l)?.[1] ?? null;
  };
  readline.createInterface({ input: child.stderr! }).on('line', onLine);
  readline.createInterface({ input: child.stdout! }).on('line', onLine);
  return { exited: new Promise((res) => child.once('exit', (code) => res(code))), kill: (s) => child.kill(s), marks, launchedAt, statusUrl: () => url };
}

interface Point {
  t: number; started: number; ram: number; qr: number; qrRescans: number; qrRescanReads: number;
  hosts: number; robotsOutstanding: number; dnsEntries: number; dnsWaiting: number;
}
interface StatusJson {
  urlsReady: number; beast: { qrSize: number };
  run?: { pagesStarted: number; frontier: Record<string, number>; dns: { entries: number; waiting: number } };
}

/** `/status` of `p` every 0.5 s for watchS seconds from its launch (--watch), and their summary. */
async function watch(p: Proc): Promise<{ summary: Record<string, number | null>; points: Point[] }> {
  const points: Point[] = [];
  for (;;) {
    const t = (performance.timeOrigin + performance.now() - p.launchedAt) / 1000;
    if (t >= watchS) break;
    const url = p.statusUrl();
    if (url !== null) {
      try {
        const d = (await (await fetch(`${url}/status`, { signal: AbortSignal.timeout(1000) })).json()) as StatusJson;
        const f = d.run?.frontier ?? {};
        points.push({
          t: Math.round(t * 100) / 100, started: d.run?.pagesStarted ?? 0, ram: d.urlsReady, qr: d.beast.qrSize,
          qrRescans: f.qrRescans ?? 0, qrRescanReads: f.qrRescanReads ?? 0, hosts: f.hosts ?? 0, robotsOutstanding: f.robotsOutstanding ?? 0,
          dnsEntries: d.run?.dns.entries ?? 0, dnsWaiting: d.run?.dns.waiting ?? 0,
        });
      } catch { /* not answering yet */ }
    }
    await sleep(500 - (((performance.timeOrigin + performance.now() - p.launchedAt) / 1000 - t) * 1000));
  }
  const at = (pred: (x: Point) => boolean): number | null => points.find(pred)?.t ?? null;
  const firstPage = at((x) => x.started > 0);
  let idle = 0;
  for (let i = 1; i < points.length; i++) if (firstPage !== null && points[i - 1]!.t >= firstPage && points[i]!.started === points[i - 1]!.started) idle++;
  return {
    summary: {
      firstPageS: firstPage, ram1000S: at((x) => x.ram >= 1000), ram10000S: at((x) => x.ram >= 10_000), idleHalfSecondsAfterFirstPage: idle,
      qrAtResume: points[0]?.qr ?? null, dnsWaitingMax: Math.max(0, ...points.map((x) => x.dnsWaiting)),
    },
    points,
  };
}

/** The start (Unix ms) of the first request simweb logged at or after `since`, or null. */
async function firstRequestAfter(since: number): Promise<{ at: number; robots: boolean } | null> {
  await flushLog();
  let best: { at: number; robots: boolean } | null = null;
  const rl = readline.createInterface({ input: fs.createReadStream(requestLog), crlfDelay: Infinity });
  for await (const line of rl) {
    const [s, , , , p] = line.split('\t');
    const t = Number(s);
    if (t >= since && (best === null || t < best.at)) best = { at: t, robots: p === '/robots.txt' };
  }
  return best;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function sizes(): Record<string, number> {
  const out: Record<string, number> = {};
  const walk = (d: string, rel: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      const r = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) walk(p, r);
      else {
        const top = r.split('/')[0]!;
        const key = ['urlseen', 'contentseen', 'frontier'].includes(top) ? top : r;
        out[key] = (out[key] ?? 0) + fs.statSync(p).size;
      }
    }
  };
  walk(stateDir, '');
  out.warc = fs.readdirSync(outDir).filter((f) => /\.warc/.test(f)).reduce((s, f) => s + fs.statSync(path.join(outDir, f)).size, 0);
  return out;
}

/** One resume of the state in place by `tree`: until its first request plus `tailMs`, then SIGTERM. */
async function resumeOnce(tree: TreeSnapshot, label: string): Promise<Record<string, unknown>> {
  const load1 = os.loadavg()[0]!;
  const p = drumcrawl(tree, ['resume', stateDir, '--progress', 'none', ...(watchS > 0 ? ['--status-port', '0'] : [])], label);
  const t0 = Date.now();
  let exitCode: number | null | undefined;
  void p.exited.then((c) => { exitCode = c; });
  const watched = watchS > 0 ? await watch(p) : null;
  while (p.marks['first-request'] === undefined && exitCode === undefined && Date.now() - t0 < 60_000) await sleep(100);
  if (watched === null) await sleep(4000);
  p.kill('SIGTERM');
  const code = await p.exited;
  const first = await firstRequestAfter(p.launchedAt);
  const r = {
    label, commit: tree.commit.slice(0, 10), exit: code, load1: Math.round(load1 * 10) / 10,
    firstRequestS: first === null ? null : Math.round(first.at - p.launchedAt) / 1000,
    firstIsRobots: first?.robots ?? null,
    marksMs: p.marks,
    ...(watched !== null ? { refill: watched.summary, points: watched.points } : {}),
  };
  log(`${label} ${tree.commit.slice(0, 8)}: first request ${r.firstRequestS} s${watched !== null ? `; ${JSON.stringify(watched.summary)}` : `; marks ${JSON.stringify(p.marks)}`}`);
  return r;
}

const crawl = drumcrawl(trees[0]!, [
  'crawl', '--seeds', path.join(dir, 'seeds.txt'), '--dns-server', ready.dnsServer, '--allow-network', '127.0.0.0/8', '--scope', 'any',
  '--host-delay', '0', '--ip-delay', '0', '--min-host-delay', '0', '--min-ip-delay', '0',
  '--state', stateDir, '--out', outDir, '--user-agent', UA, '--ram', ram, '--progress', 'none',
], 'crawl');
await sleep(minutes * 60_000);
crawl.kill('SIGKILL');
await crawl.exited;
log('SIGKILLed; saving the state');
const killedSizes = sizes();
fs.cpSync(stateDir, path.join(saved, 'state'), { recursive: true });
fs.cpSync(outDir, path.join(saved, 'out'), { recursive: true });

const results: Record<string, unknown>[] = [];
let stoppedSizes: Record<string, number> | null = null;
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? trees : [...trees].reverse();
  for (const tree of order) {
    fs.rmSync(stateDir, { recursive: true, force: true });
    fs.rmSync(outDir, { recursive: true, force: true });
    fs.cpSync(path.join(saved, 'state'), stateDir, { recursive: true });
    fs.cpSync(path.join(saved, 'out'), outDir, { recursive: true });
    const afterKill = await resumeOnce(tree, `round ${r + 1} after SIGKILL`);
    stoppedSizes ??= sizes();
    const afterTerm = await resumeOnce(tree, `round ${r + 1} after SIGTERM`);
    results.push({ round: r + 1, commit: tree.commit, afterKill, afterTerm });
  }
}
web.send({ cmd: 'close' });
await new Promise<void>((r) => web.once('exit', () => r()));

const file = writeResult(outName, {
  bench: 'resume-late', command: commandLine('bench:resume-late'), commits: trees.map((t) => ({ commit: t.commit, subject: t.subject })),
  machine: machineInfo(), note: `${SHARED_MACHINE_NOTE} firstRequestS: from the resume's launch (spawn of bin/drumcrawl) to the start of its first request in simweb's log; marksMs: ms from the process's own start (src/monitor/open-trace.ts).`,
  web: { ...params, hosts }, minutes, ram, watchSeconds: watchS, sizes: { afterKill: killedSizes, afterStop: stoppedSizes }, results,
});
log(`wrote ${file}`);
if (!a.has('keep')) fs.rmSync(dir, { recursive: true, force: true });
else log(`kept ${dir}`);
for (const t of trees) t.remove();
process.exit(0);
