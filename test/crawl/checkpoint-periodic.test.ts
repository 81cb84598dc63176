/**
 * A periodic checkpoint runs its merges beside the scheduler (checkpoint-stage.ts): the merges
 * under way, then one ContentSeen and one URLseen merge for the pages finished before it was due;
 * no merge runs during its commit, and of the commit only the frontier's RAM snapshot holds the
 * scheduler: pages are started while the rest of it (syncs, pending.bin, the robots DRUMs, the
 * cursors, the manifest) is written. Holding the scheduler for the whole commit cost 0.75–2.10 s a
 * minute at 10^6 hosts in bench:soak; pushing the merges
 * through inside the commit held the scheduler for a whole URLseen merge every minute — 5–18 s
 * without a fetch at 10^6 hosts in bench:soak (issue #31). Judged from the crawler's own merge
 * counters (the status snapshot) at each commit's start and end ('checkpoint-start', 'checkpoint'):
 * no merge starts or ends within a periodic checkpoint's commit, while merges do run between them;
 * and the crawl still fetches exactly the reachable pages, once each. That a kill right after a
 * checkpoint loses nothing and repeats only the in-flight window is test/e2e/kill-resume.test.ts's
 * and stop-resume.test.ts's (both checkpoint often).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { Crawler } from '../../src/crawl/pipeline.js';
import { resolveCrawlConfig } from '../../src/config/config.js';
import { SIMWEB_NETWORKS, UA, forkSimweb, tempDir, type SimwebChild } from '../e2e/harness.js';

const webs: SimwebChild[] = [];
const dirs: string[] = [];
after(async () => {
  for (const w of webs) await w.close();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

test('a periodic checkpoint holds the scheduler only for its snapshot, with no merge running in its commit; the crawl still gets every page', { timeout: 240_000 }, async () => {
  const web = await forkSimweb('demo', {});
  webs.push(web);
  const dir = await tempDir('ckpt-periodic');
  dirs.push(dir);
  const crawler = await Crawler.open(resolveCrawlConfig({
    seeds: web.seeds, stateDir: path.join(dir, 'state'), outDir: path.join(dir, 'out'), dnsServers: [web.dnsServer],
    allowNetworks: SIMWEB_NETWORKS, userAgent: UA, progress: 'none', workers: 1, ramBytes: 256 * 2 ** 20, scope: 'any',
    hostDelayMs: 0, ipDelayMs: 0, minHostDelayMs: 0, minIpDelayMs: 0,
    // The shortest interval: most checkpoints find links and bodies waiting for a merge.
    checkpointIntervalMs: 100,
  }));
  const merges = (): number => {
    const m = crawler.snapshot().run!.merges;
    return m.urlSeen.count + m.contentSeen.count;
  };
  const started = (): number => crawler.snapshot().run!.pagesStarted;
  const seen: { reason: string; before: number; after: number; startedDuring: number }[] = [];
  let open: { reason: string; before: number; started: number } | null = null;
  crawler.on('checkpoint-start', (e: { reason: string }) => {
    open = { reason: e.reason, before: merges(), started: started() };
  });
  crawler.on('checkpoint', () => {
    if (open !== null) seen.push({ reason: open.reason, before: open.before, after: merges(), startedDuring: started() - open.started });
    open = null;
  });
  const summary = await crawler.run();
  const periodic = seen.filter((c) => c.reason === 'periodic');
  assert.ok(periodic.length >= 3, `${periodic.length} periodic checkpoints (of ${seen.length})`);
  const moved = periodic.filter((c) => c.after !== c.before);
  console.log(`${periodic.length} periodic checkpoints`);
  assert.deepEqual(moved, [], `merges ran within ${moved.length} of ${periodic.length} periodic checkpoints' commits`);
  // Merges did run, between the checkpoints.
  assert.ok(periodic.at(-1)!.after > periodic[0]!.before, 'merges between the periodic checkpoints');
  // Pages went out while periodic commits were written (a commit held whole lets none out).
  const during = periodic.reduce((n, c) => n + c.startedDuring, 0);
  console.log(`${during} pages started during ${periodic.length} periodic commits`);
  assert.ok(during > 0, 'pages started while a periodic checkpoint\'s commit was written');
  const r = await web.report({ hostMs: 0, ipMs: 0 });
  assert.equal(summary.stopReason, 'done');
  assert.deepEqual([...r.pageFetches].sort(), [...r.reachable!].sort(), 'fetched = reachable ∩ allowed (ground truth)');
  assert.deepEqual(r.duplicates, []);
});
