/**
 * Same-run A/B of bench:e2e between two commits: each is extracted (`git archive`, snapshot.ts)
 * and built into its own tree, then their runs alternate (A B B A A B …) so that both see the same
 * load, each run under the bench lock (`flock /tmp/heavy.lock`, one run at a time on the box).
 * Reports every run and the medians of pages/s, crawler CPU per page, the per-role CPU (steady
 * window) and peak RSS.
 *
 *   node --import tsx bench/e2e/ab.ts --a <ref> --b <ref> [--pairs 3] [--seconds 30] [--max-pages 300000] [--a-args='<run.ts args>'] [--b-args='<run.ts args>'] [--out e2e-ab-<a>-<b>]
 *
 * `--a-args` / `--b-args`: extra bench/e2e/run.ts arguments for that side's runs only, split on
 * spaces, given with `=`: e.g. `--b-args='--page-workers on'` measures an option against a tree without it.
 * `--a-env` / `--b-env`: environment variables for that side's runs only (`--b-env='K=V K2=V2'`):
 * the crawler's experiment knobs (DRUMCRAWL_PARSE_HOLD_MS, …) against their defaults.
 * `--c` / `--c-args` / `--c-env`: a third side (its tree `--c`, else B's); the rounds then rotate
 * (A B C, B C A, C A B, …) and `--pairs` counts rounds. Sides naming one commit share one build.
 *
 * Both trees must have bench/e2e/run.ts with the per-role CPU (roleCpu in its JSON). Both run
 * under bin/drumcrawl's malloc settings (bench/lib/launcher-env.ts), whatever their own run.ts does.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { args, machineInfo, writeResult } from '../lib/report.js';
import { buildTree, snapshotTree, type TreeSnapshot } from '../lib/snapshot.js';
import { launcherEnv } from '../lib/launcher-env.js';

const a = args();
const refA = a.get('a');
const refB = a.get('b') ?? 'HEAD';
if (refA === undefined) {
  process.stderr.write('usage: ab.ts --a <ref> [--b <ref>] [--pairs 3] [--seconds 30] [--out <name>]\n');
  process.exit(2);
}
const pairs = a.num('pairs', 3);
type Side = 'A' | 'B' | 'C';
// A third side when --c or --c-args / --c-env is given (its tree: --c, else B's)
const hasC = a.get('c') !== undefined || a.get('c-args') !== undefined || a.get('c-env') !== undefined;
const SIDES: Side[] = hasC ? ['A', 'B', 'C'] : ['A', 'B'];
const refC = a.get('c') ?? refB;
const words = (v: string | undefined): string[] => (v ?? '').split(' ').filter((x) => x !== '');
const extra: Record<Side, string[]> = { A: words(a.get('a-args')), B: words(a.get('b-args')), C: words(a.get('c-args')) };
const envOf = (v: string | undefined): Record<string, string> =>
  Object.fromEntries((v ?? '').split(' ').filter((x) => x.includes('=')).map((x) => [x.slice(0, x.indexOf('=')), x.slice(x.indexOf('=') + 1)]));
const env: Record<Side, Record<string, string>> = { A: envOf(a.get('a-env')), B: envOf(a.get('b-env')), C: envOf(a.get('c-env')) };
const seconds = a.num('seconds', 30);
// --max-pages: every run stops at that many pages (the default, 300,000, is beyond any run's reach:
// runs then end at --seconds). A count every run reaches compares peak RSS at the same crawl state:
// the crawl's structures grow with the pages crawled, so a side that runs faster in a timed run
// also ends with more of them.
const maxPages = a.num('max-pages', 300_000);
// One tree per commit (sides that measure an option against the same crawler share it): built once.
const byCommit = new Map<string, TreeSnapshot>();
const treeOf = (ref: string): TreeSnapshot => {
  const t = snapshotTree(ref);
  const had = byCommit.get(t.commit);
  if (had !== undefined) {
    t.remove();
    return had;
  }
  byCommit.set(t.commit, t);
  return t;
};
const trees: Record<Side, TreeSnapshot> = { A: treeOf(refA), B: treeOf(refB), C: hasC ? treeOf(refC) : treeOf(refB) };
for (const t of byCommit.values()) buildTree(t.dir);
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
// A B, B A, A B, …: each position in a pair goes to both sides equally often (three sides: the
// rounds rotate, A B C, B C A, C A B, …)
const order = Array.from({ length: pairs }, (_, i) => (SIDES.length === 2
  ? (i % 2 === 0 ? ['A', 'B'] : ['B', 'A'])
  : [...SIDES.slice(i % 3), ...SIDES.slice(0, i % 3)]) as Side[]).flat();
const count: Record<Side, number> = { A: 0, B: 0, C: 0 };
for (const side of order) {
  const name = `${side}${++count[side]}`;
  const out = path.join(tmp, `${name}.json`);
  process.stderr.write(`[ab] ${name} (${trees[side].commit.slice(0, 7)})\n`);
  execFileSync('flock', ['/tmp/heavy.lock', process.execPath, '--import', 'tsx', 'bench/e2e/run.ts', '--seconds', String(seconds), '--max-pages', String(maxPages), '--no-build', ...extra[side], '--out', out], {
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
function side(s: Side): Record<string, number> {
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
  command: `node --import tsx bench/e2e/ab.ts --a ${refA} --b ${refB}${hasC && a.get('c') !== undefined ? ` --c ${refC}` : ''} --pairs ${pairs} --seconds ${seconds}${maxPages !== 300_000 ? ` --max-pages ${maxPages}` : ''}${SIDES.map((x) => {
    const k = x.toLowerCase();
    return `${extra[x].length > 0 ? ` --${k}-args='${extra[x].join(' ')}'` : ''}${a.get(`${k}-env`) ? ` --${k}-env='${a.get(`${k}-env`)}'` : ''}`;
  }).join('')}`,
  machine: machineInfo(),
  ...Object.fromEntries(SIDES.map((x) => [x, { ref: x === 'A' ? refA : x === 'B' ? refB : refC, commit: trees[x].commit, subject: trees[x].subject, runArgs: extra[x], env: env[x] }])),
  order,
  medians: Object.fromEntries(SIDES.map((x) => [x, side(x)])),
  runs,
  note: 'Each run: node --import tsx bench/e2e/run.ts --seconds S --max-pages P --no-build in the built tree, under flock /tmp/heavy.lock, with bin/drumcrawl\'s malloc settings (MALLOC_ARENA_MAX, MALLOC_MMAP_THRESHOLD_) in its environment. The box is shared (other engineers\' unlocked runs): compare the sides within this file only.',
};
const file = writeResult(a.get('out') ?? `e2e-ab-${trees.A.commit.slice(0, 7)}-${trees.B.commit.slice(0, 7)}`, result);
rmSync(tmp, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify(result.medians, null, 2)}\n${file}\n`);
