/**
 * No writes through links (src/disk/safe-fs.ts). A real crawl of simweb makes a state and an output
 * directory; then every file and directory they hold is, in turn, replaced in a copy by a symbolic
 * link to a victim outside (a file, or a directory holding a file), and every regular file also by
 * a hard link to a victim file. `resume` of each copy must refuse with CRAWL_STATE_LINK naming the
 * entry, and leave every victim as it was (content, mode, listing). The command line is run for
 * the cases the issue names (`control-token`, `crawl.log`, `urlseen/` …, with a status port so a
 * token would be written) and for a new `crawl` into a directory holding a planted link; the other
 * entries go through `Crawler.resume` in this process (the same check, without a node start each).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, linkSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { forkSimweb, SIMWEB_ALLOW_FLAGS, UA, cliArgv } from '../e2e/harness.js';
import { Crawler } from '../../src/crawl/pipeline.js';

const ROOT = mkdtempSync(path.join(os.tmpdir(), 'drumcrawl-state-links-'));
after(() => rmSync(ROOT, { recursive: true, force: true }));

function cli(args: string[], cwd: string, limitMs = 60_000): Promise<{ exit: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...cliArgv(), ...args], { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => { stderr += b.toString(); });
    const timer = setTimeout(() => child.kill('SIGKILL'), limitMs);
    child.on('close', (exit) => { clearTimeout(timer); resolve({ exit, stderr }); });
  });
}

/** Victims outside the crawl's directories: a file and a directory with a file, with known content and modes. */
function victims(dir: string): { file: string; dir: string; snapshot(): string } {
  mkdirSync(dir);
  const file = path.join(dir, 'victim.txt');
  writeFileSync(file, 'precious\n');
  chmodSync(file, 0o644);
  const vdir = path.join(dir, 'victim-dir');
  mkdirSync(vdir);
  writeFileSync(path.join(vdir, 'inner.txt'), 'inner\n');
  chmodSync(path.join(vdir, 'inner.txt'), 0o640);
  const snapshot = (): string => readdirSync(dir, { recursive: true }).map(String).sort().map((n) => {
    const p = path.join(dir, n);
    const st = lstatSync(p);
    return `${n} ${st.mode.toString(8)} ${st.isFile() ? readFileSync(p, 'utf8') : ''}`;
  }).join('\n');
  return { file, dir: vdir, snapshot };
}

/** Every entry below `dir` (relative paths), directories included. */
const entries = (dir: string): string[] => readdirSync(dir, { recursive: true }).map(String).sort();

test('links planted in the state and output directories: resume and crawl refuse with CRAWL_STATE_LINK, nothing outside changes', { timeout: 600_000 }, async () => {
  const sim = await forkSimweb('tiny');
  const base = path.join(ROOT, 'base');
  try {
    const r = await cli(['crawl', ...sim.seeds, '--state', path.join(base, 'state'), '--out', path.join(base, 'out'), '--dns-server', sim.dnsServer,
      ...SIMWEB_ALLOW_FLAGS, '--user-agent', UA, '--scope', 'any', '--max-pages', '40', '--host-delay', '0', '--ip-delay', '0', '--min-host-delay', '0',
      '--min-ip-delay', '0', '--progress', 'none', '--workers', '1', '--ram', '512M', '--status-port', '0'], ROOT, 180_000);
    assert.equal(r.exit, 0, r.stderr);
  } finally {
    await sim.close();
  }
  const stateEntries = entries(path.join(base, 'state')).map((e) => ['state', e] as const);
  const outEntries = entries(path.join(base, 'out')).map((e) => ['out', e] as const);
  const all = [...stateEntries, ...outEntries];
  assert.ok(stateEntries.some(([, e]) => e === 'control-token') && outEntries.some(([, e]) => e === 'crawl.log'), `a crawl's files: ${all.join(' ')}`);
  let n = 0;
  const fresh = (): { dir: string; state: string; out: string } => {
    const dir = path.join(ROOT, `case${n++}`);
    mkdirSync(dir);
    assert.equal(spawnSync('cp', ['-a', path.join(base, 'state'), path.join(base, 'out'), dir]).status, 0);
    return { dir, state: path.join(dir, 'state'), out: path.join(dir, 'out') };
  };

  // The command line, for the files the issue names.
  const viaCli = new Set(['state/control-token', 'out/crawl.log', 'state/manifest.json', 'state/done.log']);
  const firstDir = stateEntries.find(([, e]) => statSync(path.join(base, 'state', e)).isDirectory());
  if (firstDir !== undefined) viaCli.add(`state/${firstDir[1]}`);
  const cases: { where: 'state' | 'out'; entry: string; kind: 'symlink' | 'hardlink' }[] = [];
  // A symbolic link at every entry; a hard link at the named files and every third other file (the
  // same check, lstat's link count, serves them all; the file's run time stays within the suite's).
  let files = 0;
  for (const [where, entry] of all) {
    cases.push({ where, entry, kind: 'symlink' });
    if (statSync(path.join(base, where, entry)).isFile() && (viaCli.has(`${where}/${entry}`) || files++ % 3 === 0)) cases.push({ where, entry, kind: 'hardlink' });
  }
  let refusedCount = 0;
  for (const c of cases) {
    const { dir, state, out } = fresh();
    const v = victims(path.join(dir, 'victims'));
    const before = v.snapshot();
    const target = path.join(c.where === 'state' ? state : out, c.entry);
    const isDir = statSync(target).isDirectory();
    rmSync(target, { recursive: true, force: true });
    if (c.kind === 'symlink') symlinkSync(isDir ? v.dir : v.file, target);
    else linkSync(v.file, target);
    const label = `${c.kind} at ${c.where}/${c.entry}`;
    if (viaCli.has(`${c.where}/${c.entry}`)) {
      const r = await cli(['resume', state, '--status-port', '0', '--max-time', '2', '--progress', 'none'], dir);
      assert.equal(r.exit, 2, `${label}: ${r.stderr}`);
      assert.match(r.stderr, /(^|\n)drumcrawl: CRAWL_STATE_LINK: /, label);
      assert.ok(r.stderr.includes(c.entry.split('/')[0]!), `${label}: the message names the entry: ${r.stderr}`);
    } else {
      let crawler: Crawler | null = null;
      await assert.rejects(async () => { crawler = await Crawler.resume(state, {}, {}); }, (e: Error & { code?: string }) => {
        assert.equal(e.code, 'CRAWL_STATE_LINK', `${label}: ${e.message}`);
        return true;
      }, label);
      // Only when the check failed (the resume opened the state): close what it opened.
      if (crawler !== null) await (crawler as unknown as { close(): Promise<void> }).close();
    }
    assert.equal(v.snapshot(), before, `${label}: the victims outside are unchanged`);
    refusedCount++;
    rmSync(dir, { recursive: true, force: true });
  }
  assert.equal(refusedCount, cases.length);

  // A new crawl into a state directory and an output directory prepared with links.
  for (const [name, plant] of [
    ['control-token', (s: string, _o: string, v: ReturnType<typeof victims>) => symlinkSync(v.file, path.join(s, 'control-token'))],
    ['crawl.log', (_s: string, o: string, v: ReturnType<typeof victims>) => symlinkSync(v.file, path.join(o, 'crawl.log'))],
    ['urlseen', (s: string, _o: string, v: ReturnType<typeof victims>) => symlinkSync(v.dir, path.join(s, 'urlseen'))],
  ] as const) {
    const dir = path.join(ROOT, `new-${name}`);
    mkdirSync(dir);
    const state = path.join(dir, 'state');
    const out = path.join(dir, 'out');
    mkdirSync(state);
    mkdirSync(out);
    const v = victims(path.join(dir, 'victims'));
    const before = v.snapshot();
    plant(state, out, v);
    const r = await cli(['crawl', 'http://127.0.0.1:9/', '--state', state, '--out', out, '--user-agent', UA, '--status-port', '0', '--max-time', '2',
      '--progress', 'none', '--allow-network', '127.0.0.1/32'], dir);
    assert.equal(r.exit, 2, `crawl with a link at ${name}: ${r.stderr}`);
    assert.match(r.stderr, new RegExp(`(^|\\n)drumcrawl: CRAWL_STATE_LINK: \\S*${name} is a symbolic link`));
    assert.equal(v.snapshot(), before, `crawl with a link at ${name}: the victims are unchanged`);
  }
});
