import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import {
  WarcWriter, scanWarc, truncateTornWarc, encodeExchangeRecords, compressRecord, neutralizeTransferEncoding, REVISIT_PROFILE, type WarcCompression, type WriteResult,
} from '../../src/store/index.js';
import { readWarc, sha1 } from './helpers.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const conformance = path.resolve(here, '../fixtures/conformance/warc');
const enc = new TextEncoder();
const tmp = () => mkdtempSync(path.join(tmpdir(), 'drumcrawl-warc-'));

function exchange(i: number, opts: { chunked?: boolean; size?: number } = {}) {
  const body = new Uint8Array(opts.size ?? 200 + ((i * 7919) % 3000));
  for (let k = 0; k < body.length; k++) body[k] = (k * 31 + i) & 0xff;
  const te = opts.chunked ? 'Transfer-Encoding: chunked\r\n' : `Content-Length: ${body.length}\r\n`;
  return {
    url: `http://h${i % 5}.pld${i % 3}.test:8080/p/${i}?q=${i}`,
    ip: `127.0.${i % 5}.1`,
    date: new Date(Date.UTC(2026, 10, 25, 12, 0, i % 60)),
    requestHead: enc.encode(`GET /p/${i}?q=${i} HTTP/1.1\r\nHost: h${i % 5}.pld${i % 3}.test:8080\r\nUser-Agent: drumcrawl-test\r\n\r\n`),
    responseHead: enc.encode(`HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n${te}\r\n`),
    body,
  };
}

/** Checks every record of every file: parses with warcio, digests recomputed and equal, links. */
async function verifyFiles(files: string[], compression: WarcCompression, requireWarcinfoId = true) {
  const all = [];
  for (const f of files) {
    const recs = await readWarc(f);
    assert.ok(recs.length > 0, f);
    assert.equal(recs[0]!.type, 'warcinfo', `${f} starts with warcinfo`);
    assert.equal(recs[0]!.headers.get('warc-filename'), path.basename(f));
    const ids = new Map(recs.map((r) => [r.headers.get('warc-record-id')!, r]));
    for (const r of recs) {
      assert.equal(r.headers.get('content-length'), String(r.block.length));
      assert.match(r.headers.get('warc-record-id')!, /^<urn:uuid:[0-9a-f-]{36}>$/);
      assert.match(r.headers.get('warc-date')!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.equal(r.headers.get('warc-block-digest'), sha1(r.block), `block digest of ${r.type}`);
      if (r.type === 'response') {
        assert.equal(r.headers.get('content-type'), 'application/http;msgtype=response');
        assert.equal(r.headers.get('warc-payload-digest'), sha1(r.payload!), 'payload digest');
      }
      if (r.type === 'request' || r.type === 'metadata') {
        const to = ids.get(r.headers.get('warc-concurrent-to')!);
        assert.ok(to !== undefined && (to.type === 'response' || to.type === 'revisit'), `${r.type} is concurrent to a response`);
        assert.equal(to.headers.get('warc-target-uri'), r.headers.get('warc-target-uri'));
      }
      if (r.type !== 'warcinfo' && (requireWarcinfoId || r.headers.has('warc-warcinfo-id'))) {
        assert.equal(r.headers.get('warc-warcinfo-id'), recs[0]!.headers.get('warc-record-id'));
      }
    }
    const scan = await scanWarc(f, { collect: true });
    assert.equal(scan.format, compression);
    assert.equal(scan.validLength, statSync(f).size);
    assert.equal(scan.records, recs.length);
    if (compression !== 'zstd') {
      // warcio's offsets/lengths (what a CDX index holds) agree with our scanner's; for uncompressed
      // files warcio's length leaves out the 4-byte CRLF CRLF trailer, ours spans to the next record
      const trailer = compression === 'none' ? 4 : 0;
      assert.deepStrictEqual(scan.list!.map((x) => [x.offset, x.length - trailer]), recs.map((r) => [r.offset, r.length]));
    }
    all.push(...recs.map((r) => ({ ...r, file: f })));
  }
  return all;
}

for (const compression of ['gzip', 'zstd', 'none'] as const) {
  test(`WARC ${compression}: exchanges, truncation, chunked heads, outlinks and revisits read back with warcio`, async () => {
    const dir = tmp();
    try {
      const w = await WarcWriter.open({ dir, compression, info: { operator: 'test', isPartOf: 'unit' } });
      const results: WriteResult[] = [];
      for (let i = 0; i < 30; i++) {
        const x = exchange(i, { chunked: i % 4 === 1 });
        results.push(await w.writeExchange({ ...x, truncated: i === 3, outlinks: i % 2 === 0 ? [`http://a.test/${i}`, `http://b.test/x?y=${i}`] : undefined }));
      }
      const first = exchange(0);
      const rv = await w.writeRevisit({ ...exchange(0), date: new Date(Date.UTC(2026, 10, 26)), payloadDigest: results[0]!.payloadDigest,
        refersToUri: first.url, refersToDate: first.date, refersToRecordId: results[0]!.recordId });
      await w.close();
      const files = readdirSync(dir).filter((f) => /\.warc(\.gz|\.zst)?$/.test(f)).map((f) => path.join(dir, f));
      assert.equal(files.length, 1);
      assert.match(path.basename(files[0]!), new RegExp(`^drumcrawl-\\d{17}-00001\\.warc${compression === 'gzip' ? '\\.gz' : compression === 'zstd' ? '\\.zst' : ''}$`));
      const recs = await verifyFiles(files, compression);
      assert.deepStrictEqual(recs.slice(0, 5).map((r) => r.type), ['warcinfo', 'response', 'request', 'metadata', 'response']);
      assert.equal(recs.filter((r) => r.type === 'response').length, 30);
      // each WriteResult points at its response record
      const byId = new Map(recs.map((r) => [r.headers.get('warc-record-id'), r]));
      for (const [i, res] of results.entries()) {
        const r = byId.get(res.recordId)!;
        assert.equal(r.type, 'response');
        assert.equal(r.headers.get('warc-target-uri'), exchange(i).url);
        assert.deepStrictEqual(r.payload, exchange(i).body);
        assert.equal(res.payloadDigest, sha1(exchange(i).body));
        if (compression === 'gzip') assert.deepStrictEqual([r.offset, r.length], [res.offset, res.length]);
        if (compression === 'none') assert.deepStrictEqual([r.offset, r.length + 4], [res.offset, res.length]);
        // the record is readable from (offset, length) alone
        const slice = readFileSync(res.file).subarray(res.offset, res.offset + res.length);
        const plain = compression === 'gzip' ? gunzipSync(slice) : compression === 'zstd' ? (await import('zstd-napi')).decompress(slice) : slice;
        assert.ok(Buffer.from(plain).toString('latin1').startsWith('WARC/1.1\r\nWARC-Type: response\r\n'));
      }
      assert.equal(byId.get(results[3]!.recordId)!.headers.get('warc-truncated'), 'length');
      // transfer-encoding renamed so readers do not de-chunk the stored (de-chunked) body again
      const chunked = byId.get(results[1]!.recordId)!;
      assert.match(Buffer.from(chunked.block).toString('latin1'), /\r\nX-Crawler-Transfer-Encoding: chunked\r\n/);
      const meta = recs.find((r) => r.type === 'metadata')!;
      assert.equal(Buffer.from(meta.block).toString(), 'outlink: http://a.test/0\r\noutlink: http://b.test/x?y=0\r\n');
      const revisit = byId.get(rv.recordId)!;
      assert.equal(revisit.type, 'revisit');
      assert.equal(revisit.headers.get('warc-profile'), REVISIT_PROFILE);
      assert.equal(revisit.headers.get('warc-refers-to-target-uri'), first.url);
      assert.equal(revisit.headers.get('warc-refers-to-date'), '2026-11-25T12:00:00Z');
      assert.equal(revisit.headers.get('warc-refers-to'), results[0]!.recordId);
      assert.equal(revisit.headers.get('warc-payload-digest'), results[0]!.payloadDigest);
      assert.deepStrictEqual(revisit.payload, new Uint8Array(0));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('rotation by size: every file starts with warcinfo, none exceeds maxFileBytes unless one group is bigger', async () => {
  const dir = tmp();
  try {
    const max = 20_000;
    const w = await WarcWriter.open({ dir, maxFileBytes: max, compression: 'none', prefix: 'rot', bufferBytes: 4096 });
    for (let i = 0; i < 40; i++) await w.writeExchange(exchange(i, { size: i === 20 ? 50_000 : 1500 }));
    const mid = w.position();
    await w.sync();
    assert.equal(statSync(mid.file).size, mid.offset);
    await w.close();
    const files = readdirSync(dir).filter((f) => /\.warc(\.gz|\.zst)?$/.test(f)).sort().map((f) => path.join(dir, f));
    assert.ok(files.length >= 4, `${files.length} files`);
    files.forEach((f, k) => assert.match(path.basename(f), new RegExp(`^rot-\\d{17}-${String(k + 1).padStart(5, '0')}\\.warc$`)));
    const big = files.filter((f) => statSync(f).size > max);
    assert.equal(big.length, 1, 'only the file holding the 50 kB group is over the limit');
    const recs = await verifyFiles(files, 'none');
    assert.equal(recs.filter((r) => r.type === 'response').length, 40);
    assert.equal(recs.filter((r) => r.type === 'warcinfo').length, files.length);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('encodeExchangeRecords is pure and its group can be appended by the writer (worker path)', async () => {
  const dir = tmp();
  try {
    const w = await WarcWriter.open({ dir, compression: 'gzip' });
    const g = encodeExchangeRecords({ ...exchange(1), outlinks: ['http://x.test/'] }, w.encodeOptions);
    assert.deepStrictEqual(g.records.map((r) => r.type), ['response', 'request', 'metadata']);
    assert.equal(g.records.reduce((s, r) => s + r.length, 0), g.data.length);
    const res = await w.appendEncoded(g);
    await w.close();
    const recs = await verifyFiles([res.file], 'gzip', false);
    assert.equal(recs[1]!.headers.get('warc-record-id'), g.recordId);
    assert.equal(recs[1]!.offset, res.offset);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('scanWarc on the conformance samples: offsets/lengths equal warcio index; broken files stop early', async () => {
  const exp = JSON.parse(readFileSync(path.join(conformance, 'expected.json'), 'utf8')) as { python_index: { test: string; expected_ndjson: string[] }[] };
  const lines = exp.python_index.find((x) => x.test === 'test_index')!.expected_ndjson.map((l) => JSON.parse(l) as Record<string, string>);
  // the NDJSON covers example.warc.gz then example.warc (then ARC files): split where offset restarts at 0
  const files: Record<string, string>[][] = [];
  for (const l of lines) { if (l.offset === '0') files.push([]); files.at(-1)!.push(l); }
  for (const [k, name] of ['warcio-python/example.warc.gz', 'warcio-python/example.warc'].entries()) {
    const r = await scanWarc(path.join(conformance, name), { collect: true });
    assert.equal(r.validLength, r.fileLength, name);
    // python warcio's length excludes the CRLF CRLF trailer of uncompressed records
    const trailer = name.endsWith('.gz') ? 0 : 4;
    assert.deepStrictEqual(r.list!.map((x) => [String(x.offset), String(x.length - trailer), x.type]), files[k]!.map((l) => [l.offset, l.length, l['warc-type']]), name);
  }
  for (const name of ['warcio-python/example-iana.org-chunked.warc', 'warcio-python/post-test.warc.gz', 'warcio-js/example.warc',
    'warcio-python/example-digest.warc', 'warcio-js/redirect.warc', 'warcio-python/example-wget-bad-target-uri.warc.gz']) {
    const r = await scanWarc(path.join(conformance, name));
    assert.equal(r.error, undefined, name);
    assert.equal(r.validLength, r.fileLength, name);
  }
  for (const name of ['warcio-python/example-trunc.warc', 'warcio-js/example-bad-length.warc']) {
    const r = await scanWarc(path.join(conformance, name), { collect: true });
    assert.ok(r.validLength < r.fileLength && r.error !== undefined, name);
    assert.equal(r.validLength, r.list!.at(-1)!.offset + r.list!.at(-1)!.length);
  }
  const arc = await scanWarc(path.join(conformance, 'warcio-python/example.arc'));
  assert.equal(arc.validLength, 0);
});

test('truncateTornWarc cuts the broken conformance files to their valid prefix, and then warcio reads them', async () => {
  const dir = tmp();
  try {
    const f = path.join(dir, 'trunc.warc');
    copyFileSync(path.join(conformance, 'warcio-python/example-trunc.warc'), f);
    const n = await truncateTornWarc(f);
    assert.equal(statSync(f).size, n);
    assert.ok(n > 0 && n < 3370);
    const recs = await readWarc(f);
    assert.equal(recs.length, (await scanWarc(f)).records);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

for (const compression of ['gzip', 'zstd', 'none'] as const) {
  test(`property (${compression}): a file torn at any offset is cut back to the last complete record`, async () => {
    const dir = tmp();
    try {
      const w = await WarcWriter.open({ dir, compression });
      const ends: number[] = [];
      for (let i = 0; i < 8; i++) ends.push((await w.writeExchange({ ...exchange(i, { size: 300 + i * 100 }), outlinks: ['http://o.test/'] })).offset);
      await w.close();
      const file = w.position().file;
      const whole = readFileSync(file);
      const boundaries = (await scanWarc(file, { collect: true })).list!.map((r) => r.offset + r.length);
      assert.equal(boundaries.at(-1), whole.length);
      const torn = path.join(dir, 'torn' + path.extname(file));
      await fc.assert(fc.asyncProperty(fc.integer({ min: 0, max: whole.length }), fc.boolean(), async (cut, garble) => {
        const b = Buffer.from(whole.subarray(0, cut));
        if (garble && cut > 0) b[cut - 1] ^= 0x55; // a torn write may leave garbage, not just a short file
        writeFileSync(torn, b);
        const n = await truncateTornWarc(torn);
        const expected = [0, ...boundaries].filter((x) => x === 0 || x <= (garble ? cut - 1 : cut)).at(-1)!;
        assert.equal(n, expected, `cut ${cut} garble ${garble}`);
        assert.equal(statSync(torn).size, n);
        if (n > 0) assert.equal((await readWarc(torn)).length, boundaries.filter((x) => x <= n).length);
      }), { numRuns: 60 });
      // with a checkpointed offset, the file is cut exactly there
      writeFileSync(torn, whole);
      assert.equal(await truncateTornWarc(torn, ends[4]), ends[4]);
      assert.equal(statSync(torn).size, ends[4]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('bad writer options are rejected with CRAWL_STORE_BAD_OPTION', async () => {
  const dir = tmp();
  try {
    await assert.rejects(WarcWriter.open({ dir, maxFileBytes: 0 }), { code: 'CRAWL_STORE_BAD_OPTION' });
    await assert.rejects(WarcWriter.open({ dir, gzipLevel: 12 }), { code: 'CRAWL_STORE_BAD_OPTION' });
    await assert.rejects(WarcWriter.open({ dir, compression: 'brotli' as WarcCompression }), { code: 'CRAWL_STORE_BAD_OPTION' });
    const w = await WarcWriter.open({ dir });
    await w.close();
    await assert.rejects(w.writeExchange(exchange(1)), { code: 'CRAWL_STORE_CLOSED' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('gzip records (one reused deflate context per level): each member inflates alone to its record, any size and level, and equals what gzipSync would decode to', () => {
  fc.assert(
    fc.property(
      fc.array(fc.oneof(fc.uint8Array({ maxLength: 3000 }), fc.string({ maxLength: 4000 }).map((s) => enc.encode(s.repeat(3))),
        fc.integer({ min: 60_000, max: 300_000 }).map((n) => { const b = new Uint8Array(n); for (let k = 0; k < n; k++) b[k] = (k * 2654435761) >>> 27; return b; })),
      { minLength: 1, maxLength: 6 }),
      fc.integer({ min: 0, max: 9 }),
      (records, level) => {
        // One after another through the same context: no member may refer to a previous record.
        const members = records.map((r) => compressRecord(r, { compression: 'gzip', gzipLevel: level }));
        for (let i = 0; i < records.length; i++) {
          const m = members[i]!;
          assert.deepEqual([m[0], m[1], m[2]], [0x1f, 0x8b, 8]);
          assert.deepEqual(new Uint8Array(gunzipSync(m)), records[i]);
        }
        // A member read from its offset inside the concatenation (what WARC readers do).
        const all = Buffer.concat(members);
        const last = members.length - 1;
        const off = members.slice(0, last).reduce((a, m) => a + m.length, 0);
        assert.deepEqual(new Uint8Array(gunzipSync(all.subarray(off))), records[last]);
      },
    ),
    { numRuns: 40 },
  );
});

test('encodeExchangeRecords gzip (records streamed through the deflate context piece by piece): each member inflates alone to a whole record whose block, Content-Length and digests hold, bodies 0 B to 300 KB', () => {
  fc.assert(
    fc.property(
      fc.oneof(fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 60_000, max: 300_000 })),
      fc.boolean(),
      fc.integer({ min: 0, max: 9 }),
      (size, random, level) => {
        const x = exchange(size, { size });
        // incompressible bodies make the deflate output outgrow its buffer in the middle of a piece
        if (random) for (let k = 0; k < x.body.length; k++) x.body[k] = (Math.imul(k + 1, 2654435761) >>> 13) & 0xff;
        const outlinks = size % 3 === 0 ? [] : [`http://a.test/${size}`, 'http://b.test/'];
        const g = encodeExchangeRecords({ ...x, outlinks }, { compression: 'gzip', gzipLevel: level });
        assert.deepEqual(g.records.map((r) => r.type), outlinks.length > 0 ? ['response', 'request', 'metadata'] : ['response', 'request']);
        let end = 0;
        for (const r of g.records) {
          assert.equal(r.offset, end);
          end = r.offset + r.length;
          const rec = Buffer.from(gunzipSync(g.data.subarray(r.offset, end)));
          const h = rec.indexOf('\r\n\r\n');
          const head = rec.subarray(0, h).toString('latin1');
          const block = rec.subarray(h + 4, rec.length - 4);
          assert.equal(rec.subarray(rec.length - 4).toString('latin1'), '\r\n\r\n');
          assert.match(head, new RegExp(`^WARC/1\\.1\\r\\nWARC-Type: ${r.type}\\r\\n`));
          assert.equal(Number(/\r\nContent-Length: (\d+)/.exec(head)![1]), block.length);
          assert.equal(/\r\nWARC-Block-Digest: (\S+)/.exec(head)![1], sha1(block));
          if (r.type === 'response') {
            assert.deepEqual(new Uint8Array(block), new Uint8Array(Buffer.concat([x.responseHead, x.body])));
            assert.equal(/\r\nWARC-Payload-Digest: (\S+)/.exec(head)![1], sha1(x.body));
          }
          if (r.type === 'metadata') assert.equal(block.toString(), outlinks.map((u) => `outlink: ${u}\r\n`).join(''));
        }
        assert.equal(end, g.data.length);
      },
    ),
    { numRuns: 30 },
  );
});

test('neutralizeTransferEncoding: the byte pre-check agrees with the multiline regex (lines after LF or CR, any case), on listed and random heads', () => {
  const ref = (s: string): string => (/^transfer-encoding:/im.test(s) ? s.replace(/^transfer-encoding:/gim, 'X-Crawler-Transfer-Encoding:') : s);
  const check = (s: string): void => {
    const got = Buffer.from(neutralizeTransferEncoding(Buffer.from(s, 'latin1'))).toString('latin1');
    assert.equal(got, ref(s), JSON.stringify(s));
  };
  for (const s of ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n', 'HTTP/1.1 200 OK\rTRANSFER-ENCODING: x\r\n\r\n', 'Transfer-Encoding: a',
    'HTTP/1.1 200 OK\r\nX-Transfer-Encoding: chunked\r\n\r\n', 'HTTP/1.1 200 OK\r\nTransfer-Encodin', '', 'HTTP/1.1 200 OK\r\ntransfer-encoding :x\r\n']) check(s);
  const piece = fc.constantFrom('\r\n', '\r', '\n', 'Transfer-Encoding:', 'transfer-encoding:', 'tRaNsFeR-eNcOdInG:', 'Transfer-Encoding', 'X', ' chunked', ': ', 'HTTP/1.1 200 OK');
  fc.assert(fc.property(fc.array(piece, { maxLength: 12 }), (parts) => check(parts.join(''))), { numRuns: 500 });
});
