/**
 * bin/drumcrawl, the launcher npm installs as the `drumcrawl` command: it must find dist/ through
 * npm's symlink, set the malloc tuning (unless the user set it), pass arguments and the exit code
 * through, set the main thread's heap limits from --ram, and say clearly when the build is missing. Run against a copy of the script beside a
 * stand-in dist/cli/main.js that reports what it received.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { defaultCrawlConfig } from '../../src/config/config.js';
import { parseSize } from '../../src/config/config-values.js';
import { heapWarning, mainHeapFlags } from '../../src/budget/heap-budget.js';
import { launcherDefaults, launcherEnv } from '../../bench/lib/launcher-env.js';

const MiB = 1024 * 1024;

const launcher = fileURLToPath(new URL('../../bin/drumcrawl', import.meta.url));

function layout(withMain: boolean): { root: string; link: string } {
  const root = mkdtempSync(path.join(os.tmpdir(), 'drumcrawl-launcher-'));
  mkdirSync(path.join(root, 'pkg', 'bin'), { recursive: true });
  copyFileSync(launcher, path.join(root, 'pkg', 'bin', 'drumcrawl'));
  chmodSync(path.join(root, 'pkg', 'bin', 'drumcrawl'), 0o755);
  if (withMain) {
    mkdirSync(path.join(root, 'pkg', 'dist', 'cli'), { recursive: true });
    writeFileSync(path.join(root, 'pkg', 'dist', 'cli', 'main.js'), [
      'process.stdout.write(JSON.stringify({ args: process.argv.slice(2), execArgv: process.execArgv, arena: process.env.MALLOC_ARENA_MAX ?? null,',
      '  mmap: process.env.MALLOC_MMAP_THRESHOLD_ ?? null, pid: process.pid }));',
      'process.exitCode = process.argv.includes("--fail") ? 7 : 0;',
    ].join('\n'));
  }
  // npm's layout: node_modules/.bin/drumcrawl -> ../../pkg/bin/drumcrawl (a relative symlink)
  mkdirSync(path.join(root, 'node_modules', '.bin'), { recursive: true });
  const link = path.join(root, 'node_modules', '.bin', 'drumcrawl');
  symlinkSync(path.join('..', '..', 'pkg', 'bin', 'drumcrawl'), link);
  return { root, link };
}

function run(file: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  const base = { ...process.env };
  delete base.MALLOC_ARENA_MAX;
  delete base.MALLOC_MMAP_THRESHOLD_;
  return spawnSync(file, args, { env: { ...base, ...env }, encoding: 'utf8' });
}

test('launcher: through the npm symlink, sets malloc tuning and passes args and exit code', () => {
  const { root, link } = layout(true);
  try {
    const r = run(link, ['crawl', 'http://a b/', '--max-pages', '3']);
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { args: string[]; arena: string; mmap: string };
    assert.deepEqual(out.args, ['crawl', 'http://a b/', '--max-pages', '3']);
    assert.equal(out.arena, '2');
    assert.equal(out.mmap, '131072');
    assert.equal(run(link, ['--fail']).status, 7);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('launcher: the user\'s own malloc settings win', () => {
  const { root, link } = layout(true);
  try {
    const r = run(link, [], { MALLOC_ARENA_MAX: '8', MALLOC_MMAP_THRESHOLD_: '65536' });
    const out = JSON.parse(r.stdout) as { arena: string; mmap: string };
    assert.equal(out.arena, '8');
    assert.equal(out.mmap, '65536');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('launcher: a missing build is a clear error with exit code 2', () => {
  const { root, link } = layout(false);
  try {
    const r = run(link, ['demo']);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /dist\/cli\/main\.js is missing: run 'npm run build' first/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

/** The flags the launcher gave node, as the stand-in main.js received them. */
function heapArgs(link: string, args: string[]): string[] {
  const r = run(link, args);
  assert.equal(r.status, 0, r.stderr);
  return (JSON.parse(r.stdout) as { execArgv: string[] }).execArgv;
}

const flagsOf = (ramBytes: number): string[] => {
  const f = mainHeapFlags(ramBytes);
  return [`--max-old-space-size=${f.oldSpaceMb}`, `--max-semi-space-size=${f.semiSpaceMb}`];
};

test('launcher: the main heap limits follow --ram by heap-budget.ts\'s rule (any spelling of the size), the state\'s --ram on resume, none when --ram is unknown', () => {
  const { root, link } = layout(true);
  try {
    fc.assert(
      fc.property(fc.integer({ min: 256, max: 65536 }), fc.constantFrom('M', 'm', 'MiB', 'G', ''), fc.boolean(), (mib, unit, eq) => {
        const text = unit === 'G' ? `${mib / 1024}G` : unit === '' ? String(mib * MiB) : `${mib}${unit}`;
        const ramBytes = parseSize(text);
        const args = eq ? ['crawl', 'http://a.test/', `--ram=${text}`] : ['crawl', 'http://a.test/', '--ram', text];
        assert.deepEqual(heapArgs(link, args), flagsOf(ramBytes), text);
      }),
      { numRuns: 25 },
    );
    assert.deepEqual(heapArgs(link, ['crawl', 'http://a.test/']), flagsOf(defaultCrawlConfig().ramBytes), 'the default --ram');
    assert.deepEqual(heapArgs(link, ['crawl', 'http://a.test/', '--config', 'c.json']), [], 'a --config file may set ramBytes: V8 decides, the crawler warns');
    assert.deepEqual(heapArgs(link, ['demo']), flagsOf(512 * MiB), 'the demo crawls at 512M (src/cli/commands/demo.ts)');
    assert.deepEqual(heapArgs(link, ['stats', 'x']), []);
    assert.deepEqual(heapArgs(link, ['crawl', 'x', '--ram', 'lots']), [], 'the CLI refuses it');
    // resume reads the state's manifest, as checkpoint.ts writes it
    const state = path.join(root, 'state');
    mkdirSync(state);
    writeFileSync(path.join(state, 'manifest.json'), JSON.stringify({ version: 1, epoch: 3, config: { seeds: ['http://a.test/'], ramBytes: 768 * MiB, stateDir: state } }, null, 2) + '\n');
    assert.deepEqual(heapArgs(link, ['resume', state]), flagsOf(768 * MiB));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('heap budget: the main isolate keeps the launcher\'s limit, a worker started afterwards its own resourceLimits', () => {
  const script = [
    "const v8 = require('node:v8'); const { Worker } = require('node:worker_threads');",
    "v8.setFlagsFromString('--max-old-space-size=0'); v8.setFlagsFromString('--max-semi-space-size=0');",
    "const main = v8.getHeapStatistics().heap_size_limit / 1048576;",
    "const w = new Worker(\"require('node:worker_threads').parentPort.postMessage(require('node:v8').getHeapStatistics().heap_size_limit / 1048576)\", { eval: true, resourceLimits: { maxOldGenerationSizeMb: 48, maxYoungGenerationSizeMb: 8 } });",
    "w.on('message', (m) => { process.stdout.write(JSON.stringify({ main, worker: m })); w.terminate(); });",
  ].join('\n');
  const r = spawnSync(process.execPath, ['--max-old-space-size=224', '--max-semi-space-size=8', '-e', script], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const { main, worker } = JSON.parse(r.stdout) as { main: number; worker: number };
  assert.ok(main >= 224 && main < 300, `main ${main} MiB`);
  assert.ok(worker < 80, `worker ${worker} MiB`);
  assert.equal(heapWarning(512 * MiB, main * MiB), null, 'the launcher\'s limit fits --ram 512M');
  assert.match(heapWarning(512 * MiB, 4144 * MiB) ?? '', /not held under --ram/);
  assert.match(heapWarning(8192 * MiB, main * MiB) ?? '', /avoids running out of heap/);
});

test('launcher: the benches read the same malloc settings from it as it gives the crawler (bench/lib/launcher-env.ts)', () => {
  const { root, link } = layout(true);
  try {
    const r = run(link, ['crawl']);
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { arena: string | null; mmap: string | null };
    assert.deepEqual(launcherDefaults(), { MALLOC_ARENA_MAX: out.arena, MALLOC_MMAP_THRESHOLD_: out.mmap });
    // A value already set wins, as in the launcher.
    assert.equal(launcherEnv({ MALLOC_ARENA_MAX: '8' }).MALLOC_ARENA_MAX, '8');
    assert.equal(launcherEnv({}).MALLOC_MMAP_THRESHOLD_, out.mmap);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
