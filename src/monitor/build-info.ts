/**
 * The labels of `drumcrawl_build_info`: the package version (package.json), the git commit of the
 * checkout the crawler runs from, and the Node.js version. Read once per process.
 *
 * The commit comes from `git rev-parse HEAD` run in the package's own directory, and only when that
 * directory is the top of its git work tree (an installed copy inside some other repository's
 * node_modules must not report that repository's commit); `unknown` otherwise, or when git is
 * missing or slow.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { BuildInfo } from './stats.js';

/** The package root: two levels up from src/crawl/ (or dist/crawl/). */
const PACKAGE_ROOT = new URL('../../', import.meta.url);

let cached: BuildInfo | undefined;

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('package.json', PACKAGE_ROOT), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

function git(cwd: string, args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', timeout: 2000, stdio: ['ignore', 'pipe', 'ignore'] }).trim();
}

function gitCommit(): string {
  try {
    const root = realpathSync(fileURLToPath(PACKAGE_ROOT));
    if (realpathSync(git(root, ['rev-parse', '--show-toplevel'])) !== root) return 'unknown';
    const commit = git(root, ['rev-parse', 'HEAD']);
    return /^[0-9a-f]{40,64}$/.test(commit) ? commit : 'unknown';
  } catch {
    return 'unknown';
  }
}

/** Version, commit and Node.js version of this process (computed on the first call). */
export function buildInfo(): BuildInfo {
  cached ??= { version: packageVersion(), commit: gitCommit(), node: process.version };
  return cached;
}
