/**
 * simweb — the deterministic synthetic web drumcrawl crawls in every test, benchmark and demo:
 * a lazily generated web graph (graph.ts) served over real TCP on 127.0.0.0/8 (http-server.ts) with
 * a real authoritative UDP DNS server (dns-server.ts), adversities on chosen hosts, and a server-side
 * request log with politeness/robots checkers (request-log.ts). See docs/simweb.md.
 *
 * API (docs/simweb.md), including:
 *  - Simweb: `ips` (every simulated IP), `dnsPort`, `connectionStats()` (live open connections,
 *    max open per IP, accepted, requests not yet logged), `dnsStats()`; SimwebOptions: `logCapacity` (ring size, default 200,000).
 *  - RequestLogEntry: also `conn` (connection number) and `userAgent`.
 *  - RequestLog: `length`, `total`, `dropped`, `enabled`; checkers return `Violation[]`
 *    (`{ check, key, message, entries }`) except `pagesPerPld()`, which returns `Map<pld, count>`.
 *    `minIntervalPerHost/PerIp(ms, { from: 'start' | 'end', includeRobots, slackMs })`,
 *    `robotsViolations(web, ua, { requireRobotsFirst })`. Each checker is also a free function.
 *  - WebGraph: `reachable(seeds, { userAgent, respectRobots = true, maxPages = 1e6 })`, and
 *    `hostInfo(name)`, `findHost(pred)`, `hosts()`, `seeds()`, `origin(host)`, `hostName(pld, j)`,
 *    `hostCount(pld)`, `pageCount(pld, j)`, `totalPages()`, `ipAddresses()`, `pageKind(info, n)`,
 *    `hasPage(info, n)`, `pageLinks(info, n)`, `pageBytes(info, n)`, `renderPage(info, n)`,
 *    `robotsGroups(info)`, `robotsRulesText(info)`, `robotsBody(info)`, `robotsAllows(host, path, ua)`,
 *    `crawlDelayFor(host, ua)`.
 *  - Errors: CRAWL_SIMWEB_BAD_PARAM (params), CRAWL_SIMWEB_LISTEN (ports), CRAWL_SIMWEB_TOO_BIG (reachable).
 */
export { startSimweb, type Simweb, type SimwebOptions } from './simweb.js';
export { WebGraph, ADVERSITY_COUNT, type HostInfo, type PageKind, type RenderedBody, type LinkTarget } from './model/graph.js';
export {
  RequestLog, type RequestLogEntry, type Violation, type IntervalOptions,
  minInterval, maxConcurrentPerIp, robotsViolations, duplicateFetches, pagesPerPld, isRobotsPath,
} from './request-log.js';
export {
  resolveParams, PRESETS, DEFAULT_PARAMS, ROBOTS_VARIANTS, BEHAVIOURS, DNS_VARIANTS, TRAP_KINDS,
  type SimwebPreset, type WebParams, type RobotsVariant, type Behaviour, type DnsVariant, type TrapKind,
} from './model/params.js';
export { SimHttpServer, type ConnectionStats } from './http-server.js';
export { SimDnsServer, answerQuery, type DnsStats } from './dns-server.js';
export { productToken, type RobotsGroup, type RobotsRule } from './model/robots-model.js';
