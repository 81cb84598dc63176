/**
 * bench/star/sim.ts — STAR on a simweb with spam farms: pages crawled per PLD vs PLD in-degree, with STAR
 * budgets on and off (the thesis' Fig. 7(b), ch. VI).
 *
 * A SIMULATION, not a crawl: this variant drives
 * the real src/frontier (Frontier: BEAST queues, robots gate, host/IP politeness heaps; Star: PLD
 * in-degrees and budgets) the way the pipeline does, on a virtual clock, with the simweb generator's
 * link graph (WebGraph.pageLinks) standing in for fetch + parse. URLseen is an in-RAM Set (the
 * crawler uses DRUM; uniqueness is all that matters here). Every fetch takes `--fetch-ms` of virtual
 * time; every robots.txt allows everything.
 *
 *   STAR on:  crawlBudget() — IRLbot's policy: B0 = 10 for PLDs outside the top ranks or with
 *             in-degree < 2, the top PLDs interpolated 10 … 10,000 by in-degree rank (thesis VI.2).
 *   STAR off: flatBudget(10^9) — every URL in BEAST's first queue: plain BFS in discovery order.
 * Politeness delays are equal in both runs (τh = τh0, so budgets cannot shorten them), so the runs
 * differ only in STAR. A third run lets budgets shorten τh (IRLbot's coupling, thesis VII.1).
 *
 *   npm run bench:star -- --sim                     # simweb 'bench' + 4 spam farms, 50,000 pages per run
 *   npm run bench:star -- --sim --pages 50000 --farms 8
 *
 * (bench/star/run.ts without --sim runs the real crawl instead: bench/star/crawl.ts.) Writes
 * bench/results/star-sim.{json,svg}.
 */
import { Frontier, FrontierUrl, MemoryPldStore, Star, UrlKind, crawlBudget, flatBudget, type BudgetFunction } from '../../src/frontier/index.js';
import { WebGraph, resolveParams } from '../../src/simweb/index.js';
import { fingerprintInto } from '../../src/url/index.js';
import { SHARED_MACHINE_NOTE, args, commandLine, machineInfo, mdTable, sig, writeResult, writeSvg } from '../lib/report.js';
import { lineChart, type Series } from '../lib/svg.js';

const a = args();
const pagesTarget = a.num('pages', 50_000);
const farms = a.num('farms', 4);
const seed = a.num('seed', 1);
const fetchMs = a.num('fetch-ms', 300);
const hostDelay = a.num('host-delay', 2000);
// RAM holds few URLs compared with the backlog (IRLbot: RAM ≪ BEAST's disk queues), so the order in
// which BEAST hands URLs over — the budgets — decides what gets crawled.
const ramUrls = a.num('ram-urls', 2000);
// URLs one host may hold in RAM: small, so that RAM spreads over many hosts rather than a few big ones.
const perHost = a.num('per-host', 10);

const params = resolveParams('bench', { spamFarms: farms, spamInLinks: 1 });
const web = new WebGraph(params, seed, 80);

function log(s: string): void {
  process.stderr.write(`[star] ${s}\n`);
}

const pldOf = (host: string): string => host.slice(host.indexOf('.') + 1); // hosts are <label>.<pld>.test
const key = new Uint32Array(2);

interface RunOut {
  name: string;
  pages: number;
  virtualSeconds: number;
  pagesPerPld: Map<string, number>;
  indegree: Map<string, number>;
  farmPages: number;
  hostsSeen: number;
  queueSwitches: number;
  cpuSeconds: number;
  /** URLs the frontier gave up on, by reason (all / spam-farm URLs only). */
  dropped: Record<string, number>;
  droppedFarm: Record<string, number>;
  frontierStats: Record<string, unknown>;
}

async function run(name: string, budget: BudgetFunction, minHostDelay = hostDelay): Promise<RunOut> {
  const c0 = process.cpuUsage();
  let now = 0;
  const dropped: Record<string, number> = {};
  const droppedFarm: Record<string, number> = {};
  const f = await Frontier.open(null, {
    onDrop: (u, reason) => {
      dropped[reason] = (dropped[reason] ?? 0) + 1;
      if (u.url.includes('.farm')) droppedFarm[reason] = (droppedFarm[reason] ?? 0) + 1;
    },
    preset: 'default', storage: 'memory',
    hostDelayMs: hostDelay, minHostDelayMs: minHostDelay, ipDelayMs: 10, minIpDelayMs: 10,
    ramUrls, maxUrlsPerHost: perHost, maxConnectionsPerIp: 4,
  }, () => now);
  const star = new Star(new MemoryPldStore(), budget);
  const seen = new Set<string>(); // URLseen stand-in (bounded by the URLs a run discovers)
  const hostName = new Map<string, string>(); // host key → name (robots items carry only the key)
  const edges = new Set<string>();
  const indegree = new Map<string, number>();
  const pagesPerPld = new Map<string, number>();
  let pending: FrontierUrl[] = [];
  let pairBuf = new Uint32Array(4096 * 4);
  let pairs = 0;

  const discover = (url: string, host: string, hops: number): void => {
    if (seen.has(url)) return;
    seen.add(url);
    fingerprintInto(host, key, 0);
    const hHi = key[0]!, hLo = key[1]!;
    hostName.set(`${hHi}:${hLo}`, host);
    fingerprintInto(pldOf(host), key, 0);
    pending.push(new FrontierUrl({ url, hops, hostHi: hHi, hostLo: hLo, pldHi: key[0]!, pldLo: key[1]!, budget: 0, admitted: 0, discoveredAt: now }));
  };
  for (const s of web.seeds()) {
    const u = new URL(s);
    discover(`http://${u.hostname}${u.pathname}`, u.hostname, 0);
  }

  // Completion events (time-ordered; fetches all take fetchMs so a FIFO is already sorted).
  const evT: number[] = [];
  const evU: FrontierUrl[] = [];
  let evHead = 0;
  let pages = 0;
  const out: FrontierUrl[] = [];
  const rules = { isAllowed: () => true };

  const flush = async (): Promise<void> => {
    if (pairs > 0) {
      await star.addLinks(pairBuf, pairs);
      pairs = 0;
    }
    if (pending.length > 0) {
      const b = pending;
      pending = [];
      await star.assign(b);
      await f.admit(b, { durable: false });
    }
  };

  for (let iter = 0; pages < pagesTarget; iter++) {
    if (iter > 20_000_000) throw new Error('simulation does not terminate');
    while (evHead < evT.length && evT[evHead]! <= now) {
      const u = evU[evHead++]!;
      if (u.kind === UrlKind.Robots) {
        f.fetchDone(u);
        f.robotsKnown(u.hostHi, u.hostLo, { rules, ip: u.ip, expiresAt: Infinity });
        continue;
      }
      f.fetchDone(u);
      const rest = u.url.slice(7);
      const slash = rest.indexOf('/');
      const host = rest.slice(0, slash);
      const n = Number(rest.slice(slash + 3));
      const info = web.hostInfo(host);
      if (info === null || !web.hasPage(info, n)) continue;
      pages++;
      const pld = pldOf(host);
      pagesPerPld.set(pld, (pagesPerPld.get(pld) ?? 0) + 1);
      fingerprintInto(pld, key, 0);
      const sHi = key[0]!, sLo = key[1]!;
      for (const l of web.pageLinks(info, n).links) {
        if (!l.path.startsWith('/p/') || l.path.includes('?')) continue;
        const tp = pldOf(l.host);
        if (tp !== pld) {
          const e = pld + ' ' + tp;
          if (!edges.has(e)) {
            edges.add(e);
            indegree.set(tp, (indegree.get(tp) ?? 0) + 1);
          }
          fingerprintInto(tp, key, 0);
          if ((pairs + 1) * 4 > pairBuf.length) {
            const nb = new Uint32Array(pairBuf.length * 2);
            nb.set(pairBuf);
            pairBuf = nb;
          }
          pairBuf.set([sHi, sLo, key[0]!, key[1]!], pairs * 4);
          pairs++;
        }
        discover(`http://${l.host}${l.path}`, l.host, u.hops + 1);
      }
    }
    if (evHead > 65536) {
      evT.splice(0, evHead);
      evU.splice(0, evHead);
      evHead = 0;
    }
    await flush();
    await f.refill();
    for (const req of f.takeRobotsRequests(1 << 30)) {
      const host = hostName.get(`${req.hostHi}:${req.hostLo}`) ?? req.host;
      const info = web.hostInfo(host);
      if (info === null) f.robotsFailed(req.hostHi, req.hostLo, 'CRAWL_DNS_NXDOMAIN');
      else f.scheduleRobotsFetch(req.hostHi, req.hostLo, info.ip);
    }
    const k = f.nextReadyInto(now, 1 << 30, out);
    for (let i = 0; i < k; i++) {
      evT.push(now + fetchMs);
      evU.push(out[i]!);
    }
    let t = Math.min(evHead < evT.length ? evT[evHead]! : Infinity, f.nextWakeup() ?? Infinity);
    if (t === Infinity) {
      if (f.isEmpty()) break;
      t = now + 500;
    }
    now = Math.max(t, now + 1);
  }
  const st = f.stats() as unknown as { switches?: number } & Record<string, unknown>;
  await f.close();
  let farmPages = 0;
  for (const [p, c] of pagesPerPld) if (p.startsWith('farm')) farmPages += c;
  const cpu = process.cpuUsage(c0);
  return {
    name, pages, virtualSeconds: now / 1000, pagesPerPld, indegree, farmPages, hostsSeen: hostName.size,
    queueSwitches: st.switches ?? 0, cpuSeconds: (cpu.user + cpu.system) / 1e6, dropped, droppedFarm, frontierStats: st,
  };
}

const on = await run('STAR on', crawlBudget());
log(`STAR on: ${on.pages} pages, farms ${on.farmPages} (${((100 * on.farmPages) / on.pages).toFixed(1)} %), ${on.virtualSeconds.toFixed(0)} virtual s, ${on.cpuSeconds.toFixed(1)} CPU s`);
const off = await run('STAR off', flatBudget(1e9));
// IRLbot also shortens τh for PLDs with large budgets (thesis VII.1, τh down to a floor τh0): the
// second half of STAR's effect. Third run: STAR on with τh0 = τh/10.
const scaled = await run('STAR on, budget-scaled τh', crawlBudget(), hostDelay / 10);
log(`STAR on + scaled τh: ${scaled.pages} pages, farms ${scaled.farmPages}, ${scaled.virtualSeconds.toFixed(0)} virtual s`);
log(`STAR off: ${off.pages} pages, farms ${off.farmPages} (${((100 * off.farmPages) / off.pages).toFixed(1)} %), ${off.virtualSeconds.toFixed(0)} virtual s, ${off.cpuSeconds.toFixed(1)} CPU s`);

// In-degree axis: the union of both runs' PLD graphs (max of the two counts per PLD), so a PLD has
// one x position in both series.
const allPlds = new Set<string>([...on.pagesPerPld.keys(), ...off.pagesPerPld.keys(), ...scaled.pagesPerPld.keys()]);
const deg = (p: string): number => Math.max(on.indegree.get(p) ?? 0, off.indegree.get(p) ?? 0, scaled.indegree.get(p) ?? 0);
/** Mean pages per crawled PLD in logarithmic in-degree bins [2^i, 2^(i+1)) (bin 0 = in-degree 0). */
function bins(r: RunOut): Array<{ from: number; to: number; plds: number; meanPages: number; maxPages: number }> {
  const m = new Map<number, { plds: number; sum: number; max: number }>();
  for (const p of allPlds) {
    const d = deg(p);
    const b = d === 0 ? -1 : Math.floor(Math.log2(d));
    const c = r.pagesPerPld.get(p) ?? 0;
    const e = m.get(b) ?? { plds: 0, sum: 0, max: 0 };
    e.plds++;
    e.sum += c;
    e.max = Math.max(e.max, c);
    m.set(b, e);
  }
  return [...m.entries()].sort((x, y) => x[0] - y[0]).map(([b, e]) => ({
    from: b < 0 ? 0 : 2 ** b, to: b < 0 ? 0 : 2 ** (b + 1) - 1, plds: e.plds, meanPages: sig(e.sum / e.plds, 4), maxPages: e.max,
  }));
}
const farmRows = [...allPlds].filter((p) => p.startsWith('farm')).sort().map((p) => ({
  pld: p, indegree: deg(p), pagesStarOn: on.pagesPerPld.get(p) ?? 0, pagesStarOff: off.pagesPerPld.get(p) ?? 0,
  pagesStarOnScaledTauH: scaled.pagesPerPld.get(p) ?? 0,
}));
const top = [...allPlds].sort((x, y) => deg(y) - deg(x)).slice(0, 10).map((p) => ({
  pld: p, indegree: deg(p), pagesStarOn: on.pagesPerPld.get(p) ?? 0, pagesStarOff: off.pagesPerPld.get(p) ?? 0,
  pagesStarOnScaledTauH: scaled.pagesPerPld.get(p) ?? 0,
}));
const summarize = (r: RunOut) => ({
  pages: r.pages, virtualSeconds: sig(r.virtualSeconds, 4), pldsCrawled: r.pagesPerPld.size, hostsDiscovered: r.hostsSeen,
  farmPages: r.farmPages, farmShare: sig(r.farmPages / r.pages, 3), queueSwitches: r.queueSwitches, cpuSeconds: sig(r.cpuSeconds, 3),
  dropped: r.dropped, droppedFarm: r.droppedFarm, frontierStatsAtEnd: r.frontierStats,
  binsByIndegree: bins(r),
});
const result = {
  bench: 'star',
  command: commandLine('bench:star'),
  machine: machineInfo(),
  note: SHARED_MACHINE_NOTE + ' The measured quantities are counts on a virtual clock, so they do not depend on the load.',
  kind: 'SIMULATION over the real src/frontier (Frontier + Star) with the simweb generator as the web and a virtual fetch clock; not a run of the crawler (the real crawl is bench/star/crawl.ts, results star-pld.json)',
  parameters: {
    simweb: { preset: 'bench', seed, spamFarms: farms, spamInLinks: 1, plds: params.plds },
    pagesPerRun: pagesTarget, fetchMs, hostDelayMs: hostDelay, ramUrls, maxUrlsPerHost: perHost, ipDelayMs: 10, maxConnectionsPerIp: 4,
    starOn: 'crawlBudget(): B0 = 10; PLDs with in-degree ≥ 2 ranked, top 10,000 interpolated 10,000 → 10 pages per BEAST pass',
    starOff: 'flatBudget(1e9): every URL in the first BEAST queue (BFS)',
  },
  starOn: summarize(on),
  starOff: summarize(off),
  starOnScaledTauH: { minHostDelayMs: hostDelay / 10, ...summarize(scaled) },
  farms: farmRows,
  topPldsByIndegree: top,
  summary: {
    farmShareStarOn: sig(on.farmPages / on.pages, 3),
    farmShareStarOff: sig(off.farmPages / off.pages, 3),
    farmPagesOffOverOn: sig(off.farmPages / Math.max(1, on.farmPages), 3),
    farmShareStarOnScaledTauH: sig(scaled.farmPages / scaled.pages, 3),
  },
};
const jf = writeResult(a.get('out') ?? 'star-sim', result);

const scatter = (r: RunOut): Array<[number, number]> =>
  [...r.pagesPerPld.entries()].map(([p, c]) => [Math.max(1, deg(p)) + (p.startsWith('farm') ? 0 : 0), c] as [number, number]);
/** Binned means at the bin's geometric centre (lines), over the per-PLD dots. */
const meanLine = (r: RunOut): Array<[number, number]> =>
  bins(r).filter((b) => b.meanPages > 0).map((b) => [b.to === 0 ? 1 : Math.sqrt(b.from * (b.to + 1)), b.meanPages] as [number, number]);
const series: Series[] = [
  { name: 'STAR off (BFS): PLDs (dots), mean per in-degree bin (line)', color: '#d62728', points: scatter(off), scatter: true },
  { name: 'STAR on (crawlBudget), fixed τh', color: '#2ca02c', points: scatter(on), scatter: true },
  { name: `STAR on, budget-scaled τh (τh0 = ${hostDelay / 10} ms)`, color: '#1f77b4', points: scatter(scaled), scatter: true },
  { name: 'mean, STAR off', color: '#d62728', points: meanLine(off) },
  { name: 'mean, STAR on', color: '#2ca02c', points: meanLine(on) },
  { name: 'mean, STAR on + scaled τh', color: '#1f77b4', points: meanLine(scaled) },
];
const sf = writeSvg(a.get('out') ?? 'star-sim', lineChart({
  title: `Pages crawled per PLD vs PLD in-degree (simweb bench + ${farms} spam farms, ${pagesTarget.toLocaleString('en')} pages)`,
  xLabel: 'PLD in-degree', yLabel: 'pages crawled per PLD', logX: true, logY: true, series,
}));
console.log(mdTable(['run', 'pages', 'PLDs crawled', 'spam-farm pages', 'farm share', 'virtual s'],
  [on, off, scaled].map((r) => [r.name, r.pages, r.pagesPerPld.size, r.farmPages, `${((100 * r.farmPages) / r.pages).toFixed(1)} %`, r.virtualSeconds.toFixed(0)])));
console.log(mdTable(['in-degree', 'PLDs', 'mean pages STAR on', 'mean pages STAR off', 'mean pages STAR on + scaled τh'],
  bins(on).map((b, i) => [b.to === 0 ? '0' : `${b.from}–${b.to}`, b.plds, b.meanPages, bins(off)[i]?.meanPages ?? 0, bins(scaled)[i]?.meanPages ?? 0])));
console.log(`wrote ${jf} and ${sf}`);
