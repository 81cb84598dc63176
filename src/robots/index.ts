/**
 * src/robots — robots.txt as RFC 9309 says (docs/robots.md).
 *
 * Data flow: fetchRobots() fetches /robots.txt through the Fetcher (redirects ≤ 5, cross-host,
 * rules applied to the original host) → parseRobotsTxt() → compileRobots() for our own agent →
 * RobotsRules, whose serialize() bytes are the RobotsCache DRUM value (thesis VII.1: robots are
 * looked up per host before a URL may enter the politeness queues).
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
export { fetchRobots, type FetchRobotsOptions, type RobotsFetchOutcome } from './fetch-robots.js';
