/**
 * A clean copy of a committed tree for benches that run the crawler as a child process: several
 * engineers edit the shared checkout at once, so running `src/` from the working tree measures
 * whatever half-finished edit is on disk at that second. `snapshotTree('HEAD')` extracts the commit
 * with `git archive` into a temporary directory (nothing in the repository or its index is touched)
 * and links the checkout's node_modules into it, so `node --import tsx <dir>/src/cli/main.ts` runs
 * exactly that commit. The JSON of a bench records the commit it measured.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { REPO_ROOT } from './report.js';

export interface TreeSnapshot {
  /** Directory holding the extracted tree (its src/, package.json, node_modules link). */
  dir: string;
  /** Full commit hash, or 'working-tree'. */
  commit: string;
  /** One-line subject of the commit. */
  subject: string;
  remove(): void;
}

/**
 * Compiles a snapshot (or the checkout) to `<dir>/dist` as `npm run build` does (tsc with the
 * project's build config, then scripts/bundle.mjs where the tree has it), so a bench
 * can run the product as users do: `bin/drumcrawl` (the launcher: glibc malloc settings, then
 * `node dist/bundle/main.js`, or dist/cli/main.js in a tree without bundles), no tsx loader thread in
 * any isolate. Returns the build's wall ms.
 */
export function buildTree(dir: string): number {
  const t0 = performance.now();
  execFileSync(process.execPath, [path.join(dir, 'node_modules/typescript/bin/tsc'), '-p', path.join(dir, 'tsconfig.build.json')], {
    cwd: dir, stdio: ['ignore', 'ignore', 'inherit'],
  });
  // the build's second step where the tree has it (`npm run build`: the bundles bin/drumcrawl runs)
  const bundle = path.join(dir, 'scripts/bundle.mjs');
  if (fs.existsSync(bundle)) execFileSync(process.execPath, [bundle], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  return performance.now() - t0;
}

/** Extracts `ref` (default HEAD) to a temporary directory; `ref = 'working-tree'` returns the checkout itself. */
export function snapshotTree(ref = 'HEAD'): TreeSnapshot {
  if (ref === 'working-tree') {
    return { dir: REPO_ROOT, commit: 'working-tree', subject: 'uncommitted working tree', remove: () => undefined };
  }
  const git = (...argv: string[]): string => execFileSync('git', argv, { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
  const commit = git('rev-parse', ref);
  const subject = git('log', '-1', '--format=%s', commit);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `dc-tree-${commit.slice(0, 8)}-`));
  execFileSync('sh', ['-c', `git archive --format=tar ${commit} | tar -x -C "${dir}"`], { cwd: REPO_ROOT });
  fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  const remove = (): void => fs.rmSync(dir, { recursive: true, force: true });
  // Also on any exit (a failed bench must not leave a copy of the tree in /tmp).
  process.once('exit', remove);
  return { dir, commit, subject, remove };
}
