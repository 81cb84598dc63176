/**
 * A nats-server with JetStream for a test: its own store in a temporary directory, loopback only,
 * a free port (the first start picks one: `-p -1`; a restart keeps it). The Debian package
 * nats-server must be installed (.ci/run installs it): without it the test fails, never skips.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export interface NatsServer {
  url: string;
  port: number;
  /** the HTTP monitoring port (opts.monitor), else null: GET /varz has the server's byte and CPU figures */
  monitorPort: number | null;
  /** the server's process id (CPU from /proc) */
  pid(): number | undefined;
  /** SIGTERM and wait for the exit */
  stop(): Promise<void>;
  /** stop, then start again on the same port and store */
  restart(): Promise<void>;
  /** start again after stop() */
  start(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of running) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

export async function startNats(opts: { monitor?: boolean } = {}): Promise<NatsServer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dc-nats-'));
  let port = -1;
  let monitorPort: number | null = opts.monitor ? -1 : null;
  let child: ChildProcess | null = null;
  const launch = async (): Promise<void> => {
    const c = spawn('nats-server', ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', dir, ...(monitorPort !== null ? ['-m', String(monitorPort)] : [])], { stdio: ['ignore', 'ignore', 'pipe'] });
    running.add(c);
    c.once('exit', () => running.delete(c));
    child = c;
    port = await new Promise<number>((resolve, reject) => {
      let err = '';
      const t = setTimeout(() => reject(new Error(`nats-server did not start within 20 s:\n${err}`)), 20_000);
      c.once('error', (e) => {
        clearTimeout(t);
        reject(new Error(`nats-server could not be started (the Debian package nats-server must be installed): ${e.message}`));
      });
      const onData = (d: Buffer): void => {
        err += d.toString();
        const m = /Listening for client connections on [\d.]+:(\d+)/.exec(err);
        const mon = /Starting http monitor on [\d.]+:(\d+)/.exec(err);
        if (mon !== null) monitorPort = Number(mon[1]);
        if (m !== null && /Server is ready/.test(err)) {
          clearTimeout(t);
          c.stderr!.off('data', onData);
          resolve(Number(m[1]));
        }
      };
      c.stderr!.on('data', onData);
      c.once('exit', (code) => {
        clearTimeout(t);
        reject(new Error(`nats-server exited (${code}):\n${err}`));
      });
    });
    c.stderr!.resume();
  };
  const stop = async (): Promise<void> => {
    const c = child;
    if (c === null || c.exitCode !== null || c.signalCode !== null) return;
    await new Promise<void>((r) => {
      c.once('exit', () => r());
      c.kill('SIGTERM');
    });
  };
  await launch();
  return {
    get url() { return `nats://127.0.0.1:${port}`; },
    get port() { return port; },
    get monitorPort() { return monitorPort; },
    pid: () => child?.pid,
    stop,
    start: launch,
    restart: async () => {
      await stop();
      await launch();
    },
  };
}
