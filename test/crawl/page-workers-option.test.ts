/**
 * The `pageWorkers` option (config.ts, docs/configuration.md): off by default, `on` by the
 * environment's DRUMCRAWL_PAGE_WORKERS=on, an explicit value wins, and anything but on/off is
 * refused with CRAWL_CONFIG_INVALID (the CLI's --page-workers goes through the same check).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { resolveCrawlConfig, CRAWL_FLAGS } from '../../src/crawl/config.js';
import { pageWorkerYoungMb } from '../../src/crawl/page-worker-pool.js';

const base = { seeds: ['http://example.test/'], userAgent: 'drumcrawl-test/0.1 (+https://example.test/bot)' };

function withEnv<T>(v: string | undefined, f: () => T): T {
  const old = process.env.DRUMCRAWL_PAGE_WORKERS;
  if (v === undefined) delete process.env.DRUMCRAWL_PAGE_WORKERS;
  else process.env.DRUMCRAWL_PAGE_WORKERS = v;
  try {
    return f();
  } finally {
    if (old === undefined) delete process.env.DRUMCRAWL_PAGE_WORKERS;
    else process.env.DRUMCRAWL_PAGE_WORKERS = old;
  }
}

test('pageWorkers: off by default, on from the environment, an explicit value wins', () => {
  assert.equal(withEnv(undefined, () => resolveCrawlConfig(base).pageWorkers), 'off');
  assert.equal(withEnv('on', () => resolveCrawlConfig(base).pageWorkers), 'on');
  assert.equal(withEnv('on', () => resolveCrawlConfig({ ...base, pageWorkers: 'off' }).pageWorkers), 'off');
  assert.equal(withEnv(undefined, () => resolveCrawlConfig({ ...base, pageWorkers: 'on' }).pageWorkers), 'on');
});

test('pageWorkers: a value other than on/off is refused with CRAWL_CONFIG_INVALID; the CLI flag is --page-workers', () => {
  assert.throws(() => resolveCrawlConfig({ ...base, pageWorkers: 'maybe' as never }), (e: Error & { code?: string }) => e.code === 'CRAWL_CONFIG_INVALID' && /pageWorkers/.test(e.message));
  const f = CRAWL_FLAGS.find((x) => x.key === 'pageWorkers');
  assert.equal(f?.name, 'page-workers');
});

test('a page worker\'s young generation: a quarter of its heap budget, 8 to 32 MiB (the old space keeps at least three quarters)', () => {
  fc.assert(
    fc.property(fc.integer({ min: 32, max: 1 << 16 }), (heapMb) => {
      const young = pageWorkerYoungMb(heapMb);
      assert.ok(young >= 8 && young <= 32, `${young}`);
      assert.ok(young <= heapMb / 4, `${young} of ${heapMb}`);
      if (heapMb >= 128) assert.equal(young, 32);
    }),
  );
  // --ram 512M on 2 cores: 64 MiB per worker (the case that ran at half speed with a fixed 32)
  assert.equal(pageWorkerYoungMb(64), 16);
});
