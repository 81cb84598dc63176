/**
 * One validator for every configuration value (src/config/config-rules.ts), whatever the source:
 * each out-of-range, over-long, mistyped or colliding value is refused by the real command line
 * (src/cli/main.ts in a child process) with exit 2 and CRAWL_CONFIG_INVALID naming the key, in a
 * config file the same, in a checkpoint manifest edited by hand on `resume` with exit 2 and
 * CRAWL_MANIFEST_INVALID naming the key (a manifest edited without its checksum being resealed is
 * CRAWL_CHECKPOINT_CORRUPT), and by a running crawl's `POST /config` with 400. Nothing is created
 * by a refused command: the state and output directories stay as they were.
 */
import { describe, it, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { loadCrawlConfig, resolveCrawlConfig } from '../../src/config/config.js';
import { describeError } from '../../src/cli/commands/common.js';
import { emptyCounters, writeManifest, manifestChecksum, MANIFEST_FILE, type CheckpointManifest } from '../../src/state/checkpoint.js';
import { cliArgv } from '../e2e/harness.js';

const UA = 'drumcrawl-test/0.1 (+https://example.test/bot)';
/** A refusal ends in well under a second on an idle machine; the bound tells a hang (or a crawl that started) from a slow start at load 37 on 2 cores (node + tsx: over 20 s). */
const LIMIT_MS = 90_000;
const ROOT = mkdtempSync(path.join(os.tmpdir(), 'drumcrawl-input-bounds-'));
after(() => rmSync(ROOT, { recursive: true, force: true }));

interface Result { exit: number | null; stderr: string; timedOut: boolean }

function run(args: string[], cwd: string, limitMs = LIMIT_MS): Promise<Result> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...cliArgv(), ...args], { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    let timedOut = false;
    child.stderr.on('data', (b: Buffer) => { stderr += b.toString(); });
    const timer = setTimeout(() => { timedOut = true; child.kill('SIGKILL'); }, limitMs);
    child.on('close', (exit) => { clearTimeout(timer); resolve({ exit, stderr, timedOut }); });
  });
}

let n = 0;
function caseDir(): string {
  const d = path.join(ROOT, `c${n++}`);
  mkdirSync(d);
  return d;
}

const BIG = 'x'.repeat(100_000);
const seed = 'http://a.test/';

/** [name, extra flags (the case dir given), key the message must name] */
const FLAG_CASES: [string, (d: string) => string[], string][] = [
  ['--fetch-timeout 2147483648 (a timer Node turns into 1 ms)', () => ['--fetch-timeout', '2147483648'], 'fetchTimeoutMs'],
  ['--fetch-timeout 1e12', () => ['--fetch-timeout', '1e12'], 'fetchTimeoutMs'],
  ['--host-delay 2147483648', () => ['--host-delay', '2147483648'], 'hostDelayMs'],
  ['--ip-delay 9999999999', () => ['--ip-delay', '9999999999', '--host-delay', '9999999999'], 'hostDelayMs'],
  ['--max-time 25d in seconds', () => ['--max-time', '2160000'], 'maxTimeMs'],
  ['--max-time 1000h', () => ['--max-time', '1000h'], 'maxTimeMs'],
  ['--checkpoint-interval 3000000000', () => ['--checkpoint-interval', '3000000000'], 'checkpointIntervalMs'],
  ['--progress-interval 3000000000', () => ['--progress-interval', '3000000000'], 'progressIntervalMs'],
  ['--politeness-margin 3000000000', () => ['--politeness-margin', '3000000000'], 'politenessMarginMs'],
  ['--max-body 100G', () => ['--max-body', '100G'], 'maxBodyBytes'],
  ['--max-body 256M at --ram 1G (over an eighth of --ram)', () => ['--max-body', '256M', '--ram', '1G'], 'maxBodyBytes'],
  ['--concurrency 100000000', () => ['--concurrency', '100000000'], 'fetchConcurrency'],
  ['--workers 1000', () => ['--workers', '1000'], 'workers'],
  ['--host-table 1000000000', () => ['--host-table', '1000000000'], 'hostTableSize'],
  ['--budget-b0 100000000', () => ['--budget-b0', '100000000'], 'budgetB0'],
  ['--max-pages 2^64', () => ['--max-pages', '18446744073709551616'], 'maxPages'],
  ['--max-depth 10000000', () => ['--max-depth', '10000000'], 'maxDepth'],
  ['--ram 100T', () => ['--ram', '100T'], 'ramBytes'],
  ['--warc-max-size 100G', () => ['--warc-max-size', '100G'], 'warcMaxFileBytes'],
  ['--retry-delay-scale 1e9', () => ['--retry-delay-scale', '1e9'], 'retryDelayScale'],
  ['a 100 KB --header', () => ['--header', `X-Big: ${BIG}`], 'headers'],
  ['65 --header flags', () => Array.from({ length: 65 }, (_, i) => ['--header', `X-H${i}: v`]).flat(), 'headers'],
  ['a 100 KB --user-agent', () => ['--user-agent', `bot/1 (+https://example.test/${BIG})`], 'userAgent'],
  ['a 100 KB --include', () => ['--include', BIG], 'include'],
  ['a 100 KB seed URL', () => [`http://a.test/${BIG}`], 'seeds'],
  ['17 --dns-server flags', () => Array.from({ length: 17 }, (_, i) => ['--dns-server', `127.0.0.${i + 1}`]).flat(), 'dnsServers'],
  ['--allow-network 0/0', () => ['--allow-network', '0/0'], 'allowNetworks'],
  ['--state inside --out', (d) => ['--out', path.join(d, 'o'), '--state', path.join(d, 'o', 's')], 'stateDir'],
  ['--out inside --state', (d) => ['--state', path.join(d, 's'), '--out', path.join(d, 's', 'warc')], 'stateDir'],
  ['--state equal to --out', (d) => ['--state', path.join(d, 'same'), '--out', path.join(d, 'same')], 'stateDir'],
  ['--seeds inside --state', (d) => { mkdirSync(path.join(d, 's')); writeFileSync(path.join(d, 's', 'seeds.txt'), `${seed}\n`); return ['--state', path.join(d, 's'), '--seeds', path.join(d, 's', 'seeds.txt')]; }, 'seedsFile'],
];

/** [name, config file object, key] — config keys take JSON values of their type, no strings for numbers. */
const FILE_CASES: [string, Record<string, unknown>, string][] = [
  ['fetchTimeoutMs 2^31', { fetchTimeoutMs: 2 ** 31 }, 'fetchTimeoutMs'],
  ['hostDelayMs "5000" (a string)', { hostDelayMs: '5000' }, 'hostDelayMs'],
  ['maxTimeMs 1e20', { maxTimeMs: 1e20 }, 'maxTimeMs'],
  ['statusHost 0.0.0.0', { statusHost: '0.0.0.0' }, 'statusHost'],
  ['allowNetworks ["0/0"]', { allowNetworks: ['0/0'] }, 'allowNetworks'],
  ['maxBodyBytes 100 GiB', { maxBodyBytes: 100 * 2 ** 30 }, 'maxBodyBytes'],
  ['fetchConcurrency 1e8', { fetchConcurrency: 1e8 }, 'fetchConcurrency'],
  ['warcDns "true" (a string)', { warcDns: 'true' }, 'warcDns'],
  ['workers 2.5', { workers: 2.5 }, 'workers'],
  ['userAgent of 100 KB', { userAgent: `bot (+https://example.test/${BIG})` }, 'userAgent'],
  ['host-delay flag name 2147483648', { 'host-delay': '2147483648' }, 'hostDelayMs'],
];

/** [name, change to the recorded config, key] — for a manifest edited by hand. */
const MANIFEST_CASES: [string, Record<string, unknown>, string][] = [
  ['statusHost 0.0.0.0', { statusHost: '0.0.0.0' }, 'statusHost'],
  ['allowNetworks ["0/0"]', { allowNetworks: ['0/0'] }, 'allowNetworks'],
  ['fetchTimeoutMs 2^31', { fetchTimeoutMs: 2 ** 31 }, 'fetchTimeoutMs'],
  ['hostDelayMs "5000"', { hostDelayMs: '5000' }, 'hostDelayMs'],
  ['workers 1e6', { workers: 1e6 }, 'workers'],
  ['headers of 100 KB', { headers: [`X-Big: ${BIG}`] }, 'headers'],
  ['an unknown key', { statusBind: '0.0.0.0' }, 'statusBind'],
];

/**
 * The cases the issue names run through the real command line (a child process: about 2 s each of
 * node and tsx start); the rest through the same functions in this process — loadCrawlConfig (the
 * CLI's argv and config-file reader and the validator) and describeError (the CLI's stderr line
 * and exit status) — to keep the file within the suite's time.
 */
const CLI_FLAG_CASES = new Set(['--fetch-timeout 2147483648 (a timer Node turns into 1 ms)', '--fetch-timeout 1e12', '--max-body 100G',
  '--concurrency 100000000', 'a 100 KB --header', 'a 100 KB --user-agent', '--state inside --out', '--workers 1000']);
const CLI_FILE_CASES = new Set(['hostDelayMs "5000" (a string)', 'maxTimeMs 1e20', 'statusHost 0.0.0.0']);

async function refusal(args: string[], cwd: string, cli: boolean): Promise<Result> {
  if (cli) return run(args, cwd);
  try {
    await loadCrawlConfig(args.slice(1), { cwd });
    return { exit: 0, stderr: '', timedOut: false };
  } catch (e) {
    const { line, exit } = describeError(e);
    return { exit, stderr: line, timedOut: false };
  }
}

const tree = (d: string): string[] => (existsSync(d) ? readdirSync(d, { recursive: true }).map(String).sort() : []);

function assertRefused(r: Result, code: string, key: string, exit = 2): void {
  assert.equal(r.timedOut, false, `ended by itself within ${LIMIT_MS} ms: ${r.stderr}`);
  assert.equal(r.exit, exit, r.stderr);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, `one line on stderr: ${r.stderr.slice(0, 500)}`);
  assert.match(lines[0]!, new RegExp(`^drumcrawl: ${code}: .*\\b${key}\\b`), lines[0]!.slice(0, 500));
}

describe('the command line refuses every out-of-range value with exit 2 naming it', { concurrency: 2 }, () => {
  for (const [name, flags, key] of FLAG_CASES) {
    it(name, async () => {
      const d = caseDir();
      const extra = flags(d);
      const before = tree(d);
      const dirs = extra.includes('--state') ? [] : ['--state', path.join(d, 'state')];
      const out = extra.includes('--out') ? [] : ['--out', path.join(d, 'out')];
      const r = await refusal(['crawl', seed, '--user-agent', UA, ...dirs, ...out, ...extra], d, CLI_FLAG_CASES.has(name));
      assertRefused(r, 'CRAWL_CONFIG_INVALID', key);
      assert.deepEqual(tree(d), before, 'nothing created');
    });
  }
});

describe('a config file is held to the same rules', { concurrency: 2 }, () => {
  for (const [name, obj, key] of FILE_CASES) {
    it(name, async () => {
      const d = caseDir();
      writeFileSync(path.join(d, 'c.json'), JSON.stringify(obj));
      const before = tree(d);
      const r = await refusal(['crawl', seed, '--state', path.join(d, 's'), '--out', path.join(d, 'o'), '--config', path.join(d, 'c.json')], d, CLI_FILE_CASES.has(name));
      assertRefused(r, 'CRAWL_CONFIG_INVALID', key);
      assert.deepEqual(tree(d), before, 'nothing created');
    });
  }
});

const WARC = 'drumcrawl-20260101000000000-00000.warc.gz';

/** A state directory holding only a checkpoint manifest as the crawler writes it, with `change` applied to its config. */
async function stateWith(d: string, change: Record<string, unknown>, reseal: boolean): Promise<string> {
  const state = path.join(d, 'state');
  mkdirSync(path.join(d, 'out'), { recursive: true });
  // The crawl's mark in its output directory (recovery.ts relocate): the WARC file the checkpoint names.
  writeFileSync(path.join(d, 'out', WARC), '');
  const config = resolveCrawlConfig({ seeds: [seed], userAgent: UA, stateDir: state, outDir: path.join(d, 'out') });
  const m: CheckpointManifest = {
    version: 1, epoch: 3, writtenAt: new Date(0).toISOString(), reason: 'stop:signal', finished: false, config,
    counters: emptyCounters(), warc: { file: WARC, offset: 0 }, seedsInjected: true, scopeHosts: ['a.test'], scopePlds: ['a.test'], pending: 0,
  };
  await writeManifest(state, m);
  const file = path.join(state, MANIFEST_FILE);
  const written = JSON.parse(readFileSync(file, 'utf8')) as CheckpointManifest & Record<string, unknown>;
  const edited = { ...written, config: { ...written.config, ...change } } as CheckpointManifest;
  if (reseal) edited.checksum = manifestChecksum(edited);
  writeFileSync(file, JSON.stringify(edited, null, 2));
  return state;
}

describe('resume holds a hand-edited manifest to the same rules', { concurrency: 2 }, () => {
  for (const [name, change, key] of MANIFEST_CASES) {
    it(`${name} (checksum resealed): CRAWL_MANIFEST_INVALID, exit 2`, async () => {
      const d = caseDir();
      const state = await stateWith(d, change, true);
      const before = tree(d);
      const r = await run(['resume', state], d);
      assertRefused(r, 'CRAWL_MANIFEST_INVALID', key);
      assert.match(r.stderr, /manifest\.json records a configuration the crawler refuses/);
      assert.deepEqual(tree(d), before, 'nothing created');
    });
  }
  it('statusHost 0.0.0.0 without the checksum resealed: CRAWL_CHECKPOINT_CORRUPT naming the file', async () => {
    const d = caseDir();
    const state = await stateWith(d, { statusHost: '0.0.0.0' }, false);
    const r = await run(['resume', state], d);
    assertRefused(r, 'CRAWL_CHECKPOINT_CORRUPT', 'checksum', 1);
    assert.match(r.stderr, /manifest\.json: checksum does not match/);
  });
  it('a WARC position naming a path outside the output directory: CRAWL_CHECKPOINT_CORRUPT', async () => {
    const d = caseDir();
    const state = await stateWith(d, {}, true);
    const file = path.join(state, MANIFEST_FILE);
    const m = JSON.parse(readFileSync(file, 'utf8')) as CheckpointManifest;
    m.warc = { file: '../../victim.warc.gz', offset: 0 };
    m.checksum = manifestChecksum(m);
    writeFileSync(file, JSON.stringify(m));
    const r = await run(['resume', state], d);
    assertRefused(r, 'CRAWL_CHECKPOINT_CORRUPT', 'warc.file', 1);
  });
  it('an index to finish naming a path outside the output directory: CRAWL_CHECKPOINT_CORRUPT', async () => {
    const d = caseDir();
    const state = await stateWith(d, {}, true);
    const file = path.join(state, MANIFEST_FILE);
    const m = JSON.parse(readFileSync(file, 'utf8')) as CheckpointManifest;
    m.indexing = ['../../victim.warc.gz'];
    m.checksum = manifestChecksum(m);
    writeFileSync(file, JSON.stringify(m));
    const before = tree(d);
    const r = await run(['resume', state], d);
    assertRefused(r, 'CRAWL_CHECKPOINT_CORRUPT', 'indexing', 1);
    assert.deepEqual(tree(d), before, 'nothing created');
  });
});

function post(port: number, token: string, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/config', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } }, (res) => {
      let b = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { b += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: b }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

test('POST /config to a running crawl: 400 for a string where a number is due and for values past their bounds; the crawl keeps its values', { timeout: 60_000 }, async () => {
  const d = caseDir();
  const child = spawn(process.execPath, [...cliArgv(), 'crawl', 'http://127.0.0.1:9/', '--user-agent', UA, '--state', path.join(d, 's'),
    '--out', path.join(d, 'o'), '--status-port', '0', '--paused', '--progress', 'none', '--allow-network', '127.0.0.1/32', '--workers', '1', '--ram', '512M'],
  { cwd: d, stdio: ['ignore', 'ignore', 'pipe'] });
  const closed = new Promise<number | null>((r) => child.on('close', r));
  try {
    let stderr = '';
    const port = await new Promise<number>((resolve, reject) => {
      child.stderr.on('data', (b: Buffer) => {
        stderr += b.toString();
        const m = /status page: http:\/\/127\.0\.0\.1:(\d+)\//.exec(stderr);
        if (m) resolve(Number(m[1]));
      });
      child.on('close', () => reject(new Error(`the crawl ended before its status server: ${stderr}`)));
    });
    const token = readFileSync(path.join(d, 's', 'control-token'), 'utf8').trim();
    const cases: [unknown, string][] = [
      [{ hostDelayMs: '5000' }, 'hostDelayMs'],
      [{ maxTimeMs: 1e20 }, 'maxTimeMs'],
      [{ maxTimeMs: 2 ** 31 }, 'maxTimeMs'],
      [{ ipDelayMs: 2 ** 31, hostDelayMs: 2 ** 31 }, 'hostDelayMs'],
      [{ maxPages: 1.5 }, 'maxPages'],
      [{ maxPages: -1 }, 'maxPages'],
      [{ paused: 'false' }, 'paused'],
      [{ minHostDelayMs: null }, 'minHostDelayMs'],
      [{ statusHost: '0.0.0.0' }, 'statusHost'],
    ];
    for (const [body, key] of cases) {
      const r = await post(port, token, JSON.stringify(body));
      assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.body}`);
      const reply = JSON.parse(r.body) as { code: string; error: string };
      assert.equal(reply.code, 'CRAWL_CONFIG_INVALID');
      assert.match(reply.error, new RegExp(`\\b${key}\\b`));
    }
    const ok = await post(port, token, JSON.stringify({ hostDelayMs: 6000 }));
    assert.equal(ok.status, 200, ok.body);
    assert.equal((JSON.parse(ok.body) as { runtime: { hostDelayMs: number; maxTimeMs: number | null } }).runtime.hostDelayMs, 6000);
    const stop = await new Promise<number>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/stop', headers: { authorization: `Bearer ${token}` } }, (res) => { res.resume(); resolve(res.statusCode ?? 0); });
      req.on('error', reject);
      req.end();
    });
    assert.equal(stop, 200);
    assert.equal(await closed, 0);
  } finally {
    child.kill('SIGKILL');
  }
});
