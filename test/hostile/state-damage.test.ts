/**
 * Every file a crawl's state directory holds, damaged in turn: truncated at a random offset, or one
 * bit flipped at a random offset. A real crawl of simweb through the CLI is SIGKILLed in its middle
 * (the state then holds every kind of file: the manifest, pending.bin, done.log, admits.bin, the
 * robots stage and journal, BEAST's manifests and queues, the disk queues, every DRUM's manifest,
 * bucket, aux and Z files, STAR's histogram). Each damaged copy is resumed (Crawler.resume, run to
 * its end). The outcome must be either
 *   - a refusal with a specific CRAWL_* code (never CRAWL_ERROR, the code of a bug, and never an
 *     error without a code) whose message names the damaged file, or
 *   - a resume that loses nothing: the crawl finishes by itself and its WARC holds a response for
 *     every page simweb says is reachable (the durable work of the killed run and the resumed
 *     run's together: nothing the killed run had made durable is silently forgotten).
 *
 * fast-check draws the damages (file, kind, offset, bit); the seed is printed and
 * DRUMCRAWL_DAMAGE_SEED replays it. The default run draws one damage for each kind of file (the
 * suite's time budget); DRUMCRAWL_LONG=1 damages every file of the state, each both ways.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { cli, crawlCommand, crawlSettings, forkSimweb, sleep } from '../e2e/harness.js';
import { readWarcDir } from '../e2e/warc-read.js';
import { readManifest } from '../../src/state/checkpoint.js';
import { Crawler } from '../../src/crawl/pipeline.js';

const LONG = process.env.DRUMCRAWL_LONG !== undefined;
const ROOT = mkdtempSync(path.join(os.tmpdir(), 'drumcrawl-state-damage-'));
after(() => rmSync(ROOT, { recursive: true, force: true }));

/** The kind of a state file: what its format is (the default run damages one file of each kind). */
export function fileKind(rel: string): string {
  const base = path.basename(rel);
  const dir = path.dirname(rel);
  if (/^b\d{4}-\d+\.(kv|aux)$|^bspare\.(kv|aux)$/.test(base)) return `drum bucket .${base.split('.').pop()}`;
  if (/^z\d{4}-\d+\.z$|^zspare\.z$/.test(base)) return 'drum Z file';
  if (/^admits-\d+\.(bin|next)$/.test(base)) return 'admit log';
  if (base === 'drum.json') return 'drum manifest';
  if (base === 'writer-boot') return 'drum writer-boot';
  if (/^beast\.m[01]$/.test(base)) return 'beast manifest';
  if (/^q\d{8}$/.test(base)) return 'beast queue';
  if (base.endsWith('.dq')) return 'disk-queue segment';
  if (base === 'manifest.json' && dir !== '.') return 'disk-queue manifest';
  return base;
}

interface Damage { file: string; kind: 'truncate' | 'flip' | 'none'; at: number; bit: number }

function listFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true }).map(String).filter((n) => lstatSync(path.join(dir, n)).isFile()).sort();
}

function applyDamage(state: string, d: Damage): string {
  const p = path.join(state, d.file);
  const buf = readFileSync(p);
  if (d.kind === 'none') return 'the undamaged state';
  if (d.kind === 'truncate') {
    const at = Math.floor(d.at * buf.length); // < length: at least one byte goes
    truncateSync(p, at);
    return `${d.file} truncated to ${at} of ${buf.length} bytes`;
  }
  const at = Math.min(buf.length - 1, Math.floor(d.at * buf.length));
  buf[at] = buf[at]! ^ (1 << d.bit);
  writeFileSync(p, buf);
  return `${d.file}: bit ${d.bit} of byte ${at} of ${buf.length} flipped`;
}

/** URLs with a response (or revisit) record in the WARC files of `out`. */
async function captured(out: string): Promise<Set<string>> {
  return new Set((await readWarcDir(out)).filter((r) => r.type === 'response' || r.type === 'revisit').map((r) => r.uri!));
}

test('each state file truncated or bit-flipped: a specific code naming the file, or a resume that loses nothing', { timeout: LONG ? 7_200_000 : 1_800_000 }, async () => {
  // ~300 pages on 4 IPs, no politeness delays: the killed crawl and each resume take seconds.
  const web = await forkSimweb('tiny', { plds: 5, hostsPerPldMean: 2, hostsPerPldMax: 3, pagesPerHostMin: 25, pagesPerHostMax: 40, ips: 4, linksPerPageMean: 10 });
  try {
    const base = path.join(ROOT, 'base');
    const state = path.join(base, 'state');
    const out = path.join(base, 'out');
    const input = crawlSettings(web, {
      stateDir: state, outDir: out, hostDelayMs: 0, ipDelayMs: 0, minHostDelayMs: 0, minIpDelayMs: 0, politenessMarginMs: 0,
      workers: 1, ramBytes: 256 * 2 ** 20, fetchConcurrency: 8, checkpointIntervalMs: 60_000, fetchTimeoutMs: 5000, statusPort: 0,
    });
    const reachable = (await web.report({ hostMs: 0, ipMs: 0 })).reachable!;
    const run = cli(crawlCommand(input));
    // Killed after the first checkpoint and about two thirds of the pages (no periodic checkpoint
    // falls before it: done.log holds what became durable since the first one).
    for (let i = 0; i < 1200 && (await readManifest(state).catch(() => null)) === null; i++) await sleep(50);
    for (let i = 0; i < 1200 && (await web.requests()) < (reachable.length * 2) / 3; i++) await sleep(20);
    run.child.kill('SIGKILL');
    assert.equal(await run.done, -9, `the kill landed before the crawl ended:\n${run.out()}`);
    const files = listFiles(state).filter((f) => lstatSync(path.join(state, f)).size > 0);
    const kinds = new Map<string, string[]>();
    for (const f of files) {
      const k = fileKind(f);
      kinds.set(k, [...(kinds.get(k) ?? []), f]);
    }
    console.log(`state after the kill: ${files.length} non-empty files of ${kinds.size} kinds: ${[...kinds.keys()].join(', ')}`);

    let n = 0;
    const copy = (): { dir: string; state: string; out: string } => {
      const dir = path.join(ROOT, `case${n++}`);
      mkdirSync(dir);
      assert.equal(spawnSync('cp', ['-a', state, out, dir]).status, 0);
      return { dir, state: path.join(dir, 'state'), out: path.join(dir, 'out') };
    };
    /** The verdict on one damaged copy (a message when it breaks the rule, null when it holds). */
    const judge = async (d: Damage): Promise<string | null> => {
      const t0 = performance.now();
      const c = copy();
      const what = applyDamage(c.state, d);
      let crawler: Crawler | null = null;
      try {
        crawler = await Crawler.resume(c.state, { outDir: c.out, maxTimeMs: 120_000 });
        const s = await crawler.run();
        const status = await web.report({ hostMs: 0, ipMs: 0, reachable: false });
        const got = await captured(c.out);
        const lost = reachable.filter((u) => (status.statusByUrl[u] ?? 0) < 500 && !got.has(u));
        if (!s.finished) return `${what}: the resumed crawl did not finish by itself (${JSON.stringify(s).slice(0, 200)})`;
        if (lost.length > 0) return `${what}: resumed and finished, but ${lost.length} reachable pages are in no WARC record (silent loss), e.g. ${lost.slice(0, 3).join(' ')}`;
        return null;
      } catch (e) {
        const err = e as Error & { code?: string };
        const name = path.basename(d.file);
        if (typeof err.code !== 'string' || !/^CRAWL_[A-Z0-9_]+$/.test(err.code)) return `${what}: refused without a CRAWL_* code: ${err.stack}`;
        if (err.code === 'CRAWL_ERROR') return `${what}: CRAWL_ERROR (the code of a bug): ${err.message}`;
        if (!err.message.includes(name)) return `${what}: ${err.code} does not name the file: ${err.message}`;
        return null;
      } finally {
        // Emptied, but the state directory itself is kept until the end: a crawler whose close
        // failed keeps its lock (named by the directory's inode, pipeline.ts close), and a new
        // directory must not get that inode.
        for (const e of readdirSync(c.state)) rmSync(path.join(c.state, e), { recursive: true, force: true });
        rmSync(c.out, { recursive: true, force: true });
        console.log(`${what}: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      }
    };

    // The reference: the undamaged copy resumes and loses nothing.
    assert.equal(await judge({ file: 'manifest.json', kind: 'none', at: 0, bit: 0 }), null, 'the undamaged state resumes whole');

    const seed = Number(process.env.DRUMCRAWL_DAMAGE_SEED ?? Date.now() % 2 ** 31);
    console.log(`damage seed ${seed} (DRUMCRAWL_DAMAGE_SEED=${seed} replays it)`);
    const damageOf = (file: string): fc.Arbitrary<Damage> => fc.record({
      file: fc.constant(file), kind: fc.constantFrom('truncate' as const, 'flip' as const),
      at: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), bit: fc.integer({ min: 0, max: 7 }),
    });
    // Default: one file of each kind, one damage each. LONG: every file, both ways.
    const targets = LONG ? files : [...kinds.values()].map((l) => l[0]!);
    const problems: string[] = [];
    let cases = 0;
    for (const file of targets) {
      const kindsToTry: ('truncate' | 'flip')[] = LONG ? ['truncate', 'flip'] : [];
      await fc.assert(fc.asyncProperty(damageOf(file), async (d0) => {
        for (const kind of kindsToTry.length > 0 ? kindsToTry : [d0.kind]) {
          cases++;
          const p = await judge({ ...d0, kind });
          if (p !== null) {
            console.log(`BROKE THE RULE: ${p}`);
            problems.push(p);
          }
        }
      }), { seed: seed + cases, numRuns: 1, unbiased: true }); // unbiased: offsets over the whole file, not mostly its first or last byte
    }
    console.log(`${cases} damaged states resumed; ${problems.length} broke the rule`);
    assert.deepEqual(problems, []);
  } finally {
    await web.close();
  }
});
