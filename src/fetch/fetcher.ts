/**
 * The HTTP fetcher (undici, HTTP/1.1 keep-alive).
 *
 * Connections go to the IP the DNS cache chose, with the `Host` header (and SNI for https) set from
 * the URL, so DNS caching and per-IP politeness are authoritative (thesis VII.1: the IP is the
 * politeness key; a second resolution inside the HTTP stack could pick another address). One undici
 * `Pool` per (scheme, IP, port[, SNI name]) keeps connections alive; at most `maxPools` pools exist
 * (default 1024, each ≤ `connectionsPerPool` sockets, default 1): beyond that the least recently used idle pool
 * is closed. In-flight pools are never closed, so the hard bound is maxPools + requests in flight.
 *
 * The fetcher uses undici's dispatcher handler API directly (not `request()`): it gets the raw
 * response header list (case and order as received, needed for the WARC response head), avoids a
 * Readable stream per response, and can stop reading at the body cap by aborting the exchange.
 * One exchange (the handler, its limits and the FetchResult it builds) is exchange.ts; the wire gate
 * that spaces the writes per IP and host is wire-gate.ts; this file holds the options, the pools
 * and the body budget's waiters.
 *
 * Limits, each a hard bound on time or memory per fetch:
 *   connectTimeoutMs (TCP+TLS) · headersTimeoutMs (first byte: complete response head) ·
 *   bodyTimeoutMs (idle between body chunks) · totalTimeoutMs (whole exchange, catches trickle) ·
 *   maxHeaderBytes · maxBodyBytes (raw payload, then truncated: recorded, not an error) ·
 *   maxDecodedBytes (content-decoded payload; above it the response is a bomb) · the framing caps
 *   of exchange.ts (interim heads, chunk floods, transfer-codings).
 * And one bound over all fetches together: `budget` (memory-budget.ts), the bytes every body in
 * flight holds, shared with the other threads' Fetchers. A result's bytes stay counted (its `hold`)
 * until the caller gives them back with `release(result)`.
 *
 * Redirects are never followed: a 3xx comes back with `location` (absolute) for the caller to
 * queue as a new link, so it passes URL dedup, robots and politeness like any other.
 *
 * The network guard (address-guard.ts) judges the IP each request is about to connect to — the
 * DNS cache's answer or the URL's IP literal — before any socket exists: special-purpose addresses
 * are refused (CRAWL_FETCH_BLOCKED_ADDRESS) unless `allowedNetworks` covers them, and so is the
 * crawler's own status endpoint (refuseEndpoint). Interim 1xx heads, `100 Continue` included, are
 * passed over to the final response (interim.ts).
 *
 * The wire gate (wire-gate.ts) holds each request until its IP's connection slot is free and the
 * floors minIpIntervalMs / minHostIntervalMs have passed since the previous write to the IP / host:
 * politeness where the server sees it.
 *
 * Every fetch resolves (never rejects) with a FetchResult whose `outcome` is 'ok' or a stable
 * CRAWL_FETCH_* code; error-policy.ts says what to do about each.
 *
 * WARC heads. undici exposes neither the request bytes nor the response head bytes, so both are
 * reconstructed: the request head exactly as undici's HTTP/1.1 writer builds it (request line,
 * `host`, `connection: keep-alive`, then our headers in order — checked byte for byte against what
 * undici sends in test/fetch/fetcher.test.ts); the response head from the status code, reason
 * phrase and the raw header list (names' case, order and duplicates kept; optional whitespace around
 * values is not, and obs-folded lines arrive unfolded). The status line always says HTTP/1.1 (undici
 * does not report the server's minor version). `body` is the payload after transfer decoding
 * (chunked framing removed), so a `Transfer-Encoding` header is written as
 * `X-Crawler-Transfer-Encoding` to keep the record self-consistent for WARC readers.
 */

import type { Dispatcher, Pool as UndiciPool } from 'undici';
import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import { CrawlError } from '../errors.js';
import type { DnsCache } from '../dns/index.js';
import { FETCH_OUTCOMES as O, type FetchOutcomeCode } from './error-policy.js';
import { addressGuard, isOwnAddress } from './address-guard.js';
import { interimConnector } from './interim.js';
import { Exchange, Stop } from './exchange.js';
import { WireGate } from './wire-gate.js';
import { SYNC_DECODE_MAX } from './limits.js';
import type { FetchResult } from './result.js';
import type { WireShare } from './wire-share.js';
import type { MemoryBudget } from './memory-budget.js';

// undici's Pool from its own file, not from undici's index, which loads all of undici (fetch,
// WebSocket, the cache, the mocks): ~0.1 s of CPU at every start (docs/performance.md "Start-up
// and real pages"). undici declares no "exports" map, so its files are public paths.
const Pool = createRequire(import.meta.url)('undici/lib/dispatcher/pool.js') as typeof UndiciPool;
type Pool = UndiciPool;

export { classifyFetchError, isHttpResponse } from './outcome.js';
export type { FetchResult } from './result.js';
export type { IpGate } from './exchange.js';

export interface FetcherOptions {
  /** User-Agent header; must contain a contact URL (`+https://…` or `http(s)://…`). Required. */
  userAgent: string;
  /** TCP (+TLS) connect timeout, ms. Default 10 000. */
  connectTimeoutMs?: number;
  /**
   * Time until the complete response head has arrived, ms. Default 15 000. undici checks this and
   * bodyTimeoutMs on a coarse (~0.5–1 s) clock; totalTimeoutMs is precise.
   */
  headersTimeoutMs?: number;
  /** Longest gap between body chunks, ms. Default 15 000. */
  bodyTimeoutMs?: number;
  /** Whole exchange, ms. Default 60 000. */
  totalTimeoutMs?: number;
  /** Raw (transfer-decoded, still content-encoded) payload cap, bytes. Default 4 MiB. */
  maxBodyBytes?: number;
  /** Content-decoded payload cap, bytes. Default 16 MiB. */
  maxDecodedBytes?: number;
  /**
   * Bodies of at most this many content- or transfer-coded bytes are decoded on the calling
   * thread; larger ones on the libuv thread pool (limits.ts decodeContent). Default 256 KiB. The
   * crawler's main thread, which is serial, sets a few KiB (fetch-stage.ts newFetcher).
   */
  syncDecodeBytes?: number;
  /** Response head cap, bytes. Default 32 KiB. */
  maxHeaderBytes?: number;
  /**
   * Media types whose bodies are downloaded (lower case, no parameters); `null` accepts all. A
   * response without Content-Type is accepted. Default: HTML, XHTML, XML, plain text.
   */
  acceptContentTypes?: readonly string[] | null;
  /** Accept-Encoding sent. Default `gzip, deflate, br`. */
  acceptEncoding?: string;
  /** Extra request headers sent on every request (after the built-in ones). */
  headers?: Readonly<Record<string, string>>;
  /**
   * Connections per pool (per IP:port). Default 1: politeness allows about one request in flight
   * per IP (thesis VII.1), and with more, undici opens a second connection for a request issued in
   * the same tick the previous one completed, before the first socket reports itself free.
   */
  connectionsPerPool?: number;
  /**
   * Least time between the starts (socket writes) of two requests to one IP, ms: the floor τs0 as the
   * server sees it, enforced by the wire gate (see the top comment). Default 0 (no spacing; requests
   * to one IP are still written one at a time per connection slot).
   */
  minIpIntervalMs?: number;
  /** The same per host (page requests; robots.txt requests are spaced per IP only). Default 0. */
  minHostIntervalMs?: number;
  /** Pools kept at most (LRU-closed when idle). Default 1024. */
  maxPools?: number;
  /** Idle keep-alive time of a connection, ms (the server's Keep-Alive hint may shorten it). Default 30 000. */
  keepAliveTimeoutMs?: number;
  /**
   * The network guard (address-guard.ts): special-purpose addresses (loopback, private, link-local,
   * CGNAT, multicast, documentation, reserved; IPv4 and IPv6) are refused before any packet is
   * sent (CRAWL_FETCH_BLOCKED_ADDRESS). These CIDRs are allowed nevertheless. Public addresses are
   * always allowed. Default: none (only public addresses).
   */
  allowedNetworks?: readonly string[];
  /** Extra address check (must pass as well). */
  isAddressAllowed?: (ip: string) => boolean;
  /** Verify TLS certificates. Default true. */
  tlsRejectUnauthorized?: boolean;
  /** DNS cache used when a request comes without `ip`. */
  dns?: DnsCache;
  /**
   * The wire gate shared with the Fetchers of other threads (wire-share.ts): the floors and the
   * connection slots per IP are then judged over every thread's requests. Default: none.
   */
  share?: WireShare;
  /**
   * The body budget (memory-budget.ts), shared with other threads' Fetchers: every body's buffer
   * and decoded copy is counted in it, and a body the budget has no room for waits with its socket
   * paused. Each result then holds its bytes until `release(result)`. Default: none (no count).
   */
  budget?: MemoryBudget;
}

export interface FetchRequest {
  url: string;
  /** The IP to connect to (from the DNS cache). When absent, `FetcherOptions.dns` resolves the host. */
  ip?: string;
  /** Port to connect to (default: the URL's port, else 80/443). */
  port?: number;
  method?: 'GET' | 'HEAD';
  /** Extra headers for this request (after the fetcher's). */
  headers?: Readonly<Record<string, string>>;
  /** Per-request override of the body cap (e.g. robots.txt: ≥ 500 KiB). */
  maxBodyBytes?: number;
  /** Per-request override of acceptContentTypes (robots.txt: null). */
  acceptContentTypes?: readonly string[] | null;
  /** A robots.txt request: the wire gate spaces it per IP only, not per host (it still counts as a start on its host). */
  robots?: boolean;
  /**
   * Least time from the write of the previous request to this one's host (page requests) / IP, ms,
   * when longer than minHostIntervalMs / minIpIntervalMs: the delay in force for this request (a
   * robots.txt Crawl-delay, τh and τs, a backoff; src/frontier FrontierUrl.hostGapMs / ipGapMs),
   * held by the wire gate against the actual writes. Default 0.
   */
  hostGapMs?: number;
  ipGapMs?: number;
}

/** How often exchanges waiting for the body budget try again (ms): other threads give budget back unseen. */
const BUDGET_POLL_MS = 5;
const DEFAULT_ACCEPT_TYPES: readonly string[] = Object.freeze(['text/html', 'application/xhtml+xml', 'application/xml', 'text/xml', 'text/plain']);
const EMPTY = new Uint8Array(0);

function posOpt(name: string, v: number | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  if (!Number.isFinite(v) || v <= 0) throw new CrawlError('CRAWL_FETCH_BAD_OPTION', `options.${name} must be a positive number`);
  return v;
}

function nonNegOpt(name: string, v: number | undefined): number {
  if (v === undefined) return 0;
  if (!Number.isFinite(v) || v < 0) throw new CrawlError('CRAWL_FETCH_BAD_OPTION', `options.${name} must be a non-negative number`);
  return v;
}

interface PoolEntry { pool: Pool; key: string }


export class Fetcher {
  readonly userAgent: string;
  readonly maxDecodedBytes: number;
  readonly syncDecodeBytes: number;
  private readonly connectTimeout: number;
  private readonly headersTimeout: number;
  private readonly bodyTimeout: number;
  private readonly totalTimeout: number;
  private readonly maxBody: number;
  private readonly maxHeader: number;
  private readonly accept: ReadonlySet<string> | null;
  private readonly baseHeaders: string[];
  private readonly baseHeadText: string;
  private readonly connections: number;
  private readonly maxPools: number;
  private readonly keepAlive: number;
  /** null when `ip` may be connected to, else why not (network guard + isAddressAllowed). */
  private readonly addressRefusal: (ip: string) => string | null;
  /** Endpoints refused whatever the guard says (the crawler's own status server): port → bound host. */
  private readonly ownEndpoints = new Map<number, string>();
  private readonly tlsReject: boolean;
  private readonly dns: DnsCache | undefined;
  readonly budget: MemoryBudget | null;
  /** exchanges waiting for the budget, in order: each returns true when done waiting */
  private budgetWaiters: Array<() => boolean> = [];
  private budgetTimer: NodeJS.Timeout | null = null;
  /** LRU of pools: Map iteration order is insertion order; a use re-inserts at the end. */
  private readonly pools = new Map<string, PoolEntry>();
  private readonly live = new Set<Exchange>();
  /** the requests' spacing per IP and host where the server sees it (wire-gate.ts) */
  private readonly wire: WireGate;
  private closed = false;
  private readonly counters = { fetches: 0, poolsCreated: 0, poolsEvicted: 0, bytes: 0 };

  constructor(opts: FetcherOptions) {
    if (opts === undefined || typeof opts.userAgent !== 'string' || !/https?:\/\/\S+/.test(opts.userAgent)) {
      throw new CrawlError('CRAWL_FETCH_BAD_OPTION', 'options.userAgent must contain a contact URL, e.g. "drumcrawl/0.1 (+https://example.org/bot)"');
    }
    if (/[\r\n]/.test(opts.userAgent)) throw new CrawlError('CRAWL_FETCH_BAD_OPTION', 'options.userAgent must be one line');
    this.userAgent = opts.userAgent;
    this.connectTimeout = posOpt('connectTimeoutMs', opts.connectTimeoutMs, 10_000);
    this.headersTimeout = posOpt('headersTimeoutMs', opts.headersTimeoutMs, 15_000);
    this.bodyTimeout = posOpt('bodyTimeoutMs', opts.bodyTimeoutMs, 15_000);
    this.totalTimeout = posOpt('totalTimeoutMs', opts.totalTimeoutMs, 60_000);
    this.maxBody = posOpt('maxBodyBytes', opts.maxBodyBytes, 4 * 1024 * 1024);
    this.maxDecodedBytes = posOpt('maxDecodedBytes', opts.maxDecodedBytes, 16 * 1024 * 1024);
    this.syncDecodeBytes = opts.syncDecodeBytes === undefined ? SYNC_DECODE_MAX : nonNegOpt('syncDecodeBytes', opts.syncDecodeBytes);
    this.maxHeader = posOpt('maxHeaderBytes', opts.maxHeaderBytes, 32 * 1024);
    this.connections = posOpt('connectionsPerPool', opts.connectionsPerPool, 1);
    this.maxPools = posOpt('maxPools', opts.maxPools, 1024);
    this.keepAlive = posOpt('keepAliveTimeoutMs', opts.keepAliveTimeoutMs, 30_000);
    const ipGap = nonNegOpt('minIpIntervalMs', opts.minIpIntervalMs);
    const hostGap = nonNegOpt('minHostIntervalMs', opts.minHostIntervalMs);
    const acc = opts.acceptContentTypes === undefined ? DEFAULT_ACCEPT_TYPES : opts.acceptContentTypes;
    this.accept = acc === null ? null : new Set(acc.map((t) => t.toLowerCase()));
    let guard: (ip: string) => string | null;
    try {
      guard = addressGuard(opts.allowedNetworks ?? []);
    } catch (e) {
      throw new CrawlError('CRAWL_FETCH_BAD_OPTION', `options.${(e as Error).message}`);
    }
    const extra = opts.isAddressAllowed ?? null;
    this.addressRefusal = extra === null ? guard : (ip) => guard(ip) ?? (extra(ip) ? null : 'refused by isAddressAllowed');
    this.tlsReject = opts.tlsRejectUnauthorized ?? true;
    this.dns = opts.dns;
    this.wire = new WireGate(this.connections, ipGap, hostGap, opts.share ?? null);
    this.budget = opts.budget ?? null;
    const h: string[] = ['user-agent', this.userAgent, 'accept', 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
      'accept-encoding', opts.acceptEncoding ?? 'gzip, deflate, br'];
    for (const [k, v] of Object.entries(opts.headers ?? {})) h.push(k, v);
    this.baseHeaders = h;
    let t = '';
    for (let i = 0; i < h.length; i += 2) t += `${h[i]}: ${h[i + 1]}\r\n`;
    this.baseHeadText = t;
  }

  /**
   * Change the wire-gate floors while fetches run (a live `POST /config` of the delay floors).
   * A longer floor holds the next request of every IP/host already waiting; a shorter one
   * releases waiting requests at once (their timers are re-armed from the new floor). Hosts are
   * tracked from the moment a host floor is set, so raising it from 0 spaces requests from the
   * next one on.
   */
  setIntervals(opts: { minIpIntervalMs?: number; minHostIntervalMs?: number }): void {
    if (opts.minIpIntervalMs !== undefined) this.wire.ipGap = nonNegOpt('minIpIntervalMs', opts.minIpIntervalMs);
    if (opts.minHostIntervalMs !== undefined) this.wire.hostGap = nonNegOpt('minHostIntervalMs', opts.minHostIntervalMs);
    this.wire.rearm();
  }

  /**
   * Never connect to `port` on `host` (the crawler's own status server), even where the guard
   * allows the address. A wildcard host (0.0.0.0, ::) refuses the port on every loopback address
   * and on every address of this machine's interfaces.
   */
  refuseEndpoint(host: string, port: number): void {
    this.ownEndpoints.set(port, host);
  }

  /** Why a connection to ip:port would be refused, or null when it may be made. */
  refusal(ip: string, port: number): string | null {
    const own = this.ownEndpoints.get(port);
    if (own !== undefined && isOwnAddress(ip, own)) return `the crawler's own status server ${own}:${port}`;
    return this.addressRefusal(ip);
  }

  /** Fetch one URL. Never rejects. */
  async fetch(req: FetchRequest): Promise<FetchResult> {
    const startedAt = Date.now();
    const t0 = performance.now();
    this.counters.fetches++;
    const result: FetchResult = {
      url: req.url, ip: req.ip ?? '', outcome: O.ERROR, requestHead: EMPTY, body: EMPTY, decoded: EMPTY, truncated: false,
      startedAt, timings: { totalMs: 0 },
    };
    const fail = (outcome: FetchOutcomeCode, errorCode?: string): FetchResult => {
      result.outcome = outcome;
      if (errorCode !== undefined) result.errorCode = errorCode;
      result.timings = { totalMs: performance.now() - t0 };
      return result;
    };
    if (this.closed) return fail(O.ABORTED, 'closed');

    let u: URL;
    try { u = new URL(req.url); } catch { return fail(O.BAD_URL); }
    const https = u.protocol === 'https:';
    if (!https && u.protocol !== 'http:') return fail(O.BAD_URL);
    if (u.username !== '' || u.password !== '') return fail(O.BAD_URL, 'credentials in URL');
    const hostname = u.hostname.charCodeAt(0) === 0x5b ? u.hostname.slice(1, -1) : u.hostname;

    let ip = req.ip;
    if (ip === undefined || ip === '') {
      if (this.dns === undefined) return fail(O.DNS, 'no ip and no dns');
      const d = await this.dns.resolve(hostname);
      if ('error' in d) return fail(O.DNS, d.error);
      ip = d.ip;
      result.ip = ip;
    }
    const fam = isIP(ip);
    if (fam === 0) return fail(O.BAD_URL, 'ip is not an IP literal');
    const port = req.port ?? (u.port !== '' ? Number(u.port) : https ? 443 : 80);
    // The guard sees the address the connection goes to, whatever name or literal led here.
    const refused = this.refusal(ip, port);
    if (refused !== null) return fail(O.BLOCKED_ADDRESS, refused);

    const path = u.pathname + u.search;
    // Host header: as in the URL (the URL's own port, default ports omitted by the WHATWG serializer).
    const hostHeader = u.host;
    const method = req.method ?? 'GET';
    let headers = this.baseHeaders;
    let headText = this.baseHeadText;
    if (req.headers !== undefined) {
      headers = headers.slice();
      for (const [k, v] of Object.entries(req.headers)) { headers.push(k, v); headText += `${k}: ${v}\r\n`; }
    }
    result.requestHead = Buffer.from(`${method} ${path} HTTP/1.1\r\nhost: ${hostHeader}\r\nconnection: keep-alive\r\n${headText}\r\n`, 'latin1');

    const pool = this.poolFor(https, ip, fam, port, https ? hostname : '');
    const accept = req.acceptContentTypes === undefined ? this.accept
      : req.acceptContentTypes === null ? null : new Set(req.acceptContentTypes.map((t) => t.toLowerCase()));
    const cap = req.maxBodyBytes ?? this.maxBody;
    return new Promise<FetchResult>((resolve) => {
      const ex = new Exchange(this, result, t0, cap, accept, this.totalTimeout, this.budget, (r) => {
        this.counters.bytes += r.body.length;
        resolve(r);
      });
      this.live.add(ex);
      ex.hostKey = hostname.toLowerCase();
      ex.robots = req.robots === true;
      ex.hostGap = req.hostGapMs ?? 0;
      ex.ipGap = req.ipGapMs ?? 0;
      this.wire.enqueue(ip!, ex, pool, {
        origin: undefined, path, method, headers: ['host', hostHeader, ...headers],
        headersTimeout: this.headersTimeout, bodyTimeout: this.bodyTimeout, blocking: false,
      } as Dispatcher.DispatchOptions);
    });
  }

  /** @internal called by an Exchange when undici is about to write its request. */
  exchangeWritten(ex: Exchange, now: number): void {
    if (ex.gate !== null) this.wire.markStart(ex, now);
  }

  /**
   * @internal called by an Exchange when it settles; `clean`: its response arrived whole (else it
   * was cut: a timeout, the body cap, an error, a close).
   */
  exchangeEnded(ex: Exchange, clean = true): void {
    this.wire.ended(ex, clean, !this.closed);
  }

  /** @internal called by an Exchange when its result is made (after decoding): it is no longer in flight. */
  exchangeFinished(ex: Exchange): void {
    this.live.delete(ex);
  }

  /**
   * @internal An exchange waits for the body budget: `retry` is called (oldest first, with the other
   * waiters) whenever budget may have come back — at once when this Fetcher releases a result, and
   * every BUDGET_POLL_MS (other threads' releases are not seen) — until it returns true.
   */
  waitForBudget(retry: () => boolean): void {
    this.budgetWaiters.push(retry);
    this.armBudgetTimer();
  }

  private armBudgetTimer(): void {
    if (this.budgetTimer !== null || this.budgetWaiters.length === 0) return;
    this.budgetTimer = setTimeout(() => {
      this.budgetTimer = null;
      this.retryBudgetWaiters();
    }, BUDGET_POLL_MS);
  }

  private retryBudgetWaiters(): void {
    const waiters = this.budgetWaiters;
    this.budgetWaiters = [];
    // Each tries in turn, oldest first; one that cannot go yet does not hold back the ones behind
    // it (a large body waiting for large room must not stop the small pages, which need little).
    const still = waiters.filter((retry) => !retry());
    this.budgetWaiters = still.concat(this.budgetWaiters);
    this.armBudgetTimer();
  }

  /** Give a result's bytes back to the budget (the caller is done with its body); idempotent. */
  release(r: FetchResult): void {
    if (r.hold === undefined || this.budget === null) return;
    this.budget.free(r.hold);
    r.hold = undefined;
    if (this.budgetWaiters.length > 0) this.retryBudgetWaiters();
  }

  private poolFor(https: boolean, ip: string, fam: number, port: number, sni: string): Pool {
    const key = `${https ? 's' : 'h'}${ip}|${port}|${sni}`;
    const e = this.pools.get(key);
    if (e !== undefined) {
      // Move to the MRU end.
      this.pools.delete(key);
      this.pools.set(key, e);
      return e.pool;
    }
    const origin = `${https ? 'https' : 'http'}://${fam === 6 ? `[${ip}]` : ip}:${port}`;
    const pool = new Pool(origin, {
      connections: this.connections,
      pipelining: 1,
      keepAliveTimeout: this.keepAlive,
      keepAliveMaxTimeout: this.keepAlive,
      headersTimeout: this.headersTimeout,
      bodyTimeout: this.bodyTimeout,
      maxHeaderSize: this.maxHeader,
      // undici's connector, wrapped so that an interim `100 Continue` is accepted (interim.ts).
      connect: interimConnector(https
        ? { timeout: this.connectTimeout, servername: isIP(sni) === 0 ? sni : undefined, rejectUnauthorized: this.tlsReject }
        : { timeout: this.connectTimeout }),
    });
    this.counters.poolsCreated++;
    this.pools.set(key, { pool, key });
    if (this.pools.size > this.maxPools) this.evictIdle();
    return pool;
  }

  private evictIdle(): void {
    for (const [k, e] of this.pools) {
      if (this.pools.size <= this.maxPools) return;
      const s = e.pool.stats;
      if (s.running === 0 && s.pending === 0 && s.queued === 0) {
        this.pools.delete(k);
        this.counters.poolsEvicted++;
        e.pool.close().catch(() => undefined);
      }
    }
  }

  /** Pool and socket counts (for tests and stats). */
  stats(): { pools: number; connected: number; running: number; pending: number; inFlight: number; gated: number; gates: number; fetches: number; poolsCreated: number; poolsEvicted: number; bytes: number } {
    let connected = 0, running = 0, pending = 0;
    const { gated, gates } = this.wire.stats();
    for (const e of this.pools.values()) {
      const s = e.pool.stats;
      connected += s.connected;
      running += s.running;
      pending += s.pending;
    }
    return { pools: this.pools.size, connected, running, pending, inFlight: this.live.size, gated, gates, ...this.counters };
  }

  /**
   * Abort every exchange in flight or waiting at a wire gate (outcome CRAWL_FETCH_ABORTED, now);
   * the fetcher stays open. A crawl's stop uses it so that no slow server holds the stop back.
   */
  abortInFlight(): number {
    const all = [...this.live];
    for (const ex of all) ex.interrupt(new Stop('closed'));
    this.retryBudgetWaiters();
    return all.length;
  }

  /** Abort everything in flight (outcome CRAWL_FETCH_ABORTED), close all sockets. */
  async close(): Promise<void> {
    this.closed = true;
    this.wire.stopTimers();
    for (const ex of [...this.live]) ex.interrupt(new Stop('closed'));
    // answer the exchanges that waited for the budget (their interrupt set them to give up)
    this.retryBudgetWaiters();
    if (this.budgetTimer !== null) clearTimeout(this.budgetTimer);
    this.budgetTimer = null;
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((e) => e.pool.destroy().catch(() => undefined)));
  }
}
