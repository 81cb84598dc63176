/**
 * bin/drumcrawl, the launcher npm installs as the `drumcrawl` command: it must find dist/ through
 * npm's symlink, set the malloc tuning (unless the user set it), pass arguments and the exit code
 * through, and say clearly when the build is missing. Run against a copy of the script beside a
 * stand-in dist/cli/main.js that reports what it received.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const launcher = fileURLToPath(new URL('../../bin/drumcrawl', import.meta.url));

function layout(withMain: boolean): { root: string; link: string } {
  const root = mkdtempSync(path.join(os.tmpdir(), 'drumcrawl-launcher-'));
  mkdirSync(path.join(root, 'pkg', 'bin'), { recursive: true });
  copyFileSync(launcher, path.join(root, 'pkg', 'bin', 'drumcrawl'));
  chmodSync(path.join(root, 'pkg', 'bin', 'drumcrawl'), 0o755);
  if (withMain) {
    mkdirSync(path.join(root, 'pkg', 'dist', 'cli'), { recursive: true });
    writeFileSync(path.join(root, 'pkg', 'dist', 'cli', 'main.js'), [
      'process.stdout.write(JSON.stringify({ args: process.argv.slice(2), arena: process.env.MALLOC_ARENA_MAX ?? null,',
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
