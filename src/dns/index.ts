/**
 * src/dns — the crawler's DNS cache (c-ares via node:dns Resolver, TTL-clamped, negative caching,
 * bounded concurrency). The IP it picks per host is the key of the per-IP politeness heap.
 */
export {
  DnsCache, DNS_CODES, type DnsCacheOptions, type DnsAnswer, type DnsFailure, type DnsResult, type DnsCacheStats, type DnsErrorCode,
} from './resolver.js';
