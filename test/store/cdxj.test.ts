/**
 * The CDXJ index beside each WARC file (src/store/cdxj*.ts, docs/output-format.md): its lines are
 * the lines webrecorder's indexer (npm `warcio`'s CDXIndexer, the JavaScript port of the indexer
 * in Python warcio / cdxj-indexer that pywb uses) writes for the same file, sorted; every line
 * resolves to its record; after a crash the index matches what recovery leaves of the WARC file.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { copyFile, mkdir, readdir, readFile, rm, stat, truncate, appendFile, writeFile } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { CDXIndexer, getSurt } from 'warcio';
import { decompress } from 'zstd-napi';
import { WarcWriter, surtKey, cdxjOpenPathFor, cdxjPathFor, finishCdxj, readCdxj, sha1Digest, sortLinesFile, type WarcCompression } from '../../src/store/index.js';
import { recoverWarc } from '../../src/state/recovery.js';
import { tempDir } from '../e2e/harness.js';

const enc = (s: string): Uint8Array => Buffer.from(s, 'latin1');

/** Deterministic pseudo-random bytes (all 256 values: binary bodies). */
function bytes(seed: number, n: number): Uint8Array {
  const b = new Uint8Array(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    b[i] = x & 0xff;
  }
  return b;
}

const TYPES = ['text/html; charset=utf-8', 'application/pdf', 'image/png', 'text/plain', 'application/octet-stream', 'Text/HTML ; charset=x'];
const STATUSES = [200, 200, 200, 404, 301, 500, 206];

/** Write `n` exchanges (every 7th a revisit; with `dns`, every 5th followed by a DNS record) to a writer. */
async function writeMany(w: WarcWriter, n: number, seed: number, dns = true): Promise<Map<string, string>> {
  const digests = new Map<string, string>(); // url → payload digest
  for (let i = 0; i < n; i++) {
    const host = ['www.a.test', 'b.test', 'c.b.test:8080', 'www2.d.test'][i % 4]!;
    const url = `http://${host}/p/${(i * 7919 + seed) % 1000}?z=${i}&a=${i % 3}`;
    const date = new Date(Date.UTC(2026, 10, 26, 20, 0, i % 60));
    const status = STATUSES[i % STATUSES.length]!;
    const head = enc(`HTTP/1.1 ${status} X\r\nContent-Type: ${TYPES[i % TYPES.length]}\r\n\r\n`);
    const req = enc(`GET / HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    if (i % 7 === 6) {
      await w.writeRevisit({ url, ip: '127.0.0.1', date, requestHead: req, responseHead: head, payloadDigest: 'sha1:ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', refersToUri: 'http://b.test/', refersToDate: date });
      digests.set(url, 'sha1:ABCDEFGHIJKLMNOPQRSTUVWXYZ234567');
    } else {
      const body = bytes(seed * 1000 + i, 200 + ((i * 131) % 3000));
      const r = await w.writeExchange({ url, ip: '127.0.0.1', date, requestHead: req, responseHead: head, body, outlinks: i % 2 === 0 ? [`http://b.test/o${i}`] : undefined, truncated: i % 11 === 10 });
      digests.set(url, r.payloadDigest);
    }
    if (dns && i % 5 === 4) {
      const h = `h${i}.dns.test`;
      await w.writeDns({ host: h, date, server: '127.0.0.1:5353', records: [{ address: `127.1.0.${i % 250}`, ttl: 300 }] });
    }
  }
  return digests;
}

/** warcio's CDXJ lines for one file (it reads gzip and plain WARC files, not zstd), sorted. */
async function warcioLines(file: string): Promise<string[]> {
  const data = await readFile(file);
  const ix = new CDXIndexer({ format: 'cdxj' });
  const out: string[] = [];
  for await (const c of ix.iterIndex([{ filename: path.basename(file), reader: (async function* () { yield data; })() }])) {
    out.push(ix.serialize(c).trimEnd());
  }
  return out.sort();
}

const warcFiles = async (dir: string): Promise<string[]> =>
  (await readdir(dir)).filter((f) => /\.warc(\.gz|\.zst)?$/.test(f)).sort().map((f) => path.join(dir, f));

/** Read the record a line names and check it is the capture the line says. */
async function resolveLine(dir: string, j: Record<string, string>, compression: WarcCompression): Promise<void> {
  const data = await readFile(path.join(dir, j.filename!));
  const off = Number(j.offset);
  const len = Number(j.length);
  const unit = data.subarray(off, off + len);
  const rec = compression === 'gzip' ? gunzipSync(unit) : compression === 'zstd' ? Buffer.from(decompress(unit)) : unit;
  const headEnd = rec.indexOf('\r\n\r\n');
  const head = rec.subarray(0, headEnd).toString('latin1');
  assert.match(head, new RegExp(`^WARC-Target-URI: ${j.url!.replace(/[?.*+()[\]]/g, '\\$&')}\r?$`, 'm'), `record at ${off} is ${j.url}`);
  const pd = /^WARC-Payload-Digest: (\S+)/m.exec(head)![1]!;
  assert.equal(pd, `sha1:${j.digest}`);
  if (!/^WARC-Type: revisit/m.test(head)) {
    const cl = Number(/^Content-Length: (\d+)/m.exec(head)![1]);
    const block = rec.subarray(headEnd + 4, headEnd + 4 + cl);
    const payload = j.url!.startsWith('dns:') ? block : block.subarray(block.indexOf('\r\n\r\n') + 4);
    assert.equal(sha1Digest(payload), pd, `payload digest of ${j.url}`);
  }
}

test('surtKey is the SURT key warcio (and pywb) compute, for any http(s) URL', () => {
  const label = fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,8}$/);
  const arb = fc.record({
    scheme: fc.constantFrom('http', 'https'),
    www: fc.constantFrom('', 'www.', 'www2.', 'WWW.'),
    labels: fc.array(label, { minLength: 1, maxLength: 4 }),
    port: fc.constantFrom('', ':8080', ':80', ':443', ':1'),
    path: fc.stringMatching(/^(\/[A-Za-z0-9._~%-]{0,6}){0,4}$/),
    query: fc.array(fc.stringMatching(/^[A-Za-z0-9]{1,4}(=[A-Za-z0-9%]{0,4})?$/), { maxLength: 4 }),
  });
  fc.assert(fc.property(arb, (u) => {
    const url = `${u.scheme}://${u.www}${u.labels.join('.')}.test${u.port}${u.path || '/'}${u.query.length > 0 ? '?' + u.query.join('&') : ''}`;
    assert.equal(surtKey(url), getSurt(url), url);
  }), { numRuns: 500 });
  assert.equal(surtKey('dns:a.test'), 'dns:a.test');
});

/**
 * warcio reads gzip and plain files (not zstd). In a plain file it misplaces the record after a
 * `dns:` record (it parses the DNS block as an HTTP head and reports the next record at the DNS
 * record's offset), so plain files are compared with warcio without DNS records, and checked
 * with them by resolving every line.
 */
const VARIANTS = [
  { compression: 'gzip', dns: true, warcio: true },
  { compression: 'none', dns: false, warcio: true },
  { compression: 'none', dns: true, warcio: false },
  { compression: 'zstd', dns: true, warcio: false },
] as const;

for (const { compression, dns, warcio } of VARIANTS) {
  test(`CDXJ (${compression}${dns ? ', dns records' : ''}): one sorted index per WARC file, across rotations; lines resolve to their records${warcio ? '; = warcio' : ''}`, async () => {
    const dir = await tempDir(`cdxj-${compression}`);
    try {
      const w = await WarcWriter.open({ dir, compression, maxFileBytes: 64 * 1024 });
      const digests = await writeMany(w, 120, 3, dns);
      await w.close();
      const files = await warcFiles(dir);
      assert.ok(files.length >= 3, `rotated: ${files.length} files`);
      const names = await readdir(dir);
      assert.deepEqual(names.filter((f) => f.endsWith('.open') || f.includes('.tmp') || f.includes('.run')), [], 'no unfinished index files');
      let lines = 0;
      for (const f of files) {
        const text = await readFile(cdxjPathFor(f), 'utf8');
        const ours = text.split('\n').filter((l) => l !== '');
        assert.deepEqual(ours, [...ours].sort(), 'sorted');
        if (warcio) {
          const theirs = await warcioLines(f);
          // warcio reads a dns: response's block as if it were HTTP (no mime, an empty status);
          // pywb / Heritrix CDX give it the record's Content-Type, text/dns, and no status
          const strip = (l: string) => l.replace(/"mime":"text\/dns",/, '').replace(/"status":"",/, '');
          assert.deepEqual(ours.map(strip), theirs.map(strip), `${path.basename(f)}: our CDXJ = warcio's`);
          for (const l of ours.filter((x) => x.startsWith('dns:'))) assert.match(l, /"mime":"text\/dns"/);
        }
        for (const { json } of await readCdxj(cdxjPathFor(f))) {
          await resolveLine(dir, json, compression);
          if (!json.url!.startsWith('dns:')) assert.equal(`sha1:${json.digest}`, digests.get(json.url!));
        }
        lines += ours.length;
      }
      assert.equal(lines, 120 + (dns ? 24 : 0), 'a line per response, revisit and dns record');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
}

/**
 * A crash image: the files as they are while the writer is open (an `.open` index), then cut and
 * torn the way a SIGKILL can leave them — WARC bytes after the checkpoint lost while their index
 * lines were written, index lines lost while their records were written, a torn last line, no
 * index file at all; recoverWarc (what a resume runs before its first request) must leave an open
 * index whose lines are those of warcio's index of the recovered WARC file, and finishCdxj (what
 * the resumed crawl runs beside its work) that index, sorted.
 */
for (const compression of ['gzip', 'none'] as const) {
  for (const damage of ['torn-warc', 'lost-lines', 'torn-line', 'no-index'] as const) {
    test(`CDXJ recovery (${compression}, ${damage}): the index matches the WARC file recovery leaves`, async () => {
      const dir = await tempDir(`cdxj-rec-${compression}-${damage}`);
      const crash = path.join(dir, 'crash');
      try {
        const w = await WarcWriter.open({ dir: path.join(dir, 'live'), compression, bufferBytes: 8 * 1024 });
        await writeMany(w, 40, 5, compression === 'gzip');
        await w.sync();
        const ckpt = w.position();
        const openSize = (await stat(cdxjOpenPathFor(ckpt.file))).size;
        await writeMany(w, 30, 6, compression === 'gzip');
        // everything written so far on disk, WARC and index lines alike: the damage below makes them disagree
        await w.sync();
        await mkdir(crash);
        const warc = path.join(crash, path.basename(ckpt.file));
        await copyFile(ckpt.file, warc);
        await copyFile(cdxjOpenPathFor(ckpt.file), cdxjOpenPathFor(warc));
        await w.close();
        const size = (await stat(warc)).size;
        assert.ok(size > ckpt.offset, 'records after the checkpoint reached the file');
        // a cut in the middle of the records after the checkpoint: lines name records that are gone
        if (damage === 'torn-warc') await truncate(warc, ckpt.offset + Math.floor((size - ckpt.offset) / 2));
        // the lines after the checkpoint never reached the disk, their records did
        if (damage === 'lost-lines') await truncate(cdxjOpenPathFor(warc), openSize);
        if (damage === 'torn-line') await appendFile(cdxjOpenPathFor(warc), 'test,zz)/ 2026112620 {"url":"http://zz.te');
        if (damage === 'no-index') await rm(cdxjOpenPathFor(warc));
        // The resume's part: the WARC cut, its index repaired in place and left open; then the
        // part the resumed crawl does beside its work: the index sorted (finishCdxj).
        const rec = await recoverWarc(crash, { file: path.basename(ckpt.file), offset: ckpt.offset });
        assert.deepEqual(rec.map((r) => r.indexOpen), [true], 'the index is left open for the crawl to finish');
        const repaired = (await readFile(cdxjOpenPathFor(warc), 'utf8')).split('\n').filter((l) => l !== '').sort();
        await finishCdxj(warc);
        assert.deepEqual((await readdir(crash)).filter((f) => !/\.(warc(\.gz)?|cdxj)$/.test(f)), [], 'only WARC and finished index files');
        const ours = (await readFile(cdxjPathFor(warc), 'utf8')).split('\n').filter((l) => l !== '');
        const theirs = await warcioLines(warc);
        const strip = (l: string) => l.replace(/"mime":"text\/dns",/, '').replace(/"status":"",/, '');
        assert.deepEqual(ours.map(strip), theirs.map(strip));
        assert.ok(ours.length >= 40, `the checkpoint's records are indexed (${ours.length} lines)`);
        assert.deepEqual(ours, repaired, 'the finished index is the repaired open one, sorted');
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  }
}

test('sortLinesFile: runs spilled to disk and merged give the byte-order sort of the lines', async () => {
  const dir = await tempDir('cdxj-sort');
  try {
    await fc.assert(fc.asyncProperty(
      fc.array(fc.stringMatching(/^[ -~]{1,30}$/), { maxLength: 300 }), fc.integer({ min: 16, max: 2000 }),
      async (lines, runBytes) => {
        const src = path.join(dir, 'in');
        const dst = path.join(dir, 'out');
        await writeFile(src, lines.map((l) => l + '\n').join(''));
        await sortLinesFile(src, dst, runBytes);
        const got = (await readFile(dst, 'utf8')).split('\n').filter((l) => l !== '');
        const want = [...lines].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
        assert.deepEqual(got, want);
        assert.deepEqual((await readdir(dir)).sort(), ['in', 'out'], 'no run or temporary file left');
      },
    ), { numRuns: 60 });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('sortLinesFile: the index of a 1 GiB WARC (63 MB of lines) sorts in a 32 MiB old generation', { timeout: 120_000 }, async () => {
  // The archive thread sorts each finished WARC file's index; its runs are what that thread's heap
  // holds (cdxj-writer.ts). 32 MiB runs took 56 MiB of heap here and ran out of a 32 MiB one.
  const dir = await tempDir('cdxj-big');
  try {
    const src = path.join(dir, 'in.cdxj.open');
    const dst = path.join(dir, 'in.cdxj');
    const lines: string[] = [];
    let x = 12345;
    for (let i = 0; i < 220_000; i++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      const u = `www${x % 13}.example${x % 997}.com/path/${x.toString(36)}/page${i}.html`;
      lines.push(`com,example${x % 997},www${x % 13})/path/${x.toString(36)}/page${i}.html 20261130054400 {"url":"http://${u}","mime":"text/html","status":"200","digest":"sha1:ABCDEFGHIJKLMNOPQRSTUVWXYZ234567","length":"5123","offset":"${i * 5123}","filename":"drumcrawl-20261130054400-00001.warc.gz"}`);
    }
    await writeFile(src, lines.join('\n') + '\n');
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--max-old-space-size=32', path.join(import.meta.dirname, 'cdxj-sort-child.ts'), src, dst], { encoding: 'utf8' });
    assert.equal(child.status, 0, `the sort ran out of its heap or failed: ${child.stderr.slice(-400)}`);
    const got = (await readFile(dst, 'utf8')).split('\n').filter((l) => l !== '');
    assert.equal(got.length, lines.length);
    lines.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    assert.ok(got.every((l, i) => l === lines[i]), 'the lines in byte order');
    assert.deepEqual((await readdir(dir)).sort(), ['in.cdxj', 'in.cdxj.open'], 'no run or temporary file left');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
