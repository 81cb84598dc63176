/**
 * drumcrawl's library surface. Everything the CLI can do, the library can do: the CLI (src/cli/)
 * only parses arguments into a validated config and calls these.
 *
 * Imports flow one way: cli → crawl → {frontier, fetch, html, robots, dns, store} → {drum, url} → disk.
 */
export { CrawlError, isCrawlError } from './errors.js';
export * from './url/index.js';
export * from './html/index.js';
export * from './disk/index.js';
export * from './drum/index.js';
export * from './dns/index.js';
export * from './robots/index.js';
export * from './fetch/index.js';
export * from './frontier/index.js';
export * from './store/index.js';
export * from './crawl/index.js';
export * from './simweb/index.js';
