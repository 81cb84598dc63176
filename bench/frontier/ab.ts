/**
 * bench/frontier A/B — the politeness release rate (run.ts: nextReady + fetchDone + add per URL,
 * 10^6 hosts in the heaps) of several commits in one sitting. Each commit is extracted with
 * snapshotTree and its own run.ts runs in a child process; the rounds alternate the commits, so a
 * load change on the shared box falls on all of them alike. Reported: releases per CPU-second per
 * commit and layout (10 hosts per IP, 1 host per IP), the median over rounds, and each median as a
 * ratio to the first commit's.
 *
 *   npm run bench:frontier -- --ab 09b3f77,HEAD [--rounds 3] [--seconds 4] [--out NAME]
 *
 * Writes bench/results/frontier-release-ab-<NAME>.json.
 */
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { args, machineInfo, sig, writeResult } from '../lib/report.js';
import { snapshotTree, type TreeSnapshot } from '../lib/snapshot.js';

const a = args();
const refs = (a.get('ab') ?? '').split(',').filter(Boolean);
if (refs.length < 2) throw new Error('--ab: two or more commits, comma-separated');
const rounds = a.num('rounds', 3);
const seconds = a.num('seconds', 4);
const trees: TreeSnapshot[] = refs.map((r) => snapshotTree(r));
const out = a.get('out') ?? trees.map((t) => t.commit.slice(0, 7)).join('-');

interface Run { ref: string; commit: string; round: number; perIp10: number; perIp1: number }
const runs: Run[] = [];
try {
  for (let round = 1; round <= rounds; round++) {
    for (let i = 0; i < trees.length; i++) {
      const t = trees[i]!;
      const text = execFileSync(process.execPath, ['--import', 'tsx', path.join(t.dir, 'bench/frontier/run.ts'), '--seconds', String(seconds)], {
        cwd: t.dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'],
      });
      const r = JSON.parse(text) as { results: Array<{ hostsPerIp: number; releasesPerCpuSecond: number }> };
      const at = (k: number): number => r.results.find((x) => x.hostsPerIp === k)!.releasesPerCpuSecond;
      runs.push({ ref: refs[i]!, commit: t.commit, round, perIp10: at(10), perIp1: at(1) });
      process.stderr.write(`[frontier-ab] round ${round} ${refs[i]}: ${at(10)} / ${at(1)} releases per CPU-second\n`);
    }
  }
} finally {
  for (const t of trees) t.remove();
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const summary = refs.map((ref, i) => {
  const mine = runs.filter((r) => r.ref === ref);
  const base = runs.filter((r) => r.ref === refs[0]);
  const m10 = median(mine.map((r) => r.perIp10));
  const m1 = median(mine.map((r) => r.perIp1));
  return {
    ref, commit: trees[i]!.commit, subject: trees[i]!.subject,
    releasesPerCpuSecond10PerIp: Math.round(m10), releasesPerCpuSecond1PerIp: Math.round(m1),
    ratioToFirst10PerIp: sig(m10 / median(base.map((r) => r.perIp10)), 3),
    ratioToFirst1PerIp: sig(m1 / median(base.map((r) => r.perIp1)), 3),
  };
});
const file = writeResult(`frontier-release-ab-${out}`, {
  bench: 'frontier-release-ab',
  what: 'politeness release rate with 10^6 hosts (bench/frontier/run.ts of each commit), rounds alternated; medians and ratios to the first commit',
  command: `npm run bench:frontier -- --ab ${refs.join(',')} --rounds ${rounds} --seconds ${seconds}`,
  machine: machineInfo(),
  summary,
  runs,
});
console.log(JSON.stringify(summary, null, 2));
console.log(`wrote ${file}`);
