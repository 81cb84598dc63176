/**
 * simweb — the deterministic synthetic web drumcrawl crawls in every test, benchmark and demo:
 * a lazily generated web graph (graph.ts) served over real TCP on 127.0.0.0/8 (http-server.ts) with
 * a real authoritative UDP DNS server (dns-server.ts), adversities on chosen hosts, and a server-side
 * request log with politeness/robots checkers (request-log.ts). See docs/simweb.md.
 *
 * API as in CONTRACTS.md (src/simweb section), plus extras: Simweb.ips, dnsPort, connectionStats(),
 * dnsStats(); RequestLog entries carry `conn` and `userAgent`; checkers are also free functions.
 * `pagesPerPld()` returns a Map (pld → 2xx page fetches), the other checkers Violation[].
 */
export { startSimweb, type Simweb, type SimwebOptions } from './simweb.js';
export { WebGraph, ADVERSITY_COUNT, type HostInfo, type PageKind, type RenderedBody, type LinkTarget } from './graph.js';
export {
  RequestLog, type RequestLogEntry, type Violation, type IntervalOptions,
  minInterval, maxConcurrentPerIp, robotsViolations, duplicateFetches, pagesPerPld, isRobotsPath,
} from './request-log.js';
export {
  resolveParams, PRESETS, DEFAULT_PARAMS, ROBOTS_VARIANTS, BEHAVIOURS, DNS_VARIANTS, TRAP_KINDS,
  type SimwebPreset, type WebParams, type RobotsVariant, type Behaviour, type DnsVariant, type TrapKind,
} from './params.js';
export { SimHttpServer, type ConnectionStats } from './http-server.js';
export { SimDnsServer, answerQuery, type DnsStats } from './dns-server.js';
export { productToken, type RobotsGroup, type RobotsRule } from './robots-model.js';
