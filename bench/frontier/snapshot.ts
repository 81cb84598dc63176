/**
 * bench/frontier snapshot — what a checkpoint's frontier snapshot costs: every URL in the
 * frontier's RAM encoded (encodeFrontierUrlView) and pushed to a new disk queue, then the queue
 * committed (src/frontier/frontier.ts commit). It is CPU the main thread spends per checkpoint,
 * in slices between the crawl's turns (src/frontier/politeness/ram-snapshot.ts). URLs are shaped
 * like bench:soak's web (host, PLD, path; a via of the same shape, a two-letter hop path).
 *
 *   node --import tsx bench/frontier/snapshot.ts --ab <commitA>,<commitB> [--urls 443000] [--rounds 5] [--out NAME]
 *
 * Each commit is extracted with snapshotTree, and a child process imports that tree's own record
 * and disk-queue modules (this file drives them: the older tree need not have it); rounds alternate
 * the commits, so a load change falls on all alike. Reported per commit: the median over rounds of
 * the encode-and-push CPU ms and of the commit's wall ms, and the ratio to the first commit.
 * Writes bench/results/frontier-snapshot-<NAME>.json.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { args, machineInfo, writeResult } from '../lib/report.js';
import { snapshotTree, type TreeSnapshot } from '../lib/snapshot.js';

const a = args();
const urls = a.num('urls', 443_000);

interface One { encodeCpuMs: number; commitWallMs: number; bytesPerUrl: number }

/** One snapshot of `n` URLs with the record and queue modules of the tree at `dir` (in a child). */
async function child(dir: string, n: number): Promise<One> {
  const rec = (await import(pathToFileURL(path.join(dir, 'src/frontier/record.ts')).href)) as typeof import('../../src/frontier/record.js');
  const disk = (await import(pathToFileURL(path.join(dir, 'src/disk/index.ts')).href)) as typeof import('../../src/disk/index.js');
  const list: InstanceType<typeof rec.FrontierUrl>[] = [];
  for (let i = 0; i < n; i++) {
    list.push(new rec.FrontierUrl({
      url: `http://h${i % 4}.pld${i}.test:33769/p/${i * 7}`, hostHi: i, hostLo: i ^ 0x5a5a, pldHi: i, pldLo: i >>> 2,
      budget: 10, admitted: 3, discoveredAt: 1_700_000_000_000 + i, via: `http://www.pld${i * 3}.test:33769/p/${i}`, path: 'LL',
    }));
  }
  const qdir = fs.mkdtempSync(path.join(os.tmpdir(), 'dc-snapbench-'));
  try {
    const q = await disk.DiskQueue.open(qdir);
    let bytes = 0;
    const c0 = process.cpuUsage();
    for (const u of list) {
      const v = rec.encodeFrontierUrlView(u);
      bytes += v.length;
      q.push(v);
    }
    const c = process.cpuUsage(c0);
    const t0 = performance.now();
    await q.commit();
    const commitWallMs = performance.now() - t0;
    await q.close();
    return { encodeCpuMs: (c.user + c.system) / 1000, commitWallMs, bytesPerUrl: bytes / n };
  } finally {
    fs.rmSync(qdir, { recursive: true, force: true });
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((x, y) => x - y);
  return s[s.length >> 1]!;
};

if (a.get('child-dir') !== undefined) {
  process.stdout.write(JSON.stringify(await child(a.get('child-dir')!, urls)) + '\n');
} else {
  const refs = (a.get('ab') ?? 'HEAD').split(',').filter(Boolean);
  const rounds = a.num('rounds', 5);
  const trees: TreeSnapshot[] = refs.map((r) => snapshotTree(r));
  const out = a.get('out') ?? trees.map((t) => t.commit.slice(0, 7)).join('-');
  const runs: ({ ref: string; commit: string; round: number } & One)[] = [];
  try {
    for (let round = 1; round <= rounds; round++) {
      for (let i = 0; i < trees.length; i++) {
        const t = trees[i]!;
        const text = execFileSync(process.execPath, ['--import', 'tsx', new URL(import.meta.url).pathname, '--child-dir', t.dir, '--urls', String(urls)], {
          cwd: t.dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'],
        });
        const r = JSON.parse(text) as One;
        runs.push({ ref: refs[i]!, commit: t.commit, round, ...r });
        process.stderr.write(`[snapshot] round ${round} ${refs[i]}: encode+push ${r.encodeCpuMs.toFixed(0)} ms CPU, commit ${r.commitWallMs.toFixed(0)} ms\n`);
      }
    }
  } finally {
    for (const t of trees) t.remove();
  }
  const per = trees.map((t, i) => {
    const mine = runs.filter((r) => r.commit === t.commit && r.ref === refs[i]);
    return { ref: refs[i]!, commit: t.commit, subject: t.subject, encodeCpuMs: median(mine.map((r) => r.encodeCpuMs)), commitWallMs: median(mine.map((r) => r.commitWallMs)), bytesPerUrl: mine[0]!.bytesPerUrl };
  });
  const base = per[0]!;
  const file = writeResult(`frontier-snapshot-${out}`, {
    bench: 'frontier-snapshot',
    command: `node --import tsx bench/frontier/snapshot.ts --ab ${refs.join(',')} --urls ${urls} --rounds ${rounds}`,
    machine: machineInfo(),
    urls,
    commits: per.map((p) => ({ ...p, encodeRatio: p.encodeCpuMs / base.encodeCpuMs })),
    runs,
  });
  process.stderr.write(`[snapshot] ${file}\n`);
  for (const p of per) process.stderr.write(`[snapshot] ${p.ref}: encode+push ${p.encodeCpuMs.toFixed(0)} ms CPU (${(p.encodeCpuMs / base.encodeCpuMs).toFixed(3)}×), commit ${p.commitWallMs.toFixed(0)} ms\n`);
}
