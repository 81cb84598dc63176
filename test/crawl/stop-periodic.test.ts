/**
 * A stop that lands while a periodic checkpoint runs its merges ends (checkpoint-stage.ts
 * settlePeriodic). The periodic checkpoint holds new merges from its URLseen merge until its commit,
 * which the scheduler's loop makes at its next turn; a stop leaves that loop at once, and its drain
 * waits for pages that need a ContentSeen merge: before, nothing committed the periodic checkpoint
 * and the stop waited for ever (bench:soak at 10^7 hosts, `--ram 512M`: a SIGTERM during a periodic
 * checkpoint, 9 minutes "stopping" with nothing in flight). Checkpoints every 100 ms, so that most
 * stops find one under way; each run must end with its stop's own checkpoint.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { Crawler } from '../../src/crawl/pipeline.js';
import { resolveCrawlConfig } from '../../src/config/config.js';
import { readManifest } from '../../src/state/checkpoint.js';
import { SIMWEB_NETWORKS, UA, forkSimweb, sleep, tempDir, type SimwebChild } from '../e2e/harness.js';

const webs: SimwebChild[] = [];
const dirs: string[] = [];
after(async () => {
  for (const w of webs) await w.close();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

test('a stop during a periodic checkpoint\'s merges ends with its own checkpoint', { timeout: 300_000 }, async () => {
  const web = await forkSimweb('demo', {}, { log: false });
  webs.push(web);
  for (const [i, afterMs] of [200, 300, 500, 700, 900, 1100].entries()) {
    const dir = await tempDir(`stop-periodic-${i}`);
    dirs.push(dir);
    const crawler = await Crawler.open(resolveCrawlConfig({
      seeds: web.seeds, stateDir: path.join(dir, 'state'), outDir: path.join(dir, 'out'), dnsServers: [web.dnsServer],
      allowNetworks: SIMWEB_NETWORKS, userAgent: UA, progress: 'none', workers: 1, ramBytes: 256 * 2 ** 20, scope: 'any',
      hostDelayMs: 0, ipDelayMs: 0, minHostDelayMs: 0, minIpDelayMs: 0, checkpointIntervalMs: 100,
    }));
    let over = false;
    const running = crawler.run().finally(() => { over = true; });
    // From the first page on: the stop falls into the crawl, not its opening.
    for (let k = 0; k < 600 && !over && crawler.snapshot().pages === 0; k++) await sleep(50);
    assert.equal(over, false, `run ${i} ended before its stop`);
    await sleep(afterMs);
    crawler.stop('test');
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((r) => { timer = setTimeout(() => r('late'), 30_000); });
    const ended = await Promise.race([running.then(() => 'ended' as const), late]);
    clearTimeout(timer);
    const b = ended === 'ended' ? null : crawler.snapshot().backlog;
    assert.equal(ended, 'ended', `stop ${i} (${afterMs} ms after the first page) had not ended after 30 s: backlog ${JSON.stringify(b)}`);
    assert.equal((await readManifest(path.join(dir, 'state')))?.reason, 'stop:test', 'the stop\'s own checkpoint is the last');
  }
});
