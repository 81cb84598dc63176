/**
 * src/robots — robots.txt as RFC 9309 says (docs/robots.md), and the robots DRUMs that hold each
 * authority's answer (thesis IV.3, Fig. 2; an authority is scheme://host[:port], RFC 9309 §2.3,
 * src/util/authority.ts): RobotsCache (authority → rules, expiry; check and update),
 * RobotsRequested (authority → time asked; check+update) and the journal of answers not yet merged.
 * The DRUMs run in the DRUM thread (src/threads/drum); the crawl's robots stage drives them.
 *
 * Data flow: the robots.txt fetch (src/fetch/robots-fetch.ts: fetchRobots, redirects ≤ 5,
 * cross-host, rules applied to the original host) → parseRobotsTxt() → compileRobots() for our own agent →
 * RobotsRules, whose serialize() bytes are the compact form of a host's rules (thesis VII.1: robots are
 * looked up per host before a URL may enter the politeness queues).
 *
 * API:
 *   parseRobotsTxt(body, { maxBytes? })       RobotsTxt also has `parsed` (groups, counters) and `rulesFor(agent)`
 *   compileRobots(txt, userAgent)             a full User-Agent is reduced to its product token
 *   RobotsRules                               also `ruleCount`
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
export { decodeRobotsEntry, encodeRobotsEntry, MAX_SITEMAPS, MAX_SITEMAP_BYTES, type RobotsEntry } from './robots-entry.js';
export { RobotsCache, type RobotsCheckListener } from './robots-cache.js';
export { RobotsRequested, type RobotsAskListener } from './robots-requested.js';
export type { RobotsDrumStats } from './host-drum.js';
export { RobotsJournal, JOURNAL_FILE, encodeJournalRecord, decodeJournal, type JournalRecord } from './robots-journal.js';
export { ROBOTS_TOTALS_FILE, emptyRobotsTotals, readRobotsTotals, sealedTotals, type RobotsTotals } from './robots-totals.js';
