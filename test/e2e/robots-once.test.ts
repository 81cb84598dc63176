/**
 * Robots once per host per expiry period (thesis VII.1, Fig. 2: RobotsCache + RobotsRequested),
 * judged from simweb's request log. A web of many hosts with one to three pages each, a RAM host
 * table far smaller than the web (`hostTableSize`), so hosts are evicted while links to their other
 * pages still arrive; the crawl is stopped gracefully and resumed, SIGKILLed and resumed three
 * times, and runs to its end. Every host's robots.txt may be requested once (the period, ≥ 1 h, outlasts the crawl);
 * only a request in flight at a kill — sent, its answer not yet received by the crawler — may be
 * repeated: every answer received is journaled before it is used (src/robots/robots-journal.ts) and
 * replayed at the resume (robots-once-judge.ts says how "in flight" is read from the server log).
 * The crawl at the scale (10^6 hosts, --ram 512M) is `npm run bench:robots-crawl`
 * (bench/robots-drum/README.md).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readManifest } from '../../src/state/checkpoint.js';
import { cli, crawlCommand, crawlSettings, forkSimweb, tempDir, untilServed, type CliRun } from './harness.js';
import { judgeRobotsOnce, ROBOTS_ANSWER_LAG_MS } from './robots-once-judge.js';

/** One to three pages per host, a robots.txt on each: 442 hosts on 8 IPs. */
const PARAMS = { plds: 160, hostsPerPldMean: 3, hostsPerPldMax: 6, pagesPerHostMin: 1, pagesPerHostMax: 3, linksPerPageMean: 10, intraHostShare: 0.1, intraPldShare: 0.3, ips: 8, seedCount: 6, pageBytesMean: 1500, robots: { rules: 0.3, absent: 0.2 } };
/** Requests before the graceful stop, and into each resumed run before its kill. */
const STOP_AFTER = 350;
const KILL_AFTER = 60;
const KILLS = 3;

/** The run's exit, or a failure naming the step and the run's output after `ms` (a bound on a hang, far above a loaded box's time). */
async function exitOf(run: CliRun, step: string, ms: number): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((r) => { timer = setTimeout(() => r('late'), ms); });
  const code = await Promise.race([run.done, late]);
  clearTimeout(timer);
  if (code === 'late') assert.fail(`${step}: the run did not end within ${ms / 1000} s; its output:\n${run.out().slice(-4000)}`);
  return code;
}

test('robots.txt once per host per expiry period across host-table evictions, a graceful stop + resume and SIGKILLs + resumes', { timeout: 1_800_000 }, async () => {
  const web = await forkSimweb('tiny', PARAMS);
  const runs: CliRun[] = [];
  const t0 = Date.now();
  const step = (what: string): void => console.log(`robots-once: ${what} at ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  try {
    const dir = await tempDir('robots-once');
    const state = path.join(dir, 'state');
    const input = crawlSettings(web, {
      stateDir: state, outDir: path.join(dir, 'warc'), hostDelayMs: 40, ipDelayMs: 40, minHostDelayMs: 40, minIpDelayMs: 40,
      politenessMarginMs: 5, workers: 1, fetchConcurrency: 16, fetchTimeoutMs: 5000, checkpointIntervalMs: 60_000,
      ramBytes: 256 * 2 ** 20, hostTableSize: 48,
    });
    // 1. Graceful stop.
    let run = cli(crawlCommand(input));
    runs.push(run);
    await untilServed(web, STOP_AFTER, run);
    run.child.kill('SIGTERM');
    assert.equal(await exitOf(run, 'the SIGTERM stop', 300_000), 0, run.out());
    step('stopped (SIGTERM)');
    // 2. Resume, then SIGKILL, KILLS times: each kill lands early in a resumed run, while robots.txt
    // answers of QR's hosts still arrive tens per second.
    const kills: number[] = [];
    for (let i = 0; i < KILLS; i++) {
      run = cli(['resume', state, '--progress', 'none']);
      runs.push(run);
      await untilServed(web, (await web.requests()) + KILL_AFTER, run);
      run.child.kill('SIGKILL');
      kills.push(Date.now()); // after kill(2) returned: the process does not return to user space
      assert.equal(await exitOf(run, `kill ${i + 1}`, 300_000), -9, 'the kill landed before the crawl ended');
      step(`killed (${i + 1})`);
    }
    // 3. Resume to the end.
    run = cli(['resume', state, '--progress', 'none']);
    runs.push(run);
    assert.equal(await exitOf(run, 'the last resume', 900_000), 0, run.out());
    step('finished');
    assert.equal((await readManifest(state))?.finished, true, 'the crawl finished');
    const r = await web.report({ hostMs: 40, ipMs: 40 });
    const v = judgeRobotsOnce(r.robotsRequests, { periodMs: 3_600_000, kills });
    const atKill = r.robotsRequests.filter((q) => kills.some((k) => q.start <= k + ROBOTS_ANSWER_LAG_MS && q.end > k - ROBOTS_ANSWER_LAG_MS)).length;
    console.log(`robots-once: ${r.pageFetches.length} page requests, ${v.requests} robots requests for ${v.hosts} hosts; ${v.repeated.length} hosts asked twice or more, ${v.excused.length} more after a request in flight at one of ${kills.length} kills (${atKill} in flight)`);
    assert.ok(v.hosts > 200, `the crawl reached many hosts (${v.hosts})`);
    assert.deepEqual(v.repeated.slice(0, 20), [], `${v.repeated.length} hosts had robots.txt requested again within the expiry period`);
    assert.deepEqual(r.robotsViolations, []);
    // `drumcrawl stats` shows both DRUMs; most checks of the resumed runs were hits.
    const st = cli(['stats', state]);
    assert.equal(await st.done, 0, st.out());
    const hits = /RobotsCache\s+(\d+) hosts; (\d+) checks, ([\d.]+) % hits/.exec(st.out());
    assert.ok(hits !== null && Number(hits[1]) > 200 && Number(hits[3]) > 0, st.out());
    assert.match(st.out(), /RobotsReq\.\s+\d+ hosts; \d+ asks/);
    console.log(/Robots jnl\..*/.exec(st.out())?.[0]);
    assert.match(st.out(), /Robots jnl\.\s+\d+ answers replayed after a kill/);
  } finally {
    for (const x of runs) if (x.child.exitCode === null) x.child.kill('SIGKILL');
    await web.close();
  }
});
