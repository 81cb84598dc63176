/**
 * A seeds file of 150,000 URLs on 150,000 hosts (5 MB, a third of the seeds file's cap) through the
 * real command line: the crawl starts and resolves hosts, stops (SIGTERM, once its crawl log shows a
 * DNS answer) with a checkpoint that keeps every seed's host in its scope, and resumes. One seed is simweb's; every other seed's
 * host is unknown to simweb's DNS (NXDOMAIN). (A spread of
 * the seeds' hosts into an array overflowed the stack: `CRAWL_ERROR: Maximum call stack size
 * exceeded` before the first request.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { readManifest } from '../../src/state/checkpoint.js';
import { cli, crawlFlags, crawlSettings, forkSimweb, sleep, tempDir } from './harness.js';

const SEEDS = 150_000;

test(`${SEEDS.toLocaleString('en')} seeds on as many hosts: the crawl starts, checkpoints and resumes`, { timeout: 600_000 }, async () => {
  const web = await forkSimweb('tiny');
  try {
    const dir = await tempDir('e2e-many-seeds');
    const seedsFile = path.join(dir, 'seeds.txt');
    const lines = [web.seeds[0]!];
    for (let i = 0; i < SEEDS - 1; i++) lines.push(`http://h${i}.nx${i % 5000}.test/p/${i}`);
    writeFileSync(seedsFile, lines.join('\n') + '\n');
    const state = path.join(dir, 'state');
    const out = path.join(dir, 'out');
    const flags = crawlFlags({ ...crawlSettings(web, { stateDir: state, outDir: out }), seeds: undefined });
    const first = cli(['crawl', '--seeds', seedsFile, ...flags]);
    // It crawled: hosts went through RobotsCache and RobotsRequested to DNS (in the frontier's
    // order, not the file's: the one served seed may or may not have come up yet). Stopped once
    // the crawl log shows an NXDOMAIN (synced within about a second of the answer), however long
    // the start takes on a loaded box; the test's timeout bounds the wait.
    const log = (): string => { try { return readFileSync(path.join(out, 'crawl.log'), 'utf8'); } catch { return ''; } };
    let exited = false;
    void first.done.then(() => { exited = true; });
    while (!exited && !/\tdropped:CRAWL_DNS_NXDOMAIN\t/.test(log())) await sleep(200);
    first.child.kill('SIGTERM');
    assert.equal(await first.done, 0, first.out());
    assert.match(first.out(), /crawl stopped \(signal:SIGTERM\)/);
    const m = await readManifest(state);
    assert.equal(m?.scopeHosts.length, SEEDS, 'every seed host in the scope the checkpoint keeps');
    assert.match(first.out(), /outcomes .*dropped:CRAWL_DNS_NXDOMAIN=[1-9]/);
    const again = cli(['resume', state, '--max-time', '3', '--progress', 'none']);
    assert.equal(await again.done, 0, again.out());
    assert.match(again.out(), /crawl (stopped \(max-time\)|finished)/);
  } finally {
    await web.close();
  }
});
