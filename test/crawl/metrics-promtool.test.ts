/**
 * `promtool check metrics` (Debian package `prometheus`) on the live /metrics of a running crawl:
 * the CLI crawls simweb with a status server, prints the page link with the token in its fragment,
 * and its metrics text passes promtool with no parse error and no lint problem; the in-repo checker
 * (promlint.ts) agrees with promtool, on the live text and on the old names.
 *
 * Needs promtool (`apt-get install -y prometheus`; .ci/run installs it): without it the test fails
 * with that message rather than passing unchecked.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { StatusSnapshot } from '../../src/monitor/stats.js';
import { cli, crawlCommand, crawlSettings, forkSimweb, tempDir, type CliRun, type SimwebChild } from '../e2e/harness.js';
import { promlint } from './promlint.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** promtool check metrics on `text`: exit status and output lines. */
function promtool(text: string): { status: number | null; lines: string[] } {
  const r = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8', timeout: 300_000 });
  if (r.error !== undefined) {
    throw new Error(`promtool could not run (${r.error.message}): install the Debian package prometheus (\`apt-get install -y prometheus\`; .ci/run does)`);
  }
  return { status: r.status, lines: (r.stdout + r.stderr).split('\n').filter((l) => l.trim() !== '') };
}

let web: SimwebChild | undefined;
let run: CliRun | undefined;
let dir: string | undefined;
after(async () => {
  if (run !== undefined && run.child.exitCode === null) {
    run.child.kill('SIGKILL');
    await run.done;
  }
  await web?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

test('promtool and the in-repo checker give the same verdict on the old metric names', () => {
  const old = [
    '# HELP drumcrawl_megabytes_per_second MB per second.', '# TYPE drumcrawl_megabytes_per_second gauge', 'drumcrawl_megabytes_per_second 0.5',
    '# HELP drumcrawl_cpu_ms_per_page CPU ms per page.', '# TYPE drumcrawl_cpu_ms_per_page gauge', 'drumcrawl_cpu_ms_per_page 0.7',
    '# HELP drumcrawl_pages Pages.', '# TYPE drumcrawl_pages counter', 'drumcrawl_pages 7', '',
  ].join('\n');
  const p = promtool(old);
  assert.equal(p.status, 3, 'promtool: lint problems found');
  assert.deepEqual(p.lines.sort(), promlint(old).problems.map((x) => `${x.metric} ${x.text}`).sort());
});

// No clock decides here: the crawl runs until the test stops it (SIGINT), the metrics are read once
// it has fetched 10 pages; the timeout bounds a hang.
test('live /metrics of a CLI crawl passes promtool check metrics; build info, state, checkpoint time', { timeout: 900_000 }, async () => {
  promtool(''); // fails here, with the install hint, when promtool is missing
  web = await forkSimweb('tiny');
  dir = await tempDir('metrics-promtool');
  const stateDir = path.join(dir, 'state');
  run = cli(crawlCommand(crawlSettings(web, {
    stateDir, outDir: path.join(dir, 'warc'), statusPort: 0, hostDelayMs: 200, minHostDelayMs: 100,
    ipDelayMs: 20, minIpDelayMs: 10, workers: 1, ramBytes: 256 * 2 ** 20,
  })));
  await run.waitFor(/^status page: \S+\n/m);
  const [, url, token] = /^status page: (http:\/\/127\.0\.0\.1:\d+)\/#token=([A-Za-z0-9_-]+)$/m.exec(run.out()) ?? [];
  assert.ok(url !== undefined && token !== undefined, `the CLI prints the page link with the token in the fragment:\n${run.out()}`);
  assert.equal(readFileSync(path.join(stateDir, 'control-token'), 'utf8').trim(), token, 'the printed token is the one in <state>/control-token');
  const status = async (): Promise<StatusSnapshot> => (await (await fetch(`${url}/status`)).json()) as StatusSnapshot;
  while ((await status()).pages < 10) await new Promise((r) => setTimeout(r, 200));

  const before = await status();
  const res = await fetch(`${url}/metrics`);
  const text = await res.text();
  const afterS = await status();
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  const p = promtool(text);
  assert.deepEqual(p, { status: 0, lines: [] }, `promtool check metrics on the live text:\n${text}`);
  assert.deepEqual(promlint(text), { errors: [], problems: [] });

  const version = (JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
  const head = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: REPO, encoding: 'utf8' });
  const commit = head.status === 0 ? head.stdout.trim() : 'unknown';
  assert.match(text, new RegExp(`^drumcrawl_build_info\\{commit="${commit}",node="${process.version.replace(/\./g, '\\.')}",version="${version.replace(/\./g, '\\.')}"\\} 1$`, 'm'));
  assert.match(text, /^drumcrawl_state\{state="running"\} 1$/m);
  assert.equal([...text.matchAll(/^drumcrawl_state\{state="[a-z]+"\} 1$/gm)].length, 1, 'one state is 1');
  const value = (name: string): number => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
  const pages = value('drumcrawl_pages_total');
  assert.ok(pages >= before.pages && pages <= afterS.pages, `pages_total ${pages} within [${before.pages}, ${afterS.pages}]`);
  const ckpt = value('drumcrawl_last_checkpoint_timestamp_seconds');
  const ckptStatus = [before.lastCheckpointAt, afterS.lastCheckpointAt].map((t) => (t === null ? 0 : Date.parse(t) / 1000));
  assert.ok(ckpt > 0 && ckptStatus.includes(ckpt), `last checkpoint ${ckpt} is the one GET /status gives (${ckptStatus.join(', ')})`);
  assert.ok(Math.abs(value('drumcrawl_start_time_seconds') - Date.parse(before.startedAt) / 1000) < 0.002);

  // SIGINT: a graceful stop; the CLI exits by itself.
  run.child.kill('SIGINT');
  const code = await Promise.race([run.done, new Promise((r) => setTimeout(() => r('timeout'), 600_000))]);
  assert.equal(code, 0, run.out().slice(-2000));
});
