/**
 * Crash and stop safety through the real CLI: a crawl SIGKILLed at three seeded random moments and
 * resumed each time ends with the same set of fetched URLs as an uninterrupted crawl of the same
 * web (simweb's ground truth, which an uninterrupted crawl matches exactly — crawl.test.ts); a URL
 * is requested again only if it was in the in-flight window of a kill: not durable (not in done.log)
 * at the kill and dispatched after the last checkpoint began (stop-resume-judge.ts), and never twice
 * within one run. SIGTERM drains, checkpoints, exits 0. WARC files stay readable (torn tails are
 * cut on resume). DRUMCRAWL_KILL_SEED replays the moments of a failed run (the seed is printed).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { existsSync, readdirSync } from 'node:fs';
import { readWarcDictionary, scanWarc } from '../../src/store/index.js';
import { readManifest, readDoneLog } from '../../src/state/checkpoint.js';
import { decodeFrontierUrl } from '../../src/frontier/index.js';
import { cli, crawlCommand, crawlSettings, forkSimweb, seededRandom, tempDir, untilCheckpoint, untilServed } from './harness.js';
import { readWarcDir, warcProblems } from './warc-read.js';
import { repeatedRequests, type RunRecord } from './stop-resume-judge.js';

// gzip (the default) and, under DRUMCRAWL_LONG (npm run test:long: the suite's time budget), zstd
// with its dictionary trained from the first records (the kills fall before and after the
// training; a resume takes its checkpoint's file's dictionary). The default suite covers zstd's
// torn tails and resumes in test/store/warc-zstd.test.ts and the SIGTERM test below (zstd WARC).
const LONG = process.env.DRUMCRAWL_LONG !== undefined && process.env.DRUMCRAWL_LONG !== '';
for (const compression of LONG ? ['gzip', 'zstd'] as const : ['gzip'] as const) test(`SIGKILL ×3 + resume (${compression} WARC): same fetched set as an uninterrupted crawl, re-fetches only from the in-flight window, WARC readable`, { timeout: 1_200_000 }, async () => {
  // ~1,400 pages on 6 IPs: a crawl long enough for three kills.
  const web = await forkSimweb('tiny', { plds: 8, hostsPerPldMean: 2.5, hostsPerPldMax: 4, pagesPerHostMin: 50, pagesPerHostMax: 90, ips: 6, linksPerPageMean: 12 });
  const seed = Number(process.env.DRUMCRAWL_KILL_SEED ?? 1);
  const random = seededRandom(seed);
  try {
    const dir = await tempDir('e2e-kill');
    const state = path.join(dir, 'state');
    const out = path.join(dir, 'warc');
    // The checkpoint interval is 60 s, so no periodic checkpoint falls between the kills: without
    // done.log every page of a run would be fetched again after its kill.
    const input = crawlSettings(web, {
      stateDir: state, outDir: out, hostDelayMs: 60, ipDelayMs: 15, minHostDelayMs: 60, minIpDelayMs: 15,
      // two page workers (the default --page-workers on; --ram 768M holds two: ram-budget.ts): the
      // kills fall while both fetch and encode
      politenessMarginMs: 40, checkpointIntervalMs: 60_000, workers: 2, ramBytes: 768 * 2 ** 20, fetchConcurrency: 16, fetchTimeoutMs: 5000,
      warcCompression: compression,
    });
    const runs: RunRecord[] = [];
    let run = cli(crawlCommand(input));
    let rec: RunRecord = { stop: 'sigkill', spawnedAt: Date.now(), exitedAt: 0, readyAt: null, killedAt: null, doneAtKill: null, checkpointStartAtKill: null };
    for (let k = 0; k < 3; k++) {
      await untilCheckpoint(state, run);
      // A random moment in the middle of the run: after 150–350 more requests.
      const target = (await web.requests()) + 150 + Math.floor(random() * 200);
      await untilServed(web, target, run);
      rec.killedAt = Date.now();
      run.child.kill('SIGKILL');
      assert.equal(await run.done, -9, `kill ${k + 1} (seed ${seed}) landed before the crawl ended`);
      rec.exitedAt = Date.now();
      rec.doneAtKill = new Set((await readDoneLog(state)).map((d) => decodeFrontierUrl(d).url));
      const m = await readManifest(state);
      rec.checkpointStartAtKill = m?.startedAt !== undefined ? Date.parse(m.startedAt) : null;
      runs.push(rec);
      // The stored config (delays, margin, user agent) is kept; only runtime/display flags change.
      rec = { stop: k < 2 ? 'sigkill' : 'end', spawnedAt: Date.now(), exitedAt: 0, readyAt: null, killedAt: null, doneAtKill: null, checkpointStartAtKill: null };
      run = cli(['resume', state, '--progress', 'none']);
    }
    const code = await run.done;
    rec.exitedAt = Date.now();
    runs.push(rec);
    assert.equal(code, 0, run.out());
    const m = await readManifest(state);
    assert.equal(m?.finished, true, 'the resumed crawl finished by itself');
    const r = await web.report({ hostMs: 60, ipMs: 15 });
    const fetched = new Set(r.pageFetches);
    assert.deepEqual([...fetched].sort(), [...r.reachable!].sort(), `same set of fetched URLs as an uninterrupted crawl (seed ${seed})`);
    const rep = repeatedRequests(r, runs, new Map());
    const w = rep.windowMs.sort((a, b) => a - b);
    console.log(`seed ${seed}: ${r.pageFetches.length} requests for ${fetched.size} pages, ${rep.allowed} repeats from the kills' in-flight windows (requested ${w.length > 0 ? `${w[0]!.toFixed(0)}–${w[w.length - 1]!.toFixed(0)} ms` : '-'} before the kill); done.log at the kills: ${runs.slice(0, 3).map((x) => x.doneAtKill!.size).join(', ')}`);
    assert.ok(runs.slice(0, 3).every((x) => x.doneAtKill!.size > 0), 'pages became durable before each kill');
    assert.deepEqual(rep.bad, [], `only the in-flight window of a kill is fetched twice (seed ${seed})`);
    assert.deepEqual(r.robotsViolations, []);
    // WARC: every record of every file parses and its digests are there and recompute (torn tails were cut).
    const recs = await readWarcDir(out);
    assert.deepEqual(warcProblems(recs), []);
    // and through the project's own scanner, whole (one frame or member per record)
    const files = readdirSync(out).filter((f) => /\.warc(\.gz|\.zst)$/.test(f)).map((f) => path.join(out, f));
    for (const f of files) {
      const sc = await scanWarc(f);
      assert.equal(sc.error, undefined, f);
      assert.equal(sc.validLength, sc.fileLength, f);
    }
    assert.equal(files.length > 0 && files.every((f) => f.endsWith(compression === 'zstd' ? '.warc.zst' : '.warc.gz')), true);
    if (compression === 'zstd') {
      const dicts = await Promise.all(files.map((f) => readWarcDictionary(f)));
      assert.ok(dicts.some((d) => d !== null), 'a dictionary was trained and begins the files after it');
    }
    const captured = new Set(recs.filter((x) => x.type === 'response' || x.type === 'revisit').map((x) => x.uri!));
    for (const u of fetched) if (r.statusByUrl[u]! < 500) assert.ok(captured.has(u), `${u} is in the WARC`);
  } finally {
    await web.close();
  }
});

// zstd WARC here (gzip, the default, in stop-resume.test.ts): a graceful stop and its resume lose
// nothing from a dictionary-compressed archive either.
test('SIGTERM (zstd WARC): drains, checkpoints, exits 0; the live block and the summary agree; the summary\'s resume command runs; resume finishes; every WARC file scans whole', { timeout: 900_000 }, async () => {
  const web = await forkSimweb('tiny');
  try {
    const dir = await tempDir('e2e-term');
    const state = path.join(dir, 'state');
    const run = cli(crawlCommand(crawlSettings(web, {
      stateDir: state, outDir: path.join(dir, 'warc'), hostDelayMs: 100, ipDelayMs: 25, minHostDelayMs: 100, minIpDelayMs: 25, workers: 1,
      progress: 'plain', progressIntervalMs: 600_000, warcCompression: 'zstd',
    })));
    await untilCheckpoint(state, run);
    // In the middle of the crawl: pages fetched, more to come.
    await untilServed(web, (await web.requests()) + 40, run);
    run.child.kill('SIGTERM');
    assert.equal(await run.done, 0, run.out());
    const m = await readManifest(state);
    assert.match(m!.reason, /^stop:signal:SIGTERM$/);
    assert.equal(m!.pending, 0, 'drained: nothing left in flight');
    // The last status line says what the summary says.
    assert.match(run.out(), /^crawl stopped \(signal:SIGTERM\)/m);
    assert.match(run.out(), /\] stopped pages=/, 'the final status line says stopped');
    assert.doesNotMatch(run.out(), /\] done pages=/);
    // "continue with: <command> resume <state>": a command that exists as printed.
    const cont = /continue with: (.+) resume (\S+)\)$/m.exec(run.out());
    assert.ok(cont !== null, run.out());
    const program = cont[1]!.split(' ')[0]!;
    assert.ok(program === 'drumcrawl' ? (process.env.PATH ?? '').split(path.delimiter).some((d) => existsSync(path.join(d, 'drumcrawl'))) : existsSync(program), `the printed command (${cont[1]}) runs: ${program} exists`);
    const st = cli(['stats', state]);
    assert.equal(await st.done, 0);
    assert.match(st.out(), /pages\s+\d+ fetched/);
    assert.match(st.out(), /^process +none running on this state$/m);
    const res = cli(['resume', state, '--progress', 'none']);
    assert.equal(await res.done, 0, res.out());
    assert.equal((await readManifest(state))!.finished, true);
    // A resume of a finished crawl fetches nothing, and says so without a CPU-per-page figure.
    const idle = cli(['resume', state, '--progress', 'none']);
    assert.equal(await idle.done, 0, idle.out());
    assert.match(idle.out(), /pages fetched .*no page fetched this run/);
    assert.doesNotMatch(idle.out(), /ms CPU\/page/);
    const r = await web.report({ hostMs: 100, ipMs: 25 });
    assert.deepEqual([...new Set(r.pageFetches)].sort(), [...r.reachable!].sort());
    assert.deepEqual(r.duplicates, [], 'a graceful stop re-fetches nothing');
    const out = path.join(dir, 'warc');
    const recs = await readWarcDir(out);
    assert.deepEqual(warcProblems(recs), []);
    const captured = new Set(recs.filter((x) => x.type === 'response' || x.type === 'revisit').map((x) => x.uri!));
    for (const u of new Set(r.pageFetches)) if (r.statusByUrl[u]! < 500) assert.ok(captured.has(u), `${u} is in the WARC`);
    for (const f of readdirSync(out).filter((x) => x.endsWith('.warc.zst'))) {
      const sc = await scanWarc(path.join(out, f));
      assert.deepEqual([sc.error, sc.validLength], [undefined, sc.fileLength], f);
    }
  } finally {
    await web.close();
  }
});
