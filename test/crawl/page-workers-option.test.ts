/**
 * The `pageWorkers` option (config.ts, docs/configuration.md): on by default, `off` by the
 * environment's DRUMCRAWL_PAGE_WORKERS=off, an explicit value wins, and anything but on/off is
 * refused with CRAWL_CONFIG_INVALID (the CLI's --page-workers goes through the same check).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { resolveCrawlConfig, CRAWL_FLAGS } from '../../src/config/config.js';
import { Worker } from 'node:worker_threads';
import { PAGE_WORKERS_REFUSED, pageWorkerInitialOldMb, pageWorkerYoungMb } from '../../src/threads/page/page-worker-pool.js';
import { ClusterNode } from '../../src/cluster/node.js';
import { startWithInitialOldSpace } from '../../src/budget/heap-budget.js';

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

test('pageWorkers: on by default, off from the environment, an explicit value wins', () => {
  assert.equal(withEnv(undefined, () => resolveCrawlConfig(base).pageWorkers), 'on');
  assert.equal(withEnv('off', () => resolveCrawlConfig(base).pageWorkers), 'off');
  assert.equal(withEnv('on', () => resolveCrawlConfig(base).pageWorkers), 'on');
  assert.equal(withEnv('off', () => resolveCrawlConfig({ ...base, pageWorkers: 'on' }).pageWorkers), 'on');
  assert.equal(withEnv(undefined, () => resolveCrawlConfig({ ...base, pageWorkers: 'off' }).pageWorkers), 'off');
});

test('pageWorkers: a value other than on/off is refused with CRAWL_CONFIG_INVALID; the CLI flag is --page-workers', () => {
  assert.throws(() => resolveCrawlConfig({ ...base, pageWorkers: 'maybe' as never }), (e: Error & { code?: string }) => e.code === 'CRAWL_CONFIG_INVALID' && /pageWorkers/.test(e.message));
  const f = CRAWL_FLAGS.find((x) => x.key === 'pageWorkers');
  assert.equal(f?.name, 'page-workers');
});

test('a page worker\'s young generation: a parse worker\'s 8 MiB, at most a quarter of its heap budget', () => {
  fc.assert(
    fc.property(fc.integer({ min: 32, max: 1 << 16 }), (heapMb) => {
      const young = pageWorkerYoungMb(heapMb);
      assert.ok(young <= heapMb / 4, `${young} of ${heapMb}`);
      assert.equal(young, 8);
    }),
  );
  // the smallest budget the RAM plan gives a worker (ram-budget.ts: at least 64 MiB)
  assert.equal(pageWorkerYoungMb(64), 8);
});

test('a page worker\'s first old-generation limit: 16 MiB, at most half its old-space cap', () => {
  fc.assert(
    fc.property(fc.integer({ min: 32, max: 1 << 16 }), (heapMb) => {
      const init = pageWorkerInitialOldMb(heapMb);
      const oldCap = Math.max(16, heapMb - pageWorkerYoungMb(heapMb));
      assert.ok(init >= 8 && init <= 16, `${init}`);
      assert.ok(init <= oldCap / 2, `${init} of ${oldCap}`);
      if (heapMb >= 40) assert.equal(init, 16);
    }),
  );
});

// A worker that keeps ~30 MiB alive (promoted to the old generation) and counts its full collections.
const RETAINER = `
const { parentPort } = require('node:worker_threads');
const { PerformanceObserver, constants } = require('node:perf_hooks');
let majors = 0;
const obs = new PerformanceObserver((l) => {
  for (const e of l.getEntries()) if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors++;
});
obs.observe({ entryTypes: ['gc'] });
const keep = [];
for (let i = 0; i < 30 * 1024; i++) keep.push(new Array(128).fill(i));
setTimeout(() => { obs.disconnect(); parentPort.postMessage(majors); }, 50);
`;

test('startWithInitialOldSpace: that worker grows its old generation without full collections; one started after it is online gets V8\'s default', async () => {
  const start = (): Worker => new Worker(RETAINER, { eval: true, resourceLimits: { maxOldGenerationSizeMb: 160, maxYoungGenerationSizeMb: 32 } });
  const majors = (w: Worker): Promise<number> => new Promise((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  });
  const a = startWithInitialOldSpace(96, start);
  const aMajors = majors(a);
  await new Promise((r) => a.once('online', r));
  const b = start();
  // listened to at once: a message that comes before its listener is lost, and the test would
  // wait for it with nothing left to keep the event loop alive (cancelled, 1 run in 8 on 471c0b9)
  const bMajors = majors(b);
  try {
    assert.equal(await aMajors, 0);
    assert.ok((await bMajors) >= 1, 'the flag was cleared once the first worker was online');
  } finally {
    await a.terminate();
    await b.terminate();
  }
});

test('a cluster node refuses --page-workers on given by name, and crawls without page workers by default (before it opens anything)', async () => {
  const cfg = (v: 'on' | 'off') => resolveCrawlConfig({ ...base, pageWorkers: v, stateDir: '/nonexistent/state', outDir: '/nonexistent/out' });
  const args = { url: 'nats://127.0.0.1:9', node: 'n1', crawl: 'c', partitions: null, expect: null, skewMs: null };
  await assert.rejects(
    ClusterNode.start({ args, cfg: cfg('on'), given: new Set(['pageWorkers']) }),
    (e: Error & { code?: string }) => e.code === 'CRAWL_CONFIG_INVALID' && e.message === PAGE_WORKERS_REFUSED,
  );
  // not given: the default gives way (the node then goes on to its state and engine, which fail here)
  await assert.rejects(
    ClusterNode.start({ args, cfg: cfg('on'), given: new Set() }),
    (e: Error & { code?: string }) => e.message !== PAGE_WORKERS_REFUSED,
  );
});
