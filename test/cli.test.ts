import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const main = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
const run = (...args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', main, ...args], { encoding: 'utf8', timeout: 600_000 });

test('drumcrawl --help lists the program and its commands, exits 0', () => {
  const r = run('--help');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /Usage: drumcrawl/);
  for (const c of ['crawl', 'resume', 'stats', 'demo']) assert.match(r.stdout, new RegExp(`\\b${c}\\b`));
});

test('crawl --help shows every contract flag', () => {
  const r = run('crawl', '--help');
  assert.equal(r.status, 0, r.stderr);
  for (const f of ['--seeds', '--state', '--out', '--dns-server', '--user-agent', '--max-pages', '--max-time', '--max-depth', '--scope',
    '--include', '--exclude', '--host-delay', '--ip-delay', '--min-host-delay', '--min-ip-delay', '--ram', '--workers',
    '--warc-compression', '--status-port', '--config']) {
    assert.ok(r.stdout.includes(f), `${f} in help`);
  }
});

test('invalid configuration: exit code 2 and a precise CRAWL_CONFIG_INVALID message', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dc-cli-'));
  const cases: [string[], RegExp][] = [
    [['crawl', 'http://a.test/', '--state', dir, '--ram', 'lots'], /CRAWL_CONFIG_INVALID: ramBytes must be a size like/],
    [['crawl', 'http://a.test/', '--state', dir, '--host-delay', '100', '--min-host-delay', '500'], /minHostDelayMs \(τh0 = 500\) must not exceed/],
    [['crawl', '--state', dir], /no seed URLs/],
    [['crawl', 'http://a.test/', '--scope', 'planet'], /scope must be one of any, pld, host/],
  ];
  for (const [args, re] of cases) {
    const r = run(...args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, re);
  }
});

test('resume / stats on a directory without a checkpoint: exit code 2, CRAWL_STATE_MISSING', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dc-cli-'));
  for (const cmd of ['resume', 'stats']) {
    const r = run(cmd, dir);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /CRAWL_STATE_MISSING/);
  }
});
