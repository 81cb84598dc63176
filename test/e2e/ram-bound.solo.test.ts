/**
 * `--ram` bounds the whole process at any number of hosts (issue #31), through the CLI as a user
 * runs it — `bin/drumcrawl` (the launcher: glibc malloc's settings and the main thread's heap from
 * `--ram`) over the build's bundles, laid out here as bundle.test.ts lays them out: crawls of simweb webs of 10^6 and of 10^7 hosts (bench:soak's web: ~4 hosts per PLD on
 * 64 IPs, politeness floors 0, robots and gzip WARC on) at `--ram 512M` and `--ram 1G`, with no
 * other option, each for DRUMCRAWL_RAM_MINUTES minutes (30 unless set), then SIGTERM. Judged from
 * /proc: the crawler's VmHWM (its peak RSS) never above `--ram`; the crawl exits 0 from its stop
 * (no heap exhaustion, no other failure) and fetched pages in every sixth of its time.
 *
 * Four half-hour crawls: `npm run test:long` only (DRUMCRAWL_LONG). With DRUMCRAWL_RAM_RESULTS set
 * to a file, each crawl's figures are appended to it as one JSON line (with the machine and commit),
 * which is how bench/results/ram-bound-*.json is made. The speed, stall, resume and loss criteria of
 * a soak are bench:soak's (docs/performance.md).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { bundledPackage, crawlCommand, crawlSettings, forkSimweb, tempDir } from './harness.js';

const LONG = process.env.DRUMCRAWL_LONG !== undefined && process.env.DRUMCRAWL_LONG !== '';
const MINUTES = Number(process.env.DRUMCRAWL_RAM_MINUTES ?? 30);
const MiB = 2 ** 20;
const RESULTS = process.env.DRUMCRAWL_RAM_RESULTS;

/** One crawl's figures as a JSON line in DRUMCRAWL_RAM_RESULTS, if set. */
function record(figures: Record<string, unknown>): void {
  if (RESULTS === undefined || RESULTS === '') return;
  const commit = execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
  const machine = { cpu: os.cpus()[0]?.model, cores: os.cpus().length, ramBytes: os.totalmem(), node: process.version, loadavg: os.loadavg() };
  appendFileSync(RESULTS, JSON.stringify({ ...figures, commit, machine, date: new Date().toISOString() }) + '\n');
}

let launcher: Promise<string> | null = null;
/** bin/drumcrawl of a package laid out as `npm run build` lays it out (dist/bundle/), made once. */
function builtLauncher(): Promise<string> {
  launcher ??= (async () => {
    const pkg = await bundledPackage('ram-bound-pkg', true);
    return path.join(pkg, 'bin', 'drumcrawl');
  })();
  return launcher;
}

/** The launcher run with `args`: its exit (code, or -9 when killed), and the last 16 KB of its output. */
function launch(bin: string, args: string[]): { child: ChildProcess; done: Promise<number | null>; out: () => string } {
  const env = { ...process.env };
  delete env.DRUMCRAWL_WORKER_BUNDLE; // the threads' bundles beside dist/bundle/main.js, as a user's
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  let out = '';
  const keep = (d: Buffer): void => void (out = (out + d.toString()).slice(-16_384));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const done = new Promise<number | null>((resolve) => child.on('exit', (code, sig) => resolve(sig === 'SIGKILL' ? -9 : code)));
  return { child, done, out: () => out };
}

/** VmHWM of `pid` in bytes, or null once the process is gone. */
function vmHwm(pid: number): number | null {
  try {
    const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'));
    return m === null ? null : Number(m[1]) * 1024;
  } catch {
    return null;
  }
}

for (const hosts of [1e6, 1e7]) {
  for (const ram of ['512M', '1G'] as const) {
    const ramBytes = (ram === '512M' ? 512 : 1024) * MiB;
    test(`--ram ${ram} over ${hosts === 1e6 ? '10^6' : '10^7'} hosts for ${MINUTES} minutes: VmHWM ≤ --ram, the crawl goes on and stops cleanly`, { skip: !LONG && 'npm run test:long', timeout: (MINUTES + 15) * 60_000 }, async () => {
      const web = await forkSimweb('bench', { plds: Math.round(hosts / 4), hostsPerPldMean: 4, hostsPerPldMax: 200, ips: 64, seedCount: 20 });
      const dir = await tempDir(`ram-${ram}-${hosts}`);
      try {
        const input = crawlSettings(web, {
          stateDir: path.join(dir, 'state'), outDir: path.join(dir, 'out'), ramBytes,
          hostDelayMs: 0, ipDelayMs: 0, minHostDelayMs: 0, minIpDelayMs: 0,
        });
        const run = launch(await builtLauncher(), crawlCommand(input));
        const pid = run.child.pid!;
        const sixths: number[] = [];
        let hwm = 0;
        const start = Date.now();
        const end = start + MINUTES * 60_000;
        let lastRequests = 0;
        for (let sixth = 1; sixth <= 6 && run.child.exitCode === null; sixth++) {
          while (Date.now() < start + (sixth * (end - start)) / 6 && run.child.exitCode === null) {
            hwm = Math.max(hwm, vmHwm(pid) ?? 0);
            await sleep(1000);
          }
          const n = await web.requests();
          sixths.push(n - lastRequests);
          lastRequests = n;
        }
        hwm = Math.max(hwm, vmHwm(pid) ?? 0);
        assert.equal(run.child.exitCode, null, `the crawl ended by itself before its stop:\n${run.out().slice(-3000)}`);
        run.child.kill('SIGTERM');
        let timer: NodeJS.Timeout | undefined;
        const code = await Promise.race([run.done, new Promise<'late'>((r) => { timer = setTimeout(() => r('late'), 600_000); })]);
        clearTimeout(timer);
        if (code === 'late') run.child.kill('SIGKILL');
        assert.equal(code, 0, `the stop exits 0:\n${run.out().slice(-3000)}`);
        console.log(`--ram ${ram}, ${hosts} hosts, ${MINUTES} min: VmHWM ${(hwm / MiB).toFixed(0)} MiB; requests per sixth ${sixths.join(', ')}`);
        record({ ram, ramBytes, hosts, minutes: MINUTES, vmHwmBytes: hwm, requestsPerSixth: sixths, exitCode: code, heapExhausted: /heap out of memory|Allocation failed/.test(run.out()) });
        assert.doesNotMatch(run.out(), /heap out of memory|Allocation failed/);
        assert.ok(hwm > 0 && hwm <= ramBytes, `VmHWM ${(hwm / MiB).toFixed(1)} MiB ≤ --ram ${ram}`);
        assert.ok(sixths.every((n) => n > 0), `requests in every sixth of the run: ${sixths.join(', ')}`);
      } finally {
        await web.close();
        await rm(dir, { recursive: true, force: true });
      }
    });
  }
}
