/**
 * bench/mem — where does the crawler's memory go, per thread, as a crawl grows? (issue #7)
 *
 * The same real crawl as bench/rss (drumcrawl crawl in its own process from a clean extract of a
 * commit, simweb over loopback, delays 0, ~300 new URLs per page) but shorter, and with
 * bench/mem/probe.cjs preloaded into every thread of the crawler: each isolate (main, URLseen and
 * ContentSeen DRUM hosts, STAR's host, piscina parse workers) reports its V8 heap, ArrayBuffers
 * and malloc'd bytes every few seconds; the main thread adds VmRSS/RssAnon. The result bins the
 * samples by unique URLs seen and fits the slope (MiB per 10^6 URLs) of each component over the
 * second half of the crawl, so a growing structure shows up in the thread and the space it lives in.
 *
 *   node --import tsx bench/mem/run.ts --target 1.5e6 --ram 1G --out mem-1g
 *   node --import tsx bench/mem/run.ts --ram 96M --time 240 --out mem-96m
 *   node --import tsx bench/mem/run.ts --env MALLOC_ARENA_MAX=2 --out mem-arena2
 *   node --import tsx bench/mem/run.ts --tree working-tree --snap 60,240   # heap snapshots at 60 s and 240 s
 *
 * Writes bench/results/<out>.json.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startSimweb, type WebParams } from '../../src/simweb/index.js';
import { SIMWEB_ALLOW_FLAGS } from '../../test/e2e/harness.js';
import { REPO_ROOT, SHARED_MACHINE_NOTE, args, machineInfo, sig, writeResult } from '../lib/report.js';
import { cpuSeconds, rssBytes, startCrawlChild } from '../lib/crawl-child.js';
import { snapshotTree } from '../lib/snapshot.js';

const a = args();
const target = a.num('target', 1.5e6);
const ramArg = a.get('ram') ?? '1G';
const timeLimit = a.num('time', 480);
const links = a.num('links', 300);
const outName = a.get('out') ?? 'mem';
const probeMs = a.num('probe-ms', 5000);
const extraEnv: Record<string, string> = {};
for (let i = 0; i < process.argv.length; i++) {
  if (process.argv[i] === '--env') {
    const [k, ...v] = process.argv[i + 1]!.split('=');
    extraEnv[k!] = v.join('=');
  }
}
// --node-arg <flag> (repeatable): extra node flags for the crawler process (V8 flags apply to
// every isolate of the process, workers included, unless their resourceLimits say otherwise).
const nodeArgs: string[] = [];
for (let i = 0; i < process.argv.length; i++) if (process.argv[i] === '--node-arg') nodeArgs.push(process.argv[i + 1]!);
const extraArgs = (a.get('crawl-args') ?? '').split(' ').filter(Boolean);
const UA = 'drumcrawl-bench/0.1 (+https://example.test/bench)';
const log = (s: string): void => void process.stderr.write(`[mem] ${new Date().toISOString().slice(11, 19)} ${s}\n`);

// The web of bench/rss: almost every link a new URL; 400 PLDs × ~4 hosts on 256 IPs.
const params: Partial<WebParams> = {
  plds: 400, hostsPerPldMean: 4, hostsPerPldMax: 16, pagesPerHostMin: 2 ** 30, pagesPerHostMax: 2 ** 30,
  linksPerPageMean: links, dupLinkShare: 0, intraHostShare: 0, intraPldShare: 0.9, pageBytesMean: 8192,
  nonHtmlShare: 0, framesetShare: 0, baseHrefShare: 0, ips: 256, ipSkew: 1, seedCount: 20,
};
const sim = await startSimweb({ seed: 1, params, log: false });
const tree = snapshotTree(a.get('tree') ?? 'HEAD');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dc-mem-'));
const probeFile = path.join(dir, 'probe.jsonl');
const argv = [...sim.seeds, '--dns-server', sim.dnsServer, ...SIMWEB_ALLOW_FLAGS, '--state', path.join(dir, 'state'), '--out', path.join(dir, 'out'),
  '--user-agent', UA, '--ram', ramArg, '--host-delay', '0', '--min-host-delay', '0', '--ip-delay', '0', '--min-ip-delay', '0',
  '--concurrency', '256', '--warc-compression', 'none', '--warc-max-size', '256M', '--status-port', '0',
  '--progress', 'none', ...extraArgs];
log(`tree ${tree.commit.slice(0, 10)}; --ram ${ramArg}; target ${target}; env ${JSON.stringify(extraEnv)}; probe ${probeFile}`);
const loadBefore = os.loadavg();
const t0 = Date.now();
const child = startCrawlChild(argv, {
  root: tree.dir,
  nodeArgs: [...nodeArgs, '--require', path.join(REPO_ROOT, 'bench/mem/probe.cjs')],
  env: { DRUMCRAWL_MEMPROBE: probeFile, DRUMCRAWL_MEMPROBE_MS: String(probeMs), ...(a.get('snap') ? { DRUMCRAWL_MEMPROBE_SNAP: a.get('snap')! } : {}), ...extraEnv },
});

/**
 * Resident anonymous memory by mapping kind, from /proc/<pid>/smaps: glibc's main arena ([heap],
 * brk), thread arenas (64 MiB reservations, HEAP_MAX of glibc, one per arena), thread stacks, and
 * other anonymous mappings (V8 heap pages and large malloc chunks above the mmap threshold).
 */
function smapsClasses(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  let text = '';
  try {
    text = fs.readFileSync(`/proc/${pid}/smaps`, 'latin1');
  } catch {
    return out;
  }
  interface Map { start: number; end: number; perm: string; name: string; rssKb: number }
  const maps: Map[] = [];
  for (const line of text.split('\n')) {
    const m = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (m) maps.push({ start: parseInt(m[1]!, 16), end: parseInt(m[2]!, 16), perm: m[3]!, name: m[4]!.trim(), rssKb: 0 });
    const r = /^Rss:\s+(\d+) kB/.exec(line);
    if (r && maps.length > 0) maps[maps.length - 1]!.rssKb = Number(r[1]);
  }
  const add = (k: string, kb: number): void => {
    out[k] = (out[k] ?? 0) + kb / 1024;
    out[`${k}.count`] = (out[`${k}.count`] ?? 0) + 1;
  };
  for (let i = 0; i < maps.length; i++) {
    const x = maps[i]!;
    if (x.name === '[heap]') add('mainArena', x.rssKb);
    else if (x.name.startsWith('[stack')) add('stack', x.rssKb);
    else if (x.name !== '') add(x.name.startsWith('/') ? 'file' : x.name, x.rssKb);
    else {
      // A glibc thread arena: a 64 MiB-aligned reservation, rw part followed by a PROT_NONE rest.
      const y = maps[i + 1];
      const arena = x.perm.startsWith('rw') && x.start % (64 << 20) === 0 && y !== undefined && y.perm.startsWith('---') && y.name === '' && y.start === x.end && y.end - x.start === 64 << 20;
      const whole = x.start % (64 << 20) === 0 && x.end - x.start === 64 << 20 && x.perm.startsWith('rw');
      add(arena || whole ? 'threadArenas' : x.perm.startsWith('---') ? 'reserved' : 'otherAnon', x.rssKb);
    }
  }
  for (const k of Object.keys(out)) out[k] = sig(out[k]!, 4);
  return out;
}
let smapsAtStop: Record<string, number> = {};

interface H { at: number; t: number; rssMiB: number; urlsSeen: number; pages: number; cpuS: number; status: Record<string, unknown> | null }
const hs: H[] = [];
let stopping = false, reached = false, maxLoad = 0, lastLog = 0;
while (child.isRunning()) {
  await new Promise((r) => setTimeout(r, 1000));
  const rss = rssBytes(child.pid);
  const st = await child.status();
  const t = (Date.now() - t0) / 1000;
  maxLoad = Math.max(maxLoad, os.loadavg()[0]!);
  const urlsSeen = st ? Number(st.urlsSeen) : hs.length ? hs[hs.length - 1]!.urlsSeen : 0;
  hs.push({ at: Date.now(), t, rssMiB: rss / 2 ** 20, urlsSeen, pages: st ? Number(st.pages) : 0, cpuS: cpuSeconds(child.pid), status: st });
  if (t - lastLog >= 30) {
    lastLog = t;
    log(`${t.toFixed(0)} s: RSS ${(rss / 2 ** 20).toFixed(0)} MiB, urlsSeen ${urlsSeen}, load ${os.loadavg()[0]!.toFixed(1)}`);
  }
  if (!stopping && (urlsSeen >= target || t > timeLimit)) {
    smapsAtStop = smapsClasses(child.pid);
    reached = urlsSeen >= target;
    stopping = true;
    log(`${reached ? 'target reached' : 'time limit'} at ${t.toFixed(0)} s; SIGTERM`);
    child.child.kill('SIGTERM');
    setTimeout(() => child.child.kill('SIGKILL'), 60_000).unref();
  }
}
const exitCode = await child.exited;
await sim.close();

// Join the probe lines to the harness' urlsSeen by time.
interface P { at: number; thread: string; heapUsed: number; heapTotal: number; external: number; malloced: number; arrayBuffers: number; spaces: Record<string, number>; proc?: { vmRss: number; rssAnon: number; rssFile: number; threads: number } }
const probes: P[] = fs.existsSync(probeFile) ? fs.readFileSync(probeFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as P) : [];
const seenAt = (at: number): number => {
  let best = 0;
  for (const h of hs) if (h.at <= at) best = h.urlsSeen;
  return best;
};
const stopAt = hs.find((h) => h.urlsSeen >= target)?.at ?? (t0 + timeLimit * 1000);
const kindOf = (thread: string): string => thread.replace(/#\d+$/, '');
// Per sample time (rounded to the probe period): sum per thread kind.
const MiB = 2 ** 20;
type Row = Record<string, number>;
const rows = new Map<number, Row>();
for (const p of probes) {
  if (p.at > stopAt) continue;
  const slot = Math.round((p.at - t0) / probeMs);
  const r = rows.get(slot) ?? { slot, urlsSeen: seenAt(p.at) };
  const k = kindOf(p.thread);
  r[`${k}.heapUsed`] = (r[`${k}.heapUsed`] ?? 0) + p.heapUsed / MiB;
  r[`${k}.heapTotal`] = (r[`${k}.heapTotal`] ?? 0) + p.heapTotal / MiB;
  r[`${k}.arrayBuffers`] = (r[`${k}.arrayBuffers`] ?? 0) + p.arrayBuffers / MiB;
  r[`${k}.malloced`] = (r[`${k}.malloced`] ?? 0) + p.malloced / MiB;
  r['all.heapTotal'] = (r['all.heapTotal'] ?? 0) + p.heapTotal / MiB;
  r['all.arrayBuffers'] = (r['all.arrayBuffers'] ?? 0) + p.arrayBuffers / MiB;
  if (k === 'main') for (const [s, v] of Object.entries(p.spaces)) r[`main.space.${s}`] = v / MiB;
  if (p.proc) {
    r.vmRss = p.proc.vmRss / MiB;
    r.rssAnon = p.proc.rssAnon / MiB;
    r.rssFile = p.proc.rssFile / MiB;
    r.threads = p.proc.threads;
  }
  rows.set(slot, r);
}
const series = [...rows.values()].filter((r) => r.vmRss !== undefined).sort((x, y) => x.slot! - y.slot!);
for (const r of series) r.native = r.vmRss! - r['all.heapTotal']! - r['all.arrayBuffers']!;
function slope(key: string): number {
  const pts = series.filter((r) => r.urlsSeen! > 0 && r[key] !== undefined);
  const half = pts.slice(Math.floor(pts.length / 2));
  let n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const p of half) {
    const x = p.urlsSeen! / 1e6, y = p[key]!;
    n++; sx += x; sy += y; sxx += x * x; sxy += x * y;
  }
  return n < 2 || n * sxx - sx * sx === 0 ? NaN : (n * sxy - sx * sy) / (n * sxx - sx * sx);
}
const keys = new Set<string>();
for (const r of series) for (const k of Object.keys(r)) if (k !== 'slot' && k !== 'urlsSeen' && k !== 'threads') keys.add(k);
const slopes: Record<string, number> = {};
for (const k of [...keys].sort()) slopes[k] = sig(slope(k), 3);
const last = series[series.length - 1];
const lastH = hs.filter((h) => h.at <= stopAt).pop();
const result = {
  bench: 'mem',
  command: `node --import tsx bench/mem/run.ts${process.argv.length > 2 ? ' ' + process.argv.slice(2).join(' ') : ''}`,
  machine: { ...machineInfo(), loadavgBefore: loadBefore.map((x) => sig(x, 3)), maxLoadavg1DuringRun: sig(maxLoad, 3) },
  note: SHARED_MACHINE_NOTE + ' Memory per thread is what this bench reports; speed only matters through how much is in flight.',
  crawler: { commit: tree.commit, subject: tree.subject },
  setup: { ram: ramArg, links, target, timeLimit, env: extraEnv, nodeArgs, crawlArgs: extraArgs, probeMs, simweb: params },
  reached, exitCode, secondsToStop: sig((stopAt - t0) / 1000, 4),
  final: lastH ? { urlsSeen: lastH.urlsSeen, pages: lastH.pages, rssMiB: sig(lastH.rssMiB, 4), cpuS: lastH.cpuS } : null,
  smapsAtStopMiB: smapsAtStop,
  peakRssMiB: sig(Math.max(...hs.map((h) => h.rssMiB)), 4),
  slopesMiBPerMillionUrlsSecondHalf: slopes,
  lastSample: last ? Object.fromEntries(Object.entries(last).map(([k, v]) => [k, sig(v, 4)])) : null,
  series: series.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, sig(v, 4)]))),
  statusLast: lastH?.status ?? null,
};
const jf = writeResult(outName, result);
if (!a.has('keep')) fs.rmSync(dir, { recursive: true, force: true });
else log(`kept ${dir}`);
tree.remove();
log(`wrote ${jf}; final ${JSON.stringify(result.final)}; peak ${result.peakRssMiB} MiB`);
