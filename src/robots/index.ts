/**
 * src/robots — robots.txt as RFC 9309 says (docs/robots.md).
 *
 * Data flow: fetchRobots() fetches /robots.txt through the Fetcher (redirects ≤ 5, cross-host,
 * rules applied to the original host) → parseRobotsTxt() → compileRobots() for our own agent →
 * RobotsRules, whose serialize() bytes are the compact form of a host's rules (thesis VII.1: robots are
 * looked up per host before a URL may enter the politeness queues).
 *
 * API:
 *   parseRobotsTxt(body, { maxBytes? })       RobotsTxt also has `parsed` (groups, counters) and `rulesFor(agent)`
 *   compileRobots(txt, userAgent)             a full User-Agent is reduced to its product token
 *   RobotsRules                               also `ruleCount`
 *   fetchRobots(fetcher, host, ip, port, userAgent, opts?)  opts: scheme, maxRedirects, dns, cacheTtlMs,
 *                                             minTtlMs, unreachableRetryMs, previous, maxBytes, now;
 *                                             beforeRequest (awaited before every hop, with
 *                                             the hop's IP); result also has `redirects`, `sitemaps`
 *   userAgentToken(ua)                        the product token (named so, not `productToken`, which simweb exports)
 *   parseRobotsBody, isValidUserAgentToObey, escapePattern, canonicalPath, pathParamsQuery  (conformance helpers)
 */
export {
  parseRobotsTxt, compileRobots, deserializeRobotsRules, ALLOW_ALL, DISALLOW_ALL, ROBOTS_MAX_CRAWL_DELAY_MS,
  type RobotsTxt, type RobotsRules, type ParseRobotsOptions,
} from './rules.js';
export {
  parseRobotsBody, userAgentToken, isValidUserAgentToObey, ROBOTS_DEFAULT_MAX_BYTES,
  type ParsedRobots, type ParsedRobotsGroup, type ParsedRobotsRule,
} from './parse.js';
export { escapePattern, canonicalPath, pathParamsQuery } from './normalize.js';
export { fetchRobots, robotsUrl, type FetchRobotsOptions, type RobotsFetchOutcome } from '../fetch/robots-fetch.js';
