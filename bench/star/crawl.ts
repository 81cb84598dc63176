/**
 * bench/star/crawl.ts — STAR on a real crawl: the crawler (`drumcrawl crawl`, its own process) runs
 * twice on the same simweb web with spam farms, for the same number of pages, once with STAR's
 * budgets (`--budget crawl`, the default) and once without (`--budget flat --budget-b0 1000000000`:
 * every PLD gets an unbounded budget, so every URL lands in BEAST's current queue — breadth-first in
 * discovery order, what a crawler without STAR does). Pages per PLD are counted on the SERVER side
 * (simweb's request log: 2xx answers to non-robots paths), and each PLD's in-degree comes from the
 * generator's ground truth (WebGraph.pageLinks of every page either run fetched: the number of
 * distinct other PLDs with a link to it) — not from the crawler's own STAR tables. The thesis'
 * Fig. 7(b) plots the same two quantities (IRLbot's average pages per PLD by in-degree).
 *
 * The web: simweb's `spam` preset (spam farms + calendar/repeat/session traps), enlarged to the
 * `bench` preset's size (2,000 PLDs, ~5,000 hosts on 256 IPs, 20 seeds) so in-degrees span three
 * orders of magnitude; `--farms` spam farms, each linked from `--spam-in-links` home pages.
 *
 *   npm run bench:star                                   # 2 × 20,000 pages (or 420 s) per run, ≤ 15 min
 *   npm run bench:star -- --pages 40000 --farms 8 --runs crawl,bfs,flat
 *   npm run bench:star -- --tree working-tree            # crawl with the checkout's src/ instead of HEAD's
 *   npm run bench:star -- --replot bench/results/star-pld.json   # redraw the SVG from a result
 *
 * Politeness is equal in every run and independent of budgets (τh = τh0, τs = τs0), so the runs
 * differ only in STAR's budgets. Memory: the harness keeps the crawled page list (one string per
 * page, both runs) and the PLD edge set of those pages — bounded by 2 × --pages pages.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isRobotsPath, startSimweb, type RequestLogEntry, type WebParams } from '../../src/simweb/index.js';
import { SIMWEB_ALLOW_FLAGS } from '../../test/e2e/harness.js';
import { SHARED_MACHINE_NOTE, args, commandLine, machineInfo, mdTable, sig, writeResult, writeSvg } from '../lib/report.js';
import { lineChart, type Series } from '../lib/svg.js';
import { cpuSeconds, rssBytes, startCrawlChild } from '../lib/crawl-child.js';
import { snapshotTree } from '../lib/snapshot.js';

const a = args();
const pagesTarget = a.num('pages', 20_000);
const farms = a.num('farms', 4);
const spamInLinks = a.num('spam-in-links', 1);
const seed = a.num('seed', 1);
const hostDelay = a.num('host-delay', 500);
const ipDelay = a.num('ip-delay', 0);
const ram = a.get('ram') ?? '256M';
const concurrency = a.num('concurrency', 256);
const timeLimit = a.num('time', 420); // seconds per run (then SIGTERM)
const runNames = (a.get('runs') ?? 'crawl,bfs').split(',');
const UA = 'drumcrawl-bench/0.1 (+https://example.test/bench)';
const outName = a.get('out') ?? 'star-pld';

interface StarJson {
  parameters: { pagesCompared: number; simweb: { overrides: { spamFarms?: number } }; ram: string };
  runKeys: string[];
  runs: Record<string, { label: string; binsByIndegree: Array<{ from: number; to: number; meanPages: number }> }>;
  plds: Array<Array<string | number>>;
}

/** The figure, from the JSON alone (so `--replot` can redraw a committed result). */
function plotStar(r: StarJson): string {
  const COLORS: Record<string, string> = { crawl: '#2ca02c', bfs: '#d62728', flat: '#1f77b4' };
  const short: Record<string, string> = { crawl: 'STAR on', bfs: 'STAR off (BFS)', flat: 'equal budgets' };
  const series: Series[] = [];
  r.runKeys.forEach((k, i) => {
    series.push({ name: `${r.runs[k]!.label}: one dot per PLD`, color: COLORS[k], scatter: true,
      points: r.plds.filter((p) => !String(p[0]).startsWith('farm') && Number(p[1]) > 0 && Number(p[2 + i]) > 0).map((p) => [Number(p[1]), Number(p[2 + i])] as [number, number]) });
  });
  for (const k of r.runKeys) {
    series.push({ name: `${short[k]}: mean pages per PLD in each in-degree bin [2^i, 2^(i+1))`, color: COLORS[k],
      points: r.runs[k]!.binsByIndegree.filter((b) => b.to > 0 && b.meanPages > 0).map((b) => [Math.sqrt(b.from * (b.to + 1)), b.meanPages] as [number, number]) });
  }
  r.runKeys.forEach((k, i) => {
    series.push({ name: `${short[k]}: the spam farms (in-degree 1)`, color: COLORS[k], scatter: true, radius: 6,
      points: r.plds.filter((p) => String(p[0]).startsWith('farm')).map((p) => [Math.max(1, Number(p[1])), Number(p[2 + i])] as [number, number]).filter((p) => p[1] > 0) });
  });
  return writeSvg(outName, lineChart({
    title: `Real crawl: pages per PLD vs in-degree (simweb spam + ${r.parameters.simweb.overrides.spamFarms ?? '?'} farms, ${r.parameters.pagesCompared.toLocaleString('en')} pages per run, --ram ${r.parameters.ram})`,
    xLabel: 'PLD in-degree (ground truth over the fetched pages)', yLabel: 'pages crawled per PLD (server log)', logX: true, logY: true, series,
    width: 860, height: 480,
  }));
}

if (a.get('replot') !== undefined) {
  console.log(`wrote ${plotStar(JSON.parse(fs.readFileSync(a.get('replot')!, 'utf8')) as StarJson)}`);
  process.exit(0);
}
// The crawler runs from a clean extract of a commit (default HEAD), not the shared working tree.
const tree = snapshotTree(a.get('tree') ?? 'HEAD');

function log(s: string): void {
  process.stderr.write(`[star] ${new Date().toISOString().slice(11, 19)} ${s}\n`);
}

interface RunSpec { key: string; label: string; flags: string[] }
const SPECS: Record<string, RunSpec> = {
  crawl: { key: 'crawl', label: 'STAR on (--budget crawl)', flags: ['--budget', 'crawl'] },
  bfs: { key: 'bfs', label: 'STAR off (--budget flat --budget-b0 1e9: BFS)', flags: ['--budget', 'flat', '--budget-b0', '1000000000'] },
  flat: { key: 'flat', label: 'equal budgets (--budget flat, B0 = 10)', flags: ['--budget', 'flat'] },
};
for (const r of runNames) if (!(r in SPECS)) throw new Error(`--runs: unknown run ${r} (crawl, bfs, flat)`);

// spam preset (farms + traps) at the bench preset's size.
const overrides: Partial<WebParams> = {
  plds: 2000, hostsPerPldMean: 2.5, hostsPerPldMax: 200, pagesPerHostMin: 100, pagesPerHostMax: 100000,
  ips: 256, ipSkew: 2, seedCount: 20, robots: { rules: 0.2, absent: 0.3 }, spamFarms: farms, spamInLinks,
};
const sim = await startSimweb({ preset: 'spam', seed, params: overrides, logCapacity: 1000 });
const web = sim.web;
log(`simweb 'spam' (bench-sized, ${farms} farms) on port ${sim.httpPort}, DNS ${sim.dnsServer}, ${sim.seeds.length} seeds`);

const pldOf = (host: string): string => {
  const i = host.lastIndexOf('.', host.lastIndexOf('.') - 1);
  return i < 0 ? host : host.slice(i + 1);
};
const isTrap = (p: string): boolean => p.startsWith('/cal/') || p.startsWith('/t/') || p.includes('?sid=');

// Server-side counting: a wrapper around the log (simweb itself unchanged), reset per run.
let cur: { pages: number; requests: number; robots: number; farm: number; trap: number; perPld: Map<string, number>; fetched: string[] } | null = null;
const origAdd = sim.log.add.bind(sim.log);
sim.log.add = (e: RequestLogEntry): void => {
  origAdd(e);
  if (cur === null) return;
  cur.requests++;
  if (isRobotsPath(e.path)) {
    cur.robots++;
    return;
  }
  if (e.status < 200 || e.status > 299) return;
  const host = e.host.replace(/:\d+$/, '').toLowerCase();
  const pld = pldOf(host);
  cur.pages++;
  cur.perPld.set(pld, (cur.perPld.get(pld) ?? 0) + 1);
  if (pld.startsWith('farm')) cur.farm++;
  if (isTrap(e.path)) cur.trap++;
  cur.fetched.push(`${host} ${e.path}`);
};

interface RunOut {
  key: string;
  label: string;
  flags: string[];
  pages: number;
  requests: number;
  robotsRequests: number;
  farmPages: number;
  trapPages: number;
  perPld: Map<string, number>;
  fetched: string[];
  seconds: number;
  crawlerCpuSeconds: number;
  peakRssMiB: number;
  exitCode: number | null;
  stoppedBy: string;
  timeline: Array<{ t: number; pages: number; farmPages: number }>;
  stderrTail: string;
  lastStatus: Record<string, unknown> | null;
  /** Pages the run fetched before it was cut to the common K (absent when equal). */
  pagesFetchedInRun?: number;
}

async function runOne(spec: RunSpec): Promise<RunOut> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `dc-star-${spec.key}-`));
  cur = { pages: 0, requests: 0, robots: 0, farm: 0, trap: 0, perPld: new Map(), fetched: [] };
  const c = cur;
  const argv = [...sim.seeds, '--dns-server', sim.dnsServer, ...SIMWEB_ALLOW_FLAGS, '--state', path.join(dir, 'state'), '--out', path.join(dir, 'out'),
    '--user-agent', UA, '--max-pages', String(pagesTarget), '--host-delay', String(hostDelay), '--min-host-delay', String(hostDelay),
    '--ip-delay', String(ipDelay), '--min-ip-delay', String(ipDelay), '--ram', ram, '--concurrency', String(concurrency),
    '--warc-compression', 'none', '--progress', 'plain', '--progress-interval', '30000', '--checkpoint-interval', '600000',
    '--status-port', '0', '--scope', 'any', ...spec.flags];
  log(`${spec.label}: drumcrawl crawl … ${spec.flags.join(' ')}`);
  const t0 = performance.now();
  const child = startCrawlChild(argv, { root: tree.dir });
  const timeline: RunOut['timeline'] = [];
  let peak = 0, cpu = 0, stoppedBy = 'max-pages', lastLog = 0;
  let last: Record<string, unknown> | null = null; // the crawler's last /status snapshot
  while (child.isRunning()) {
    await new Promise((r) => setTimeout(r, 1000));
    const t = (performance.now() - t0) / 1000;
    peak = Math.max(peak, rssBytes(child.pid));
    const cs = cpuSeconds(child.pid);
    if (cs > 0) cpu = cs;
    timeline.push({ t: Math.round(t), pages: c.pages, farmPages: c.farm });
    if (timeline.length % 3 === 0) last = (await child.status()) ?? last;
    if (t - lastLog >= 30) {
      lastLog = t;
      log(`  ${spec.key} ${t.toFixed(0)} s: ${c.pages} pages (${(c.pages / t).toFixed(0)}/s), farms ${c.farm}, traps ${c.trap}, RSS ${(peak / 2 ** 20).toFixed(0)} MiB, load ${os.loadavg()[0]!.toFixed(1)}`);
    }
    if (t > timeLimit && child.isRunning()) {
      stoppedBy = 'time-limit';
      await child.stop();
    }
  }
  const exitCode = await child.exited;
  cur = null;
  fs.rmSync(dir, { recursive: true, force: true });
  const seconds = (performance.now() - t0) / 1000;
  log(`${spec.label}: ${c.pages} pages in ${seconds.toFixed(0)} s, farms ${c.farm} (${((100 * c.farm) / Math.max(1, c.pages)).toFixed(2)} %), traps ${c.trap}, exit ${exitCode}`);
  return {
    key: spec.key, label: spec.label, flags: spec.flags, pages: c.pages, requests: c.requests, robotsRequests: c.robots,
    farmPages: c.farm, trapPages: c.trap, perPld: c.perPld, fetched: c.fetched, seconds, crawlerCpuSeconds: cpu,
    peakRssMiB: peak / 2 ** 20, exitCode, stoppedBy, timeline, stderrTail: child.stderrTail().split('\n').filter(Boolean).slice(-4).join(' | ').slice(0, 600),
    lastStatus: last,
  };
}

const loadBefore = os.loadavg();
const runs: RunOut[] = [];
for (const r of runNames) {
  const out = await runOne(SPECS[r]!);
  if (out.pages === 0) {
    await sim.close();
    tree.remove();
    throw new Error(`${out.label}: the crawler fetched nothing (exit ${out.exitCode}): ${out.stderrTail}`);
  }
  runs.push(out);
  await new Promise((res) => setTimeout(res, 1000));
}
const loadAfter = os.loadavg();
// Same number of pages in every run: a run stopped by the time limit (the box is shared) has fewer;
// every count below is over the first K pages each run fetched, in the server's order.
const K = Math.min(...runs.map((r) => r.pages));
for (const r of runs) {
  if (r.pages === K) continue;
  r.pagesFetchedInRun = r.pages;
  r.fetched.length = K;
  r.pages = K;
  r.perPld = new Map();
  r.farmPages = 0;
  r.trapPages = 0;
  for (const hp of r.fetched) {
    const sp = hp.indexOf(' ');
    const pld = pldOf(hp.slice(0, sp));
    r.perPld.set(pld, (r.perPld.get(pld) ?? 0) + 1);
    if (pld.startsWith('farm')) r.farmPages++;
    if (isTrap(hp.slice(sp + 1))) r.trapPages++;
  }
}
if (K < pagesTarget) log(`compared over the first ${K} pages of each run (a run hit the time limit)`);
await sim.close();
tree.remove();

// ---- ground-truth in-degree: distinct other PLDs linking to a PLD, over every page fetched -------
const t1 = performance.now();
const pages = new Set<string>();
for (const r of runs) for (const p of r.fetched) pages.add(p);
const edges = new Set<string>();
const indegree = new Map<string, number>();
for (const hp of pages) {
  const sp = hp.indexOf(' ');
  const host = hp.slice(0, sp);
  const pth = hp.slice(sp + 1);
  const m = /^\/p\/(\d+)(?:\?sid=([0-9a-f]+))?$/.exec(pth);
  if (m === null) continue; // traps' /cal/ and /t/ pages only link inside their host
  const info = web.hostInfo(host);
  if (info === null || !web.hasPage(info, Number(m[1]))) continue;
  const src = info.pld;
  const sid = m[2] !== undefined ? web.parseSid(`sid=${m[2]}`) : 0;
  for (const l of web.pageLinks(info, Number(m[1]), sid).links) {
    const tp = pldOf(l.host);
    if (tp === src) continue;
    const e = `${src} ${tp}`;
    if (edges.has(e)) continue;
    edges.add(e);
    indegree.set(tp, (indegree.get(tp) ?? 0) + 1);
  }
}
log(`in-degrees from ${pages.size} distinct fetched pages: ${edges.size} PLD edges, ${indegree.size} PLDs linked (${((performance.now() - t1) / 1000).toFixed(1)} s)`);

const allPlds = new Set<string>([...indegree.keys()]);
for (const r of runs) for (const p of r.perPld.keys()) allPlds.add(p);
const deg = (p: string): number => indegree.get(p) ?? 0;
const isFarm = (p: string): boolean => p.startsWith('farm');

/** Mean pages per non-farm PLD (crawled or not, over every PLD known from the fetched pages) in log2 in-degree bins. */
function bins(r: RunOut): Array<{ from: number; to: number; plds: number; meanPages: number; maxPages: number; pldsCrawled: number }> {
  const m = new Map<number, { plds: number; sum: number; max: number; crawled: number }>();
  for (const p of allPlds) {
    if (isFarm(p)) continue; // the farms are reported one by one (farms[])
    const d = deg(p);
    const b = d === 0 ? -1 : Math.floor(Math.log2(d));
    const c = r.perPld.get(p) ?? 0;
    const e = m.get(b) ?? { plds: 0, sum: 0, max: 0, crawled: 0 };
    e.plds++;
    e.sum += c;
    e.max = Math.max(e.max, c);
    if (c > 0) e.crawled++;
    m.set(b, e);
  }
  return [...m.entries()].sort((x, y) => x[0] - y[0]).map(([b, e]) => ({
    from: b < 0 ? 0 : 2 ** b, to: b < 0 ? 0 : 2 ** (b + 1) - 1, plds: e.plds, meanPages: sig(e.sum / e.plds, 4), maxPages: e.max, pldsCrawled: e.crawled,
  }));
}
const farmRows = [...allPlds].filter(isFarm).sort().map((p) => ({
  pld: p, indegree: deg(p), ...Object.fromEntries(runs.map((r) => [`pages_${r.key}`, r.perPld.get(p) ?? 0])),
}));
const top = [...allPlds].sort((x, y) => deg(y) - deg(x)).slice(0, 10).map((p) => ({
  pld: p, indegree: deg(p), ...Object.fromEntries(runs.map((r) => [`pages_${r.key}`, r.perPld.get(p) ?? 0])),
}));
/** Least-squares slope of log10(pages) on log10(in-degree) over crawled non-farm PLDs with d ≥ 1. */
function slope(r: RunOut): number {
  let n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const [p, c] of r.perPld) {
    const d = deg(p);
    if (isFarm(p) || d < 1 || c < 1) continue;
    const x = Math.log10(d), y = Math.log10(c);
    n++; sx += x; sy += y; sxx += x * x; sxy += x * y;
  }
  return n < 2 ? NaN : (n * sxy - sx * sy) / (n * sxx - sx * sx);
}
const summarize = (r: RunOut) => ({
  label: r.label, crawlerFlags: r.flags.join(' '), pages: r.pages, pagesFetchedInRun: r.pagesFetchedInRun ?? r.pages, requests: r.requests, robotsRequests: r.robotsRequests,
  pldsCrawled: r.perPld.size, farmPages: r.farmPages, farmShare: sig(r.farmPages / Math.max(1, r.pages), 3),
  trapPages: r.trapPages, trapShare: sig(r.trapPages / Math.max(1, r.pages), 3),
  logLogSlopeNonFarm: sig(slope(r), 3),
  seconds: sig(r.seconds, 4), pagesPerSecond: sig((r.pagesFetchedInRun ?? r.pages) / r.seconds, 4), crawlerCpuSeconds: sig(r.crawlerCpuSeconds, 4),
  crawlerPeakRssMiB: sig(r.peakRssMiB, 4), exitCode: r.exitCode, stoppedBy: r.stoppedBy, stderrTail: r.stderrTail,
  crawlerLastStatus: r.lastStatus === null ? null : {
    elapsedMs: r.lastStatus.elapsedMs, pages: r.lastStatus.pages, urlsSeen: r.lastStatus.urlsSeen, urlsQueued: r.lastStatus.urlsQueued,
    beast: r.lastStatus.beast, hosts: r.lastStatus.hosts, outcomes: r.lastStatus.outcomes,
  },
  binsByIndegree: bins(r),
  farmPagesOverTime: r.timeline.filter((_, i) => i % 10 === 0).map((x) => [x.t, x.pages, x.farmPages]),
});
const on = runs.find((r) => r.key === 'crawl');
const off = runs.find((r) => r.key === 'bfs');
const result = {
  bench: 'star',
  command: commandLine('bench:star'),
  machine: { ...machineInfo(), loadavgBefore: loadBefore.map((x) => sig(x, 3)), loadavgAfter: loadAfter.map((x) => sig(x, 3)) },
  note: SHARED_MACHINE_NOTE + ' The measured quantities are counts of pages (server side), which depend on the crawl order, not on speed; the crawl rate (and with it how far each run got in the time limit) does depend on the load.',
  crawler: { commit: tree.commit, subject: tree.subject, how: 'node --import tsx <git archive of the commit>/src/cli/main.ts crawl …' },
  kind: 'REAL CRAWL: drumcrawl crawl (child process, from the source tree via tsx) against simweb over loopback TCP + DNS; pages counted by the server; in-degrees from the generator',
  parameters: {
    simweb: { preset: 'spam', overrides, seed, port: sim.httpPort, seeds: sim.seeds.length },
    pagesPerRun: pagesTarget, pagesCompared: K, hostDelayMs: hostDelay, minHostDelayMs: hostDelay, ipDelayMs: ipDelay, minIpDelayMs: ipDelay, ram, concurrency,
    timeLimitSecondsPerRun: timeLimit, userAgent: UA,
    pageDefinition: 'server-side 2xx response to a non-robots path (simweb request log)',
    indegree: 'ground truth from WebGraph.pageLinks over the union of pages fetched by all runs: number of distinct other PLDs linking to the PLD (what a crawler of these pages can know; the thesis computes it over its own crawl too)',
    starOff: '--budget flat --budget-b0 1000000000: every PLD has an unbounded budget, so BEAST puts every URL in its current queue (BFS in discovery order). `--budget flat` alone (B0 = 10 for every PLD) still caps each PLD per pass and is the optional third run `flat`.',
  },
  runs: Object.fromEntries(runs.map((r) => [r.key, summarize(r)])),
  farms: farmRows,
  topPldsByIndegree: top,
  indegreeSource: { distinctPagesFetched: pages.size, pldEdges: edges.size, pldsWithIndegree: indegree.size },
  /** Every PLD crawled by some run: [pld, in-degree, pages in each run (order of runKeys)]. */
  runKeys: runs.map((r) => r.key),
  plds: [...allPlds].filter((p) => runs.some((r) => r.perPld.has(p))).sort().map((p) => [p, deg(p), ...runs.map((r) => r.perPld.get(p) ?? 0)]),
  summary: on && off ? {
    farmShareStarOn: sig(on.farmPages / Math.max(1, on.pages), 3),
    farmShareStarOff: sig(off.farmPages / Math.max(1, off.pages), 3),
    farmPagesOffOverOn: sig(off.farmPages / Math.max(1, on.farmPages), 3),
  } : null,
};
const jf = writeResult(outName, result);

console.log(mdTable(['run', 'pages', 'PLDs crawled', 'spam-farm pages', 'farm share', 'trap pages', 'log-log slope', 's'],
  runs.map((r) => [r.label, r.pages, r.perPld.size, r.farmPages, `${((100 * r.farmPages) / Math.max(1, r.pages)).toFixed(2)} %`, r.trapPages, sig(slope(r), 3), r.seconds.toFixed(0)])));
const bs = runs.map(bins);
console.log(mdTable(['in-degree (non-farm PLDs)', 'PLDs', ...runs.map((r) => `mean pages ${r.key}`)],
  bs[0]!.map((b, i) => [b.to === 0 ? '0' : `${b.from}–${b.to}`, b.plds, ...bs.map((x) => x[i]?.meanPages ?? 0)])));
console.log(`wrote ${jf} and ${plotStar(result as unknown as StarJson)}`);
