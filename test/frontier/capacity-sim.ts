/**
 * A small crawl on the frontier's own clock for the capacity-gate tests: PLDs of given budgets,
 * hosts and URLs, a fixed fetch time and concurrency, robots answered by a fetch of their own. The
 * loop ticks 1 ms at a time and stops after `ms` (or when the frontier is empty), so every run is
 * bounded. Hosts carry their PLD in hostLo, so robots.txt items (which carry no PLD key) are
 * attributed to their PLD too.
 */
import { Frontier, FrontierUrl, UrlKind, type FrontierOptions } from '../../src/frontier/index.js';
import { fastOptions } from './fast-options.js';

export interface SimPld {
  /** PLD id (≥ 1). */
  id: number;
  budget: number;
  hosts: number;
  urlsPerHost: number;
  /** Hosts of the PLD share this many IPs (default: one IP per host). */
  ips?: number;
  /** Crawl-delay of every host of the PLD (ms), e.g. a politeness-bound site. */
  crawlDelayMs?: number;
  /** Admitted at this time (ms after the start; default 0). */
  at?: number;
  /** Every URL with admitted count P = 1, so BEAST puts them all into its next queue. */
  oneQueue?: boolean;
}

export interface SimRelease {
  t: number;
  pld: number;
  robots: boolean;
}

export interface SimRun {
  releases: SimRelease[];
  /** Per PLD: pages released. */
  pages: Map<number, number>;
  /** Per 100 ms of the run: the low class's URLs in RAM + QR (stats().capacity), when gated. */
  lowHeld: number[];
  lowCap: number;
  end: number;
  empty: boolean;
}

export async function simCrawl(plds: readonly SimPld[], o: { ms: number; fetchMs?: number; concurrency?: number; frontier?: FrontierOptions }): Promise<SimRun> {
  const start = 1_000_000;
  let now = start;
  const opts = fastOptions({ hostDelayMs: 100, minHostDelayMs: 20, ipDelayMs: 0, minIpDelayMs: 0, ramUrls: 20_000, maxUrlsPerHost: 1000, maxConnectionsPerIp: 2, refillHorizonMs: 1000, minReadyUrls: 64, ...o.frontier });
  const f = await Frontier.open(null, opts, () => now);
  const fetchMs = o.fetchMs ?? 5;
  const concurrency = o.concurrency ?? 32;
  const crawlDelay = new Map<number, number>();
  const ipOfHost = new Map<number, string>();
  let hostBase = 1;
  const entries = plds.map((p) => {
    const first = hostBase;
    hostBase += p.hosts;
    if (p.crawlDelayMs !== undefined) crawlDelay.set(p.id, p.crawlDelayMs);
    const ips = p.ips ?? p.hosts;
    for (let h = 0; h < p.hosts; h++) ipOfHost.set(first + h, `10.${p.id & 255}.${((h % ips) >> 8) & 255}.${(h % ips) & 255}`);
    return { p, first };
  });
  const admittedOf = new Map<number, number>();
  const urlsOf = (e: { p: SimPld; first: number }): FrontierUrl[] => {
    const out: FrontierUrl[] = [];
    for (let k = 0; k < e.p.urlsPerHost; k++) {
      for (let h = 0; h < e.p.hosts; h++) {
        const host = e.first + h;
        const admitted = e.p.oneQueue === true ? 1 : (admittedOf.get(e.p.id) ?? 0) + 1;
        admittedOf.set(e.p.id, admitted);
        out.push(new FrontierUrl({ url: `http://h${host}.p${e.p.id}.test/u${k}`, hostHi: host, hostLo: e.p.id, pldHi: e.p.id, pldLo: 1, budget: e.p.budget, admitted }));
      }
    }
    return out;
  };
  const pending = [...entries].sort((a, b) => (a.p.at ?? 0) - (b.p.at ?? 0));
  const releases: SimRelease[] = [];
  const pages = new Map<number, number>();
  const lowHeld: number[] = [];
  const flight: { u: FrontierUrl; at: number }[] = [];
  let empty = false;
  for (; now < start + o.ms; now++) {
    while (pending.length > 0 && (pending[0]!.p.at ?? 0) <= now - start) await f.admit(urlsOf(pending.shift()!), { durable: false });
    for (let k = flight.length - 1; k >= 0; k--) {
      if (flight[k]!.at > now) continue;
      const u = flight[k]!.u;
      flight.splice(k, 1);
      if (u.kind === UrlKind.Robots) {
        const cd = crawlDelay.get(u.hostLo);
        f.robotsKnown(u.hostHi, u.hostLo, { rules: null, ip: u.ip, expiresAt: Infinity, ...(cd === undefined ? {} : { crawlDelayMs: cd }) });
      }
      f.fetchDone(u);
    }
    await f.refill();
    for (const r of f.takeRobotsRequests(100_000)) f.scheduleRobotsFetch(r.hostHi, r.hostLo, ipOfHost.get(r.hostHi)!);
    for (const u of f.nextReady(now, concurrency - flight.length)) {
      const robots = u.kind === UrlKind.Robots;
      releases.push({ t: now - start, pld: u.hostLo, robots });
      if (!robots) pages.set(u.hostLo, (pages.get(u.hostLo) ?? 0) + 1);
      flight.push({ u, at: now + fetchMs });
    }
    if ((now - start) % 100 === 99) {
      const c = f.stats().capacity;
      lowHeld.push(c === null ? 0 : c.lowRam + c.qrLow);
    }
    if (pending.length === 0 && flight.length === 0 && f.isEmpty()) {
      empty = true;
      break;
    }
  }
  const lowCap = Math.floor((opts.capacityLowRamShare ?? 0.125) * (opts.ramUrls ?? 0));
  await f.close();
  return { releases, pages, lowHeld, lowCap, end: now - start, empty };
}
