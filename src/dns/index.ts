/**
 * src/dns — the crawler's DNS cache (c-ares via node:dns Resolver, TTL-clamped, negative caching,
 * bounded concurrency). The IP it picks per host is the key of the per-IP politeness heap.
 *
 * API: DnsCache with options `failureTtlMs`, `maxEntries`, `now`; resolve()
 * answers `{ ip, ttlMs, addresses, cached }` or `{ error, ttlMs, cached }` and never rejects;
 * `forget(host)`; `entries()` and `load()` with dns-file.ts's `encodeDnsFile` / `decodeDnsFile`: the
 * copy each checkpoint saves and a resume loads; `stats()` returns DnsCacheStats (named so because simweb exports a `DnsStats`).
 */
export {
  DnsCache, DNS_CODES, type DnsCacheOptions, type DnsAnswer, type DnsFailure, type DnsResult, type DnsCacheStats, type DnsErrorCode,
} from './resolver.js';
export { DNS_CACHE_FILE, encodeDnsFile, encodeDnsFileSliced, decodeDnsFile, readDnsFile, loadDnsFile, type DnsFileEntry } from './dns-file.js';
