/**
 * Restart safety: a child process runs the frontier on disk and is killed with SIGKILL at a random
 * moment; reopening the directory and draining it must yield every URL whose admission had been
 * made durable, except those fetched before the last commit that started (at-least-once: URLs handed
 * out since the last durable commit come back, none is lost).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Frontier, UrlKind } from '../../src/frontier/index.js';
import { rng } from './sim.js';
import { fastOptions } from './fast-options.js';

const child = fileURLToPath(new URL('./restart-child.ts', import.meta.url));
const LONG = process.env.DRUMCRAWL_LONG !== undefined && process.env.DRUMCRAWL_LONG !== '';

async function runAndKill(dir: string, seed: number, killAfterMs: number): Promise<string> {
  const p = spawn(process.execPath, ['--import', 'tsx', child, dir, String(seed)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let text = '';
  let ready: () => void;
  const isReady = new Promise<void>((r) => (ready = r));
  p.stdout.setEncoding('utf8');
  p.stdout.on('data', (d: string) => {
    text += d;
    if (text.includes('READY')) ready();
  });
  const exited = new Promise<void>((r) => p.on('exit', () => r()));
  await Promise.race([isReady, exited]);
  // The kill clock starts once the child has made its first admission durable: how long that
  // takes depends on the box's load, and a kill before it would test nothing.
  while (!/^A /m.test(text) && p.exitCode === null) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => setTimeout(r, killAfterMs));
  p.kill('SIGKILL');
  await exited;
  return text;
}

async function drain(dir: string): Promise<Set<number>> {
  let now = 1e9;
  const f = await Frontier.open(dir, fastOptions({ ramUrls: 300, maxUrlsPerHost: 20, beast: { initialQueues: 2, maxQueues: 16 } }), () => now);
  const got = new Set<number>();
  for (let i = 0; i < 1_000_000 && !f.isEmpty(); i++) {
    await f.refill();
    for (const r of f.takeRobotsRequests(1000)) f.scheduleRobotsFetch(r.hostHi, r.hostLo, `10.0.0.${r.hostLo % 50}`);
    for (const u of f.nextReady(now, 10_000)) {
      if (u.kind === UrlKind.Robots) f.robotsKnown(u.hostHi, u.hostLo, { rules: null, ip: u.ip, expiresAt: Infinity });
      else got.add(Number(u.url.slice(u.url.lastIndexOf('/u') + 2)));
      f.fetchDone(u);
    }
    now += 1000;
  }
  assert.ok(f.isEmpty(), 'drained');
  await f.close();
  return got;
}

test('SIGKILL at random points loses no durably admitted URL', { timeout: 900_000 }, async () => {
  const r = rng(42);
  const rounds = LONG ? 12 : 4;
  for (let round = 0; round < rounds; round++) {
    const dir = await mkdtemp(path.join(tmpdir(), 'frontier-kill-'));
    try {
      const killAfter = Math.floor(r() * 1200);
      const log = await runAndKill(dir, round + 1, killAfter);
      const admitted = new Set<number>();
      let doneBeforeCommit = new Set<number>();
      let doneSince = new Set<number>();
      let commits = 0;
      for (const line of log.split('\n')) if (line === 'C') commits++;
      for (const line of log.split('\n')) {
        if (line.startsWith('A ')) {
          const [, a, b] = line.split(' ').map(Number) as [number, number, number];
          for (let i = a; i <= b; i++) admitted.add(i);
        } else if (line.startsWith('D ')) doneSince.add(Number(line.slice(2)));
        else if (line === 'S') {
          // A commit that started may have become durable even if its 'C' never printed: URLs
          // fetched before it started are then legitimately gone.
          for (const x of doneSince) doneBeforeCommit.add(x);
          doneSince = new Set();
        }
      }
      assert.ok(admitted.size > 0, `the child admitted something before the kill (${killAfter} ms)`);
      const got = await drain(dir);
      const missing = [...admitted].filter((i) => !doneBeforeCommit.has(i) && !got.has(i));
      assert.deepEqual(missing.slice(0, 10), [], `round ${round} (kill after ${killAfter} ms, ${commits} commits, ${admitted.size} admitted): lost URLs`);
      void doneBeforeCommit;
      doneBeforeCommit = new Set();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
});
