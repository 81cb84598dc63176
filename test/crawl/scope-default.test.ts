/**
 * The default scope keeps a crawl near its seeds (`pld`); `any` and `host` stay available, and the
 * sitemap discovery option (`--sitemaps`) defaults to the sitemaps robots.txt names.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCrawlArgs, resolveCrawlConfig, defaultCrawlConfig } from '../../src/config/config.js';

test("default scope is the seeds' PLDs; any and host can still be chosen", () => {
  assert.equal(defaultCrawlConfig().scope, 'pld');
  assert.equal(resolveCrawlConfig({ seeds: ['http://a.test/'] }).scope, 'pld');
  assert.equal(resolveCrawlConfig(parseCrawlArgs(['http://a.test/']).input).scope, 'pld');
  assert.equal(resolveCrawlConfig(parseCrawlArgs(['--scope', 'any', 'http://a.test/']).input).scope, 'any');
  assert.equal(resolveCrawlConfig(parseCrawlArgs(['--scope', 'host', 'http://a.test/']).input).scope, 'host');
});

test('--sitemaps: robots (default), robots+root, off; anything else is CRAWL_CONFIG_INVALID', () => {
  assert.equal(resolveCrawlConfig({}).sitemaps, 'robots');
  assert.equal(resolveCrawlConfig(parseCrawlArgs(['--sitemaps', 'robots+root']).input).sitemaps, 'robots+root');
  assert.equal(resolveCrawlConfig(parseCrawlArgs(['--sitemaps', 'off']).input).sitemaps, 'off');
  assert.throws(
    () => resolveCrawlConfig(parseCrawlArgs(['--sitemaps', 'all']).input),
    (e: unknown) => (e as { code?: string }).code === 'CRAWL_CONFIG_INVALID' && /sitemaps must be one of robots, robots\+root, off/.test(String(e)),
  );
});
