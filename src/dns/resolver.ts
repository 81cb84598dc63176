/**
 * DNS cache in front of c-ares (node:dns/promises `Resolver`), thesis V (caching) and VII.1: the IP a host
 * resolves to is the key of the per-IP politeness heap, so one answer per host is chosen and kept
 * stable while the host's records still contain it.
 *
 * - Positive answers are cached for their TTL, clamped to [minTtlMs, maxTtlMs].
 * - Negative answers are cached too: NXDOMAIN / NODATA / bad name for `negativeTtlMs`, transient
 *   failures (SERVFAIL, timeout, refused, server unreachable) for `failureTtlMs`.
 * - Concurrent lookups of one host share one query; at most `concurrency` queries are in flight,
 *   the rest wait in FIFO order (that wait list is bounded by the caller's own in-flight bound).
 * - Per-query timeout and tries are c-ares' own (`timeout` per try, `tries`).
 * - A host with no A record (NOERROR, no data) is asked for AAAA: an IPv6-only host gets its IPv6
 *   address (the politeness layer keys IPv6 servers by their /64, src/frontier/politeness/ip-key.ts).
 *
 * Memory bound: at most `maxEntries` cached hosts (default 100 000; the crawl sizes it from --ram,
 * src/budget/ram-budget.ts, at 256 B an entry); when full the least recently used entry is evicted
 * (the Map's insertion order, a hit re-inserting its entry): the hosts with many URLs, which come
 * back to the host table again and again, stay (thesis ch. V: a bounded cache in front of keys that
 * repeat with skew).
 */

import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import { CrawlError } from '../errors.js';
import type { DnsFileEntry } from './dns-file.js';

/** Stable outcome codes of a lookup. */
export const DNS_CODES = {
  NXDOMAIN: 'CRAWL_DNS_NXDOMAIN',
  NODATA: 'CRAWL_DNS_NODATA',
  SERVFAIL: 'CRAWL_DNS_SERVFAIL',
  TIMEOUT: 'CRAWL_DNS_TIMEOUT',
  REFUSED: 'CRAWL_DNS_REFUSED',
  UNREACHABLE: 'CRAWL_DNS_UNREACHABLE',
  BAD_NAME: 'CRAWL_DNS_BAD_NAME',
  CLOSED: 'CRAWL_DNS_CLOSED',
  ERROR: 'CRAWL_DNS_ERROR',
} as const;
export type DnsErrorCode = (typeof DNS_CODES)[keyof typeof DNS_CODES];

export interface DnsCacheOptions {
  /** DNS servers, `host` or `host:port` (e.g. simweb's `127.0.0.1:5353`). Default: the system's. */
  servers?: string[];
  /** Shortest time a positive answer is kept, ms (default 60 000). */
  minTtlMs?: number;
  /** Longest time a positive answer is kept, ms (default 21 600 000 = 6 h). */
  maxTtlMs?: number;
  /** How long NXDOMAIN / NODATA / bad-name answers are kept, ms (default 3 600 000 = 1 h). */
  negativeTtlMs?: number;
  /** How long transient failures (SERVFAIL, timeout, refused, unreachable) are kept, ms (default 60 000). */
  failureTtlMs?: number;
  /** Queries in flight at most (default 64). */
  concurrency?: number;
  /** c-ares timeout per try, ms (default 2 000). */
  timeoutMs?: number;
  /** c-ares tries per query (default 2). */
  tries?: number;
  /**
   * Address family asked for: 4 (A records, then AAAA when the name has no A record; default) or
   * 6 (AAAA only).
   */
  family?: 4 | 6;
  /** Cached hosts at most (default 100 000). */
  maxEntries?: number;
  /** Clock (ms), injectable for tests. Default `Date.now`. */
  now?: () => number;
  /**
   * Called with every answer a DNS server gave (not with cache hits, shared or failed queries):
   * the crawler archives these as `dns:` WARC records (src/store/dns-record.ts). `date` is when the
   * query was sent, `server` the first server configured (c-ares asks it first).
   */
  onAnswer?: (a: { host: string; date: Date; server: string; records: readonly { address: string; ttl: number }[] }) => void;
}

export interface DnsAnswer {
  ip: string;
  /** Remaining time this answer is cached for, ms. */
  ttlMs: number;
  /** All addresses of the answer (the chosen `ip` is one of them). */
  addresses: readonly string[];
  /** True when served from the cache without a query. */
  cached: boolean;
}
export interface DnsFailure {
  error: DnsErrorCode;
  /** Remaining negative-cache time, ms. */
  ttlMs: number;
  cached: boolean;
}
export type DnsResult = DnsAnswer | DnsFailure;

export interface DnsCacheStats {
  lookups: number;
  hits: number;
  negativeHits: number;
  /** Lookups that joined a query already in flight for the same host. */
  joined: number;
  queries: number;
  errors: Record<string, number>;
  /** (hits + negativeHits + joined) / lookups. */
  hitRate: number;
  /** Mean / max query latency, ms (network queries only). */
  meanLatencyMs: number;
  maxLatencyMs: number;
  entries: number;
  inFlight: number;
  /** Most queries ever in flight at once (≤ concurrency). */
  maxInFlight: number;
  waiting: number;
}

interface Entry {
  expiresAt: number;
  ip: string | null;
  addresses: readonly string[];
  error: DnsErrorCode | null;
}

function positiveInt(name: string, v: number | undefined, dflt: number, min = 1): number {
  if (v === undefined) return dflt;
  if (!Number.isFinite(v) || v < min) {
    throw new CrawlError('CRAWL_DNS_BAD_OPTION', `options.${name} must be a number ≥ ${min}`);
  }
  return v;
}

function mapError(err: unknown): DnsErrorCode {
  const code = (err as { code?: string } | null)?.code;
  switch (code) {
    case 'ENOTFOUND': return DNS_CODES.NXDOMAIN;
    case 'ENODATA': return DNS_CODES.NODATA;
    case 'ESERVFAIL': return DNS_CODES.SERVFAIL;
    case 'ETIMEOUT': return DNS_CODES.TIMEOUT;
    case 'EREFUSED': return DNS_CODES.REFUSED;
    case 'ECONNREFUSED': return DNS_CODES.UNREACHABLE;
    case 'EBADNAME': case 'EFORMERR': return DNS_CODES.BAD_NAME;
    case 'ECANCELLED': case 'EDESTRUCTION': return DNS_CODES.CLOSED;
    default: return DNS_CODES.ERROR;
  }
}

/** Host-name syntax check before asking anyone (RFC 1035 lengths, no empty labels). */
function plausibleHost(h: string): boolean {
  if (h.length === 0 || h.length > 253) return false;
  let label = 0;
  for (let i = 0; i < h.length; i++) {
    const c = h.charCodeAt(i);
    if (c === 0x2e) { if (label === 0) return false; label = 0; continue; }
    if (!((c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x5f || (c >= 0x41 && c <= 0x5a))) return false;
    if (++label > 63) return false;
  }
  return true;
}

export class DnsCache {
  private readonly resolver: Resolver;
  private readonly minTtl: number;
  private readonly maxTtl: number;
  private readonly negTtl: number;
  private readonly failTtl: number;
  private readonly concurrency: number;
  private readonly family: 4 | 6;
  private readonly maxEntries: number;
  private readonly now: () => number;
  private readonly onAnswer: DnsCacheOptions['onAnswer'];
  private readonly cache = new Map<string, Entry>();
  private readonly inflight = new Map<string, Promise<DnsResult>>();
  private readonly waiters: Array<() => void> = [];
  private active = 0;
  private closed = false;
  private readonly st = { lookups: 0, hits: 0, negativeHits: 0, joined: 0, queries: 0, latencySum: 0, latencyMax: 0, maxInFlight: 0 };
  private readonly errors: Record<string, number> = {};

  constructor(opts: DnsCacheOptions = {}) {
    const timeout = positiveInt('timeoutMs', opts.timeoutMs, 2000);
    const tries = positiveInt('tries', opts.tries, 2);
    this.resolver = new Resolver({ timeout, tries });
    if (opts.servers !== undefined && opts.servers.length > 0) this.resolver.setServers(opts.servers);
    this.minTtl = positiveInt('minTtlMs', opts.minTtlMs, 60_000, 0);
    this.maxTtl = positiveInt('maxTtlMs', opts.maxTtlMs, 21_600_000, 0);
    if (this.maxTtl < this.minTtl) throw new CrawlError('CRAWL_DNS_BAD_OPTION', 'options.maxTtlMs must be ≥ options.minTtlMs');
    this.negTtl = positiveInt('negativeTtlMs', opts.negativeTtlMs, 3_600_000, 0);
    this.failTtl = positiveInt('failureTtlMs', opts.failureTtlMs, 60_000, 0);
    this.concurrency = positiveInt('concurrency', opts.concurrency, 64);
    this.maxEntries = positiveInt('maxEntries', opts.maxEntries, 100_000);
    this.family = opts.family ?? 4;
    if (this.family !== 4 && this.family !== 6) throw new CrawlError('CRAWL_DNS_BAD_OPTION', 'options.family must be 4 or 6');
    this.now = opts.now ?? Date.now;
    this.onAnswer = opts.onAnswer;
  }

  /** Resolve `host` (lower-case name or IP literal). Never rejects. */
  resolve(host: string): Promise<DnsResult> {
    this.st.lookups++;
    if (this.closed) return Promise.resolve({ error: DNS_CODES.CLOSED, ttlMs: 0, cached: false });
    let h = host;
    if (h.charCodeAt(0) === 0x5b && h.endsWith(']')) h = h.slice(1, -1);
    if (isIP(h) !== 0) {
      this.st.hits++;
      return Promise.resolve({ ip: h, ttlMs: this.maxTtl, addresses: [h], cached: true });
    }
    h = h.toLowerCase();
    if (h.endsWith('.')) h = h.slice(0, -1);
    if (h === 'localhost' || h.endsWith('.localhost')) {
      // RFC 6761 §6.3: these names are the loopback address, answered without asking a server (so
      // the fetcher's network guard sees the address they stand for and refuses it unless allowed).
      this.st.hits++;
      const ip = this.family === 6 ? '::1' : '127.0.0.1';
      return Promise.resolve({ ip, ttlMs: this.maxTtl, addresses: [ip], cached: true });
    }
    const now = this.now();
    const e = this.cache.get(h);
    if (e !== undefined && e.expiresAt > now) {
      // Least recently used first out: a hit moves the entry to the end of the Map's order.
      this.cache.delete(h);
      this.cache.set(h, e);
      if (e.ip !== null) {
        this.st.hits++;
        return Promise.resolve({ ip: e.ip, ttlMs: e.expiresAt - now, addresses: e.addresses, cached: true });
      }
      this.st.negativeHits++;
      return Promise.resolve({ error: e.error!, ttlMs: e.expiresAt - now, cached: true });
    }
    const pending = this.inflight.get(h);
    if (pending !== undefined) {
      this.st.joined++;
      return pending;
    }
    const p = this.query(h, e);
    this.inflight.set(h, p);
    return p;
  }

  /** Drop a host's cached answer (e.g. after connection failures suggest the records changed). */
  forget(host: string): void {
    this.cache.delete(host.toLowerCase());
  }

  private async query(h: string, stale: Entry | undefined): Promise<DnsResult> {
    try {
      if (!plausibleHost(h)) return this.store(h, stale, null, DNS_CODES.BAD_NAME);
      // Slot hand-off: a finishing query passes its slot to the first waiter (active unchanged),
      // so the bound holds even against lookups arriving between wake-up and resumption.
      if (this.active >= this.concurrency) await new Promise<void>((r) => this.waiters.push(r));
      else this.active++;
      if (this.closed) return { error: DNS_CODES.CLOSED, ttlMs: 0, cached: false };
      if (this.active > this.st.maxInFlight) this.st.maxInFlight = this.active;
      const t0 = performance.now();
      const sentAt = new Date();
      let records: Array<{ address: string; ttl: number }> | null = null;
      let code: DnsErrorCode | null = null;
      try {
        ({ records, code } = await this.ask(h));
      } finally {
        const lat = performance.now() - t0;
        this.st.latencySum += lat;
        if (lat > this.st.latencyMax) this.st.latencyMax = lat;
        const next = this.waiters.shift();
        if (next !== undefined) next();
        else this.active--;
      }
      if (code === DNS_CODES.CLOSED || this.closed) return { error: DNS_CODES.CLOSED, ttlMs: 0, cached: false };
      if (code === null && records !== null && this.onAnswer !== undefined) {
        this.onAnswer({ host: h, date: sentAt, server: this.resolver.getServers()[0] ?? '', records });
      }
      return this.store(h, stale, code === null ? records : null, code);
    } finally {
      this.inflight.delete(h);
    }
  }

  /** The A query (then AAAA when the name has no A record), or the AAAA query for family 6. */
  private async ask(h: string): Promise<{ records: Array<{ address: string; ttl: number }> | null; code: DnsErrorCode | null }> {
    let records: Array<{ address: string; ttl: number }> | null = null;
    let code: DnsErrorCode | null = null;
    try {
      this.st.queries++;
      records = this.family === 4 ? await this.resolver.resolve4(h, { ttl: true }) : await this.resolver.resolve6(h, { ttl: true });
      if (records.length === 0) code = DNS_CODES.NODATA;
    } catch (err) {
      code = mapError(err);
    }
    if (code !== DNS_CODES.NODATA || this.family !== 4 || this.closed) return { records, code };
    // The name exists but has no A record: an IPv6-only host, reached through its AAAA records.
    // (NXDOMAIN means no such name at all; a transient failure is not turned into an AAAA query.)
    try {
      this.st.queries++;
      records = await this.resolver.resolve6(h, { ttl: true });
      return { records, code: records.length === 0 ? DNS_CODES.NODATA : null };
    } catch (err) {
      return { records: null, code: mapError(err) };
    }
  }

  private store(h: string, stale: Entry | undefined, records: Array<{ address: string; ttl: number }> | null, code: DnsErrorCode | null): DnsResult {
    const now = this.now();
    let entry: Entry;
    if (records !== null && records.length > 0) {
      let ttlS = records[0]!.ttl;
      for (const r of records) if (r.ttl < ttlS) ttlS = r.ttl;
      const ttl = Math.min(this.maxTtl, Math.max(this.minTtl, ttlS * 1000));
      const addresses = records.map((r) => r.address);
      // Keep the previously chosen IP while the host still has it: the politeness layer keys on it.
      const ip = stale?.ip != null && addresses.includes(stale.ip) ? stale.ip : addresses[0]!;
      entry = { expiresAt: now + ttl, ip, addresses, error: null };
    } else {
      const err = code ?? DNS_CODES.NODATA;
      this.errors[err] = (this.errors[err] ?? 0) + 1;
      const permanent = err === DNS_CODES.NXDOMAIN || err === DNS_CODES.NODATA || err === DNS_CODES.BAD_NAME;
      entry = { expiresAt: now + (permanent ? this.negTtl : this.failTtl), ip: null, addresses: [], error: err };
    }
    if (!this.cache.delete(h) && this.cache.size >= this.maxEntries) {
      const oldest = this.cache.keys().next();
      if (oldest.done !== true) this.cache.delete(oldest.value);
    }
    this.cache.set(h, entry);
    return entry.ip !== null
      ? { ip: entry.ip, ttlMs: entry.expiresAt - now, addresses: entry.addresses, cached: false }
      : { error: entry.error!, ttlMs: entry.expiresAt - now, cached: false };
  }

  /**
   * The cached answers and failures not yet expired, least recently used first (for the
   * checkpoint's copy, dns-file.ts). Transient entries of a closing resolver (CRAWL_DNS_CLOSED)
   * are not answers.
   */
  *entries(): IterableIterator<DnsFileEntry> {
    const now = this.now();
    for (const [host, e] of this.cache) {
      if (e.expiresAt <= now || e.error === DNS_CODES.CLOSED) continue;
      yield { host, expiresAt: e.expiresAt, ip: e.ip, addresses: e.addresses, error: e.error };
    }
  }

  /** Cached hosts at most (maxEntries). */
  get capacity(): number {
    return this.maxEntries;
  }

  /**
   * Takes in entries saved by an earlier run (a resume, dns-file.ts), least recently used first:
   * those expired and codes this version does not know are left out, a host already cached keeps
   * its entry, and at most maxEntries are kept (the most recently used). Returns the number taken in.
   */
  load(entries: readonly DnsFileEntry[]): number {
    const now = this.now();
    const codes = new Set<string>(Object.values(DNS_CODES));
    let taken = 0;
    for (let i = Math.max(0, entries.length - this.maxEntries); i < entries.length; i++) {
      const f = entries[i]!;
      if (f.expiresAt <= now || this.cache.has(f.host)) continue;
      if (f.ip === null && (f.error === null || !codes.has(f.error) || f.error === DNS_CODES.CLOSED)) continue;
      if (this.cache.size >= this.maxEntries) break;
      this.cache.set(f.host, { expiresAt: f.expiresAt, ip: f.ip, addresses: f.addresses, error: f.ip === null ? (f.error as DnsErrorCode) : null });
      taken++;
    }
    return taken;
  }

  stats(): DnsCacheStats {
    const s = this.st;
    return {
      lookups: s.lookups, hits: s.hits, negativeHits: s.negativeHits, joined: s.joined, queries: s.queries,
      errors: { ...this.errors },
      hitRate: s.lookups === 0 ? 0 : (s.hits + s.negativeHits + s.joined) / s.lookups,
      meanLatencyMs: s.queries === 0 ? 0 : s.latencySum / s.queries,
      maxLatencyMs: s.latencyMax, entries: this.cache.size, inFlight: this.active, maxInFlight: s.maxInFlight, waiting: this.waiters.length,
    };
  }

  /** Cancel outstanding queries (they resolve with CRAWL_DNS_CLOSED) and refuse new ones. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.resolver.cancel();
    for (const w of this.waiters.splice(0)) w();
  }
}
