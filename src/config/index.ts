/**
 * src/config — the one validated configuration of a crawl (STYLE: one place for options, with
 * units and defaults): CLI flags and config file into CrawlConfig (config.ts, checked by the rules
 * of config-rules.ts and the value parsers of config-values.ts), the runtime changes a running
 * crawl accepts, the request headers, the link scope built from it (link-scope.ts, read by the
 * parse workers and the sitemap reader) and the page requisites' hop rules (requisites.ts).
 */
export { CRAWL_FLAGS, RUNTIME_KEYS, applyRuntimeChange, configFromFileObject, defaultCrawlConfig, loadCrawlConfig, parseCrawlArgs, parseDurationMs, parseSeedList, parseSize, ramFloorWarning, resolveCrawlConfig, type CrawlConfig, type CrawlConfigInput, type SitemapDiscovery } from './config.js';
export { DROP_CODES, LinkScope, scopeAnchors } from './link-scope.js';
export { headerRecord } from './request-headers.js';
export { CRAWL_CONFIG_INVALID } from './config-values.js';
