/**
 * One measured crawl of an adversarial simweb: the crawler (`drumcrawl crawl`, its own process,
 * flags from config.ts) against simweb over loopback, counted on the SERVER side (simweb's request
 * log): every 2xx answer to a non-robots path is a fetch; a fetch of a URL in the preset's ground
 * truth (`WebGraph.reachable`, which never holds a farm page) covers that good page; a fetch on a
 * `farm<k>.test` host is the adversary's. The clock starts at the first request the server sees,
 * so the crawler's start-up (tsx compile, DRUM open) is not counted.
 *
 * The crawl stops by itself: at 100 % good coverage, or after `timeLimitS` seconds of crawling
 * (then SIGTERM, SIGKILL after a grace period).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isRobotsPath, startSimweb, type RequestLogEntry, type SimwebPreset, type WebParams } from '../../src/simweb/index.js';
import { startCrawlChild } from '../lib/crawl-child.js';
import { ADVERSARY_UA, adversaryCrawlArgs } from './config.js';

export interface CoverageRun {
  preset: string;
  adversary: boolean;
  goodPages: number;
  /** Seconds from the first request to 50 / 90 / 100 % of the good web (null = not reached). */
  t50: number | null;
  t90: number | null;
  t100: number | null;
  /** Fetches (2xx, non-robots) until 90 % good coverage (or the end), and the farms' part of them. */
  fetchesTo90: number;
  farmFetchesTo90: number;
  adversaryShareTo90: number;
  /** The same share with robots.txt requests (any status) counted as fetches too. */
  adversaryShareWithRobotsTo90: number;
  fetches: number;
  farmFetches: number;
  goodCovered: number;
  seconds: number;
  pagesPerSecond: number;
  /** [seconds, good pages covered, fetches, farm fetches] every 250 ms. */
  timeline: Array<[number, number, number, number]>;
  /**
   * With `tailS`: the farm's fetches per second over the tail — from TAIL_FROM_S after 100 % good
   * coverage to `tailS` after it, when only the farm has work left (null without a tail or when 100 % was not
   * reached).
   */
  farmTailRate: number | null;
  /** The same from TAIL_STEADY_S on: past the farm's ramp once the pace lets it go (null likewise). */
  farmTailSteadyRate: number | null;
  exitCode: number | null;
  stderrTail: string;
}

export interface MeasureOptions {
  preset: SimwebPreset;
  /** false: the same preset with `spamFarms: 0` (same seed, the same good web). */
  adversary: boolean;
  seed?: number;
  timeLimitS: number;
  /** Extra crawler flags. */
  extra?: readonly string[];
  /** Root of the tree whose CLI runs (default: this checkout). */
  root?: string;
  /** Scratch parent directory. */
  scratch: string;
  /** Keep crawling this many seconds after 100 % good coverage (the farm alone). */
  tailS?: number;
  /** simweb parameters over the preset's (e.g. traps off, so that the good web has an end). */
  params?: Partial<WebParams>;
  log?: (s: string) => void;
}

const FARM = /(^|\.)farm\d+\.test$/;
/**
 * The farm's tail rate is counted from this many seconds after 100 % good coverage: the low-PLD
 * pace holds for 2 s after the last other PLD's URL (src/frontier/politeness/pld-pace.ts, ACTIVE_MS), and the
 * farm's URLs sent back to BEAST meanwhile take a round of the ring to come back.
 */
export const TAIL_FROM_S = 3;
/**
 * …and, separately, from this many: the farm's hosts first need their robots.txt and its URLs sent
 * back to BEAST while paced come back at the ring's next wrap, a ramp of a second or two.
 */
export const TAIL_STEADY_S = 6;

export async function measureCoverage(o: MeasureOptions): Promise<CoverageRun> {
  const params: Partial<WebParams> = { ...(o.params ?? {}), ...(o.adversary ? {} : { spamFarms: 0 }) };
  const sim = await startSimweb({ preset: o.preset, seed: o.seed ?? 1, params, logCapacity: 1000 });
  const good = new Set<string>();
  for (const u of sim.web.reachable(sim.seeds, { userAgent: ADVERSARY_UA })) {
    const x = new URL(u);
    good.add(x.hostname + x.pathname + x.search); // the server logs the host without the port
  }
  let t0 = 0, fetches = 0, farm = 0, fetchesTo90 = -1, farmTo90 = 0;
  let robots = 0, farmRobots = 0, robotsTo90 = -1, farmRobotsTo90 = 0;
  const covered = new Set<string>();
  const marks: Array<number | null> = [null, null, null];
  const need = [Math.ceil(0.5 * good.size), Math.ceil(0.9 * good.size), good.size];
  const origAdd = sim.log.add.bind(sim.log);
  sim.log.add = (e: RequestLogEntry): void => {
    origAdd(e);
    if (t0 === 0) t0 = e.start;
    const host = e.host.toLowerCase().replace(/:\d+$/, '');
    if (isRobotsPath(e.path)) {
      robots++;
      if (FARM.test(host)) farmRobots++;
      return;
    }
    if (e.status < 200 || e.status > 299) return;
    fetches++;
    if (FARM.test(host)) farm++;
    const key = host + e.path;
    if (good.has(key) && !covered.has(key)) {
      covered.add(key);
      for (let i = 0; i < 3; i++) if (marks[i] === null && covered.size >= need[i]!) marks[i] = (e.start - t0) / 1000;
    }
    if (fetchesTo90 < 0 && marks[1] !== null) {
      fetchesTo90 = fetches;
      farmTo90 = farm;
      robotsTo90 = robots;
      farmRobotsTo90 = farmRobots;
    }
  };
  const dir = fs.mkdtempSync(path.join(o.scratch, `adv-${o.preset}-`));
  const child = startCrawlChild(adversaryCrawlArgs({ seeds: sim.seeds, dnsServer: sim.dnsServer, dir, extra: o.extra }), { root: o.root });
  const timeline: CoverageRun['timeline'] = [];
  const startWall = Date.now();
  try {
    while (child.isRunning()) {
      await new Promise((r) => setTimeout(r, 250));
      const t = t0 === 0 ? 0 : (performance.timeOrigin + performance.now() - t0) / 1000;
      if (t0 !== 0) timeline.push([Math.round(t * 1000) / 1000, covered.size, fetches, farm]);
      const doneAt = marks[2] === null ? null : marks[2] + (o.tailS ?? 0);
      if ((doneAt !== null && t > doneAt) || t > o.timeLimitS + (o.tailS ?? 0) || (t0 === 0 && Date.now() - startWall > 120_000)) break;
    }
  } finally {
    await child.stop(10_000);
    await sim.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const end = timeline.length ? timeline[timeline.length - 1]![0] : 0;
  if (fetchesTo90 < 0) {
    fetchesTo90 = fetches;
    farmTo90 = farm;
    robotsTo90 = robots;
    farmRobotsTo90 = farmRobots;
  }
  const r: CoverageRun = {
    farmTailRate: o.tailS === undefined || marks[2] === null ? null : windowRate(timeline, marks[2] + TAIL_FROM_S, marks[2] + o.tailS),
    farmTailSteadyRate: o.tailS === undefined || marks[2] === null ? null : windowRate(timeline, marks[2] + TAIL_STEADY_S, marks[2] + o.tailS),
    preset: o.preset, adversary: o.adversary, goodPages: good.size, t50: marks[0]!, t90: marks[1]!, t100: marks[2]!,
    fetchesTo90, farmFetchesTo90: farmTo90, adversaryShareTo90: fetchesTo90 === 0 ? 0 : farmTo90 / fetchesTo90,
    adversaryShareWithRobotsTo90: fetchesTo90 + robotsTo90 === 0 ? 0 : (farmTo90 + farmRobotsTo90) / (fetchesTo90 + robotsTo90),
    fetches, farmFetches: farm, goodCovered: covered.size, seconds: end, pagesPerSecond: end > 0 ? fetches / end : 0,
    timeline, exitCode: child.isRunning() ? null : await child.exited,
    stderrTail: child.stderrTail().split('\n').filter(Boolean).slice(-3).join(' | ').slice(0, 600),
  };
  o.log?.(`${o.preset} ${o.adversary ? 'with' : 'without'} adversary: ${r.goodCovered}/${r.goodPages} good, t90 ${r.t90 ?? '—'} s, ` +
    `farm ${r.farmFetchesTo90}/${r.fetchesTo90} before 90 % (${(100 * r.adversaryShareWithRobotsTo90).toFixed(1)} % with robots.txt), ${r.fetches} fetches in ${end.toFixed(1)} s, load ${os.loadavg()[0]!.toFixed(1)}`);
  return r;
}

/** Farm fetches per second between seconds `from` and `to` of a timeline (null if it ends before `to`). */
export function windowRate(timeline: CoverageRun['timeline'], from: number, to: number): number | null {
  const a = timeline.find((p) => p[0] >= from);
  const b = [...timeline].reverse().find((p) => p[0] <= to);
  if (a === undefined || b === undefined || b[0] - a[0] < 0.5 || b[0] < to - 0.5) return null;
  return (b[3] - a[3]) / (b[0] - a[0]);
}
