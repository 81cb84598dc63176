/**
 * Runs inside the real-web tests' network and mount namespaces (harness.ts starts it with
 * `unshare --net --mount --fork`): brings the namespace's loopback up, points /etc/resolv.conf (in
 * this mount namespace only) at the DNS server, starts dnsmasq, nginx and tcpdump with the files the
 * harness wrote into `dir`, waits until each answers, prints `READY <pid>` (the pid the harness
 * enters the namespaces by) and, on a `stop` line or the end of its standard input, stops tcpdump
 * first (SIGINT: it writes out what it captured), then nginx and dnsmasq, and prints `STOPPED`.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { Resolver } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';

interface HolderConfig {
  dir: string;
  dnsAddress: string;
  /** name → address (dnsmasq host records) */
  records: [string, string][];
  /** addresses nginx listens on, port 80 */
  listen: string[];
  /** tcpdump capture file; null: no capture */
  pcap: string | null;
}

const cfg = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as HolderConfig;
const children: ChildProcess[] = [];
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function start(cmd: string, args: string[], name: string): ChildProcess {
  const c = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  c.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  c.on('error', (e) => fail(`${name}: ${e.message}`));
  c.on('exit', (code, sig) => { if (!stopping) fail(`${name} exited ${code ?? sig}: ${err.trim()}`); });
  (c as ChildProcess & { errText: () => string }).errText = () => err;
  children.push(c);
  return c;
}

let stopping = false;
function fail(msg: string): never {
  process.stdout.write(`FAILED ${msg.replace(/\n/g, ' | ')}\n`);
  for (const c of children) c.kill('SIGKILL');
  process.exit(1);
}

async function until(what: string, ok: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) fail(`${what} not ready after ${ms} ms`);
    await sleep(50);
  }
}

function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host, port });
    s.once('connect', () => { s.destroy(); resolve(true); });
    s.once('error', () => resolve(false));
  });
}

async function main(): Promise<void> {
  execFileSync('ip', ['link', 'set', 'lo', 'up']);
  execFileSync('mount', ['--bind', path.join(cfg.dir, 'resolv.conf'), '/etc/resolv.conf']);
  let tcpdump: ChildProcess | null = null;
  if (cfg.pcap !== null) {
    // -Z root: the file stays the harness's; --immediate-mode -U: each packet read and written as it comes (else the kernel hands them over in blocks and a stop loses the last); nanosecond stamps.
    tcpdump = start('tcpdump', ['-i', 'lo', '--immediate-mode', '-U', '-n', '-Z', 'root', '-s', '4096', '--time-stamp-precision=nano', '-w', cfg.pcap, 'tcp'], 'tcpdump');
    const t = tcpdump as ChildProcess & { errText: () => string };
    await until('tcpdump', async () => /listening on/.test(t.errText()));
  }
  start('dnsmasq', ['--keep-in-foreground', '--no-resolv', '--no-hosts', '--conf-file=/dev/null', `--listen-address=${cfg.dnsAddress}`,
    '--bind-interfaces', '--user=root', `--pid-file=${path.join(cfg.dir, 'dnsmasq.pid')}`, '--log-facility=-',
    ...cfg.records.map(([n, a]) => `--host-record=${n},${a}`)], 'dnsmasq');
  start('nginx', ['-p', cfg.dir, '-c', path.join(cfg.dir, 'nginx.conf'), '-e', path.join(cfg.dir, 'nginx-error.log')], 'nginx');
  const r = new Resolver();
  r.setServers([cfg.dnsAddress]);
  const [name, addr] = cfg.records[0]!;
  await until('dnsmasq', async () => (await r.resolve4(name).catch(() => [] as string[])).includes(addr));
  for (const a of cfg.listen) await until(`nginx on ${a}:80`, () => canConnect(a, 80));
  process.stdout.write(`READY ${process.pid}\n`);
  const rl = readline.createInterface({ input: process.stdin });
  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    rl.close();
    if (tcpdump !== null) {
      // The last packets reach the capture file before tcpdump exits.
      await sleep(100);
      const done = new Promise((res) => tcpdump!.once('exit', res));
      tcpdump.kill('SIGINT');
      await done;
    }
    for (const c of children) if (c !== tcpdump) c.kill(c.spawnfile === 'nginx' ? 'SIGQUIT' : 'SIGTERM');
    await Promise.all(children.map((c) => (c.exitCode !== null || c.signalCode !== null ? Promise.resolve() : new Promise((res) => c.once('exit', res)))));
    process.stdout.write('STOPPED\n');
    process.exit(0);
  };
  rl.on('line', (l) => { if (l.trim() === 'stop') void stop(); });
  rl.on('close', () => void stop());
}

main().catch((e: unknown) => fail((e as Error).stack ?? String(e)));
