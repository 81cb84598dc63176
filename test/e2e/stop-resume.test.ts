/**
 * The long-running crawl's main flow, as a user runs it: one crawl of a simweb of more than 3,000
 * pages, stopped in every way the CLI offers — SIGINT, --max-pages, SIGKILL, POST /stop, SIGTERM,
 * --max-time, a SIGKILL and a SIGINT while a checkpoint is being written, a SIGKILL while a periodic
 * checkpoint's commit runs beside the crawl (after its snapshot) — each at a seeded random
 * moment and each followed by `resume`; the state and output directories are moved (renamed)
 * before the last resume, which runs the crawl to its end. Judged from the server's request log
 * and the state directory at each stop:
 *   - every resume makes requests (how long after having recovered and opened its state — its
 *     "status server:" line — is printed, as is the time to load the code and open the state
 *     before it; both are speeds, measured in bench/, not judged here);
 *   - the union of the pages fetched equals an uninterrupted crawl's (simweb's ground truth, which
 *     an uninterrupted crawl fetches exactly: crawl.test.ts);
 *   - nothing is requested twice except the in-flight window of a SIGKILL (stop-resume-judge.ts);
 *   - every WARC record reads back with warcio, with block and payload digests that recompute, and
 *     every response holds its whole body or says why not (WARC-Truncated);
 *   - a moved state directory resumes where it now is (nothing is created at the old path);
 *   - a second `resume` of the state while a resume runs is refused (CRAWL_STATE_LOCKED), and
 *     `stats` names the running one.
 * The fast variant runs one round of four stops (in `npm test`); DRUMCRAWL_LONG=1 runs three rounds
 * of all eight, at other moments, on a larger web, moving the directories between rounds.
 * A WARC file of another program lies in the output directory from the second run on: it must
 * come out byte for byte as it went in (recovery touches only the crawl's own files). DRUMCRAWL_STOP_SEED replays the moments of a failed run.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import path from 'node:path';
import { readManifest, readDoneLog } from '../../src/state/checkpoint.js';
import { decodeFrontierUrl } from '../../src/frontier/index.js';
import { parseCrawlLogLine } from '../../src/store/index.js';
import { cli, crawlCommand, crawlSettings, forkSimweb, seededRandom, sleep, tempDir, type CliRun, type SimwebChild } from './harness.js';
import { readWarcDir, warcProblems } from './warc-read.js';
import { repeatedRequests, resumeLatencies, type RunRecord } from './stop-resume-judge.js';

const LONG = process.env.DRUMCRAWL_LONG === '1';

type Stop = 'sigint' | 'max-pages' | 'sigkill' | 'post-stop' | 'sigterm' | 'max-time' | 'sigkill-checkpoint' | 'sigint-checkpoint' | 'sigkill-commit';
const ROUND: Stop[] = ['sigint', 'max-pages', 'sigkill', 'post-stop', 'sigterm', 'max-time', 'sigkill-checkpoint', 'sigint-checkpoint', 'sigkill-commit'];
/**
 * The fast variant's round: one stop of each kind whose resume differs (a drained stop by a signal
 * and over HTTP; a kill between checkpoints; a kill inside one, while it holds the scheduler and
 * after it has let it go), the kills followed by further
 * runs (a URL the frontier held twice after a kill is fetched twice in one of them). SIGTERM
 * drains as SIGINT does (kill-resume.test.ts); a limit (--max-time, --max-pages) drains the same
 * way, with a stop the crawl gives itself (stop-slow.test.ts).
 */
const FAST_ROUND: Stop[] = ['sigint', 'sigkill', 'post-stop', 'sigkill-checkpoint', 'sigkill-commit'];

/**
 * The checkpoint stage line (DRUMCRAWL_DEBUG_TIMING) a stop inside a checkpoint waits for:
 * `-checkpoint` once the commit has begun (the scheduler held); `-commit` once a periodic
 * checkpoint's snapshot is taken and the rest of its commit runs beside the crawl
 * (checkpoint-stage.ts), so that pages are released, fetched and ended while it is written.
 */
const STAGE_LINE: Partial<Record<Stop, RegExp>> = {
  'sigkill-checkpoint': /^ckpt (merged\+synced|committing)/,
  'sigint-checkpoint': /^ckpt (merged\+synced|committing)/,
  'sigkill-commit': /^ckpt snapshot-taken/,
};

/**
 * The web: ~3,700 reachable pages (fast), twice the ~8,600 that 24 stops of 100–350 requests each
 * (and their resumes' first seconds) ran out of (long), on 8 / 16 IPs.
 */
const WEB = LONG
  ? { plds: 120, hostsPerPldMean: 3, hostsPerPldMax: 5, pagesPerHostMin: 40, pagesPerHostMax: 80, ips: 16, linksPerPageMean: 12, seedCount: 4 }
  : { plds: 30, hostsPerPldMean: 3, hostsPerPldMax: 5, pagesPerHostMin: 40, pagesPerHostMax: 80, ips: 8, linksPerPageMean: 12, seedCount: 3 };

/** Another program's WARC: a complete record, then bytes that are not WARC (a scan would cut them). */
const FOREIGN = 'other-tool.warc';
const FOREIGN_BYTES = Buffer.from('WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 3\r\n\r\nabc\r\n\r\nnot WARC');

const count = (s: string, re: RegExp): number => (s.match(new RegExp(re.source, 'gm')) ?? []).length;

/**
 * The run's exit code; a run still alive after `ms` is killed and the test fails. `ms` bounds a
 * hang (a stop that never ends), far above what a stop takes on a loaded box, not a speed.
 */
async function exitWithin(run: CliRun, ms: number, what: string): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((r) => { timer = setTimeout(() => r('late'), ms); });
  const res = await Promise.race([run.done, late]);
  clearTimeout(timer);
  if (res === 'late') {
    run.child.kill('SIGKILL');
    await run.done;
    assert.fail(`${what} had not ended ${ms} ms after its stop:\n${run.out().slice(-2000)}`);
  }
  return res;
}

/** Every crawl process started; a failed assertion must not leave one running (it would hold the test open). */
const live: CliRun[] = [];
after(() => {
  for (const r of live) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGKILL');
});

/**
 * POST a verb to the run's status server (its "status server:" line), with the control token the
 * crawl wrote to its state directory (status-server.ts); it must answer 200.
 */
async function control(run: CliRun, state: string, verb: 'pause' | 'resume' | 'stop'): Promise<void> {
  const url = /status server: (\S+)\/status/.exec(run.out())![1]!;
  const token = readFileSync(path.join(state, 'control-token'), 'utf8').trim();
  const res = await fetch(`${url}/${verb}`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
  assert.equal(res.status, 200, `POST /${verb}`);
}

/** Wait until the server has answered `n` requests in all, or the run has ended (the test's timeout bounds it). */
async function untilRequests(web: SimwebChild, n: number, run: CliRun): Promise<void> {
  while ((await web.requests()) < n && run.child.exitCode === null) await sleep(50);
}

test(`stop and resume in every way (${LONG ? 'three rounds' : 'one round'}): nothing lost, nothing but the in-flight window fetched twice, WARC intact, a moved state resumes`, { timeout: LONG ? 3_600_000 : 1_200_000 }, async () => {
  const web = await forkSimweb('tiny', WEB);
  const seed = Number(process.env.DRUMCRAWL_STOP_SEED ?? 1);
  const random = seededRandom(seed);
  const note = `(replay: DRUMCRAWL_STOP_SEED=${seed})`;
  try {
    let dir = await tempDir('e2e-stops');
    const first = dir;
    const settings = (d: string) => crawlSettings(web, {
      stateDir: path.join(d, 'state'), outDir: path.join(d, 'warc'),
      hostDelayMs: 40, ipDelayMs: 10, minHostDelayMs: 40, minIpDelayMs: 10, politenessMarginMs: 5,
      // two page workers (the default --page-workers on; --ram 768M holds two: ram-budget.ts): each
      // fetches and encodes its IPs' pages, so the WARC's records come from several threads at every stop
      workers: 2, ramBytes: 768 * 2 ** 20, fetchConcurrency: 32, fetchTimeoutMs: 5000,
    });
    const runs: RunRecord[] = [];
    const stops: Stop[] = LONG ? [...ROUND, ...ROUND, ...ROUND] : FAST_ROUND;
    const log: string[] = [];
    const outs: string[] = [];
    let finished = false;
    let lockChecked = false;
    for (let k = 0; k <= stops.length && !finished; k++) {
      const stop: Stop | 'end' = k < stops.length ? stops[k]! : 'end';
      // The directory is moved before the last run (and between rounds in the long variant).
      if (k > 0 && (stop === 'end' || (LONG && k % ROUND.length === 0))) {
        const moved = `${dir}-moved${k}`;
        await rename(dir, moved);
        dir = moved;
      }
      const state = path.join(dir, 'state');
      if (k === 1) writeFileSync(path.join(dir, 'warc', FOREIGN), FOREIGN_BYTES);
      const m0 = await readManifest(state);
      const extra: string[] = [];
      if (stop === 'max-pages') extra.push('--max-pages', String((m0?.counters.pages ?? 0) + 150 + Math.floor(random() * 250)));
      if (stop === 'max-time') extra.push('--max-time', String(2 + Math.floor(random() * 3)));
      // Every resume serves its status: its "status server:" line marks the moment it has
      // recovered and opened its state and starts to crawl.
      if (k > 0 || stop === 'post-stop') extra.push('--status-port', '0');
      const stageLine = stop === 'end' ? undefined : STAGE_LINE[stop];
      if (stageLine !== undefined) extra.push('--checkpoint-interval', '1500');
      const env = stageLine !== undefined ? { DRUMCRAWL_DEBUG_TIMING: '1' } : {};
      const spawnedAt = Date.now();
      const run = k === 0 ? cli([...crawlCommand(settings(dir)), ...extra], env) : cli(['resume', state, '--progress', 'none', ...extra], env);
      live.push(run);
      const readyAt = k === 0 ? null : await run.waitFor(/^status server: /m);
      // Once, in the first resume that only an outside stop ends (a --max-pages or --max-time run
      // may end before the checks do).
      if (k >= 1 && !lockChecked && ['sigint', 'sigkill', 'sigterm', 'post-stop'].includes(stop)) {
        lockChecked = true;
        // A second process on the live state is refused before it touches anything (what it would
        // have damaged, this crawl's state and WARC, is judged below). Started once this run has
        // made requests: its start-up CPU is not in this run's first-request latency, judged below.
        await untilRequests(web, (await web.requests()) + 20, run);
        // Paused meanwhile, so that the checks take none of the web the later stops need.
        await control(run, state, 'pause');
        const second = cli(['resume', state, '--progress', 'none']);
        live.push(second);
        assert.equal(await exitWithin(second, 300_000, 'a second resume of a live state'), 2, second.out());
        assert.match(second.out(), new RegExp(`CRAWL_STATE_LOCKED: state \\S+ is in use by drumcrawl process ${run.child.pid} `));
        // `stats` reads the live state and says who crawls it.
        const st = cli(['stats', state]);
        assert.equal(await exitWithin(st, 300_000, 'stats of a live state'), 0, st.out());
        assert.match(st.out(), new RegExp(`^process +crawling as pid ${run.child.pid} since `, 'm'));
        await control(run, state, 'resume');
      }
      const rec: RunRecord = { stop, spawnedAt, exitedAt: 0, readyAt, killedAt: null, doneAtKill: null, checkpointStartAtKill: null };
      runs.push(rec);
      // The moment: 100–350 more requests into the run (the web has thousands).
      const moment = (await web.requests()) + 100 + Math.floor(random() * 250);
      let signalledAt = 0;
      if (stop === 'sigint' || stop === 'sigterm' || stop === 'sigkill') {
        await untilRequests(web, moment, run);
        signalledAt = Date.now();
        if (stop === 'sigkill') rec.killedAt = signalledAt;
        run.child.kill(stop === 'sigint' ? 'SIGINT' : stop === 'sigterm' ? 'SIGTERM' : 'SIGKILL');
      } else if (stop === 'post-stop') {
        await run.waitFor(/status server: \S+\/status/);
        await untilRequests(web, moment, run);
        signalledAt = Date.now();
        await control(run, state, 'stop');
      } else if (stageLine !== undefined) {
        await untilRequests(web, moment, run);
        // The next checkpoint's stage line: the checkpoint is under way.
        const n = count(run.out(), stageLine);
        while (count(run.out(), stageLine) === n && run.child.exitCode === null) await sleep(5);
        signalledAt = Date.now();
        if (stop !== 'sigint-checkpoint') rec.killedAt = signalledAt;
        run.child.kill(stop === 'sigint-checkpoint' ? 'SIGINT' : 'SIGKILL');
      }
      // Every run ends by itself within a bound (a stop that hangs fails here, it does not hang the suite).
      const code = await exitWithin(run, stop === 'end' ? 900_000 : 300_000, `run ${k + 1} (${stop}) ${note}`);
      rec.exitedAt = Date.now();
      outs.push(run.out());
      if (rec.killedAt !== null) {
        assert.equal(code, -9, `run ${k + 1} (${stop}) ended by the kill ${note}`);
        rec.doneAtKill = new Set((await readDoneLog(state)).map((d) => decodeFrontierUrl(d).url));
        const m = await readManifest(state);
        rec.checkpointStartAtKill = m?.startedAt !== undefined ? Date.parse(m.startedAt) : null;
      } else {
        assert.equal(code, 0, `run ${k + 1} (${stop}) exits 0 ${note}\n${run.out()}`);
        // A drained stop writes nothing after its final checkpoint: the WARC ends where it says
        // (the next resume has nothing to read back).
        const fin = (await readManifest(state))!;
        if (fin.warc !== null) assert.equal(statSync(path.join(dir, 'warc', fin.warc.file)).size, fin.warc.offset, `run ${k + 1} (${stop}): the WARC ends at the final checkpoint ${note}`);
      }
      const m = await readManifest(state);
      finished = m?.finished === true;
      log.push(`${k + 1}:${stop} ${m?.counters.pages ?? 0} pages in ${((rec.exitedAt - spawnedAt) / 1000).toFixed(1)} s${signalledAt > 0 ? `, exit ${rec.exitedAt - signalledAt} ms after the stop` : ''}`);
      console.log(`run ${log[log.length - 1]!}`); // as it happens: a test that times out shows where
      if (finished && stop !== 'end') assert.fail(`the web ran out before the stops did (run ${k + 1}): make it larger ${note}`);
    }
    console.log(`seed ${seed}: ${log.join('; ')}`);
    assert.ok(lockChecked, 'a second resume was tried beside a live one');
    assert.ok(finished, 'the last resume finished the crawl');
    assert.ok(!existsSync(first), 'nothing was created at the state directory\'s old path');

    const r = await web.report({ hostMs: 40, ipMs: 10 });
    assert.ok(r.reachable!.length >= 3000, `a web of ${r.reachable!.length} pages`);
    // Resume progress.
    const lat = resumeLatencies(r, runs);
    const opens = runs.map((x, i) => [i + 1, /resumed: state recovered and opened in (\d+) ms/.exec(outs[i] ?? '')?.[1]] as const).filter(([, v]) => v !== undefined);
    console.log(`recovery + open: ${opens.map(([i, v]) => `run ${i} ${v} ms`).join(', ')}`);
    console.log(`first request after "status server:": ${lat.map((x) => `run ${x.run} ${x.ms === null ? 'none' : `${x.ms} ms`}`).join(', ')}`);
    for (const x of lat) assert.ok(x.ms !== null, `run ${x.run} made requests after resuming ${note}`);
    // Coverage.
    const fetched = new Set(r.pageFetches);
    const missing = r.reachable!.filter((u) => !fetched.has(u));
    const extraPages = [...fetched].filter((u) => !r.reachable!.includes(u));
    assert.deepEqual({ missing: missing.slice(0, 10), extra: extraPages.slice(0, 10) }, { missing: [], extra: [] }, `union of fetched pages = an uninterrupted crawl's ${note}`);
    assert.deepEqual(r.robotsViolations, []);
    // Repeats: only a kill's in-flight window (and fetches a graceful stop aborted).
    const out = path.join(dir, 'warc');
    const crawlLog = readFileSync(path.join(out, 'crawl.log'), 'utf8').split('\n').filter((l) => l !== '').map(parseCrawlLogLine);
    const aborted = new Map<string, number[]>();
    for (const l of crawlLog) if (l.outcome === 'CRAWL_FETCH_ABORTED') aborted.set(l.url, [...(aborted.get(l.url) ?? []), l.time.getTime()]);
    const rep = repeatedRequests(r, runs, aborted);
    const w = rep.windowMs.sort((a, b) => a - b);
    console.log(`${r.pageFetches.length} page requests for ${fetched.size} pages; ${rep.allowed} repeats from in-flight windows (${w.length > 0 ? `${w[0]}–${w[w.length - 1]} ms before the kill` : 'none'}), ${aborted.size} aborted by stops`);
    assert.deepEqual(rep.bad.slice(0, 20), [], `nothing but the in-flight window fetched twice (${rep.bad.length} repeats) ${note}`);
    // WARC.
    assert.deepEqual(readFileSync(path.join(out, FOREIGN)), FOREIGN_BYTES, 'a foreign WARC file in the output directory is left as it was');
    const recs = await readWarcDir(out, (f) => f !== FOREIGN);
    assert.deepEqual(warcProblems(recs).slice(0, 20), [], 'every record has digests that recompute; every response holds its body or says why not');
    const captured = new Set(recs.filter((x) => x.type === 'response' || x.type === 'revisit').map((x) => x.uri!));
    const uncaptured = [...fetched].filter((u) => r.statusByUrl[u]! < 500 && !captured.has(u));
    assert.deepEqual(uncaptured.slice(0, 10), [], 'every fetched page is in the WARC');
  } finally {
    await web.close();
  }
});
