/**
 * Same-run A/B of bench:e2e between two commits: each is extracted (`git archive`, snapshot.ts)
 * and built into its own tree, then their runs alternate (A B B A A B …) so that both see the same
 * load, each run under the bench lock (`flock /tmp/heavy.lock`, one run at a time on the box).
 * Reports every run and the medians of pages/s, crawler CPU per page, the per-role CPU (steady
 * window) and peak RSS.
 *
 *   node --import tsx bench/e2e/ab.ts --a <ref> --b <ref> [--pairs 3] [--seconds 30] [--a-args='<run.ts args>'] [--b-args='<run.ts args>'] [--out e2e-ab-<a>-<b>]
 *
 * `--a-args` / `--b-args`: extra bench/e2e/run.ts arguments for that side's runs only, split on
 * spaces, given with `=`: e.g. `--b-args='--page-workers on'` measures an option against a tree without it.
 * `--a-env` / `--b-env`: environment variables for that side's runs only (`--b-env='K=V K2=V2'`):
 * the crawler's experiment knobs (DRUMCRAWL_PARSE_HOLD_MS, …) against their defaults.
 *
 * Both trees must have bench/e2e/run.ts with the per-role CPU (roleCpu in its JSON). Both run
 * under bin/drumcrawl's malloc settings (bench/lib/launcher-env.ts), whatever their own run.ts does.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { args, machineInfo, writeResult } from '../lib/report.js';
import { buildTree, snapshotTree } from '../lib/snapshot.js';
import { launcherEnv } from '../lib/launcher-env.js';

const a = args();
const refA = a.get('a');
const refB = a.get('b') ?? 'HEAD';
if (refA === undefined) {
  process.stderr.write('usage: ab.ts --a <ref> [--b <ref>] [--pairs 3] [--seconds 30] [--out <name>]\n');
  process.exit(2);
}
const pairs = a.num('pairs', 3);
const extra = { A: (a.get('a-args') ?? '').split(' ').filter((x) => x !== ''), B: (a.get('b-args') ?? '').split(' ').filter((x) => x !== '') };
const envOf = (v: string | undefined): Record<string, string> =>
  Object.fromEntries((v ?? '').split(' ').filter((x) => x.includes('=')).map((x) => [x.slice(0, x.indexOf('=')), x.slice(x.indexOf('=') + 1)]));
const env = { A: envOf(a.get('a-env')), B: envOf(a.get('b-env')) };
const seconds = a.num('seconds', 30);
// One tree when both sides name the same commit (an option against the same crawler): built once.
const treeA = snapshotTree(refA);
const treeB = snapshotTree(refB);
if (treeB.commit === treeA.commit) treeB.remove();
const trees = { A: treeA, B: treeB.commit === treeA.commit ? treeA : treeB };
for (const t of new Set(Object.values(trees))) buildTree(t.dir);
const tmp = mkdtempSync(path.join(os.tmpdir(), 'dc-e2e-ab-'));

interface Run {
  pagesPerSec: number;
  crawlerCpuMsPerPageAfterOpen: number;
  peakRssMB: number;
  warcBytesPerPage?: number;
  roleCpu: { steady: { roles: { role: string; msPerPage: number; gcMsPerPage?: number | null }[] } };
  machine: { loadavg: number[] };
}
const runs: Record<string, Run> = {};
// A B, B A, A B, …: each position in a pair goes to both sides equally often
const order = Array.from({ length: pairs }, (_, i) => (i % 2 === 0 ? ['A', 'B'] : ['B', 'A']) as ('A' | 'B')[]).flat();
const count = { A: 0, B: 0 };
for (const side of order) {
  const name = `${side}${++count[side]}`;
  const out = path.join(tmp, `${name}.json`);
  process.stderr.write(`[ab] ${name} (${trees[side].commit.slice(0, 7)})\n`);
  execFileSync('flock', ['/tmp/heavy.lock', process.execPath, '--import', 'tsx', 'bench/e2e/run.ts', '--seconds', String(seconds), '--max-pages', '300000', '--no-build', ...extra[side], '--out', out], {
    // Both trees under bin/drumcrawl's malloc settings, as users run the crawler (a tree's own
    // run.ts may not apply them: bench/lib/launcher-env.ts).
    cwd: trees[side].dir, stdio: ['ignore', 'ignore', 'inherit'], env: { ...launcherEnv(), ...env[side] },
  });
  runs[name] = JSON.parse(readFileSync(out, 'utf8')) as Run;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
function side(s: 'A' | 'B'): Record<string, number> {
  const rs = Object.entries(runs).filter(([k]) => k.startsWith(s)).map(([, r]) => r);
  const role = (name: string): number => median(rs.map((r) => r.roleCpu.steady.roles.filter((x) => x.role === name || (name === 'drum' && x.role.startsWith('drum:'))).reduce((t, x) => t + x.msPerPage, 0)));
  return {
    pagesPerSec: median(rs.map((r) => r.pagesPerSec)),
    crawlerCpuMsPerPageAfterOpen: median(rs.map((r) => r.crawlerCpuMsPerPageAfterOpen)),
    mainMsPerPage: role('main'), parseMsPerPage: role('parse'), drumMsPerPage: role('drum'), archiveMsPerPage: role('archive'), runtimeMsPerPage: role('runtime'),
    peakRssMB: median(rs.map((r) => r.peakRssMB)),
    // trees whose run.ts reports them
    ...(rs.every((r) => r.warcBytesPerPage !== undefined) ? { warcBytesPerPage: median(rs.map((r) => r.warcBytesPerPage!)) } : {}),
    ...(rs.every((r) => r.roleCpu.steady.roles.some((x) => x.gcMsPerPage != null))
      ? { gcMsPerPage: median(rs.map((r) => r.roleCpu.steady.roles.reduce((t, x) => t + (x.gcMsPerPage ?? 0), 0))) }
      : {}),
  };
}
const result = {
  bench: 'e2e-ab',
  command: `node --import tsx bench/e2e/ab.ts --a ${refA} --b ${refB} --pairs ${pairs} --seconds ${seconds}${extra.A.length > 0 ? ` --a-args='${extra.A.join(' ')}'` : ''}${extra.B.length > 0 ? ` --b-args='${extra.B.join(' ')}'` : ''}${['A', 'B'].map((x) => (a.get(`${x.toLowerCase()}-env`) ? ` --${x.toLowerCase()}-env='${a.get(`${x.toLowerCase()}-env`)}'` : '')).join('')}`,
  machine: machineInfo(),
  A: { ref: refA, commit: trees.A.commit, subject: trees.A.subject, runArgs: extra.A, env: env.A },
  B: { ref: refB, commit: trees.B.commit, subject: trees.B.subject, runArgs: extra.B, env: env.B },
  order,
  medians: { A: side('A'), B: side('B') },
  runs,
  note: 'Each run: node --import tsx bench/e2e/run.ts --seconds S --max-pages 300000 --no-build in the built tree, under flock /tmp/heavy.lock, with bin/drumcrawl\'s malloc settings (MALLOC_ARENA_MAX, MALLOC_MMAP_THRESHOLD_) in its environment. The box is shared (other engineers\' unlocked runs): compare A with B within this file only.',
};
const file = writeResult(a.get('out') ?? `e2e-ab-${trees.A.commit.slice(0, 7)}-${trees.B.commit.slice(0, 7)}`, result);
rmSync(tmp, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify(result.medians, null, 2)}\n${file}\n`);
