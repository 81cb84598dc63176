/**
 * A resume leaves the CDXJ indexes its recovery repaired open and sorts them while it crawls
 * (checkpoint-stage.ts finishIndexes); each manifest lists those not sorted yet (`indexing`), so a
 * run that ends before sorting one leaves it to the next. Judged on a crawl stopped and resumed once
 * (so that the manifest names the second run's WARC writer), the first run's finished index turned
 * back into an open one listed in the manifest (what a run killed before sorting it leaves), then resumed:
 * the resumed run's manifest lists it while it is open, and when the run ends the index is finished
 * and equal to what it was.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { Crawler } from '../../src/crawl/pipeline.js';
import { resolveCrawlConfig } from '../../src/config/config.js';
import { MANIFEST_FILE, manifestChecksum, readManifest, type CheckpointManifest } from '../../src/state/index.js';
import { cdxjOpenPathFor, cdxjPathFor } from '../../src/store/index.js';
import { SIMWEB_NETWORKS, UA, forkSimweb, tempDir, type SimwebChild } from '../e2e/harness.js';

const webs: SimwebChild[] = [];
const dirs: string[] = [];
after(async () => {
  for (const w of webs) await w.close();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

test('an index left open by a run is sorted by the next one, listed in its manifests until then', { timeout: 180_000 }, async () => {
  const web = await forkSimweb('demo', {});
  webs.push(web);
  const dir = await tempDir('index-finish');
  dirs.push(dir);
  const state = path.join(dir, 'state');
  const out = path.join(dir, 'out');
  const first = await Crawler.open(resolveCrawlConfig({
    seeds: web.seeds, stateDir: state, outDir: out, dnsServers: [web.dnsServer], allowNetworks: SIMWEB_NETWORKS, userAgent: UA,
    progress: 'none', workers: 1, ramBytes: 256 * 2 ** 20, scope: 'any', maxPages: 40,
    // politeness is not what this test is about: short delays (kept by the resumes: the state's
    // config) so that the three runs' 180 pages take no more than their opens and closes
    hostDelayMs: 20, minHostDelayMs: 20, ipDelayMs: 0, minIpDelayMs: 0,
  }));
  await first.run();
  const warc = readdirSync(out).find((f) => /\.warc\.gz$/.test(f))!;
  // A second run: the manifest then names its own WARC writer, whose files alone the next
  // recovery reads; the first run's file is reached only through `indexing`.
  await (await Crawler.resume(state, { maxPages: 60 })).run();
  assert.notEqual((await readManifest(state))!.warc!.file, warc);
  const index = readFileSync(cdxjPathFor(path.join(out, warc)), 'utf8');
  assert.ok(index.split('\n').length > 40, 'a finished index of the first run');
  // What a run killed before sorting it leaves: the index open (in the file's order, as recovery
  // repairs it), named by the manifest.
  const offset = (l: string): number => Number(/"offset":"(\d+)"/.exec(l)![1]);
  const lines = index.split('\n').filter((l) => l !== '').sort((a, b) => offset(a) - offset(b));
  writeFileSync(cdxjOpenPathFor(path.join(out, warc)), lines.join('\n') + '\n');
  renameSync(cdxjPathFor(path.join(out, warc)), path.join(dir, 'finished.cdxj'));
  const mf = path.join(state, MANIFEST_FILE);
  const m = JSON.parse(readFileSync(mf, 'utf8')) as CheckpointManifest;
  m.indexing = [warc];
  m.checksum = manifestChecksum(m);
  writeFileSync(mf, JSON.stringify(m));

  const second = await Crawler.resume(state, { maxPages: 80 });
  const listed: (string[] | undefined)[] = [];
  second.on('checkpoint', (c: CheckpointManifest) => listed.push(c.indexing));
  await second.run();
  assert.equal(existsSync(cdxjOpenPathFor(path.join(out, warc))), false, 'the open index is gone');
  assert.equal(readFileSync(cdxjPathFor(path.join(out, warc)), 'utf8'), index, 'the finished index, as it was');
  assert.equal((await readManifest(state))!.indexing, undefined, 'the last manifest lists nothing to finish');
  assert.ok(listed.every((l) => l === undefined || (l.length === 1 && l[0] === warc)), `listed: ${JSON.stringify(listed)}`);
});
