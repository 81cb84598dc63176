/**
 * The CDXJ indexes across crashes, through the real CLI (docs/output-format.md, CDXJ index): a
 * crawl SIGKILLed twice (at seeded random moments, with WARC rotation and checkpoints in between)
 * and resumed to its end leaves, beside every WARC file, exactly one finished `<name>.cdxj` — no
 * `.open`, temporary or run file — equal to warcio's index of that file as recovery left it, and
 * every captured URL can be found in the indexes. DRUMCRAWL_KILL_SEED replays a failed run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readdir, readFile, rm } from 'node:fs/promises';
import { CDXIndexer } from 'warcio';
import { readManifest } from '../../src/state/checkpoint.js';
import { cdxjPathFor, parseCdxjLine } from '../../src/store/index.js';
import { cli, crawlCommand, crawlSettings, forkSimweb, seededRandom, tempDir, untilCheckpoint, untilServed } from './harness.js';
import { readWarcDir, warcProblems } from './warc-read.js';

async function warcioLines(file: string): Promise<string[]> {
  const data = await readFile(file);
  const ix = new CDXIndexer({ format: 'cdxj' });
  const out: string[] = [];
  for await (const c of ix.iterIndex([{ filename: path.basename(file), reader: (async function* () { yield data; })() }])) out.push(ix.serialize(c).trimEnd());
  return out.sort();
}

test('CDXJ after SIGKILL ×2 + resume: one finished index per WARC file, equal to warcio\'s', { timeout: 900_000 }, async () => {
  const web = await forkSimweb('tiny', { plds: 12, pagesPerHostMin: 40, pagesPerHostMax: 70, ips: 4, linksPerPageMean: 12, nonHtmlShare: 0.2 });
  const seed = Number(process.env.DRUMCRAWL_KILL_SEED ?? 1);
  const random = seededRandom(seed);
  const dir = await tempDir('e2e-cdxj-kill');
  let run: ReturnType<typeof cli> | null = null;
  try {
    const state = path.join(dir, 'state');
    const out = path.join(dir, 'warc');
    run = cli(crawlCommand(crawlSettings(web, {
      stateDir: state, outDir: out, hostDelayMs: 20, ipDelayMs: 5, minHostDelayMs: 20, minIpDelayMs: 5,
      checkpointIntervalMs: 700, warcMaxFileBytes: 1024 * 1024, workers: 1, ramBytes: 256 * 2 ** 20, fetchConcurrency: 16, fetchTimeoutMs: 5000,
    })));
    for (let k = 0; k < 2; k++) {
      await untilCheckpoint(state, run);
      const target = (await web.requests()) + 100 + Math.floor(random() * 200);
      await untilServed(web, target, run);
      run.child.kill('SIGKILL');
      assert.equal(await run.done, -9, `kill ${k + 1} (seed ${seed}) landed before the crawl ended`);
      run = cli(['resume', state, '--progress', 'none']);
    }
    assert.equal(await run.done, 0, run.out());
    run = null;
    assert.equal((await readManifest(state))?.finished, true);

    const names = (await readdir(out)).sort();
    const warcs = names.filter((f) => f.endsWith('.warc.gz'));
    assert.ok(warcs.length >= 3, `several files (rotation, runs): ${warcs.length}`);
    assert.deepEqual(names.filter((f) => /\.cdxj\./.test(f)), [], `no unfinished index file (seed ${seed})`);
    assert.deepEqual(names.filter((f) => f.endsWith('.cdxj')).sort(), warcs.map((f) => path.basename(cdxjPathFor(f))).sort(), 'one index per WARC file');
    const indexed = new Set<string>();
    for (const f of warcs) {
      const ours = (await readFile(cdxjPathFor(path.join(out, f)), 'utf8')).split('\n').filter((l) => l !== '');
      const strip = (l: string) => l.replace(/"mime":"text\/dns",/, '').replace(/"status":"",/, '');
      assert.deepEqual(ours.map(strip), (await warcioLines(path.join(out, f))).map(strip), `${f}: CDXJ = warcio's (seed ${seed})`);
      for (const l of ours) indexed.add(parseCdxjLine(l).json.url!);
    }
    const recs = await readWarcDir(out);
    assert.deepEqual(warcProblems(recs), []);
    for (const r of recs) if (r.type === 'response' || r.type === 'revisit') assert.ok(indexed.has(r.uri!), `${r.uri} is indexed`);
  } finally {
    if (run !== null && run.child.exitCode === null) run.child.kill('SIGKILL');
    await web.close();
    await rm(dir, { recursive: true, force: true });
  }
});
