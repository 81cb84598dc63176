/** Helpers for end-to-end tests: simweb in a child process, crawl config, WARC read-back. */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { SimwebReport } from './simweb-child.js';

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
  close(): Promise<void>;
  /** the child's process id (benchmarks read its CPU time) */
  pid: number;
}

export async function forkSimweb(preset: string, params?: object, opts: { log?: boolean } = {}): Promise<SimwebChild> {
  const child: ChildProcess = fork(fileURLToPath(new URL('./simweb-child.ts', import.meta.url)), [preset, params ? JSON.stringify(params) : ''], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, SIMWEB_LOG: opts.log === false ? '0' : '1' },
  });
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
    requests: () =>
      new Promise((resolve) => {
        child.once('message', (m) => resolve((m as { count: number }).count));
        child.send({ cmd: 'count' });
      }),
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.send({ cmd: 'close' });
      }),
  };
}

export async function tempDir(prefix: string): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), `dc-${prefix}-`));
}
