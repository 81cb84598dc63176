/**
 * simweb in its own process for end-to-end tests: the server-side request log must time requests
 * on an event loop the crawler cannot stall (in one process a DRUM merge would delay the server's
 * timestamps and fake politeness violations — or hide them).
 *
 * Protocol (IPC): the child sends {ready, dnsServer, httpPort, seeds}; the parent sends
 * {cmd:'report', userAgent, hostMs, ipMs} and gets {report}; {cmd:'count'} gets {count} (requests
 * served so far); {cmd:'close'} ends the child.
 */
import { startSimweb, isRobotsPath, type SimwebPreset, type WebParams } from '../../src/simweb/index.js';

const preset = (process.argv[2] ?? 'tiny') as SimwebPreset;
const params = process.argv[3] ? (JSON.parse(process.argv[3]) as Partial<WebParams>) : undefined;
const web = await startSimweb({ preset, params, log: process.env.SIMWEB_LOG !== '0' });

/**
 * This process's own event-loop stalls (GC, being descheduled on a loaded box): while the server's
 * loop is stalled it cannot timestamp requests, so requests that arrived during a stall are logged
 * together at its end — a gap the crawler did not make. Sampled every 2 ms; stalls ≥ 10 ms are kept
 * (the last 4,096: RAM bound).
 */
const stalls: Array<[number, number]> = [];
let lastTick = performance.timeOrigin + performance.now();
setInterval(() => {
  const now = performance.timeOrigin + performance.now();
  if (now - lastTick >= 12) {
    stalls.push([lastTick, now]);
    if (stalls.length > 4096) stalls.shift();
  }
  lastTick = now;
}, 2).unref();

/**
 * A violation explained by a stall of this process: the EARLIER request was timestamped during a
 * loop iteration that took at least the gap's shortfall (a late stamp of the earlier request is the
 * only way a stall shortens a logged gap; requests that arrived during the stall are all stamped
 * at its end, which is the same case).
 */
function serverStalled(v: { entries: { start: number }[] }, ms: number): boolean {
  const [a, b] = [v.entries[0]!.start, v.entries[1]!.start];
  const deficit = ms - (b - a);
  return stalls.some(([from, to]) => to - from >= deficit && a >= from && a <= to + 2);
}

export interface ViolationEntry { host: string; localIp: string; path: string; start: number; end: number; conn: number; status: number }

export interface SimwebReport {
  entries: number;
  pageFetches: string[]; // absolute URLs of page (non-robots) requests, in start order
  pageStarts: number[]; // their start times (ms since the epoch, server clock), same order
  robotsFetches: number;
  hostViolations: string[];
  ipViolations: string[];
  robotsViolations: string[];
  duplicates: string[];
  reachable: string[] | null;
  pagesPerPld: Record<string, number>;
  statusByUrl: Record<string, number>;
  /** the log entries of each per-IP violation (diagnostics: host, path, times, connection) */
  ipViolationEntries: ViolationEntry[][];
  hostViolationEntries: ViolationEntry[][];
  /** gaps < τ whose later request was logged right after a stall of this (server) process */
  excusedByServerStall: string[];
}

/** A violation's message, tagged with the behaviours of the hosts involved (e.g. "[reset]"). */
function explain(v: { message: string; entries: { host: string }[] }): string {
  const tags = new Set(v.entries.map((e) => web.web.hostInfo(e.host)?.behaviour ?? '?').filter((b) => b !== 'normal'));
  return tags.size > 0 ? `${v.message} [${[...tags].join(',')}]` : v.message;
}

process.on('message', (m: { cmd: string; userAgent?: string; hostMs?: number; ipMs?: number; reachable?: boolean; slackMs?: number; hostSlackMs?: number }) => {
  if (m.cmd === 'report') {
    const log = web.log;
    const entries = log.entries();
    // Robots requests: /robots.txt and the target of simweb's robots redirect (/robots-for/…).
    const pages = entries.filter((e) => !isRobotsPath(e.path)).sort((a, b) => a.start - b.start);
    const statusByUrl: Record<string, number> = {};
    for (const e of pages) statusByUrl[`http://${e.host}:${web.httpPort}${e.path}`] = e.status;
    const ipAll = log.minIntervalPerIp(m.ipMs!, { slackMs: m.slackMs ?? 0 });
    const hostAll = log.minIntervalPerHost(m.hostMs!, { includeRobots: false, slackMs: m.hostSlackMs ?? m.slackMs ?? 0 });
    const ipv = ipAll.filter((v) => !serverStalled(v, m.ipMs!));
    const hostv = hostAll.filter((v) => !serverStalled(v, m.hostMs!));
    const excused = [...ipAll.filter((v) => !ipv.includes(v)), ...hostAll.filter((v) => !hostv.includes(v))].map((v) => `${v.message} (server stalled)`);
    const details = (v: { entries: ViolationEntry[] }) => v.entries.map(({ host, localIp, path, start, end, conn, status }) => ({ host, localIp, path, start, end, conn, status }));
    const report: SimwebReport = {
      entries: entries.length,
      pageFetches: pages.map((e) => `http://${e.host}:${web.httpPort}${e.path}`),
      pageStarts: pages.map((e) => e.start),
      robotsFetches: entries.length - pages.length,
      hostViolations: hostv.map(explain),
      hostViolationEntries: hostv.map(details),
      ipViolations: ipv.map(explain),
      ipViolationEntries: ipv.map(details),
      excusedByServerStall: excused,
      robotsViolations: log.robotsViolations(web.web, m.userAgent!).map((v) => v.message),
      duplicates: log.duplicateFetches().map((v) => v.message),
      reachable: m.reachable === false ? null : [...web.web.reachable(web.seeds, { userAgent: m.userAgent!, respectRobots: true })],
      pagesPerPld: Object.fromEntries(log.pagesPerPld()),
      statusByUrl,
    };
    process.send!({ report });
  } else if (m.cmd === 'count') {
    process.send!({ count: web.log.total });
  } else if (m.cmd === 'close') {
    void web.close().then(() => process.exit(0));
  }
});
process.send!({ ready: true, dnsServer: web.dnsServer, httpPort: web.httpPort, seeds: web.seeds });
