/**
 * A resume's WARC recovery runs beside the rest of its opening (opening.ts start: the threads, the
 * DRUMs, the frontier). When the recovery fails, the opening fails with its error and closes every
 * part it opened meanwhile: a library caller's process then ends by itself (no DRUM, archive or page
 * thread left running) and the state's lock is free for the next resume. Judged on a stopped crawl
 * with a directory where recovery reads a later rotation of the checkpoint's WARC writer (its
 * read fails), resumed in a child process that does not call process.exit; then, the directory removed,
 * resumed again here.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Crawler } from '../../src/crawl/pipeline.js';
import { resolveCrawlConfig } from '../../src/config/config.js';
import { readManifest } from '../../src/state/index.js';
import { SIMWEB_NETWORKS, UA, forkSimweb, tempDir, type SimwebChild } from '../e2e/harness.js';

const webs: SimwebChild[] = [];
const dirs: string[] = [];
after(async () => {
  for (const w of webs) await w.close();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** Runs the child on `state`; its stdout once it has exited by itself, or null if it had not after `ms`. */
function resumeInChild(state: string, ms: number): Promise<{ out: string; code: number | null } | null> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./resume-open-failure-child.ts', import.meta.url)), state], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => { out += String(d); });
  return new Promise((resolve) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); resolve(null); }, ms);
    child.once('exit', (code) => { clearTimeout(timer); resolve({ out, code }); });
  });
}

for (const pageWorkers of ['on', 'off'] as const) {
  test(`a resume whose WARC recovery fails closes what it opened beside it (page workers ${pageWorkers})`, { timeout: 240_000 }, async () => {
    const web = await forkSimweb('demo', {});
    webs.push(web);
    const dir = await tempDir('resume-open-failure');
    dirs.push(dir);
    const state = path.join(dir, 'state');
    const out = path.join(dir, 'out');
    await (await Crawler.open(resolveCrawlConfig({
      seeds: web.seeds, stateDir: state, outDir: out, dnsServers: [web.dnsServer], allowNetworks: SIMWEB_NETWORKS, userAgent: UA,
      progress: 'none', workers: 1, ramBytes: 256 * 2 ** 20, scope: 'any', maxPages: 30, pageWorkers,
    }))).run();
    // A later rotation of the checkpoint's writer, which recovery reads whole: a directory there.
    const m = /^(.+-\d{17})-(\d{5})(\.warc(?:\.gz|\.zst)?)$/.exec((await readManifest(state))!.warc!.file)!;
    const next = path.join(out, `${m[1]}-${String(Number(m[2]) + 1).padStart(5, '0')}${m[3]}`);
    mkdirSync(next);
    // (A hang, not a slow box: the opening itself takes seconds; a part left open never ends.)
    const r = await resumeInChild(state, 150_000);
    assert.ok(r !== null, 'the process ended by itself after the failed resume');
    assert.match(r.out, /^failed (EISDIR|CRAWL_)/, `the resume failed in its recovery: ${r.out}`);
    rmSync(next, { recursive: true });
    // The lock was released and the state is whole: the next resume opens and crawls.
    const c = await Crawler.resume(state, { maxPages: 35 });
    const s = await c.run();
    assert.ok(s.pages >= 30, `the crawl went on from its checkpoint: ${s.pages} pages`);
  });
}
