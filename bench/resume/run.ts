/**
 * Resume time against the size of the archive behind the checkpoint (`npm run bench:resume`).
 *
 * For each size S (GB; default 0, 1 and 10): a crawl of simweb's `demo` web runs for a few seconds
 * and stops (checkpoint); then S GB of WARC files named as files of an earlier run of the crawl are
 * put in its output directory (real gzip-per-record WARC: one record repeated), and a torn record
 * is appended to the file the checkpoint names, as a SIGKILL leaves it. Then, ROUNDS times: the
 * WARC recovery alone (src/state/recovery.ts: the bytes it scans and its time), and a full resume —
 * Crawler.resume (recovery + opening DRUMs, frontier, parse pool) and the time to its first
 * request — each resume stopping after 1.5 s and leaving a new torn tail for the next. The bulk
 * files must come out unchanged (recovery does not touch them). Result:
 * bench/results/resume-warc-size.json (machine, commit, per size the figures of every round).
 *
 *   node --import tsx bench/resume/run.ts [--sizes 0,1,10] [--rounds 3] [--keep]
 */
import { execSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, mkdtempSync, openSync, closeSync, writeSync, statSync, readSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { startSimweb } from '../../src/simweb/index.js';
import { Crawler } from '../../src/crawl/pipeline.js';
import { readManifest } from '../../src/state/checkpoint.js';
import { recoverWarc } from '../../src/state/recovery.js';
import { resolveCrawlConfig } from '../../src/config/config.js';
import { args, commandLine, machineInfo, REPO_ROOT, SHARED_MACHINE_NOTE, writeResult } from '../lib/report.js';

const a = args();
const SIZES = (a.get('sizes') ?? '0,1,10').split(',').map(Number);
const ROUNDS = a.num('rounds', 3);
const GB = 2 ** 30;
const TORN = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0x4b, 0x4c]);

/** One gzip member holding one WARC resource record of ~64 KB: the bulk's repeating unit. */
function bulkUnit(): Buffer {
  const body = Buffer.alloc(64 << 10);
  for (let i = 0; i < body.length; i++) body[i] = 32 + ((i * 7919) % 95);
  const head = `WARC/1.1\r\nWARC-Type: resource\r\nWARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-000000000000>\r\nWARC-Date: 2026-01-01T00:00:00Z\r\nWARC-Target-URI: http://bulk.test/\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n\r\n`;
  return gzipSync(Buffer.concat([Buffer.from(head), body, Buffer.from('\r\n\r\n')]), { level: 1 });
}

/** `bytes` of WARC in files of ≤ 1 GiB named as rotations of an earlier run of this crawl. */
function writeBulk(dir: string, bytes: number): { files: string[]; ms: number } {
  const t0 = performance.now();
  const unit = bulkUnit();
  const chunk = Buffer.concat(Array.from({ length: Math.floor((4 << 20) / unit.length) }, () => unit));
  const files: string[] = [];
  let left = bytes;
  for (let serial = 1; left > 0; serial++) {
    const f = path.join(dir, `drumcrawl-20200101000000000-${String(serial).padStart(5, '0')}.warc.gz`);
    const fd = openSync(f, 'w');
    let inFile = 0;
    while (left > 0 && inFile < GB) {
      writeSync(fd, chunk);
      inFile += chunk.length;
      left -= chunk.length;
    }
    closeSync(fd);
    files.push(f);
  }
  return { files, ms: performance.now() - t0 };
}

/** Size and SHA-1 of the first and last MiB: enough to see that nothing cut or rewrote a file. */
function fingerprint(f: string): string {
  const size = statSync(f).size;
  const fd = openSync(f, 'r');
  const b = Buffer.alloc(Math.min(size, 1 << 20));
  const h = createHash('sha1');
  readSync(fd, b, 0, b.length, 0);
  h.update(b);
  readSync(fd, b, 0, b.length, Math.max(0, size - b.length));
  h.update(b);
  closeSync(fd);
  return `${size}:${h.digest('hex')}`;
}

async function measure(sizeGb: number): Promise<Record<string, unknown>> {
  const web = await startSimweb({ preset: 'demo', log: false });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dc-bench-resume-'));
  try {
    const state = path.join(dir, 'state');
    const out = path.join(dir, 'warc');
    const cfg = resolveCrawlConfig({
      seeds: web.seeds, dnsServers: [web.dnsServer], allowNetworks: ['127.0.0.0/8'], stateDir: state, outDir: out, progress: 'none', maxTimeMs: 3000,
      scope: 'any', // the whole demo web
      hostDelayMs: 100, minHostDelayMs: 100, ipDelayMs: 10, minIpDelayMs: 10, workers: 1, ramBytes: 256 * 2 ** 20,
      userAgent: 'drumcrawl-bench/0.1 (+https://example.test/bot)',
    });
    await (await Crawler.open(cfg)).run();
    const bulk = writeBulk(out, sizeGb * GB);
    const before = bulk.files.map(fingerprint);
    const rounds: Record<string, unknown>[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const m = (await readManifest(state))!;
      appendFileSync(path.join(out, m.warc!.file), TORN);
      const t0 = performance.now();
      const rec = await recoverWarc(out, m.warc);
      const recoveryMs = performance.now() - t0;
      appendFileSync(path.join(out, m.warc!.file), TORN);
      const t1 = performance.now();
      const c = await Crawler.resume(state, { maxTimeMs: 1500, progress: 'none' });
      const openMs = performance.now() - t1;
      let first: number | null = null;
      c.on('dispatch', () => { if (first === null) first = performance.now() - t1; });
      await c.run();
      rounds.push({
        recoveryMs: Math.round(recoveryMs * 10) / 10,
        scannedBytes: rec.reduce((s, x) => s + x.scanned, 0),
        filesScanned: rec.length,
        resumeOpenMs: Math.round(openMs),
        firstRequestMs: first === null ? null : Math.round(first),
      });
      console.log(`${sizeGb} GB, round ${r + 1}: ${JSON.stringify(rounds[rounds.length - 1])}`);
    }
    const after = bulk.files.map(fingerprint);
    return { sizeGb, bulkBytes: sizeGb * GB, bulkFiles: bulk.files.length, bulkWriteMs: Math.round(bulk.ms), bulkUnchanged: before.every((x, i) => x === after[i]), rounds };
  } finally {
    await web.close();
    if (!a.has('keep')) rmSync(dir, { recursive: true, force: true });
  }
}

const results: Record<string, unknown>[] = [];
for (const s of SIZES) results.push(await measure(s));
const file = writeResult('resume-warc-size', {
  bench: 'resume-warc-size',
  command: commandLine('bench:resume'),
  commit: execSync('git rev-parse HEAD', { cwd: REPO_ROOT }).toString().trim(),
  machine: machineInfo(),
  note: `${SHARED_MACHINE_NOTE} The bulk is real WARC (gzip per record) that recovery must not read: scannedBytes counts what it read.`,
  results,
});
console.log(`wrote ${file}`);
