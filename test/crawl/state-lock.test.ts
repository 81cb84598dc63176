/**
 * The state directory's lock (src/state/state-lock.ts): one holder per directory, which a refusal
 * names; freed by release and by the holder's death (SIGKILL included); it follows a renamed
 * directory and not a copy; and of processes racing for a free state, exactly one wins.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { StateLock } from '../../src/state/state-lock.js';

const tmp = (): string => mkdtempSync(path.join(os.tmpdir(), 'dc-state-lock-'));
const LOCKED = (pid: number) => (e: Error & { code?: string }): boolean => {
  assert.equal(e.code, 'CRAWL_STATE_LOCKED');
  assert.match(e.message, new RegExp(`is in use by drumcrawl process ${pid} \\(since \\d{4}-`));
  return true;
};

test('one holder per directory: a second acquire is refused naming it; release lets the next in; nothing is written to the directory', async () => {
  const dir = tmp();
  try {
    const a = await StateLock.acquire(dir);
    await assert.rejects(StateLock.acquire(dir), LOCKED(process.pid));
    await a.release();
    await a.release();
    const b = await StateLock.acquire(dir);
    await b.release();
    assert.deepEqual(readdirSync(dir), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * Model: each directory (by identity, which a rename keeps) is free or held by one handle.
 * Operations: acquire a directory by its current name, release a handle, rename a directory.
 */
test('property: acquire succeeds exactly when the directory (followed through renames) is not held', async () => {
  const root = tmp();
  try {
    let run = 0;
    await fc.assert(fc.asyncProperty(fc.array(fc.oneof(
      fc.record({ op: fc.constant('acquire' as const), d: fc.nat(2) }),
      fc.record({ op: fc.constant('release' as const), d: fc.nat(2) }),
      fc.record({ op: fc.constant('rename' as const), d: fc.nat(2) }),
    ), { maxLength: 20 }), async (ops) => {
      const base = path.join(root, `run${run++}`);
      const names = [0, 1, 2].map((i) => path.join(base, `d${i}`));
      for (const n of names) mkdirSync(n, { recursive: true });
      const held: Array<StateLock | null> = [null, null, null];
      try {
        for (const { op, d } of ops) {
          if (op === 'rename') {
            const to = `${names[d]}-r`;
            renameSync(names[d]!, to);
            names[d] = to;
          } else if (op === 'release') {
            await held[d]?.release();
            held[d] = null;
          } else if (held[d] === null) {
            held[d] = await StateLock.acquire(names[d]!);
          } else {
            await assert.rejects(StateLock.acquire(names[d]!), LOCKED(process.pid));
          }
        }
      } finally {
        for (const h of held) await h?.release();
      }
    }), { numRuns: 60 });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a copy of a held state is another directory: its lock is its own', async () => {
  const root = tmp();
  try {
    const a = path.join(root, 'state');
    const b = path.join(root, 'state-copy');
    mkdirSync(a);
    mkdirSync(b);
    const la = await StateLock.acquire(a);
    const lb = await StateLock.acquire(b);
    await la.release();
    await lb.release();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

/**
 * A racer: prints `ready` once loaded, tries to acquire when the `go` file appears, and prints
 * `won` (holding the lock until `release` appears) or `refused`.
 */
const RACER = `
import { existsSync } from 'node:fs';
import { StateLock } from ${JSON.stringify(new URL('../../src/state/state-lock.ts', import.meta.url).href)};
const [state, go, release] = process.argv.slice(-3);
const until = async (f) => { while (!existsSync(f)) await new Promise((r) => setTimeout(r, 1)); };
console.log('ready');
await until(go);
try {
  const l = await StateLock.acquire(state);
  console.log('won');
  await until(release);
  await l.release();
} catch (e) {
  console.log(e.code === 'CRAWL_STATE_LOCKED' ? 'refused ' + e.message : 'error ' + e.message);
}
`;

interface Racer { pid: number; lines: string[]; closed: Promise<void>; kill: () => void }

function startRacers(script: string, n: number, state: string, go: string, release: string): Racer[] {
  return Array.from({ length: n }, () => {
    const c = spawn(process.execPath, ['--import', 'tsx', script, state, go, release], { stdio: ['ignore', 'pipe', 'inherit'] });
    const r: Racer = { pid: c.pid!, lines: [], closed: new Promise<void>((res) => c.on('close', () => res())), kill: () => c.kill('SIGKILL') };
    c.stdout.on('data', (d: Buffer) => r.lines.push(...d.toString().split('\n').filter((x) => x !== '')));
    return r;
  });
}

/** Until every racer is `done` (no clock: starting a racer through tsx takes seconds on a loaded box; the test's timeout bounds a hang). */
async function waitAll(rs: Racer[], done: (r: Racer) => boolean): Promise<void> {
  while (!rs.every(done)) await new Promise((r) => setTimeout(r, 10));
}

test('processes racing for one state: exactly one wins, the others are refused naming it, every round; SIGKILL frees it', { timeout: 900_000 }, async () => {
  const dir = tmp();
  const all: Racer[] = [];
  try {
    const script = path.join(dir, 'racer.mts');
    writeFileSync(script, RACER);
    for (let round = 0; round < 3; round++) {
      // (the racers wait for their files without a clock: a failed round must not leave them behind)
      const state = path.join(dir, `state${round}`);
      const go = path.join(dir, `go${round}`);
      const release = path.join(dir, `release${round}`);
      mkdirSync(state);
      const racers = startRacers(script, 5, state, go, release);
      all.push(...racers);
      await waitAll(racers, (r) => r.lines.includes('ready'));
      writeFileSync(go, '');
      // Each has decided; a winner holds the lock meanwhile, so a late racer cannot win after it.
      await waitAll(racers, (r) => r.lines.length >= 2);
      const winners = racers.filter((r) => r.lines[1] === 'won');
      assert.equal(winners.length, 1, `round ${round}: ${racers.map((r) => r.lines.slice(1).join(' ')).join(' | ')}`);
      for (const r of racers) {
        if (r !== winners[0]) assert.match(r.lines[1] ?? '', new RegExp(`^refused .*in use by drumcrawl process ${winners[0]!.pid} `), `round ${round}`);
      }
      if (round === 2) {
        // Killed while holding it: the kernel frees the name, nothing is left to clean up.
        winners[0]!.kill();
        await winners[0]!.closed;
        const l = await StateLock.acquire(state);
        await l.release();
      }
      writeFileSync(release, '');
      await Promise.all(racers.map((r) => r.closed));
      assert.deepEqual(readdirSync(state), [], `round ${round}: nothing written to the state directory`);
    }
  } finally {
    for (const r of all) r.kill();
    rmSync(dir, { recursive: true, force: true });
  }
});
