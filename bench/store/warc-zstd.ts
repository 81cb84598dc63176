/**
 * bench/store/warc-zstd — WARC compression per page: CPU and compressed size of the three records
 * the crawler writes per page (response, request, metadata with the page's outlinks), encoded by
 * encodeExchangeRecords as the parse workers do, for
 *   gzip-1 (the default), zstd levels 1 and 3 without a dictionary, with the dictionary the crawler
 *   trains (src/store/zstd-train.ts, from the first 1 MiB of records, each cut to 64 KiB, as the
 *   writer samples them), and, for reference, with `zstd --train`'s dictionary of the same samples
 *   (when the zstd tool is installed; Debian package zstd) and with the trained content as a
 *   raw-content dictionary (no tables: the upper bound of what the content gives).
 * Corpora: the bench web's pages (simweb preset `bench`), and real HTML from directories given with
 * `--html-dir` (e.g. Debian's python3-doc and postgresql-doc: /usr/share/doc/python3-doc/html,
 * /usr/share/doc/postgresql-doc-15/html), served as if fetched from one host per directory.
 * The training pages come first; the measured pages are the rest. Two timings, each the best of
 * the rounds, every variant run once per round in turn (a shared box: compare within one run):
 * encodeMsPerPage, encodeExchangeRecords of a page as the parse worker calls it (record assembly,
 * digest, compression); compressMsPerRecord, compressRecord alone on the already assembled
 * records (compressMsPerPage: × records per page).
 *
 *   node --import tsx bench/store/warc-zstd.ts [--pages 1500] [--rounds 5] [--html-dir DIR]... [--out bench/results/warc-zstd.json]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { compressRecord, encodeExchangeRecords, newDictSlot, trainDictionary, type EncodeOptions, type ExchangeInput } from '../../src/store/index.js';
import { TRAIN_DICT_BYTES, TRAIN_SAMPLE_BYTES } from '../../src/threads/archive/archive-zstd.js';
import { simwebPages } from '../html/corpus.js';
import { machineInfo, sig, SHARED_MACHINE_NOTE } from '../lib/report.js';

const argv = process.argv.slice(2);
const arg = (name: string, dflt: string): string => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1]! : dflt;
};
const PAGES = Number(arg('pages', '1500'));
const ROUNDS = Number(arg('rounds', '5'));
const OUT = arg('out', 'bench/results/warc-zstd.json');
const HTML_DIRS = argv.flatMap((a, i) => (a === '--html-dir' ? [argv[i + 1]!] : []));
const enc = new TextEncoder();
const cpuMs = (): number => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

interface Page { url: string; contentType: string; body: Uint8Array }

function exchangeOf(p: Page): ExchangeInput {
  const u = new URL(p.url);
  const links = [...Buffer.from(p.body).toString('latin1').matchAll(/href="([^"#]*)"/g)].map((m) => new URL(m[1]!, u).href);
  return {
    url: p.url, ip: '127.0.0.1', date: new Date(Date.UTC(2026, 10, 28, 12, 0, 0)),
    requestHead: enc.encode(`GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nUser-Agent: drumcrawl/0.1 (+https://example.org/crawler)\r\nAccept: */*\r\nAccept-Encoding: gzip, br\r\n\r\n`),
    responseHead: enc.encode(`HTTP/1.1 200 OK\r\nServer: nginx\r\nDate: Sat, 28 Nov 2026 12:00:00 GMT\r\nContent-Type: ${p.contentType}\r\nContent-Length: ${p.body.length}\r\nLast-Modified: Fri, 27 Nov 2026 08:00:00 GMT\r\nConnection: keep-alive\r\n\r\n`),
    body: p.body, outlinks: links,
  };
}

function htmlFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const n of readdirSync(d).sort()) {
      const f = path.join(d, n);
      const st = statSync(f);
      if (st.isDirectory()) walk(f);
      else if (n.endsWith('.html')) out.push(f);
    }
  };
  walk(dir);
  return out;
}

/** Up to `max` pages of a directory, spread over it (every k-th file), in a fixed order. */
function dirPages(dir: string, max: number): Page[] {
  const files = htmlFiles(dir);
  const step = Math.max(1, Math.floor(files.length / max));
  const host = `docs-${path.basename(path.dirname(dir)) || 'x'}.example`;
  return files.filter((_, i) => i % step === 0).slice(0, max).map((f) => ({
    url: `https://${host}/${path.relative(dir, f)}`, contentType: 'text/html; charset=utf-8', body: readFileSync(f),
  }));
}

/** The writer's samples: each record cut to 64 KiB, until TRAIN_SAMPLE_BYTES (warc-writer.ts sample()). */
function samplesOf(xs: ExchangeInput[]): { samples: Uint8Array; pages: number; records: Uint8Array[] } {
  const parts: Uint8Array[] = [];
  let bytes = 0;
  let pages = 0;
  for (const x of xs) {
    if (bytes >= TRAIN_SAMPLE_BYTES) break;
    pages++;
    const g = encodeExchangeRecords(x, { compression: 'none' });
    for (const r of g.records) {
      const part = g.data.subarray(r.offset, r.offset + Math.min(r.length, 65536, TRAIN_SAMPLE_BYTES - bytes));
      parts.push(part);
      bytes += part.length;
      if (bytes >= TRAIN_SAMPLE_BYTES) break;
    }
  }
  return { samples: Buffer.concat(parts), pages, records: parts };
}

function cliDictionary(records: Uint8Array[]): Uint8Array | null {
  try {
    execFileSync('zstd', ['--version'], { stdio: 'ignore' });
  } catch {
    return null;
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'warc-zstd-bench-'));
  try {
    records.forEach((r, i) => writeFileSync(path.join(dir, `s${i}`), r));
    const out = path.join(dir, 'dict');
    execFileSync('zstd', ['--train', '-q', '--maxdict', String(TRAIN_DICT_BYTES), '-o', out, ...records.map((_, i) => path.join(dir, `s${i}`))]);
    return readFileSync(out);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function measure(name: string, pages: Page[]) {
  const xs = pages.map(exchangeOf);
  const train = samplesOf(xs);
  const test = xs.slice(train.pages);
  if (test.length < 50) throw new Error(`${name}: only ${test.length} pages after the ${train.pages} training pages`);
  const t0 = cpuMs();
  const dict = trainDictionary(train.samples, { dictBytes: TRAIN_DICT_BYTES });
  const trainMs = cpuMs() - t0;
  const cli = cliDictionary(train.records);
  const raw = dict.subarray(dict.length - Math.min(TRAIN_DICT_BYTES, train.samples.length));
  const slot = (d: Uint8Array) => newDictSlot(d.length, d);
  const variants: Record<string, EncodeOptions> = {
    none: { compression: 'none' },
    'gzip-1': { compression: 'gzip', gzipLevel: 1 },
    'zstd-1': { compression: 'zstd', zstdLevel: 1 },
    'zstd-3': { compression: 'zstd', zstdLevel: 3 },
    'zstd-1+dict': { compression: 'zstd', zstdLevel: 1, zstdDict: slot(dict) },
    'zstd-3+dict': { compression: 'zstd', zstdLevel: 3, zstdDict: slot(dict) },
    'zstd-1+rawContent': { compression: 'zstd', zstdLevel: 1, zstdDict: slot(Uint8Array.from(raw)) },
    ...(cli !== null ? { 'zstd-1+zstdTrain': { compression: 'zstd', zstdLevel: 1, zstdDict: slot(cli) } as EncodeOptions, 'zstd-3+zstdTrain': { compression: 'zstd', zstdLevel: 3, zstdDict: slot(cli) } as EncodeOptions } : {}),
  };
  // the measured pages' records, uncompressed (for the compression-alone timing)
  const records: Uint8Array[] = [];
  for (const x of test) {
    const g = encodeExchangeRecords(x, { compression: 'none' });
    for (const r of g.records) records.push(g.data.slice(r.offset, r.offset + r.length));
  }
  const best: Record<string, number> = {};
  const bestC: Record<string, number> = {};
  const bytes: Record<string, number> = {};
  for (const o of Object.values(variants)) for (const x of test.slice(0, 20)) encodeExchangeRecords(x, o); // warm-up
  for (let r = 0; r < ROUNDS; r++) {
    for (const [v, o] of Object.entries(variants)) {
      let b = 0;
      const c0 = cpuMs();
      for (const x of test) b += encodeExchangeRecords(x, o).data.byteLength;
      const c1 = cpuMs();
      for (const rec of records) compressRecord(rec, o);
      const c2 = cpuMs();
      best[v] = Math.min(best[v] ?? Infinity, (c1 - c0) / test.length);
      bestC[v] = Math.min(bestC[v] ?? Infinity, (c2 - c1) / records.length);
      bytes[v] = b;
    }
  }
  const rawBytes = bytes.none!;
  const rows = Object.keys(variants).map((v) => ({
    variant: v,
    encodeMsPerPage: sig(best[v]!),
    compressMsPerRecord: sig(bestC[v]!),
    compressMsPerPage: sig(bestC[v]! * records.length / test.length),
    ratio: sig(rawBytes / bytes[v]!),
    bytesPerPage: Math.round(bytes[v]! / test.length),
  }));
  console.log(`\n${name}: ${pages.length} pages (${train.pages} for training, ${test.length} measured), ${Math.round(rawBytes / test.length)} record bytes per page; training ${trainMs.toFixed(0)} ms CPU`);
  console.table(rows);
  return {
    corpus: name, pages: pages.length, trainingPages: train.pages, sampleBytes: train.samples.length, measuredPages: test.length,
    rawBytesPerPage: Math.round(rawBytes / test.length), trainCpuMs: Math.round(trainMs), dictBytes: dict.length, zstdTrainDictBytes: cli?.length ?? null, rows,
  };
}

const corpora = [measure('bench web (simweb bench)', simwebPages('bench', 1, PAGES, Infinity, 7, 3).map((p) => ({ url: p.url, contentType: p.contentType, body: p.bytes })))];
for (const d of HTML_DIRS) corpora.push(measure(d, dirPages(d, PAGES)));
let commit = 'unknown';
try {
  commit = execFileSync('git', ['rev-parse', '--short', 'HEAD']).toString().trim();
} catch { /* not a checkout */ }
const result = {
  bench: 'warc-zstd',
  command: `node --import tsx bench/store/warc-zstd.ts ${argv.join(' ')}`.trim(),
  commit,
  machine: machineInfo(),
  note: `${SHARED_MACHINE_NOTE} encodeMsPerPage: encodeExchangeRecords of the page's records; compressMsPerRecord: compressRecord alone; best of ${ROUNDS} rounds; ratio: record bytes / compressed bytes.`,
  corpora,
};
writeFileSync(OUT, JSON.stringify(result, null, 2) + '\n');
console.log(`wrote ${OUT}`);
