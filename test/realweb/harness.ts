/**
 * Real web servers for the real-web tests and bench: nginx serving the real manuals of
 * test/fixtures/realweb (each its own virtual host on its own loopback address, port 80), names
 * from dnsmasq, and tcpdump timing every request on the wire — all inside a network and mount
 * namespace this harness creates (`unshare --net --mount`), so that nothing but the namespace's
 * own loopback is ever a target and the capture sees only this test's traffic. Commands (the
 * crawler, wget2) run in the same namespaces through `nsenter`. As root (CI) the namespaces are
 * the kernel's plain ones; otherwise a user namespace maps the caller to root inside.
 *
 * Needs the Debian packages nginx, dnsmasq (dnsmasq-base) and tcpdump, plus util-linux's unshare and
 * nsenter and iproute2's ip; `.ci/run` installs the packages when missing. A missing one makes
 * startRealWeb throw (the tests then fail; they never skip).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { MANUAL_HOSTS, unpackManuals } from './manuals.js';
import { readPcapRequests, type WireRequest } from './pcap.js';

export const REALWEB_TOOLS = ['nginx', 'dnsmasq', 'tcpdump', 'unshare', 'nsenter', 'ip'] as const;

/** The DNS server's address inside the namespace. */
export const REALWEB_DNS = '127.0.0.53';

export interface SiteSpec {
  host: string;
  /** loopback address its nginx virtual host listens on (port 80) */
  ip: string;
  /** document root: a manual's host name (unpacked from the fixture) or an absolute directory */
  root: string;
  /** robots.txt body; null or absent: 404 */
  robots?: string | null;
  /** further files served at exact paths (path → body), e.g. a sitemap */
  files?: Record<string, string>;
  /** a path prefix served from a directory of the root (nginx alias): copies of pages elsewhere */
  aliases?: { prefix: string; dir: string }[];
}

/** The three manuals as virtual hosts, one address each, no robots.txt (tests add theirs). */
export function manualSites(): SiteSpec[] {
  return MANUAL_HOSTS.map((host, i) => ({ host, ip: `127.0.0.${2 + i}`, root: host }));
}

export interface ExecRun {
  child: ChildProcess;
  done: Promise<number | null>;
  out(): string;
}

export interface RealWeb {
  /** the working directory (configs, logs, capture) */
  dir: string;
  sites: SiteSpec[];
  dnsServer: string;
  /** where the manuals were unpacked (document roots below it) */
  manualsDir: string;
  /** runs a command inside the namespaces */
  exec(cmd: string, args: string[], opts?: { env?: NodeJS.ProcessEnv; cwd?: string }): ExecRun;
  /** stops the capture and the servers (the capture file is complete afterwards) */
  stop(): Promise<void>;
  /** the requests on the wire (after stop()) */
  requests(): Promise<WireRequest[]>;
  /** nginx's access log lines: [server name, request URI, status, bytes] */
  accessLog(): Promise<{ host: string; uri: string; status: number; bytes: number }[]>;
  /** stop() and remove the working directory */
  close(): Promise<void>;
}

const HOLDER = fileURLToPath(new URL('./netns-holder.ts', import.meta.url));
const asRoot = process.getuid?.() === 0;

/** Every child started here dies with the test process (a timed-out test never reaches its finally). */
const groups = new Set<number>();
process.on('exit', () => {
  for (const g of groups) try { process.kill(-g, 'SIGKILL'); } catch { /* gone */ }
});

function spawnGroup(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; stdin?: boolean } = {}): ChildProcess {
  const c = spawn(cmd, args, { stdio: [opts.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'], detached: true, env: opts.env ?? process.env, cwd: opts.cwd });
  if (c.pid !== undefined) {
    groups.add(c.pid);
    c.once('exit', () => groups.delete(c.pid!));
  }
  return c;
}

/** Throws naming the tools of REALWEB_TOOLS that are not on PATH. */
export function checkRealWebTools(extra: readonly string[] = []): void {
  const missing = [...REALWEB_TOOLS, ...extra].filter((t) => spawnSync('sh', ['-c', `command -v ${t}`]).status !== 0);
  if (missing.length > 0) {
    throw new Error(`real-web test needs ${missing.join(', ')} (Debian packages nginx, dnsmasq-base, tcpdump, wget2, util-linux, iproute2; .ci/run installs them)`);
  }
}

let manuals: Promise<string> | null = null;
/** The manuals unpacked once per process (removed at exit). */
export function manualsRoot(): Promise<string> {
  manuals ??= (async () => {
    const d = await mkdtemp(path.join(os.tmpdir(), 'dc-manuals-'));
    process.on('exit', () => spawnSync('rm', ['-rf', d]));
    await unpackManuals(d);
    return d;
  })();
  return manuals;
}

const MIME = `types {
  text/html html htm; text/css css; application/javascript js; application/json json; text/plain txt;
  application/xml xml; image/png png; image/gif gif; image/jpeg jpg jpeg; image/svg+xml svg; image/x-icon ico;
  application/pdf pdf; font/woff woff; font/woff2 woff2; application/gzip gz;
}`;

function nginxConf(dir: string, manualsDir: string, sites: SiteSpec[]): string {
  const servers = sites.map((s) => {
    const root = path.isAbsolute(s.root) ? s.root : path.join(manualsDir, s.root);
    const files = Object.keys(s.files ?? {}).map((p, i) => `    location = ${p} { alias ${path.join(dir, 'files', s.host, String(i))}; }`);
    const robots = s.robots != null ? `    location = /robots.txt { alias ${path.join(dir, 'files', s.host, 'robots.txt')}; default_type text/plain; }`
      : '    location = /robots.txt { return 404; }';
    const aliases = (s.aliases ?? []).map((a) => `    location ${a.prefix} { alias ${path.join(root, a.dir)}/; }`);
    return `  server {\n    listen ${s.ip}:80;\n    server_name ${s.host};\n    root ${root};\n${robots}\n${files.join('\n')}\n${aliases.join('\n')}\n  }`;
  });
  return `worker_processes 1;
daemon off;
user root;
pid ${dir}/nginx.pid;
error_log ${dir}/nginx-error.log warn;
events { worker_connections 1024; }
http {
  ${MIME}
  default_type application/octet-stream;
  log_format rw '$msec\\t$host\\t$request_uri\\t$status\\t$body_bytes_sent';
  access_log ${dir}/access.log rw;
  client_body_temp_path ${dir}/tmp-body; proxy_temp_path ${dir}/tmp-proxy; fastcgi_temp_path ${dir}/tmp-fcgi;
  uwsgi_temp_path ${dir}/tmp-uwsgi; scgi_temp_path ${dir}/tmp-scgi;
  index index.html index.en.html;
  sendfile on;
  keepalive_timeout 30s;
  keepalive_requests 10000;
  gzip on;
  gzip_types text/css application/javascript application/json image/svg+xml text/plain application/xml;
${servers.join('\n')}
}
`;
}

/** Starts the namespace with dnsmasq, nginx and (by default) tcpdump for `sites`. */
export async function startRealWeb(opts: { sites: SiteSpec[]; capture?: boolean }): Promise<RealWeb> {
  checkRealWebTools();
  const manualsDir = await manualsRoot();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dc-realweb-'));
  const sites = opts.sites;
  for (const s of sites) {
    const fdir = path.join(dir, 'files', s.host);
    await mkdir(fdir, { recursive: true });
    if (s.robots != null) await writeFile(path.join(fdir, 'robots.txt'), s.robots);
    let i = 0;
    for (const body of Object.values(s.files ?? {})) await writeFile(path.join(fdir, String(i++)), body);
  }
  await writeFile(path.join(dir, 'nginx.conf'), nginxConf(dir, manualsDir, sites));
  await writeFile(path.join(dir, 'resolv.conf'), `nameserver ${REALWEB_DNS}\n`);
  const pcap = opts.capture === false ? null : path.join(dir, 'wire.pcap');
  const cfgFile = path.join(dir, 'holder.json');
  await writeFile(cfgFile, JSON.stringify({
    dir, dnsAddress: REALWEB_DNS, records: sites.map((s) => [s.host, s.ip]), listen: [...new Set(sites.map((s) => s.ip))], pcap,
  }));
  const holder = spawnGroup('unshare', [...(asRoot ? [] : ['--user', '--map-root-user']), '--net', '--mount', '--fork', '--kill-child',
    process.execPath, '--import', 'tsx', HOLDER, cfgFile], { stdin: true });
  const lines = readline.createInterface({ input: holder.stdout! });
  let err = '';
  holder.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const stopped = new Promise<void>((resolve) => lines.on('line', (l) => { if (l === 'STOPPED') resolve(); }));
  const exited = new Promise<void>((resolve) => holder.once('exit', () => resolve()));
  const pid = await new Promise<number>((resolve, reject) => {
    lines.on('line', (l) => {
      if (l.startsWith('READY ')) resolve(Number(l.slice(6)));
      else if (l.startsWith('FAILED ')) reject(new Error(`real web: ${l.slice(7)}`));
    });
    holder.once('exit', (code) => reject(new Error(`real web holder exited ${code}: ${err}`)));
  });
  let stopping: Promise<void> | null = null;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      holder.stdin!.end('stop\n');
      await Promise.race([stopped, exited]);
      await exited;
    })();
    return stopping;
  };
  return {
    dir, sites, dnsServer: REALWEB_DNS, manualsDir,
    exec(cmd, args, o = {}) {
      const c = spawnGroup('nsenter', ['-t', String(pid), ...(asRoot ? [] : ['--user', '--preserve-credentials']), '--net', '--mount', `--wd=${o.cwd ?? process.cwd()}`, '--', cmd, ...args], o);
      let out = '';
      c.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      c.stderr!.on('data', (d: Buffer) => (out += d.toString()));
      const done = new Promise<number | null>((resolve) => c.once('exit', (code, sig) => resolve(sig !== null ? -1 : code)));
      return { child: c, done, out: () => out };
    },
    stop,
    async requests() {
      if (pcap === null) return [];
      await stop();
      return readPcapRequests(pcap);
    },
    async accessLog() {
      const text = await readFile(path.join(dir, 'access.log'), 'utf8').catch(() => '');
      return text.split('\n').filter((l) => l !== '').map((l) => {
        const [, host, uri, status, bytes] = l.split('\t');
        return { host: host!, uri: uri!, status: Number(status), bytes: Number(bytes) };
      });
    },
    async close() {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
