/**
 * The crash flow on a web that never runs out: simweb's adv-mint preset (a good web plus a farm
 * whose pages link to freshly minted hosts on their own IPs). The crawl is SIGKILLed at three
 * seeded random moments, resumed after each, and the last run ends by --max-time. Judged from the
 * server's request log (stop-resume-judge.ts): within a run no URL is requested twice, and a URL
 * is requested again in a later run only from a kill's in-flight window (not in done.log at the
 * kill, dispatched after the last checkpoint began) or because the final stop aborted it.
 *
 * Minted hosts keep the frontier moving URLs between its queues between checkpoints — into QR to
 * wait for their robots.txt, back to QR at each rescan, back into BEAST when their host is full
 * in RAM: what a kill leaves of those moves must not make the frontier hand a URL out twice
 * (beast.ts, disk-store.ts). Runs under DRUMCRAWL_LONG=1 (about a minute or two);
 * DRUMCRAWL_KILL_SEED replays the moments of a failed run.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { readManifest, readDoneLog } from '../../src/state/checkpoint.js';
import { decodeFrontierUrl } from '../../src/frontier/index.js';
import { parseCrawlLogLine } from '../../src/store/index.js';
import { cli, crawlCommand, crawlSettings, forkSimweb, seededRandom, tempDir, untilCheckpoint, untilServed, type CliRun } from './harness.js';
import { repeatedRequests, type RunRecord } from './stop-resume-judge.js';

const LONG = process.env.DRUMCRAWL_LONG === '1';

const live: CliRun[] = [];
// The hook is registered only with the test: Node 20's runner never ends a file that has a
// top-level after() and no test when it runs with --test-force-exit (as npm test does).
if (LONG) after(() => {
  for (const r of live) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGKILL');
});

if (LONG) test('adv-mint web, SIGKILL ×3 + resume, then --max-time: no URL twice within a run, re-fetches only from the kills\' in-flight windows', { timeout: 1_800_000 }, async () => {
  const web = await forkSimweb('adv-mint');
  const seed = Number(process.env.DRUMCRAWL_KILL_SEED ?? 1);
  const random = seededRandom(seed);
  try {
    const dir = await tempDir('e2e-kill-mint');
    const state = path.join(dir, 'state');
    const out = path.join(dir, 'warc');
    const input = crawlSettings(web, {
      stateDir: state, outDir: out, hostDelayMs: 40, ipDelayMs: 10, minHostDelayMs: 40, minIpDelayMs: 10,
      politenessMarginMs: 5, checkpointIntervalMs: 60_000, workers: 1, ramBytes: 256 * 2 ** 20, fetchConcurrency: 32, fetchTimeoutMs: 5000,
    });
    const runs: RunRecord[] = [];
    for (let k = 0; k < 4; k++) {
      const spawnedAt = Date.now();
      const run = k === 0 ? cli(crawlCommand(input)) : cli(['resume', state, '--progress', 'none', ...(k === 3 ? ['--max-time', '15'] : [])]);
      live.push(run);
      const rec: RunRecord = { stop: k < 3 ? 'sigkill' : 'max-time', spawnedAt, exitedAt: 0, readyAt: null, killedAt: null, doneAtKill: null, checkpointStartAtKill: null };
      runs.push(rec);
      if (k < 3) {
        await untilCheckpoint(state, run);
        // A random moment: after 400–1,200 more requests.
        const target = (await web.requests()) + 400 + Math.floor(random() * 800);
        await untilServed(web, target, run);
        rec.killedAt = Date.now();
        run.child.kill('SIGKILL');
        assert.equal(await run.done, -9, `kill ${k + 1} (seed ${seed}) landed before the crawl ended`);
        rec.exitedAt = Date.now();
        rec.doneAtKill = new Set((await readDoneLog(state)).map((d) => decodeFrontierUrl(d).url));
        const m = await readManifest(state);
        rec.checkpointStartAtKill = m?.startedAt !== undefined ? Date.parse(m.startedAt) : null;
      } else {
        assert.equal(await run.done, 0, run.out().slice(-2000));
        rec.exitedAt = Date.now();
      }
    }
    const r = await web.report({ hostMs: 40, ipMs: 10, reachable: false });
    const aborted = new Map<string, number[]>();
    for (const line of readFileSync(path.join(out, 'crawl.log'), 'utf8').split('\n')) {
      if (line === '') continue;
      const l = parseCrawlLogLine(line);
      if (l.outcome === 'CRAWL_FETCH_ABORTED') aborted.set(l.url, [...(aborted.get(l.url) ?? []), l.time.getTime()]);
    }
    const rep = repeatedRequests(r, runs, aborted);
    const pages = new Set(r.pageFetches).size;
    console.log(`seed ${seed}: ${r.pageFetches.length} page requests for ${pages} pages on ${new Set(r.pageFetches.map((u) => new URL(u).host)).size} hosts; ${rep.allowed} repeats from in-flight windows or aborted fetches; ${rep.bad.length} other repeats`);
    assert.deepEqual(rep.bad.slice(0, 20), [], `only the kills' in-flight windows are fetched twice (${rep.bad.length} other repeats; seed ${seed})`);
  } finally {
    await web.close();
  }
});
