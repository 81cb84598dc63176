/**
 * simweb in its own process for end-to-end tests: the server-side request log must time requests
 * on an event loop the crawler cannot stall (in one process a DRUM merge would delay the server's
 * timestamps and fake politeness violations — or hide them).
 *
 * Protocol (IPC): the child sends {ready, dnsServer, httpPort, seeds}; the parent sends
 * {cmd:'report', userAgent, hostMs, ipMs} and gets {report}; {cmd:'count'} gets {count} (requests
 * served so far); {cmd:'trickle', intervalMs} sets the pause of trickled answers (acknowledged with
 * {trickle}); {cmd:'clear'} empties the request log ({cleared}); {cmd:'close'} ends the child, and so does the end of the IPC channel (the parent
 * exited).
 */
import { startSimweb, isRobotsPath, type SimwebPreset, type WebParams } from '../../src/simweb/index.js';

const preset = (process.argv[2] ?? 'tiny') as SimwebPreset;
const params = process.argv[3] ? (JSON.parse(process.argv[3]) as Partial<WebParams>) : undefined;
const web = await startSimweb({ preset, params, log: process.env.SIMWEB_LOG !== '0' });

/**
 * When can a request have reached this server, at the earliest? Its log stamp is taken when this
 * process's event loop reads it, which a loop stall (GC, being descheduled on a loaded box) delays:
 * a late stamp of the EARLIER request of a pair shortens the logged gap although the crawler spaced
 * the writes correctly (measured: client write gaps 75–120 ms logged as 4–14 ms after 70–120 ms
 * server stalls; DRUMCRAWL_TRACE_FETCH prints the fetcher's write times as WIRE lines).
 *
 * The bound is read from the loop's own ticks (a 2 ms interval; ring of 2^17 ticks ≥ 262 s, 1 MiB):
 * every loop iteration polls the sockets once and runs due timers once, so between two consecutive
 * ticks there is at least one poll. A request stamped at `a`, with τ1 the last tick ≤ a and τ0 the
 * tick before it, was not yet readable at the poll that preceded τ1 (else it would have been stamped
 * before τ1), and that poll came after τ0: it arrived after τ0. Its stamp is late by at most a − τ0
 * (≈ 2–4 ms on an idle loop, the stall plus the iteration that follows it after a stall). This
 * replaces the earlier rule (a inside a stall ≥ 12 ms, ending ≤ 2 ms before a), which missed a
 * request stamped in the busy iteration right after a stall — e.g. a robots.txt request logged
 * 14.2 ms before the next page request to its IP, whose writes were ≥ 70 ms apart.
 */
const TICKS = new Float64Array(1 << 17);
let ticks = 0;
setInterval(() => { TICKS[ticks++ & (TICKS.length - 1)] = performance.timeOrigin + performance.now(); }, 2).unref();

/** τ0 for a stamp `a` (see above), or undefined when the ring no longer covers it (then: no excuse). */
function earliestArrival(a: number): number | undefined {
  const mask = TICKS.length - 1;
  let lo = Math.max(0, ticks - TICKS.length), hi = ticks; // logical indices [lo, hi), ascending times
  if (hi - lo < 2 || TICKS[lo & mask]! > a) return undefined;
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    if (TICKS[mid & mask]! <= a) lo = mid; else hi = mid;
  }
  const oldest = Math.max(0, ticks - TICKS.length);
  return lo - 1 >= oldest ? TICKS[(lo - 1) & mask] : undefined;
}

/**
 * A gap explained by this process's own lateness: the earlier request's stamp `a` may be late by
 * a − earliestArrival(a), and that covers the gap's shortfall. Never excused: a request that
 * started while the previous one to the same key was still being answered (two at once is a
 * violation however late the stamps are), and any gap whose shortfall exceeds what the ticks allow.
 */
function serverStalled(v: { entries: { start: number; end: number }[] }, ms: number): boolean {
  const [p, c] = [v.entries[0]!, v.entries[1]!];
  if (c.start < p.end) return false;
  const deficit = ms - (c.start - p.start);
  const t0 = earliestArrival(p.start);
  return t0 !== undefined && p.start - t0 >= deficit;
}

export interface ViolationEntry { host: string; localIp: string; path: string; start: number; end: number; conn: number; status: number }

export interface SimwebReport {
  entries: number;
  pageFetches: string[]; // absolute URLs of page (non-robots) requests, in start order
  pageStarts: number[]; // their start times (ms since the epoch, server clock), same order
  /** the earliest each of them can have arrived (earliestArrival: its stamp may be late), same order */
  pageArrivals: number[];
  pageEnds: number[]; // when their answers ended (same clock), same order
  requestStarts: number[]; // start times of every request, robots.txt included, ascending
  robotsFetches: number;
  /** every robots request (host asked, server clock start and end of its answer), in log order */
  robotsRequests: { host: string; start: number; end: number }[];
  hostViolations: string[];
  ipViolations: string[];
  robotsViolations: string[];
  duplicates: string[];
  reachable: string[] | null;
  pagesPerPld: Record<string, number>;
  statusByUrl: Record<string, number>;
  /** the simulated IP each requested host was served on */
  hostIps: Record<string, string>;
  /** the log entries of each per-IP violation (diagnostics: host, path, times, connection) */
  ipViolationEntries: ViolationEntry[][];
  hostViolationEntries: ViolationEntry[][];
  /** gaps < τ explained by the server's own late stamp of the earlier request (see serverStalled) */
  excusedByServerStall: string[];
  /** the entries of each excused gap, with the limit it was judged against */
  excusedEntries: { ms: number; entries: ViolationEntry[] }[];
}

/** A violation's message, tagged with the behaviours of the hosts involved (e.g. "[reset]"). */
function explain(v: { message: string; entries: { host: string }[] }): string {
  const tags = new Set(v.entries.map((e) => web.web.hostInfo(e.host)?.behaviour ?? '?').filter((b) => b !== 'normal'));
  return tags.size > 0 ? `${v.message} [${[...tags].join(',')}]` : v.message;
}

process.on('message', (m: { cmd: string; intervalMs?: number; userAgent?: string; hostMs?: number; ipMs?: number; reachable?: boolean; slackMs?: number; hostSlackMs?: number }) => {
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
      pageArrivals: pages.map((e) => earliestArrival(e.start) ?? e.start),
      pageEnds: pages.map((e) => e.end),
      requestStarts: entries.map((e) => e.start).sort((a, b) => a - b),
      robotsFetches: entries.length - pages.length,
      robotsRequests: entries.filter((e) => isRobotsPath(e.path)).map((e) => ({ host: e.host, start: e.start, end: e.end })),
      hostViolations: hostv.map(explain),
      hostViolationEntries: hostv.map(details),
      ipViolations: ipv.map(explain),
      ipViolationEntries: ipv.map(details),
      excusedByServerStall: excused,
      excusedEntries: [
        ...ipAll.filter((v) => !ipv.includes(v)).map((v) => ({ ms: m.ipMs!, entries: details(v) })),
        ...hostAll.filter((v) => !hostv.includes(v)).map((v) => ({ ms: m.hostMs!, entries: details(v) })),
      ],
      robotsViolations: log.robotsViolations(web.web, m.userAgent!).map((v) => v.message),
      duplicates: log.duplicateFetches().map((v) => v.message),
      reachable: m.reachable === false ? null : [...web.web.reachable(web.seeds, { userAgent: m.userAgent!, respectRobots: true })],
      pagesPerPld: Object.fromEntries(log.pagesPerPld()),
      statusByUrl,
      hostIps: Object.fromEntries(entries.map((e) => [e.host, e.localIp])),
    };
    process.send!({ report });
  } else if (m.cmd === 'trickle') {
    web.setTrickleInterval(m.intervalMs!);
    process.send!({ trickle: m.intervalMs });
  } else if (m.cmd === 'underway') {
    process.send!({ underway: web.connectionStats().unloggedPaths.filter((p) => !isRobotsPath(p)).length });
  } else if (m.cmd === 'count') {
    process.send!({ count: web.log.total });
  } else if (m.cmd === 'clear') {
    web.log.clear();
    process.send!({ cleared: true });
  } else if (m.cmd === 'close') {
    void web.close().then(() => process.exit(0));
  }
});
// The parent test process is gone (it exited, or was killed): so is this web.
process.on('disconnect', () => process.exit(0));
process.send!({ ready: true, dnsServer: web.dnsServer, httpPort: web.httpPort, seeds: web.seeds });
