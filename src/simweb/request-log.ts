/**
 * The server-side request log and the checkers that judge a crawler from the server's side:
 * politeness per host and per IP (the IP is the local address the client connected to, i.e. the
 * simulated server), concurrency per IP, robots compliance, duplicate fetches, pages per PLD.
 *
 * Memory bound: a ring buffer of at most `capacity` entries (default 200,000, ~60 MB at most); older
 * entries are dropped and counted in `dropped`, so serving a 10^9-page web keeps memory flat.
 */
import type { WebGraph } from './model/graph.js';

export interface RequestLogEntry {
  /** ms, performance.timeOrigin + performance.now(), when the request head was complete. */
  start: number;
  /** ms, when the last response byte was handed to the kernel (or the connection ended). */
  end: number;
  host: string;
  /** The local address the client connected to: the simulated server IP. */
  localIp: string;
  remoteIp: string;
  method: string;
  /** Path including the query. */
  path: string;
  /** HTTP status sent; 0 when none was (reset, no response, client gave up). */
  status: number;
  /** Response bytes written (head + body). */
  bytes: number;
  /** Connection number (per server), for keep-alive analysis. */
  conn: number;
  userAgent: string;
  /**
   * Request header lines the server does not act on (`name: value`, LF-separated, in the order
   * sent), '' when there are none; Host, User-Agent, Connection, Content-Length,
   * Transfer-Encoding, Accept and Accept-Encoding are left out. Lets a test see what a client sent
   * (e.g. the crawler's --header), at no cost for a request without such headers.
   */
  extraHeaders: string;
}

export interface Violation {
  check: 'minIntervalPerHost' | 'minIntervalPerIp' | 'maxConcurrentPerIp' | 'robots' | 'robotsNotFetchedFirst' | 'duplicateFetch';
  /** Host, IP or URL the violation is about. */
  key: string;
  message: string;
  entries: RequestLogEntry[];
}

/** Paths that are robots.txt fetches (including the target of the 'redirect' variant). */
export function isRobotsPath(path: string): boolean {
  return path === '/robots.txt' || path.startsWith('/robots-for/');
}

function pldOf(host: string): string {
  const i = host.lastIndexOf('.', host.lastIndexOf('.') - 1);
  return i < 0 ? host : host.slice(i + 1);
}

export class RequestLog {
  readonly capacity: number;
  private ring: (RequestLogEntry | undefined)[];
  private head = 0;
  private size = 0;
  /** Entries dropped because the ring was full. */
  dropped = 0;
  /** All entries ever added. */
  total = 0;
  enabled: boolean;

  constructor(opts: { capacity?: number; enabled?: boolean } = {}) {
    this.capacity = opts.capacity ?? 200_000;
    this.enabled = opts.enabled ?? true;
    this.ring = new Array(Math.min(this.capacity, 1024));
  }

  add(e: RequestLogEntry): void {
    if (!this.enabled) return;
    this.total++;
    if (this.size < this.capacity) {
      if (this.size === this.ring.length) this.ring.length = Math.min(this.capacity, this.ring.length * 2);
      this.ring[(this.head + this.size) % this.ring.length] = e;
      this.size++;
      return;
    }
    this.ring[this.head] = e;
    this.head = (this.head + 1) % this.ring.length;
    this.dropped++;
  }

  /** Entries in the order they completed (oldest first). */
  entries(): RequestLogEntry[] {
    const out: RequestLogEntry[] = new Array(this.size);
    for (let i = 0; i < this.size; i++) out[i] = this.ring[(this.head + i) % this.ring.length]!;
    return out;
  }

  get length(): number {
    return this.size;
  }

  clear(): void {
    this.ring = new Array(Math.min(this.capacity, 1024));
    this.head = 0;
    this.size = 0;
    this.dropped = 0;
    this.total = 0;
  }

  // ---- checkers (each also exists as a free function over any entry list) -------------------------

  minIntervalPerHost(ms: number, opts?: IntervalOptions): Violation[] {
    return minInterval(this.entries(), 'host', ms, opts);
  }
  minIntervalPerIp(ms: number, opts?: IntervalOptions): Violation[] {
    return minInterval(this.entries(), 'ip', ms, opts);
  }
  maxConcurrentPerIp(n: number): Violation[] {
    return maxConcurrentPerIp(this.entries(), n);
  }
  robotsViolations(web: WebGraph, userAgent: string, opts?: { requireRobotsFirst?: boolean }): Violation[] {
    return robotsViolations(this.entries(), web, userAgent, { requireRobotsFirst: this.dropped === 0, ...opts });
  }
  duplicateFetches(): Violation[] {
    return duplicateFetches(this.entries());
  }
  pagesPerPld(): Map<string, number> {
    return pagesPerPld(this.entries());
  }
}

export interface IntervalOptions {
  /** Measure from the previous request's 'start' (default) or its 'end' to the next one's start. */
  from?: 'start' | 'end';
  /** Also count robots.txt fetches (default true). */
  includeRobots?: boolean;
  /** Tolerance in ms subtracted from the limit (timer granularity; default 0). */
  slackMs?: number;
}

/**
 * Per host (or per IP): consecutive requests, ordered by start, must be at least `ms` apart. A
 * request that starts while the previous one is still running is always a violation.
 */
export function minInterval(entries: readonly RequestLogEntry[], by: 'host' | 'ip', ms: number, opts: IntervalOptions = {}): Violation[] {
  const from = opts.from ?? 'start';
  const slack = opts.slackMs ?? 0;
  const groups = new Map<string, RequestLogEntry[]>();
  for (const e of entries) {
    if (opts.includeRobots === false && isRobotsPath(e.path)) continue;
    const k = by === 'host' ? e.host : e.localIp;
    let g = groups.get(k);
    if (!g) groups.set(k, (g = []));
    g.push(e);
  }
  const out: Violation[] = [];
  for (const [k, g] of groups) {
    g.sort((a, b) => a.start - b.start);
    for (let i = 1; i < g.length; i++) {
      const prev = g[i - 1]!, cur = g[i]!;
      const gap = cur.start - (from === 'start' ? prev.start : prev.end);
      const overlap = cur.start < prev.end;
      if (gap < ms - slack || overlap) {
        out.push({
          check: by === 'host' ? 'minIntervalPerHost' : 'minIntervalPerIp', key: k, entries: [prev, cur],
          message: overlap ? `${k}: ${cur.path} started while ${prev.path} was in flight`
            : `${k}: ${gap.toFixed(1)} ms between ${prev.path} and ${cur.path} (< ${ms} ms)`,
        });
      }
    }
  }
  return out;
}

/** Requests in flight at once per IP (≈ connections in use) must never exceed `n`. One violation per excursion. */
export function maxConcurrentPerIp(entries: readonly RequestLogEntry[], n: number): Violation[] {
  const byIp = new Map<string, RequestLogEntry[]>();
  for (const e of entries) {
    let g = byIp.get(e.localIp);
    if (!g) byIp.set(e.localIp, (g = []));
    g.push(e);
  }
  const out: Violation[] = [];
  for (const [ip, g] of byIp) {
    // Sweep: +1 at start, -1 at end; at equal times ends come first (back-to-back is not overlap).
    const ev: Array<[number, number, RequestLogEntry]> = [];
    for (const e of g) { ev.push([e.start, 1, e]); ev.push([e.end, -1, e]); }
    ev.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    const live = new Set<RequestLogEntry>();
    let inExcursion = false;
    for (const [, d, e] of ev) {
      if (d < 0) { live.delete(e); if (live.size <= n) inExcursion = false; continue; }
      live.add(e);
      if (live.size > n && !inExcursion) {
        inExcursion = true;
        out.push({ check: 'maxConcurrentPerIp', key: ip, entries: [...live],
          message: `${ip}: ${live.size} requests in flight at once (> ${n})` });
      }
    }
  }
  return out;
}

/**
 * Robots compliance judged by the generator's own oracle (not the crawler's parser): every page
 * request must be allowed for `userAgent`; with `requireRobotsFirst`, a page request on a host must
 * come after a completed robots.txt request to that host.
 */
export function robotsViolations(entries: readonly RequestLogEntry[], web: WebGraph, userAgent: string,
  opts: { requireRobotsFirst?: boolean } = {}): Violation[] {
  const out: Violation[] = [];
  const robotsDone = new Map<string, number>();
  for (const e of entries) {
    if (e.path === '/robots.txt') {
      const t = robotsDone.get(e.host);
      if (t === undefined || e.end < t) robotsDone.set(e.host, e.end);
    }
  }
  for (const e of entries) {
    if (isRobotsPath(e.path)) continue;
    const info = web.hostInfo(e.host);
    if (!info) continue;
    if (!web.robotsAllows(info, e.path, userAgent)) {
      out.push({ check: 'robots', key: `${e.host}${e.path}`, entries: [e],
        message: `${e.host}${e.path} is disallowed for ${userAgent} (robots variant '${info.robots}')` });
    } else if (opts.requireRobotsFirst) {
      const t = robotsDone.get(e.host);
      if (t === undefined || t > e.start) {
        out.push({ check: 'robotsNotFetchedFirst', key: `${e.host}${e.path}`, entries: [e],
          message: `${e.host}${e.path} was requested before ${e.host}/robots.txt had been fetched` });
      }
    }
  }
  return out;
}

/**
 * The same URL fetched again after an answer that settles it (status 200–499 except 408 and 429).
 * Retries after 5xx, 408, 429 or no answer are legitimate and not reported. robots.txt is excluded.
 */
export function duplicateFetches(entries: readonly RequestLogEntry[]): Violation[] {
  const settled = new Map<string, RequestLogEntry>();
  const out: Violation[] = [];
  const sorted = [...entries].sort((a, b) => a.start - b.start);
  for (const e of sorted) {
    if (isRobotsPath(e.path)) continue;
    const key = `${e.host}${e.path}`;
    const first = settled.get(key);
    if (first) {
      out.push({ check: 'duplicateFetch', key, entries: [first, e], message: `${key} fetched again after status ${first.status}` });
      continue;
    }
    if (e.status >= 200 && e.status < 500 && e.status !== 408 && e.status !== 429) settled.set(key, e);
  }
  return out;
}

/** Page requests (not robots.txt) answered 2xx, per PLD (last two labels of the host). */
export function pagesPerPld(entries: readonly RequestLogEntry[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const e of entries) {
    if (isRobotsPath(e.path) || e.status < 200 || e.status > 299) continue;
    const p = pldOf(e.host);
    m.set(p, (m.get(p) ?? 0) + 1);
  }
  return m;
}
