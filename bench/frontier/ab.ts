/**
 * bench/frontier A/B — the release rate (bench/frontier/run.ts) of two commits in one sitting,
 * alternated round by round so that the shared machine's load hits both alike. Each side runs from
 * a clean extract of its commit (bench/lib/snapshot.ts); the figure compared is releases per
 * CPU-second (this process's CPU time), the median over the rounds.
 *
 *   npm run bench:frontier -- --ab --a main --b HEAD [--rounds 3] [--seconds 4] [--hosts 1000000] [--out frontier-ab]
 *
 * Run it under `flock /tmp/heavy.lock`.
 */
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { args, commandLine, machineInfo, sig, writeResult } from '../lib/report.js';
import { snapshotTree, type TreeSnapshot } from '../lib/snapshot.js';

const a = args();
const refs = [a.get('a') ?? 'main', a.get('b') ?? 'HEAD'];
const rounds = a.num('rounds', 3);
const seconds = a.num('seconds', 4);
const hosts = a.num('hosts', 1_000_000);
const out = a.get('out') ?? 'frontier-ab';

interface Sample { hostsPerIp: number; releasesPerCpuSecond: number; releasesPerWallSecond: number }

const trees: TreeSnapshot[] = refs.map((r) => snapshotTree(r));
const samples: Sample[][][] = trees.map(() => []);
try {
  for (let round = 0; round < rounds; round++) {
    // Alternate which side goes first.
    const order = round % 2 === 0 ? [0, 1] : [1, 0];
    for (const k of order) {
      const t = trees[k]!;
      const stdout = execFileSync(process.execPath, ['--import', 'tsx', path.join(t.dir, 'bench/frontier/run.ts'), '--seconds', String(seconds), '--hosts', String(hosts)], {
        cwd: t.dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 24,
      });
      const rep = JSON.parse(stdout) as { results: Sample[] };
      samples[k]!.push(rep.results.map((r) => ({ hostsPerIp: r.hostsPerIp, releasesPerCpuSecond: r.releasesPerCpuSecond, releasesPerWallSecond: r.releasesPerWallSecond })));
      process.stderr.write(`[frontier-ab] round ${round + 1} ${refs[k]}: ${rep.results.map((r) => `${r.hostsPerIp}/IP ${r.releasesPerCpuSecond}/CPU-s`).join(', ')}\n`);
    }
  }
} finally {
  for (const t of trees) t.remove();
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const configs = samples[0]![0]!.map((s, i) => ({ hostsPerIp: s.hostsPerIp, i }));
const compare = configs.map(({ hostsPerIp, i }) => {
  const med = samples.map((side) => median(side.map((r) => r[i]!.releasesPerCpuSecond)));
  return {
    hostsPerIp,
    [refs[0]!]: { perRound: samples[0]!.map((r) => r[i]!.releasesPerCpuSecond), median: med[0] },
    [refs[1]!]: { perRound: samples[1]!.map((r) => r[i]!.releasesPerCpuSecond), median: med[1] },
    ratioBtoA: sig(med[1]! / med[0]!, 3),
  };
});
const result = {
  bench: 'frontier-ab',
  command: commandLine('bench:frontier'),
  machine: machineInfo(),
  note: 'releases per CPU-second of bench/frontier/run.ts (10^6 hosts, all at B = B0), medians over alternated rounds of clean extracts of each commit',
  commits: trees.map((t, k) => ({ ref: refs[k], commit: t.commit, subject: t.subject })),
  parameters: { rounds, seconds, hosts },
  compare,
};
console.log(JSON.stringify(compare, null, 2));
console.log(`wrote ${writeResult(out, result)}`);
