/** Helpers for end-to-end tests: simweb in a child process, the crawl settings, the CLI in a child process. */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { mkdtemp } from 'node:fs/promises';
import { copyFileSync, existsSync, mkdirSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { SimwebReport } from './simweb-child.js';
import { CRAWL_FLAGS, type CrawlConfigInput } from '../../src/config/config.js';
import { readManifest } from '../../src/state/checkpoint.js';

export const UA = 'drumcrawl-test/0.1 (+https://example.test/bot)';

/**
 * simweb's servers live on loopback addresses (127.1.0.1 upward), which the crawler's network guard
 * refuses unless allowed: every test crawl of simweb allows them explicitly, with this config value
 * (`allowNetworks`) or these CLI flags.
 */
export const SIMWEB_NETWORKS: string[] = ['127.0.0.0/8'];
export const SIMWEB_ALLOW_FLAGS: string[] = SIMWEB_NETWORKS.flatMap((c) => ['--allow-network', c]);

export interface SimwebChild {
  dnsServer: string;
  httpPort: number;
  seeds: string[];
  report(o: { hostMs: number; ipMs: number; reachable?: boolean; slackMs?: number; hostSlackMs?: number }): Promise<SimwebReport>;
  /** requests the server has answered (or logged) so far */
  requests(): Promise<number>;
  /** page requests (robots.txt not counted) read and not yet answered: trickling, for instance */
  pagesUnderway(): Promise<number>;
  /** empties the request log (a second crawl of the same web is judged alone) */
  clear(): Promise<void>;
  /** sets the pause between the pieces of trickled answers, those under way included */
  trickle(intervalMs: number): Promise<void>;
  close(): Promise<void>;
  /** the child's process id (benchmarks read its CPU time) */
  pid: number;
}

/**
 * Every child a test starts here. A test that times out is abandoned by the runner with its
 * `finally` never reached; with `--test-force-exit` the file's process then exits, and this hook
 * takes its children along, so no crawler or web outlives the test file (or keeps CI waiting).
 */
const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});
function track(c: ChildProcess): ChildProcess {
  children.add(c);
  c.once('exit', () => children.delete(c));
  return c;
}

export async function forkSimweb(preset: string, params?: object, opts: { log?: boolean } = {}): Promise<SimwebChild> {
  // From the suite's bundle when npm test made one (docs/testing.md), else through tsx.
  const bundled = suiteBundle('simweb-child.js');
  const entry = bundled ?? fileURLToPath(new URL('./simweb-child.ts', import.meta.url));
  const child: ChildProcess = track(fork(entry, [preset, params ? JSON.stringify(params) : ''], {
    execArgv: bundled !== null ? [] : ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, SIMWEB_LOG: opts.log === false ? '0' : '1' },
  }));
  const ready = await new Promise<{ dnsServer: string; httpPort: number; seeds: string[] }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as never));
    child.once('exit', (code) => reject(new Error(`simweb child exited ${code}`)));
  });
  return {
    ...ready,
    pid: child.pid!,
    report: (o) =>
      new Promise((resolve) => {
        child.once('message', (m) => resolve((m as { report: SimwebReport }).report));
        child.send({ cmd: 'report', userAgent: UA, ...o });
      }),
    trickle: (intervalMs) =>
      new Promise((resolve) => {
        child.once('message', () => resolve());
        child.send({ cmd: 'trickle', intervalMs });
      }),
    requests: () =>
      new Promise((resolve) => {
        child.once('message', (m) => resolve((m as { count: number }).count));
        child.send({ cmd: 'count' });
      }),
    pagesUnderway: () =>
      new Promise((resolve) => {
        child.once('message', (m) => resolve((m as { underway: number }).underway));
        child.send({ cmd: 'underway' });
      }),
    clear: () =>
      new Promise((resolve) => {
        child.once('message', () => resolve());
        child.send({ cmd: 'clear' });
      }),
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.send({ cmd: 'close' });
      }),
  };
}

/** `s` quoted for sh. */
export function shq(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * argv that runs the sh `script` in a private mount namespace (`unshare -m`; `-rm`, a user
 * namespace too, when not root), so that the tmpfs mounts it makes vanish with it.
 */
export function inMountNamespace(script: string): string[] {
  return ['unshare', ...(process.getuid?.() === 0 ? ['-m'] : ['-r', '-m']), 'sh', '-c', script];
}

export async function tempDir(prefix: string): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), `dc-${prefix}-`));
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * A package laid out as `npm run build` lays it out, in a temporary directory: package.json,
 * node_modules (linked), the bundles of the sources in dist/bundle/ (scripts/bundle.mjs) and, with
 * `launcher`, bin/drumcrawl. Returns the package's directory.
 */
export async function bundledPackage(prefix: string, launcher = false): Promise<string> {
  const pkg = await tempDir(prefix);
  copyFileSync(path.join(ROOT, 'package.json'), path.join(pkg, 'package.json'));
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(pkg, 'node_modules'), 'dir');
  mkdirSync(path.join(pkg, 'dist'));
  if (launcher) {
    mkdirSync(path.join(pkg, 'bin'));
    copyFileSync(path.join(ROOT, 'bin', 'drumcrawl'), path.join(pkg, 'bin', 'drumcrawl'));
  }
  const { bundle } = (await import(path.join(ROOT, 'scripts/bundle.mjs'))) as { bundle: (o: { root: string; from: string; outdir: string }) => Promise<void> };
  await bundle({ root: ROOT, from: 'src', outdir: path.join(pkg, 'dist', 'bundle') });
  return pkg;
}

/**
 * THE crawl settings of every end-to-end test: the web's seeds and DNS server, the test user agent
 * and whatever the test sets. Every crawl of these tests — in process (Crawler.open with
 * resolveCrawlConfig(crawlSettings(…))) or through the CLI (crawlFlags(crawlSettings(…))) — is
 * built here, so a setting all of them need (e.g. a network allowance) is added in one place.
 */
export function crawlSettings(web: { seeds: string[]; dnsServer: string }, over: CrawlConfigInput = {}): CrawlConfigInput {
  // scope 'any': the simulated web spans many PLDs and these tests judge coverage of all of it
  // (the crawler's default, 'pld', would keep a crawl within the seeds' PLDs).
  return { seeds: web.seeds, dnsServers: [web.dnsServer], allowNetworks: SIMWEB_NETWORKS, userAgent: UA, progress: 'none', scope: 'any', ...over };
}

/** Flags of the CLI for config keys (CRAWL_FLAGS, the one table the CLI is built from). */
export function crawlFlags(input: CrawlConfigInput): string[] {
  const out: string[] = [];
  for (const [key, v] of Object.entries(input)) {
    if (key === 'seeds' || v === undefined || v === null) continue;
    const f = CRAWL_FLAGS.find((x) => x.key === key);
    if (f === undefined) throw new Error(`no CLI flag for ${key}`);
    if (f.kind === 'bool') {
      if (v === true) out.push(`--${f.name}`);
      continue;
    }
    for (const x of Array.isArray(v) ? v : [v]) out.push(`--${f.name}`, key === 'maxTimeMs' ? `${Number(x) / 1000}` : String(x));
  }
  return out;
}

/** `drumcrawl crawl …` for these settings (seeds first). */
export function crawlCommand(input: CrawlConfigInput): string[] {
  return ['crawl', ...((input.seeds as string[] | undefined) ?? []), ...crawlFlags(input)];
}

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
/** tsx as a file URL: a child whose working directory is elsewhere finds it too. */
const TSX = import.meta.resolve('tsx');

/**
 * The node arguments that run the CLI: the bundle of the sources `npm test` builds before the
 * suite (DRUMCRAWL_WORKER_BUNDLE names its directory; its main.js is the CLI, its workers the
 * threads', as `npm run build` lays them out for bin/drumcrawl), else src/cli/main.ts through tsx
 * (a single test file run by hand). The bundle starts in ~0.4 s of CPU, tsx in ~1 s plus ~0.6 s
 * per worker thread.
 */
export function cliArgv(): string[] {
  const main = suiteBundle('main.js');
  return main !== null ? [main] : ['--import', TSX, MAIN];
}

/** A file of the suite's bundle (DRUMCRAWL_WORKER_BUNDLE, docs/testing.md), or null without one. */
function suiteBundle(file: string): string | null {
  const dir = process.env.DRUMCRAWL_WORKER_BUNDLE;
  if (dir === undefined || dir === '') return null;
  const p = path.join(dir, file);
  return existsSync(p) ? p : null;
}

export interface CliRun {
  child: ChildProcess;
  /** exit code, or -9 for SIGKILL */
  done: Promise<number | null>;
  /** stdout + stderr so far */
  out(): string;
  /**
   * Date.now() when a line matching `re` first appeared (waits for it; rejects at exit, or after
   * timeoutMs — a bound on a hang, default 10 min: starting the CLI through tsx takes tens of
   * seconds on a loaded box)
   */
  waitFor(re: RegExp, timeoutMs?: number): Promise<number>;
}

/** The CLI (cliArgv) in a child process, its output collected. */
export function cli(args: string[], env: NodeJS.ProcessEnv = {}): CliRun {
  const child = track(spawn(process.execPath, [...cliArgv(), ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } }));
  let out = '';
  const seen: { re: RegExp; resolve: (t: number) => void }[] = [];
  const onData = (d: Buffer): void => {
    out += d.toString();
    for (let i = seen.length - 1; i >= 0; i--) {
      if (seen[i]!.re.test(out)) {
        seen[i]!.resolve(Date.now());
        seen.splice(i, 1);
      }
    }
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  let exited = false;
  const done = new Promise<number | null>((resolve) => child.on('exit', (code, sig) => {
    exited = true;
    resolve(sig === 'SIGKILL' ? -9 : code);
  }));
  return {
    child, done, out: () => out,
    waitFor: (re, timeoutMs = 600_000) => {
      if (re.test(out)) return Promise.resolve(Date.now());
      return new Promise<number>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`no ${re} within ${timeoutMs} ms:\n${out}`)), timeoutMs);
        const ok = (at: number): void => { clearTimeout(t); resolve(at); };
        seen.push({ re, resolve: ok });
        void done.then(() => {
          if (!exited || re.test(out)) return;
          clearTimeout(t);
          reject(new Error(`exited before ${re}:\n${out}`));
        });
      });
    },
  };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Wait until the server has answered `n` requests in all, or `run` has ended. No wall-clock bound:
 * how long a crawl takes to get there depends on the box's load; the test's timeout bounds a hang.
 */
export async function untilServed(web: Pick<SimwebChild, 'requests'>, n: number, run: CliRun): Promise<void> {
  while ((await web.requests()) < n && run.child.exitCode === null && run.child.signalCode === null) await sleep(50);
}

/** Wait until `state` holds a checkpoint; fails if `run` ends first (the test's timeout bounds a hang). */
export async function untilCheckpoint(state: string, run: CliRun): Promise<void> {
  for (;;) {
    if ((await readManifest(state).catch(() => null)) !== null) return;
    if (run.child.exitCode !== null || run.child.signalCode !== null) throw new Error(`the run ended before its first checkpoint:\n${run.out()}`);
    await sleep(100);
  }
}

/** A seeded PRNG (LCG) for the moments of stops: the seed is printed, a failure replays with it. */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32);
}
