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
 * and the crawl still fetches exactly the reachable pages, once each. After each checkpoint, no URL
 * is both in the frontier's RAM snapshot and in pending.bin: a page in flight at the snapshot whose
 * fetch ended before the commit did was in both, and after a kill the resumed crawl held it twice —
 * done.log skips one hand-out per run, so the other was fetched again a run later (48 pages in
 * bench:soak, bench/results/soak-probe-89533e5.json). That a kill right after a
 * checkpoint loses nothing and repeats only the in-flight window is test/e2e/kill-resume.test.ts's
 * and stop-resume.test.ts's (both checkpoint often).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { cpSync, existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Crawler } from '../../src/crawl/pipeline.js';
import { decodeFrontierUrl, openDiskQueueStore } from '../../src/frontier/index.js';
import { decodePending } from '../../src/state/index.js';
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
  // Each checkpoint's snapshot and pending.bin, copied as they stand when it is written.
  const state = path.join(dir, 'state');
  const copies: { root: string; snapshot: string; pending: Uint8Array }[] = [];
  crawler.on('checkpoint', () => {
    if (open !== null) seen.push({ reason: open.reason, before: open.before, after: merges(), startedDuring: started() - open.started });
    open = null;
    const snapshot = (JSON.parse(readFileSync(path.join(state, 'frontier', 'frontier.json'), 'utf8')) as { snapshot: string | null }).snapshot;
    const queues = path.join(state, 'frontier', 'queues');
    if (snapshot === null || !existsSync(path.join(queues, snapshot)) || !existsSync(path.join(state, 'pending.bin'))) return;
    const root = path.join(dir, `copy-${copies.length}`);
    cpSync(path.join(queues, snapshot), path.join(root, 'queues', snapshot), { recursive: true });
    copies.push({ root, snapshot, pending: readFileSync(path.join(state, 'pending.bin')) });
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
  let both = 0;
  let inSnapshots = 0;
  let inPending = 0;
  for (const c of copies) {
    const q = await openDiskQueueStore(c.root).open(c.snapshot);
    const snap = new Set<string>();
    for (let recs = await q.shift(4096); recs.length > 0; recs = await q.shift(4096)) for (const r of recs) snap.add(decodeFrontierUrl(r).url);
    const pending = decodePending(c.pending).map((r) => decodeFrontierUrl(r).url);
    inSnapshots += snap.size;
    inPending += pending.length;
    both += pending.filter((u) => snap.has(u)).length;
  }
  console.log(`${copies.length} checkpoints: ${inSnapshots} URLs in snapshots, ${inPending} in pending.bin, ${both} in both`);
  assert.ok(inSnapshots > 0 && inPending > 0, 'the checkpoints found URLs in RAM and pages not yet durable');
  assert.equal(both, 0, `${both} URLs were in a checkpoint's snapshot and in its pending.bin`);
  const r = await web.report({ hostMs: 0, ipMs: 0 });
  assert.equal(summary.stopReason, 'done');
  assert.deepEqual([...r.pageFetches].sort(), [...r.reachable!].sort(), 'fetched = reachable ∩ allowed (ground truth)');
  assert.deepEqual(r.duplicates, []);
});
