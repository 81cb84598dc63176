/**
 * bench:realweb — what a crawl of real, human-written sites costs, start-up included, next to the
 * synthetic web's steady figure in the same run (docs/performance.md "Start-up and real pages").
 *
 *   npm run bench:realweb -- [--rounds 2] [--sim-pages 12000] [--warm-pages 4000] [--seconds 120] [--ab <refA>,<refB>] [--no-build] [--no-links] [--no-simweb] [--cpu-prof <dir>] [--perf <dir>] [--out realweb]
 *
 * (`--help` prints what each option does: options.ts.)
 *
 * The real sites are test/realweb's: nginx serving the Python, PostgreSQL and Debian reference
 * manuals (test/fixtures/realweb, each its own virtual host on its own loopback address), names from
 * dnsmasq, all inside a network namespace of the bench's own (test/realweb/harness.ts). The bench
 * runs itself again inside that namespace (`--inside`), and from there runs, per tree and round:
 *
 *  - **manuals**: `<tree>/bin/drumcrawl crawl` of the three front pages with the defaults (page
 *    requisites on) and politeness delays 0, to the end (every page and requisite: ~2,000 fetches);
 *  - **simweb**: the same CLI on simweb's bench preset (bench:e2e's web: thousands of hosts on 256
 *    IPs, delays 0) for `--sim-pages` pages (at most `--seconds`), in the same namespace.
 *
 * Measured from outside the crawler's process (measure.ts): CPU from the spawn to the first request
 * nginx logs, with every thread's share then; CPU per fetch in the first second after that request,
 * the next two, and once warm (from 3 s after it to the last fetch); the whole crawl's CPU per fetch,
 * start-up and shutdown included; per thread role in the warm window; and simweb's steady CPU per
 * fetch (from its `--warm-pages`th fetch to its last: warm-up is counted in pages, not seconds, as
 * the JIT and the caches warm by the pages they see). `--ab` runs two commits (each extracted and
 * built, bench/lib/snapshot.ts) alternately, A B B A …, for a same-run ratio. Last, the parse
 * step's CPU per link on the manuals' large pages (links.ts; the checkout's code; `--no-links` skips it).
 * `--perf <dir>` adds, per crawl, what `perf record -g` saw by thread role and kind of work
 * (perf.ts: V8's compiler, GC, kernel, the rest).
 *
 * Needs what test/realweb needs (nginx, dnsmasq, unshare, nsenter, ip; root or user namespaces).
 * Run under `flock /tmp/heavy.lock` on a shared box.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, openSync, readSync, closeSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { commandLine, machineInfo, REPO_ROOT, sig, SHARED_MACHINE_NOTE, writeResult } from '../lib/report.js';
import { buildTree, snapshotTree } from '../lib/snapshot.js';
import { byRole, cpuAt, cpuPerFetch, measureCrawl, roleCpuPerFetch, type MeasuredCrawl } from './measure.js';
import { parseRealwebArgs, USAGE, type RealwebOptions } from './options.js';
import { perfByRole } from './perf.js';

const SELF = fileURLToPath(import.meta.url);
const UA = 'drumcrawl-bench/0.1 (+https://example.test/bench)';
const DELAYS0 = ['--host-delay', '0', '--min-host-delay', '0', '--ip-delay', '0', '--min-ip-delay', '0'];

interface Plan {
  trees: { label: string; dir: string; commit: string }[];
  rounds: number;
  /** simweb: pages to crawl, the first `warmPages` of them left out of the steady figure, and a time cap */
  simPages: number;
  warmPages: number;
  seconds: number;
  accessLog: string;
  seeds: string[];
  dnsServer: string;
  /** crawl simweb after each manuals run (the steady figure and the ratio) */
  simweb: boolean;
  /** node --cpu-prof's directory for the manuals crawls (one subdirectory per run), or null */
  cpuProf: string | null;
  /** perf record's directory (one file per crawl), or null */
  perf: string | null;
}

async function outside(a: RealwebOptions): Promise<void> {
  const { manualSites, startRealWeb } = await import('../../test/realweb/harness.js');
  const { MANUAL_HOSTS } = await import('../../test/realweb/manuals.js');
  const { linkCost } = await import('./links.js');
  const { rounds, seconds, simPages, warmPages } = a;
  const git = (...argv: string[]): string => execFileSync('git', argv, { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
  const trees: Plan['trees'] = [];
  if (a.ab !== null) {
    for (const ref of a.ab) {
      const t = snapshotTree(ref);
      process.stderr.write(`bench:realweb: building ${t.commit.slice(0, 8)} (${t.subject})\n`);
      buildTree(t.dir);
      trees.push({ label: t.commit.slice(0, 7), dir: t.dir, commit: t.commit });
    }
  } else {
    if (a.build) buildTree(REPO_ROOT);
    const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
    trees.push({ label: 'checkout', dir: REPO_ROOT, commit: git('rev-parse', 'HEAD') + (dirty ? '+uncommitted' : '') });
  }
  const sites = manualSites();
  const web = await startRealWeb({ sites, capture: false });
  const manualsDir = web.manualsDir;
  let out = '';
  try {
    const plan: Plan = {
      trees, rounds, seconds, simPages, warmPages, accessLog: path.join(web.dir, 'access.log'),
      seeds: sites.map((s) => `http://${s.host}/`), dnsServer: web.dnsServer,
      simweb: a.simweb, cpuProf: a.cpuProf === null ? null : path.resolve(a.cpuProf),
      perf: a.perf === null ? null : path.resolve(a.perf),
    };
    const run = web.exec(process.execPath, ['--import', 'tsx', SELF, '--inside', JSON.stringify(plan)], { cwd: REPO_ROOT });
    run.child.stderr!.on('data', (d: Buffer) => process.stderr.write(d));
    const code = await run.done;
    out = run.out();
    if (code !== 0) throw new Error(`bench:realweb inside the namespace exited ${code}:\n${out.slice(-3000)}`);
  } finally {
    await web.close();
  }
  const line = out.split('\n').find((l) => l.startsWith('RESULT '));
  if (line === undefined) throw new Error(`no RESULT line:\n${out.slice(-3000)}`);
  // the parse step's cost per link on the large pages (the checkout's code, in this process)
  const links = a.links ? await linkCost(manualsDir, MANUAL_HOSTS) : null;
  const result = {
    bench: 'realweb',
    command: commandLine('bench:realweb'),
    machine: machineInfo(),
    note: SHARED_MACHINE_NOTE,
    trees: trees.map((t) => ({ label: t.label, commit: t.commit })),
    ...(JSON.parse(line.slice(7)) as object),
    linkCost: links,
  };
  const file = writeResult(a.out, result);
  process.stdout.write(`${JSON.stringify({ summary: (result as { summary?: unknown }).summary, linkCost: links === null ? null : { ...links, rounds: undefined } }, null, 2)}\n${file}\n`);
}

/** The first line nginx appends after `offset`: its time (ms since the epoch). */
function firstLogLineAfter(file: string, offset: number): number | null {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(4096);
    const n = readSync(fd, buf, 0, buf.length, offset);
    const line = buf.subarray(0, n).toString('latin1').split('\n')[0];
    return line === undefined || line === '' ? null : Math.round(Number(line.split('\t')[0]) * 1000);
  } finally {
    closeSync(fd);
  }
}

const r3 = (x: number | null): number | null => (x === null ? null : sig(x, 3));

function manualsFigures(m: MeasuredCrawl, firstReq: number): Record<string, unknown> {
  const last = m.fetches.length > 0 ? Math.max(...m.fetches) : firstReq;
  const w = (from: number, to: number): Record<string, unknown> => {
    const c = cpuPerFetch(m, from, to);
    return { pages: c.pages, cpuMs: Math.round(c.cpuMs), msPerPage: r3(c.msPerPage) };
  };
  const totalCpu = m.samples.at(-1)?.cpuMs ?? 0;
  return {
    exitCode: m.exitCode,
    fetches: m.fetches.length,
    launchToFirstRequestMs: firstReq - m.launchedAt,
    cpuToFirstRequestMs: Math.round(cpuAt(m, firstReq)),
    /** every thread's CPU when the bench saw the first request (a few ms after it) */
    cpuToFirstRequestByRole: m.firstSeen === null ? null : byRole(m.firstSeen.threads),
    threadsAtFirstRequest: m.firstSeen?.threads.length ?? null,
    firstSecond: w(firstReq, firstReq + 1000),
    secondsOneToThree: w(firstReq + 1000, firstReq + 3000),
    warm: w(firstReq + 3000, last + 1),
    warmByRole: roleCpuPerFetch(m, firstReq + 3000, last),
    crawlSeconds: (last - firstReq) / 1000,
    wallSeconds: (m.exitedAt - m.launchedAt) / 1000,
    wholeCpuMs: Math.round(totalCpu),
    /** CPU from the spawn to the exit over the fetches: start-up, warm-up and the final checkpoint included */
    wholeMsPerPage: r3(totalCpu / Math.max(1, m.fetches.length)),
  };
}

function simwebFigures(m: MeasuredCrawl, warmPages: number): Record<string, unknown> {
  const f = [...m.fetches].sort((x, y) => x - y);
  const first = f[0]!;
  const last = f.at(-1)!;
  // steady: once `warmPages` pages are done (the JIT's and the caches' warm-up is counted in pages, not seconds)
  const from = f[Math.min(warmPages, Math.floor(f.length / 3))]!;
  const c = cpuPerFetch(m, from, last);
  return {
    exitCode: m.exitCode,
    fetches: m.fetches.length,
    cpuToFirstFetchMs: Math.round(cpuAt(m, first)),
    steadyFromFetch: Math.min(warmPages, Math.floor(f.length / 3)),
    steady: { pages: c.pages, cpuMs: Math.round(c.cpuMs), msPerPage: r3(c.msPerPage) },
    steadyByRole: roleCpuPerFetch(m, from, last),
    wholeMsPerPage: r3((m.samples.at(-1)?.cpuMs ?? 0) / Math.max(1, m.fetches.length)),
  };
}

async function inside(plan: Plan): Promise<void> {
  const { forkSimweb, SIMWEB_ALLOW_FLAGS } = await import('../../test/e2e/harness.js');
  const sim = plan.simweb ? await forkSimweb('bench', undefined, { log: false }) : null;
  const seedsDir = mkdtempSync(path.join(os.tmpdir(), 'dc-realweb-bench-'));
  const seedFile = path.join(seedsDir, 'seeds.txt');
  if (sim !== null) writeFileSync(seedFile, sim.seeds.join('\n') + '\n');
  const runs: Record<string, unknown>[] = [];
  if (plan.perf !== null) mkdirSync(plan.perf, { recursive: true });
  try {
    for (let r = 0; r < plan.rounds; r++) {
      // A B, then B A: each tree runs first as often as the other
      const order = r % 2 === 0 ? plan.trees : [...plan.trees].reverse();
      for (const t of order) {
        const dir = mkdtempSync(path.join(os.tmpdir(), 'dc-realweb-run-'));
        try {
          const offset = statSync(plan.accessLog).size;
          const m = await measureCrawl({
            root: t.dir, out: path.join(dir, 'out'), rolesFile: path.join(dir, 'roles'),
            args: [...plan.seeds, '--state', path.join(dir, 'state'), '--out', path.join(dir, 'out'), '--dns-server', plan.dnsServer,
              '--allow-network', '127.0.0.0/8', '--user-agent', UA, '--progress', 'none', ...DELAYS0],
            firstRequest: () => statSync(plan.accessLog).size > offset,
            ...(plan.cpuProf === null ? {} : { cpuProf: path.join(plan.cpuProf, `${t.label}-${r}`) }),
            ...(plan.perf === null ? {} : { perf: path.join(plan.perf, `${t.label}-${r}.data`) }),
          });
          const firstReq = firstLogLineAfter(plan.accessLog, offset);
          if (m.exitCode !== 0 || firstReq === null) throw new Error(`manuals crawl (${t.label}) exited ${m.exitCode}: ${m.tail}`);
          const manuals = manualsFigures(m, firstReq);
          if (plan.perf !== null) manuals.perf = perfByRole(path.join(plan.perf, `${t.label}-${r}.data`), m.roles);
          rmSync(dir, { recursive: true, force: true });
          if (sim === null) {
            runs.push({ round: r, tree: t.label, manuals, simweb: null, manualsWholeOverSimwebSteady: null });
            process.stderr.write(`bench:realweb: ${t.label} round ${r}: first request after ${manuals.cpuToFirstRequestMs} ms CPU; ` +
              `manuals ${manuals.wholeMsPerPage} ms/page whole (${manuals.fetches} fetches)\n`);
            continue;
          }
          const s = await measureCrawl({
            root: t.dir, out: path.join(dir, 'out'), rolesFile: path.join(dir, 'roles'),
            args: ['--seeds', seedFile, '--state', path.join(dir, 'state'), '--out', path.join(dir, 'out'), '--dns-server', sim.dnsServer,
              ...SIMWEB_ALLOW_FLAGS, '--user-agent', UA, '--progress', 'none', '--scope', 'any', ...DELAYS0,
              '--max-pages', String(plan.simPages), '--max-time', String(plan.seconds), '--checkpoint-interval', '600000'],
            ...(plan.cpuProf === null ? {} : { cpuProf: path.join(plan.cpuProf, `${t.label}-${r}-simweb`) }),
            ...(plan.perf === null ? {} : { perf: path.join(plan.perf, `${t.label}-${r}-simweb.data`) }),
          });
          if (s.exitCode !== 0 || s.fetches.length === 0) throw new Error(`simweb crawl (${t.label}) exited ${s.exitCode}: ${s.tail}`);
          const simweb = simwebFigures(s, plan.warmPages);
          if (plan.perf !== null) simweb.perf = perfByRole(path.join(plan.perf, `${t.label}-${r}-simweb.data`), s.roles);
          const ratio = (manuals.wholeMsPerPage as number) / ((simweb.steady as { msPerPage: number }).msPerPage);
          runs.push({ round: r, tree: t.label, manuals, simweb, manualsWholeOverSimwebSteady: r3(ratio) });
          process.stderr.write(`bench:realweb: ${t.label} round ${r}: first request after ${manuals.cpuToFirstRequestMs} ms CPU; ` +
            `manuals ${manuals.wholeMsPerPage} ms/page whole (${manuals.fetches} fetches), simweb steady ${(simweb.steady as { msPerPage: number }).msPerPage} ms/page\n`);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }
    }
  } finally {
    await sim?.close();
    rmSync(seedsDir, { recursive: true, force: true });
  }
  const med = (xs: number[]): number => {
    const s = [...xs].sort((x, y) => x - y);
    return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  };
  const summary = Object.fromEntries(plan.trees.map((t) => {
    const mine = runs.filter((x) => x.tree === t.label) as { manuals: Record<string, unknown>; simweb: Record<string, unknown> | null; manualsWholeOverSimwebSteady: number | null }[];
    const num = (f: (x: (typeof mine)[number]) => unknown): number | null => (mine.some((x) => f(x) === null || f(x) === undefined) ? null : med(mine.map((x) => Number(f(x)))));
    return [t.label, {
      runs: mine.length,
      medianCpuToFirstRequestMs: num((x) => x.manuals.cpuToFirstRequestMs),
      medianLaunchToFirstRequestMs: num((x) => x.manuals.launchToFirstRequestMs),
      medianManualsFirstSecondMsPerPage: num((x) => (x.manuals.firstSecond as { msPerPage: number }).msPerPage),
      medianManualsWarmMsPerPage: num((x) => (x.manuals.warm as { msPerPage: number }).msPerPage),
      medianManualsWholeMsPerPage: num((x) => x.manuals.wholeMsPerPage),
      medianSimwebSteadyMsPerPage: num((x) => (x.simweb?.steady as { msPerPage: number } | undefined)?.msPerPage),
      medianManualsWholeOverSimwebSteady: num((x) => x.manualsWholeOverSimwebSteady),
    }];
  }));
  process.stdout.write(`RESULT ${JSON.stringify({ rounds: plan.rounds, simweb: plan.simweb ? { pages: plan.simPages, warmPages: plan.warmPages, maxSeconds: plan.seconds } : null, summary, runs })}\n`);
}

if (process.argv[2] === '--inside') await inside(JSON.parse(process.argv[3]!) as Plan);
else {
  let opts: ReturnType<typeof parseRealwebArgs>;
  try {
    opts = parseRealwebArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`bench:realweb: ${(e as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (opts === 'help') process.stdout.write(USAGE);
  else await outside(opts);
}
