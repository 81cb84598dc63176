/**
 * The WARC position a checkpoint records is on disk when the manifest is (checkpoint-stage.ts): a
 * crawl's first checkpoint comes before any page, when the only record is the new file's warcinfo
 * (and a resumed run's, in a new file); no page waited for a sync then, and the position used to
 * count the writer's buffered bytes. A SIGKILL right after such a checkpoint left a 0-byte file
 * the manifest said held 385 bytes, and the next resume was refused (CRAWL_OUT_UNVERIFIED,
 * test/e2e/robots-once.test.ts 4 runs of 5). Judged while the crawl runs, as a kill would find it:
 * after the first checkpoint of a new crawl and of a resume, the named file is at least as long
 * as the recorded offset.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { Crawler } from '../../src/crawl/pipeline.js';
import { resolveCrawlConfig } from '../../src/config/config.js';
import { readManifest, type CheckpointManifest } from '../../src/state/index.js';
import { SIMWEB_NETWORKS, UA, forkSimweb, tempDir, type SimwebChild } from '../e2e/harness.js';

const webs: SimwebChild[] = [];
const dirs: string[] = [];
after(async () => {
  for (const w of webs) await w.close();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** The first checkpoint after `epochAfter`, and its WARC file's size on disk at once (the crawl still running). */
async function firstCheckpoint(crawler: Crawler, state: string, out: string, epochAfter: number): Promise<{ m: CheckpointManifest; size: number }> {
  const running = crawler.run();
  try {
    for (let i = 0; i < 6000; i++) {
      const m = await readManifest(state).catch(() => null);
      if (m !== null && m.epoch > epochAfter && m.warc !== null) return { m, size: statSync(path.join(out, m.warc.file)).size };
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error('no checkpoint within 60 s');
  } finally {
    crawler.stop('test');
    await running;
  }
}

test('the WARC offset a checkpoint records is on disk with the manifest (a new crawl, a resume)', { timeout: 180_000 }, async () => {
  const web = await forkSimweb('tiny', {});
  webs.push(web);
  const dir = await tempDir('ckpt-warc');
  dirs.push(dir);
  const state = path.join(dir, 'state');
  const out = path.join(dir, 'out');
  const input = {
    seeds: web.seeds, stateDir: state, outDir: out, dnsServers: [web.dnsServer], allowNetworks: SIMWEB_NETWORKS, userAgent: UA,
    progress: 'none' as const, workers: 1, ramBytes: 256 * 2 ** 20, paused: true,
  };
  const check = ({ m, size }: { m: CheckpointManifest; size: number }, when: string): void => {
    assert.ok(m.warc !== null && m.warc.offset > 0, `${when}: a WARC position past the warcinfo`);
    assert.ok(size >= m.warc.offset, `${when}: ${m.warc.file} holds ${size} bytes on disk, the manifest records ${m.warc.offset}`);
  };
  // Paused: nothing is fetched, so the checkpoint's only records are the warcinfo.
  check(await firstCheckpoint(await Crawler.open(resolveCrawlConfig(input)), state, out, 0), 'the first checkpoint');
  const before = (await readManifest(state))!.epoch;
  check(await firstCheckpoint(await Crawler.resume(state, { paused: true }), state, out, before), 'a resumed run\'s first checkpoint');
});
