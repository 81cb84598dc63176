/**
 * A deterministic crawl simulation on a virtual clock, driving the real Frontier (+ STAR) the way
 * the pipeline does: admit batches, refill, answer robots requests (DNS + robots.txt fetched through
 * the IP heap), release, complete fetches after a simulated duration. It records every release and
 * checks the politeness invariants as it goes; the tests assert on what it returns.
 */
import assert from 'node:assert/strict';
import {
  Frontier,
  FrontierUrl,
  MemoryPldStore,
  Star,
  UrlKind,
  flatBudget,
  type BudgetFunction,
  type FetchOutcome,
  type FrontierOptions,
} from '../../src/frontier/index.js';

import { mulberry32 as rng } from '../../src/simweb/model/hash.js';

export { rng };

export interface SimParams {
  seed: number;
  urls: number;
  hosts: number;
  ips: number;
  plds: number;
  /** PLD ids (0..plds-1) that are spam farms: many hosts and URLs, in-degree 0. */
  spamPlds: number;
  /** Fraction of all URLs that belong to the spam PLDs. */
  spamShare: number;
  batch: number;
  batchEveryMs: number;
  fetchMs: [number, number];
  /** Fraction of fetches that fail with a host error and are retried. */
  errorRate: number;
  /** Hosts with id % dnsFailEvery === 0 fail DNS. 0 = none. */
  dnsFailEvery: number;
  /** Fraction of URLs under /private/ (disallowed by every robots.txt). */
  privateShare: number;
  budget?: BudgetFunction;
  frontier: FrontierOptions;
  /** Links per admitted URL fed to STAR as PLD pairs (good PLDs link to each other). */
  linkPairs?: number;
  /**
   * Checkpoint (`Frontier.commit`) after every this many completed fetches, as the pipeline does.
   * Besides durability this lets BEAST drop its retired queues, whose names the manifest carries
   * until then (without checkpoints the manifest, rewritten at every re-spread, grows with the
   * crawl). 0 = never. @default 0
   */
  checkpointEvery?: number;
}

export interface SimResult {
  admitted: number;
  completed: number;
  dropped: Map<string, number>;
  releases: number;
  robotsFetches: number;
  maxRam: number;
  ramCap: number;
  finalTime: number;
  stats: ReturnType<Frontier['stats']>;
  /** Release order of completed URLs: 1 = spam PLD. */
  spamOrder: Uint8Array;
  hostViolations: number;
  ipViolations: number;
  concurrencyViolations: number;
  minHostGap: number;
  minIpGap: number;
  stalls: number;
  checkpoints: number;
  /** Times a spam PLD had more than 2·B·(queue passes) URLs released. */
  budgetViolations: number;
}

const hostKey = (h: number): [number, number] => [(0x10000 + h) >>> 0, Math.imul(h + 1, 2654435761) >>> 0];
const pldKey = (p: number): [number, number] => [(0x20000 + p) >>> 0, Math.imul(p + 7, 40503) >>> 0];

export async function simulate(p: SimParams): Promise<SimResult> {
  const r = rng(p.seed);
  let now = 0;
  const dropped = new Map<string, number>();
  // state per URL id: 0 not admitted, 1 admitted, 2 in flight, 3 completed, 4 dropped
  const state = new Uint8Array(p.urls);
  const idOf = new Map<string, number>();
  const onDrop = (u: FrontierUrl, reason: string): void => {
    const id = idOf.get(u.url)!;
    assert.ok(state[id] === 1 || state[id] === 2, `drop of ${u.url} in state ${state[id]}`);
    state[id] = 4;
    dropped.set(reason, (dropped.get(reason) ?? 0) + 1);
  };
  const f = await Frontier.open(null, { ...p.frontier, onDrop }, () => now);
  const opts = f.options;
  const star = new Star(new MemoryPldStore(), p.budget ?? flatBudget(opts.b0));

  // The web: host → PLD and IP; spam PLDs own a quarter of the hosts.
  const hostPld = new Int32Array(p.hosts);
  const spamHosts = Math.max(p.spamPlds, Math.floor(p.hosts / 4));
  for (let h = 0; h < p.hosts; h++) {
    hostPld[h] = p.spamPlds > 0 && h < spamHosts ? h % p.spamPlds : p.spamPlds + Math.floor(r() * (p.plds - p.spamPlds));
  }
  const ipOf = (h: number): string => `10.0.${(h % p.ips) >> 8}.${(h % p.ips) & 255}`;

  // STAR in-degree: good PLDs get links from other good PLDs (crawl preset ranks them).
  if (p.linkPairs && p.plds > p.spamPlds + 1) {
    const pairs = new Uint32Array(p.linkPairs * 4);
    for (let i = 0; i < p.linkPairs; i++) {
      const a = p.spamPlds + Math.floor(r() * (p.plds - p.spamPlds));
      const b = p.spamPlds + Math.floor(Math.sqrt(r()) * (p.plds - p.spamPlds) * r());
      const [ah, al] = pldKey(a);
      const [bh, bl] = pldKey(b);
      pairs.set([ah, al, bh, bl], i * 4);
    }
    await star.addLinks(pairs, p.linkPairs);
  }

  let nextId = 0;
  const makeBatch = (): FrontierUrl[] => {
    const out: FrontierUrl[] = [];
    const n = Math.min(p.batch, p.urls - nextId);
    for (let k = 0; k < n; k++) {
      const id = nextId++;
      const spam = p.spamPlds > 0 && r() < p.spamShare;
      const h = spam ? Math.floor(r() * spamHosts) : spamHosts + Math.floor(r() * (p.hosts - spamHosts));
      const pld = hostPld[h]!;
      const priv = r() < p.privateShare;
      const url = `http://h${h}.pld${pld}.test/${priv ? 'private/' : ''}p${id}`;
      const [hh, hl] = hostKey(h);
      const [ph, pl] = pldKey(pld);
      idOf.set(url, id);
      state[id] = 1;
      out.push(new FrontierUrl({ url, hops: 1, hostHi: hh, hostLo: hl, pldHi: ph, pldLo: pl, budget: 0, admitted: 0, discoveredAt: now }));
    }
    return out;
  };

  // Completion events: a small binary heap on (time, seq).
  const evT: number[] = [];
  const evU: FrontierUrl[] = [];
  const pushEv = (t: number, u: FrontierUrl): void => {
    evT.push(t);
    evU.push(u);
    let i = evT.length - 1;
    while (i > 0) {
      const q = (i - 1) >> 1;
      if (evT[q]! <= evT[i]!) break;
      [evT[q], evT[i]] = [evT[i]!, evT[q]!];
      [evU[q], evU[i]] = [evU[i]!, evU[q]!];
      i = q;
    }
  };
  const popEv = (): FrontierUrl => {
    const u = evU[0]!;
    const lt = evT.pop()!;
    const lu = evU.pop()!;
    if (evT.length > 0) {
      evT[0] = lt;
      evU[0] = lu;
      let i = 0;
      for (;;) {
        const a = 2 * i + 1;
        if (a >= evT.length) break;
        const b = a + 1;
        const m = b < evT.length && evT[b]! < evT[a]! ? b : a;
        if (evT[i]! <= evT[m]!) break;
        [evT[m], evT[i]] = [evT[i]!, evT[m]!];
        [evU[m], evU[i]] = [evU[i]!, evU[m]!];
        i = m;
      }
    }
    return u;
  };

  const hostLast = new Float64Array(p.hosts).fill(-Infinity);
  const hostBusy = new Uint8Array(p.hosts);
  const ipLast = new Float64Array(p.ips).fill(-Infinity);
  const ipBusy = new Int32Array(p.ips);
  let hostViolations = 0;
  let ipViolations = 0;
  let concurrencyViolations = 0;
  let minHostGap = Infinity;
  let minIpGap = Infinity;
  let releases = 0;
  let robotsFetches = 0;
  let completed = 0;
  let maxRam = 0;
  let stalls = 0;
  let budgetViolations = 0;
  const spamReleased = new Int32Array(Math.max(1, p.spamPlds));
  const spamOrder: number[] = [];
  const rules = { isAllowed: (pq: string) => !pq.startsWith('/private/') };
  const out: FrontierUrl[] = [];
  let nextBatchAt = 0;
  let nextCheckpointAt = p.checkpointEvery ?? 0;
  let checkpoints = 0;

  for (let iter = 0; ; iter++) {
    if (iter > 50_000_000) throw new Error('simulation does not terminate');
    while (evT.length > 0 && evT[0]! <= now) {
      const u = popEv();
      const h = u.hostHi - 0x10000;
      hostBusy[h] = 0;
      ipBusy[h % p.ips]!--;
      if (u.kind === UrlKind.Robots) {
        f.fetchDone(u);
        f.robotsKnown(u.hostHi, u.hostLo, { rules, ip: ipOf(h), expiresAt: Infinity });
        continue;
      }
      const id = idOf.get(u.url)!;
      const fail = r() < p.errorRate;
      const outcome: FetchOutcome = fail ? { hostError: true, retry: true } : {};
      if (!fail) {
        state[id] = 3;
        completed++;
        spamOrder.push(hostPld[h]! < p.spamPlds ? 1 : 0);
      } else state[id] = 1;
      f.fetchDone(u, outcome);
    }
    if (nextCheckpointAt > 0 && completed >= nextCheckpointAt) {
      await f.commit();
      checkpoints++;
      nextCheckpointAt = completed + p.checkpointEvery!;
    }
    if (nextId < p.urls && nextBatchAt <= now) {
      const b = makeBatch();
      await star.assign(b);
      await f.admit(b, { durable: false });
      nextBatchAt = now + p.batchEveryMs;
    }
    await f.refill();
    for (const req of f.takeRobotsRequests(1 << 30)) {
      const h = req.hostHi - 0x10000;
      assert.equal(req.host, `h${h}.pld${hostPld[h]}.test`);
      if (p.dnsFailEvery > 0 && h % p.dnsFailEvery === 0) f.robotsFailed(req.hostHi, req.hostLo, 'CRAWL_DNS_NXDOMAIN');
      else assert.ok(f.scheduleRobotsFetch(req.hostHi, req.hostLo, ipOf(h)));
    }
    const ram = f.ramCount;
    if (ram > maxRam) maxRam = ram;
    const n = f.nextReadyInto(now, 1 << 30, out);
    // BEAST's pass count for the budget check; releases from RAM do not move BEAST, so it is the
    // same for the whole batch (read once, lazily: stats() walks the ring).
    let passes = -1;
    for (let k = 0; k < n; k++) {
      const u = out[k]!;
      const h = u.hostHi - 0x10000;
      const ip = h % p.ips;
      assert.equal(u.ip, ipOf(h));
      // Politeness, start to start: host ≥ τh0 (robots fetches obey the IP heap only), IP ≥ τs0.
      if (u.kind !== UrlKind.Robots) {
        const g = now - hostLast[h]!;
        if (g < minHostGap) minHostGap = g;
        // (1e-9: the clock is fractional, and (a + d) − a can come out 3e-14 below d in doubles.)
        if (g < opts.minHostDelayMs - 1e-9) hostViolations++;
      }
      const gi = now - ipLast[ip]!;
      if (gi < minIpGap) minIpGap = gi;
      if (gi < opts.minIpDelayMs - 1e-9) ipViolations++;
      if (hostBusy[h] === 1) concurrencyViolations++;
      if (ipBusy[ip]! >= opts.maxConnectionsPerIp) concurrencyViolations++;
      hostLast[h] = now;
      ipLast[ip] = now;
      hostBusy[h] = 1;
      ipBusy[ip]!++;
      if (u.kind === UrlKind.Robots) robotsFetches++;
      else {
        releases++;
        const id = idOf.get(u.url)!;
        assert.equal(state[id], 1, `release of ${u.url} in state ${state[id]}`);
        state[id] = 2;
        const pld = hostPld[h]!;
        if (pld < p.spamPlds) {
          // BEAST lets ≤ B URLs of a PLD into each queue from admissions and ≤ B from QF re-spreads.
          spamReleased[pld]!++;
          if (passes < 0) passes = f.stats().switches + 1;
          if (spamReleased[pld]! > 2 * u.budget * passes) budgetViolations++;
        }
      }
      pushEv(now + p.fetchMs[0] + r() * (p.fetchMs[1] - p.fetchMs[0]), u);
    }
    let t = Math.min(evT.length > 0 ? evT[0]! : Infinity, f.nextWakeup() ?? Infinity, nextId < p.urls ? nextBatchAt : Infinity);
    if (t === Infinity) {
      if (f.isEmpty() && evT.length === 0) break;
      t = now + 500; // QR idle re-scan, robots answers pending
    }
    if (t <= now) {
      stalls++;
      t = now + 1;
    }
    now = t;
  }
  let notDone = 0;
  for (let i = 0; i < p.urls; i++) if (state[i] !== 3 && state[i] !== 4) notDone++;
  assert.equal(notDone, 0, 'every admitted URL is completed or dropped');
  return {
    admitted: p.urls,
    completed,
    dropped,
    releases,
    robotsFetches,
    maxRam,
    ramCap: opts.ramUrls,
    finalTime: now,
    stats: f.stats(),
    spamOrder: Uint8Array.from(spamOrder),
    hostViolations,
    ipViolations,
    concurrencyViolations,
    minHostGap,
    minIpGap,
    stalls,
    checkpoints,
    budgetViolations,
  };
}
