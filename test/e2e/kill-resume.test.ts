/**
 * Crash and stop safety through the real CLI: a crawl SIGKILLed at three random moments and
 * resumed each time ends with the same set of fetched URLs as an uninterrupted crawl of the same
 * web (simweb's ground truth, which an uninterrupted crawl matches exactly — crawl.test.ts);
 * re-fetches come only from the windows the kills cut into. SIGTERM drains, checkpoints, exits 0.
 * WARC files stay readable (torn tails are cut on resume).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { readManifest } from '../../src/crawl/checkpoint.js';
import { forkSimweb, tempDir, UA } from './harness.js';
import { readWarcDir } from './warc-read.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

function cli(args: string[]): { child: ChildProcess; done: Promise<number | null>; out: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const done = new Promise<number | null>((resolve) => child.on('exit', (code, sig) => resolve(sig === 'SIGKILL' ? -9 : code)));
  return { child, done, out: () => out };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitForManifest(state: string, timeoutMs = 60_000): Promise<void> {
  const t0 = Date.now();
  while (Date.now() - t0 < timeoutMs) {
    if ((await readManifest(state).catch(() => null)) !== null) return;
    await sleep(100);
  }
  throw new Error('no checkpoint appeared');
}

test('SIGKILL ×3 + resume: same fetched set as an uninterrupted crawl, WARC readable', { timeout: 240_000 }, async () => {
  const web = await forkSimweb('tiny');
  try {
    const dir = await tempDir('e2e-kill');
    const state = path.join(dir, 'state');
    const out = path.join(dir, 'warc');
    const common = [
      '--user-agent', UA, '--host-delay', '100', '--ip-delay', '25', '--min-host-delay', '100', '--min-ip-delay', '25',
      '--politeness-margin', '40', '--checkpoint-interval', '500', '--progress', 'none', '--workers', '1', '--ram', '256M',
    ];
    let run = cli(['crawl', ...web.seeds, '--state', state, '--out', out, '--dns-server', web.dnsServer, ...common]);
    const seed = Number(process.env.DRUMCRAWL_KILL_SEED ?? Date.now() % 1000);
    let rnd = seed;
    const random = () => ((rnd = (rnd * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let k = 0; k < 3; k++) {
      await waitForManifest(state);
      await sleep(300 + random() * 2500);
      run.child.kill('SIGKILL');
      assert.equal(await run.done, -9, `kill ${k + 1} (seed ${seed}) landed before the crawl ended`);
      // The stored config (delays, margin, user agent) is kept; only runtime/display flags change.
      run = cli(['resume', state, '--progress', 'none', '--checkpoint-interval', '500']);
    }
    const code = await run.done;
    assert.equal(code, 0, run.out());
    const m = await readManifest(state);
    assert.equal(m?.finished, true, 'the resumed crawl finished by itself');
    const r = await web.report({ hostMs: 100, ipMs: 25 });
    const fetched = new Set(r.pageFetches);
    assert.deepEqual([...fetched].sort(), [...r.reachable!].sort(), 'same set of fetched URLs as an uninterrupted crawl');
    const refetched = r.pageFetches.length - fetched.size;
    assert.ok(refetched <= 3 * 16, `re-fetches only from the in-flight windows (${refetched})`);
    assert.deepEqual(r.robotsViolations, []);
    // WARC: every record of every file parses and its digests recompute (torn tails were cut).
    const recs = await readWarcDir(out);
    for (const x of recs) {
      if (x.blockDigestOk !== null) assert.ok(x.blockDigestOk, `${x.file}: block digest of ${x.type} ${x.uri}`);
      if (x.payloadDigestOk !== null) assert.ok(x.payloadDigestOk, `${x.file}: payload digest of ${x.uri}`);
    }
    const captured = new Set(recs.filter((x) => x.type === 'response' || x.type === 'revisit').map((x) => x.uri!));
    for (const u of fetched) if (r.statusByUrl[u]! < 500) assert.ok(captured.has(u), `${u} is in the WARC`);
  } finally {
    await web.close();
  }
});

test('SIGTERM: drains, checkpoints, exits 0; stats reads the checkpoint; resume finishes', { timeout: 120_000 }, async () => {
  const web = await forkSimweb('tiny');
  try {
    const dir = await tempDir('e2e-term');
    const state = path.join(dir, 'state');
    const args = ['--user-agent', UA, '--host-delay', '100', '--ip-delay', '25', '--min-host-delay', '100', '--min-ip-delay', '25', '--progress', 'none', '--workers', '1'];
    const run = cli(['crawl', ...web.seeds, '--state', state, '--out', path.join(dir, 'warc'), '--dns-server', web.dnsServer, ...args]);
    await waitForManifest(state);
    await sleep(1500);
    run.child.kill('SIGTERM');
    assert.equal(await run.done, 0, run.out());
    const m = await readManifest(state);
    assert.match(m!.reason, /^stop:signal:SIGTERM$/);
    assert.equal(m!.pending, 0, 'drained: nothing left in flight');
    const st = cli(['stats', state]);
    assert.equal(await st.done, 0);
    assert.match(st.out(), /pages\s+\d+ fetched/);
    const res = cli(['resume', state, '--progress', 'none']);
    assert.equal(await res.done, 0, res.out());
    assert.equal((await readManifest(state))!.finished, true);
    const r = await web.report({ hostMs: 100, ipMs: 25 });
    assert.deepEqual([...new Set(r.pageFetches)].sort(), [...r.reachable!].sort());
    assert.deepEqual(r.duplicates, [], 'a graceful stop re-fetches nothing');
  } finally {
    await web.close();
  }
});
