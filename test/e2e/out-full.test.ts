/**
 * The output disk fills up mid-crawl, as a user meets it: the real CLI crawls simweb with its
 * output directory on a 20 MiB tmpfs (a private mount namespace, `unshare -m`; `-rm` when not
 * root), uncompressed WARC and no delays, so the disk is full within seconds. Then:
 *   - the crawl ends by itself within a bound, exit 1, one line `drumcrawl: CRAWL_STORE_WRITE:`
 *     that says how to go on (it had waited forever for pages whose records could not be written);
 *   - the tmpfs is grown (the user frees space) and `resume` runs 3 s and exits 0;
 *   - every WARC record then reads back with warcio, digests recomputing: the torn record the
 *     full disk left was cut by the resume's recovery.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { crawlFlags, crawlSettings, forkSimweb, inMountNamespace, shq as q, tempDir, cliArgv } from './harness.js';
import { readWarcDir, warcProblems } from './warc-read.js';

/**
 * Each CLI run inside the namespace is killed after this long (a hang fails the test): a bound on
 * a hang, far above what filling 20 MiB takes on a loaded box (74 s for the whole test at load 15).
 */
const RUN_LIMIT_S = 900;

test('the output disk fills up: the crawl stops at once with CRAWL_STORE_WRITE (exit 1); after space is freed, resume repairs the WARC and goes on', { timeout: 2_400_000 }, async () => {
  const web = await forkSimweb('bench');
  try {
    const dir = await tempDir('e2e-out-full');
    const out = path.join(dir, 'out');
    const copy = path.join(dir, 'copy');
    mkdirSync(out);
    mkdirSync(copy);
    const state = path.join(dir, 'state');
    const flags = crawlFlags(crawlSettings(web, {
      seeds: web.seeds.slice(0, 5), stateDir: state, outDir: out, warcCompression: 'none',
      // No time limit: the crawl must end because the disk is full (the bench web never runs dry).
      hostDelayMs: 0, ipDelayMs: 0, minHostDelayMs: 0, minIpDelayMs: 0,
    }));
    const cli = (args: string[]): string => `timeout -s KILL ${RUN_LIMIT_S} ${[process.execPath, ...cliArgv(), ...args].map(q).join(' ')}`;
    const script = [
      `mount -t tmpfs -o size=20m drumcrawl-out ${q(out)} || exit 99`,
      `${cli(['crawl', ...web.seeds.slice(0, 5), ...flags])} 2>${q(path.join(dir, 'crawl.err'))} >/dev/null; echo "@@crawl $?"`,
      `mount -o remount,size=1g ${q(out)}`,
      `${cli(['resume', state, '--max-time', '3', '--progress', 'none'])} 2>${q(path.join(dir, 'resume.err'))} >/dev/null; echo "@@resume $?"`,
      `cp -a ${q(out)}/. ${q(copy)}/`,
    ].join('\n');
    const t0 = Date.now();
    const stdout = await new Promise<string>((resolve) => {
      const [cmd, ...argv] = inMountNamespace(script);
      const c = spawn(cmd!, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
      let s = '';
      c.stdout.on('data', (d: Buffer) => { s += d.toString(); });
      c.on('close', () => resolve(s));
    });
    const crawlErr = readFileSync(path.join(dir, 'crawl.err'), 'utf8');
    const resumeErr = readFileSync(path.join(dir, 'resume.err'), 'utf8');
    console.log(`out-full: ${stdout.trim().replace(/\n/g, '; ')} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    assert.match(stdout, /^@@crawl 1$/m, `the crawl on a full disk exits 1 by itself (137: killed after ${RUN_LIMIT_S} s):\n${crawlErr}`);
    // (a heap warning may come first: the test starts the CLI without bin/drumcrawl)
    const lines = crawlErr.split('\n').filter((l) => l !== '' && !l.startsWith('drumcrawl: warning:'));
    assert.equal(lines.length, 1, crawlErr);
    // Whichever of the output's writers meets the full disk first (WARC or crawl log) stops the crawl.
    assert.match(lines[0]!, /^drumcrawl: CRAWL_STORE_WRITE: cannot write the (WARC output|crawl log): ENOSPC.* resume /);
    assert.match(stdout, /^@@resume 0$/m, `the resume, with space again, exits 0:\n${resumeErr}`);
    const recs = await readWarcDir(copy);
    assert.ok(recs.filter((r) => r.type === 'response').length > 500, `the disk filled with pages (${recs.length} records)`);
    assert.deepEqual(warcProblems(recs).slice(0, 10), [], 'every record reads back whole after the resume');
  } finally {
    await web.close();
  }
});
