/**
 * Bad input to the real command line (src/cli/main.ts in a child process): every case must end
 * by itself (no hang) with exit status 2, one line `drumcrawl: <CRAWL_CODE>: <message>` on stderr (no stack
 * trace), and nothing created or changed in the working directory, the state or output paths.
 *
 * Each case runs in a fresh directory (its cwd, so the default ./crawl-state and ./crawl-out would
 * land there too) holding the fixtures it needs; the directory's tree (names, sizes, mtimes) is
 * compared before and after. The read-only and full directories are tmpfs mounts made in a private
 * mount namespace (`unshare -m`; `unshare -rm` when not root) around the child: they vanish with it,
 * and the child reports their listing after the command ran.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync, truncateSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { inMountNamespace, shq as q, cliArgv } from '../e2e/harness.js';

/**
 * A case ends in well under a second on an idle machine (node + tsx start included), 5 s on a
 * 2-core box at load 19; the bound only tells a hang from a slow start, so it is far above what a
 * loaded box takes (it is not a speed the test judges).
 */
const LIMIT_MS = 180_000;
const ROOT = mkdtempSync(path.join(os.tmpdir(), 'drumcrawl-bad-input-'));
after(() => rmSync(ROOT, { recursive: true, force: true }));

/** Fixture makers: each gets the case directory and returns nothing (files are made in it). */
type Setup = (dir: string) => void;

interface Case {
  name: string;
  args: (dir: string) => string[];
  code: string;
  message: RegExp;
  setup?: Setup;
  /** Run inside a mount namespace with `ro` (read-only tmpfs) and `full` (64 KiB tmpfs, filled). */
  mounts?: boolean;
}

const seed = 'http://a.test/';
const dirs = (d: string): string[] => ['--state', path.join(d, 'state'), '--out', path.join(d, 'out')];
const file = (name: string, data: string | Buffer): Setup => (d) => writeFileSync(path.join(d, name), data);
const config = (obj: unknown): Setup => file('c.json', typeof obj === 'string' ? obj : JSON.stringify(obj));
const crawl = (...extra: string[]) => (d: string): string[] => ['crawl', seed, ...dirs(d), ...extra];
const withConfig = (d: string): string[] => ['crawl', seed, ...dirs(d), '--config', path.join(d, 'c.json')];
const manifest = (cfg: Record<string, unknown>): Setup => manifestWith(cfg, null);
const manifestWith = (cfg: Record<string, unknown>, warc: { file: string; offset: number } | null): Setup => (d) => {
  mkdirSync(path.join(d, 'state'));
  // A manifest of the crawler's shape (checkpoint.ts checks each field), without a checksum (as
  // written before manifests carried one), recording only the given config keys (and the two
  // directories, which every manifest records).
  const counters = { pages: 0, pagesOk: 0, bytes: 0, urlsSeen: 0, urlsDiscovered: 0, duplicates: 0, robotsFetches: 0, workersReplaced: 0, outcomes: {}, crawlMs: 0, cpuMicros: 0 };
  writeFileSync(path.join(d, 'state', 'manifest.json'), JSON.stringify({
    version: 1, epoch: 1, writtenAt: new Date(0).toISOString(), reason: 'stop:signal', finished: false, config: { stateDir: path.join(d, 'state'), outDir: path.join(d, 'out'), ...cfg }, counters,
    warc, seedsInjected: true, scopeHosts: ['a.test'], scopePlds: ['a.test'], pending: 0,
  }));
};

const INVALID = 'CRAWL_CONFIG_INVALID';
const UNUSABLE = 'CRAWL_DIR_UNUSABLE';
const USAGE = 'CRAWL_CLI_USAGE';

const CASES: Case[] = [
  // directories
  { name: '--out under /proc', args: (d) => ['crawl', seed, '--state', path.join(d, 'state'), '--out', '/proc/x'], code: UNUSABLE, message: /--out \/proc\/x is on the proc pseudo file system/ },
  { name: '--state under /proc', args: (d) => ['crawl', seed, '--state', '/proc/x', '--out', path.join(d, 'out')], code: UNUSABLE, message: /--state \/proc\/x is on the proc pseudo file system/ },
  { name: '--state under /sys', args: (d) => ['crawl', seed, '--state', '/sys/x/y', '--out', path.join(d, 'out')], code: UNUSABLE, message: /sysfs pseudo file system/ },
  { name: '--out below a device file', args: (d) => ['crawl', seed, '--state', path.join(d, 'state'), '--out', '/dev/null/x'], code: UNUSABLE, message: /--out \/dev\/null\/x cannot be a directory: a component of the path is a file/ },
  { name: '--state is a regular file', setup: file('state', 'x'), args: crawl(), code: UNUSABLE, message: /--state .*\/state exists and is not a directory/ },
  { name: '--out below a regular file', setup: file('f', 'x'), args: (d) => ['crawl', seed, '--state', path.join(d, 'state'), '--out', path.join(d, 'f', 'out')], code: UNUSABLE, message: /a component of the path is a file/ },
  { name: '--state on a read-only file system', mounts: true, args: (d) => ['crawl', seed, '--state', path.join(d, 'ro', 'state'), '--out', path.join(d, 'out')], code: UNUSABLE, message: /ro is on a read-only file system/ },
  { name: '--out on a full file system', mounts: true, args: (d) => ['crawl', seed, '--state', path.join(d, 'state'), '--out', path.join(d, 'full', 'out')], code: 'CRAWL_DIR_FULL', message: /--out .*full\/out: its file system has \d+ bytes free, at least 16777216/ },
  { name: '--state on a full file system', mounts: true, args: (d) => ['crawl', seed, '--state', path.join(d, 'full', 'state'), '--out', path.join(d, 'out')], code: 'CRAWL_DIR_FULL', message: /--state .*full\/state: its file system has/ },
  { name: '--state already holds a crawl', setup: manifest({}), args: crawl(), code: 'CRAWL_STATE_EXISTS', message: /already holds a crawl; use `drumcrawl resume/ },
  // flags
  { name: '--user-agent without a contact URL', args: crawl('--user-agent', 'mybot'), code: INVALID, message: /userAgent must contain a contact URL/ },
  { name: '--dns-server not an address', args: crawl('--dns-server', 'nonsense'), code: INVALID, message: /dnsServers entries must be an IP address/ },
  { name: 'unknown flag', args: crawl('--bogus'), code: USAGE, message: /unknown option '--bogus'/ },
  { name: 'flag without its value', args: (d) => ['crawl', seed, ...dirs(d), '--max-pages'], code: USAGE, message: /option '--max-pages <n>' argument missing/ },
  { name: 'negative --max-pages', args: crawl('--max-pages', '-5'), code: INVALID, message: /maxPages must be a non-negative integer/ },
  { name: '--status-port out of range', args: crawl('--status-port', '70000'), code: INVALID, message: /statusPort must be ≤ 65535/ },
  { name: '--status-port in use', args: (d) => crawl('--status-port', String(busyPort))(d), code: INVALID, message: /statusPort 127\.0\.0\.1:\d+ cannot be bound: EADDRINUSE/ },
  { name: '--ram too small', args: crawl('--ram', '1'), code: INVALID, message: /ramBytes must be at least 256M/ },
  { name: 'invalid --include regex', args: crawl('--include', '('), code: INVALID, message: /include has an invalid regular expression/ },
  { name: 'no seeds at all', args: (d) => ['crawl', ...dirs(d)], code: INVALID, message: /no seed URLs/ },
  { name: 'seed that is not http(s)', args: (d) => ['crawl', 'ftp://a.test/', ...dirs(d)], code: INVALID, message: /seeds entries must be absolute http\(s\) URLs/ },
  { name: 'unknown command', args: () => ['crawlx'], code: USAGE, message: /unknown command 'crawlx'/ },
  // seeds files
  { name: 'empty seeds file', setup: file('seeds.txt', ''), args: (d) => ['crawl', ...dirs(d), '--seeds', path.join(d, 'seeds.txt')], code: INVALID, message: /seedsFile .*seeds\.txt holds no seed URLs/ },
  { name: 'non-UTF-8 seeds file', setup: file('seeds.txt', Buffer.from([0x68, 0x74, 0x74, 0x70, 0x3a, 0x2f, 0x2f, 0xff, 0xfe, 0x2f, 0x0a])), args: (d) => ['crawl', ...dirs(d), '--seeds', path.join(d, 'seeds.txt')], code: INVALID, message: /seeds\.txt is not valid UTF-8 text/ },
  { name: 'huge seeds file (1 GiB, sparse)', setup: (d) => { writeFileSync(path.join(d, 'seeds.txt'), ''); truncateSync(path.join(d, 'seeds.txt'), 2 ** 30); }, args: (d) => ['crawl', ...dirs(d), '--seeds', path.join(d, 'seeds.txt')], code: INVALID, message: /seeds\.txt is 1073741824 bytes, more than the 16777216 allowed/ },
  { name: 'missing seeds file', args: (d) => ['crawl', ...dirs(d), '--seeds', path.join(d, 'nope.txt')], code: INVALID, message: /nope\.txt could not be read: ENOENT/ },
  { name: 'seeds file is a directory', setup: (d) => mkdirSync(path.join(d, 'sd')), args: (d) => ['crawl', ...dirs(d), '--seeds', path.join(d, 'sd')], code: INVALID, message: /sd could not be read: it is not a regular file/ },
  { name: 'seeds file is a FIFO (would block)', setup: (d) => { assert.equal(spawnSync('mkfifo', [path.join(d, 'fifo')]).status, 0); }, args: (d) => ['crawl', ...dirs(d), '--seeds', path.join(d, 'fifo')], code: INVALID, message: /fifo could not be read: it is not a regular file/ },
  { name: 'seeds file with a line that is not a URL', setup: file('seeds.txt', 'http://a.test/\nnot a url\n'), args: (d) => ['crawl', ...dirs(d), '--seeds', path.join(d, 'seeds.txt')], code: INVALID, message: /seeds entries must be absolute http\(s\) URLs \(got "not a url"\)/ },
  // config files
  { name: 'config: maxPages a word', setup: config({ maxPages: 'lots' }), args: withConfig, code: INVALID, message: /maxPages must be a non-negative integer or null \(got "lots"\)/ },
  { name: 'config: fetchConcurrency a boolean', setup: config({ fetchConcurrency: true }), args: withConfig, code: INVALID, message: /fetchConcurrency must be a positive integer \(got true\)/ },
  { name: 'config: seedsFile a number', setup: config({ seedsFile: 5 }), args: withConfig, code: INVALID, message: /seedsFile must be a non-empty string \(got 5\)/ },
  { name: 'config: stateDir a list', setup: config({ stateDir: ['a'] }), args: (d) => ['crawl', seed, '--out', path.join(d, 'out'), '--config', path.join(d, 'c.json')], code: INVALID, message: /stateDir must be a non-empty string/ },
  { name: 'config: dnsServers an object', setup: config({ dnsServers: { a: 1 } }), args: withConfig, code: INVALID, message: /dnsServers must be a list of strings/ },
  { name: 'config: ram flag name with an object', setup: config({ ram: {} }), args: withConfig, code: INVALID, message: /ram in .*c\.json must be a string or a number \(got object\)/ },
  { name: 'config: a JSON array', setup: config([]), args: withConfig, code: INVALID, message: /c\.json must hold a JSON object/ },
  { name: 'config: not JSON', setup: config('{"maxPages": '), args: withConfig, code: INVALID, message: /c\.json could not be read as JSON/ },
  { name: 'config: unknown key', setup: config({ colour: 'blue' }), args: withConfig, code: INVALID, message: /colour in .*c\.json is not a known option/ },
  { name: 'config: non-UTF-8', setup: file('c.json', Buffer.from([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x3a, 0x31, 0x7d])), args: withConfig, code: INVALID, message: /c\.json is not valid UTF-8 text/ },
  // request headers, TLS, crawl-log format
  { name: '--header without a colon', args: crawl('--header', 'X-Test yes'), code: INVALID, message: /headers entries must look like "Name: value" \(got "X-Test yes"\)/ },
  { name: '--header name with a blank', args: crawl('--header', 'X Test: yes'), code: INVALID, message: /headers entry "X Test: yes": the name must be an HTTP token/ },
  { name: '--header Host', args: crawl('--header', 'Host: evil.test'), code: INVALID, message: /headers entry "Host: evil.test": Host cannot be set/ },
  { name: '--header twice', args: crawl('--header', 'X-A: 1', '--header', 'x-a: 2'), code: INVALID, message: /headers name "x-a" is given twice/ },
  { name: 'config headers with a line break', setup: config({ headers: { 'X-A': 'one\r\nX-B: two' } }), args: withConfig, code: INVALID, message: /headers entry "X-A: one\\r\\nX-B: two": the value must not contain line breaks/ },
  { name: 'config tlsInsecure "maybe"', setup: config({ tlsInsecure: 'maybe' }), args: withConfig, code: INVALID, message: /tlsInsecure must be true or false \(got "maybe"\)/ },
  { name: '--crawl-log-format csv', args: crawl('--crawl-log-format', 'csv'), code: INVALID, message: /crawlLogFormat must be one of drumcrawl, heritrix \(got "csv"\)/ },
  // resume, stats
  { name: 'resume: no checkpoint', setup: (d) => mkdirSync(path.join(d, 'state')), args: (d) => ['resume', path.join(d, 'state')], code: 'CRAWL_STATE_MISSING', message: /holds no checkpoint to resume/ },
  { name: 'resume: a startup option', setup: manifest({}), args: (d) => ['resume', path.join(d, 'state'), '--ram', '1G'], code: USAGE, message: /unknown option '--ram'/ },
  { name: 'resume: stored output dir under /proc', setup: manifest({ outDir: '/proc/x' }), args: (d) => ['resume', path.join(d, 'state')], code: 'CRAWL_OUT_MISSING', message: /output directory is not at \/proc\/x/ },
  { name: 'resume: --out under /proc', setup: manifest({}), args: (d) => ['resume', path.join(d, 'state'), '--out', '/proc/x'], code: UNUSABLE, message: /output directory \/proc\/x is on the proc pseudo file system/ },
  // The output directory is at neither place resume looks (beside the moved state, where it was
  // recorded): refused, and no empty output directory is started at either.
  { name: 'resume: output directory moved away under another name', setup: (d) => manifest({ stateDir: path.join(d, 'state'), outDir: path.join(d, 'out') })(d), args: (d) => ['resume', path.join(d, 'state')], code: 'CRAWL_OUT_MISSING', message: /output directory is not at \S+\/out: give resume --out/ },
  { name: 'resume: state moved, output at neither place', setup: manifest({ stateDir: '/gone/a/state', outDir: '/gone/a/out' }), args: (d) => ['resume', path.join(d, 'state')], code: 'CRAWL_OUT_MISSING', message: /not at \S+\/out \(beside the state\) nor at \/gone\/a\/out \(where it was recorded\)/ },
  // The recorded output directory exists but is not the crawl's (an edited manifest naming any
  // directory, here one holding a file, or a state whose output was emptied): refused, nothing
  // opened or created there (relocate's mark: the checkpoint's WARC file).
  { name: 'resume: recorded output directory without the crawl\'s WARC file', setup: (d) => { mkdirSync(path.join(d, 'victim')); writeFileSync(path.join(d, 'victim', 'precious'), 'x'); manifestWith({ stateDir: path.join(d, 'state'), outDir: path.join(d, 'victim') }, { file: 'drumcrawl-20260101000000000-00001.warc.gz', offset: 300 })(d); }, args: (d) => ['resume', path.join(d, 'state')], code: 'CRAWL_OUT_UNVERIFIED', message: /\/victim is not known to be the crawl's output directory: it does not hold this crawl's WARC file drumcrawl-20260101000000000-00001\.warc\.gz .*give resume --out/ },
  { name: 'resume: recorded WARC file shorter than its durable offset', setup: (d) => { mkdirSync(path.join(d, 'out')); writeFileSync(path.join(d, 'out', 'drumcrawl-20260101000000000-00001.warc.gz'), 'short'); manifestWith({ stateDir: path.join(d, 'state'), outDir: path.join(d, 'out') }, { file: 'drumcrawl-20260101000000000-00001.warc.gz', offset: 300 })(d); }, args: (d) => ['resume', path.join(d, 'state')], code: 'CRAWL_OUT_UNVERIFIED', message: /at least 300 bytes/ },
  { name: 'resume: path below a device file', args: () => ['resume', '/dev/null/x'], code: UNUSABLE, message: /state \/dev\/null\/x cannot be a directory/ },
  { name: 'stats: a device file', args: () => ['stats', '/dev/null'], code: 'CRAWL_STATE_MISSING', message: /\/dev\/null is not a state directory/ },
  // demo
  { name: 'demo: --out holds other files', setup: (d) => { mkdirSync(path.join(d, 'precious')); writeFileSync(path.join(d, 'precious', 'thesis.tex'), 'x'); }, args: (d) => ['demo', '--out', path.join(d, 'precious')], code: UNUSABLE, message: /is not empty and is not a demo's output .* refusing to replace it/ },
  { name: 'demo: --max-time a word', args: (d) => ['demo', '--out', path.join(d, 'demo'), '--max-time', 'abc'], code: INVALID, message: /maxTimeMs must be a duration/ },
  { name: 'demo: --progress unknown', args: (d) => ['demo', '--out', path.join(d, 'demo'), '--progress', 'loud'], code: INVALID, message: /progress must be one of auto, tty, plain, none/ },
  // simweb
  { name: 'simweb: unknown preset', args: () => ['simweb', '--preset', 'huge'], code: INVALID, message: /--preset must be one of tiny, demo, bench, spam, hostile, .*\(got "huge"\)/ },
  { name: 'simweb: negative port', args: () => ['simweb', '--http-port', '-1'], code: INVALID, message: /--http-port must be an integer in \[0, 65535\], got '-1'/ },
  { name: 'simweb: negative plds', args: () => ['simweb', '--param', 'plds=-3'], code: 'CRAWL_SIMWEB_BAD_PARAM', message: /params\.plds must be an integer in \[1, 100000000\]/ },
  { name: 'simweb: unknown param', args: () => ['simweb', '--param', 'colour=1'], code: INVALID, message: /--param colour is not a simweb parameter/ },
  { name: 'simweb: rates not an object', args: () => ['simweb', '--param', 'robots=5'], code: 'CRAWL_SIMWEB_BAD_PARAM', message: /params\.robots must be an object of rates/ },
  { name: 'simweb: fractional seed', args: () => ['simweb', '--seed', '1.5'], code: INVALID, message: /--seed must be an integer/ },
];

/** A port held by this test process for the "in use" case. */
let busyPort = 0;
const busy = net.createServer();
await new Promise<void>((r) => busy.listen(0, '127.0.0.1', () => r()));
busyPort = (busy.address() as net.AddressInfo).port;
after(() => busy.close());

/** name → size:mtime for every entry under dir (the mount points themselves are empty dirs). */
function tree(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      const st = statSync(p, { throwIfNoEntry: false });
      out.set(path.relative(dir, p), st === undefined ? '?' : `${e.isDirectory() ? 'd' : st.size}:${st.mtimeMs}`);
      if (e.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out;
}

interface Outcome { status: number | null; signal: NodeJS.Signals | null; stderr: string; stdout: string; ms: number }

function run(argv: string[], cwd: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const child = spawn(argv[0]!, argv.slice(1), { cwd, stdio: ['ignore', 'pipe', 'pipe'], timeout: LIMIT_MS, killSignal: 'SIGKILL' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // 'exit', not 'close': a grandchild left holding the pipes must not keep the test waiting.
    child.on('exit', (status, signal) => {
      const ms = performance.now() - t0;
      setTimeout(() => resolve({ status, signal, stdout, stderr, ms }), 50);
    });
  });
}

/**
 * The child's argv. With mounts: a shell in a private mount namespace mounts a read-only tmpfs on
 * dir/ro and a 64 KiB tmpfs on dir/full (then fills it), runs the CLI, and prints both listings.
 */
function argvFor(c: Case, dir: string): string[] {
  const cli = [process.execPath, ...cliArgv(), ...c.args(dir)];
  if (!c.mounts) return cli;
  const script = [
    `mount -t tmpfs -o ro,size=64k drumcrawl-ro ${q(path.join(dir, 'ro'))}`,
    `mount -t tmpfs -o size=64k drumcrawl-full ${q(path.join(dir, 'full'))}`,
    `head -c 1048576 /dev/zero > ${q(path.join(dir, 'full', 'fill'))} 2>/dev/null`,
    // The CLI is the shell's child here, not the spawned process: bounded by timeout(1) as well.
    `timeout -s KILL ${LIMIT_MS / 1000} ${cli.map(q).join(' ')}; rc=$?`,
    `echo "@@ro[$(ls -A ${q(path.join(dir, 'ro'))} | tr '\\n' ' ')] @@full[$(ls -A ${q(path.join(dir, 'full'))} | tr '\\n' ' ')]"`,
    'exit $rc',
  ].join('\n');
  return inMountNamespace(script);
}

describe('bad input to the command line: exit 2, one CRAWL_* line, nothing created, no hang', { concurrency: 2 }, () => {
  it('covers at least 30 bad inputs', () => assert.ok(CASES.length >= 30, String(CASES.length)));
  for (const c of CASES) {
    it(c.name, async () => {
      const dir = mkdtempSync(path.join(ROOT, 'case-'));
      if (c.mounts) {
        mkdirSync(path.join(dir, 'ro'));
        mkdirSync(path.join(dir, 'full'));
      }
      c.setup?.(dir);
      const before = tree(dir);
      const r = await run(argvFor(c, dir), dir);
      const args = c.args(dir).join(' ');
      assert.equal(r.signal, null, `${args}: killed after ${r.ms.toFixed(0)} ms (hang); stderr: ${r.stderr}`);
      assert.equal(r.status, 2, `${args}: exit ${r.status}; stderr: ${r.stderr}`);
      const lines = r.stderr.split('\n').filter((l) => l !== '');
      assert.equal(lines.length, 1, `${args}: one line on stderr, got:\n${r.stderr}`);
      assert.match(lines[0]!, new RegExp(`^drumcrawl: ${c.code}: `), args);
      assert.match(lines[0]!, c.message, args);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
      assert.deepEqual(tree(dir), before, `${args}: the directory changed`);
      if (c.mounts) assert.match(r.stdout, /@@ro\[\] @@full\[fill \]/, `nothing created on the mounts: ${r.stdout}`);
      for (const p of ['/proc/x', '/sys/x']) assert.equal(statSync(p, { throwIfNoEntry: false }), undefined, p);
    });
  }
});
