/**
 * `.warc.zst` as the IIPC warc-zstd proposal defines it (src/store/zstd-dict.ts): the dictionary
 * frame at the start of each file, one frame per record, every frame with Frame_Content_Size,
 * Content_Checksum and the dictionary's ID; read back by the project's scanner, by warcio after
 * decompression, and by the `zstd` command-line tool (an independent decoder: Debian package
 * zstd, installed by .ci/run); CDXJ offsets; a dictionary trained mid-file-sequence.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Decompressor } from 'zstd-napi';
import zstdBinding from 'zstd-napi/binding.js';
import {
  WarcWriter, scanWarc, truncateTornWarc, encodeExchangeRecords, indexWarcRecords, readCdxj, cdxjPathFor, readWarcDictionary,
  buildDictionary, decompressWarcZst, dictionaryFrame, dictionaryId, newDictSlot, slotDictionary, trainDictionary, zstdFrameHeader, DICT_FRAME_MAGIC,
} from '../../src/store/index.js';
import { readWarc, sha1 } from './helpers.js';

const enc = new TextEncoder();
const tmp = () => mkdtempSync(path.join(tmpdir(), 'drumcrawl-zst-'));

/** HTML-like pages with shared boilerplate (what a dictionary is for), distinct per i. */
function exchange(i: number) {
  const body = enc.encode(`<!DOCTYPE html><html><head><meta charset="utf-8"><title>Page ${i} of the site</title>` +
    `<link rel="stylesheet" href="/static/site.css"></head><body><nav><a href="/">Home</a> <a href="/docs/">Documentation</a> ` +
    `<a href="/about/">About us</a></nav><main><h1>Section ${i % 17}</h1>${'<p>Paragraph text of the documentation page. '.repeat(1 + (i % 9))}` +
    `${i * 7919}</p></main><footer>Copyright the authors. <a href="/licence/">Licence</a></footer></body></html>`);
  return {
    url: `http://h${i % 5}.pld${i % 3}.test:8080/p/${i}?q=${i}`,
    ip: `127.0.${i % 5}.1`,
    date: new Date(Date.UTC(2026, 10, 25, 12, 0, i % 60)),
    requestHead: enc.encode(`GET /p/${i}?q=${i} HTTP/1.1\r\nHost: h${i % 5}.pld${i % 3}.test:8080\r\nUser-Agent: drumcrawl-test\r\n\r\n`),
    responseHead: enc.encode(`HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: ${body.length}\r\n\r\n`),
    body,
    outlinks: [`http://h${i % 5}.pld${i % 3}.test:8080/`, `http://h${i % 5}.pld${i % 3}.test:8080/docs/`],
  };
}

/** A dictionary trained on a few exchanges' records. */
function someDictionary(id?: number): Uint8Array {
  const parts: Uint8Array[] = [];
  for (let i = 1000; i < 1060; i++) {
    const g = encodeExchangeRecords(exchange(i), { compression: 'none' });
    parts.push(g.data);
  }
  return trainDictionary(Buffer.concat(parts), { dictBytes: 4096, id });
}

/** Every frame of the file, walked by its headers: [offset, magic, header] (skippable: header null). */
function frames(file: string): { off: number; magic: number; dictId: number; fcs: boolean; checksum: boolean }[] {
  const b = readFileSync(file);
  const out = [];
  for (let off = 0; off < b.length; ) {
    const magic = b.readUInt32LE(off);
    if ((magic & 0xfffffff0) >>> 0 === 0x184d2a50) {
      out.push({ off, magic, dictId: 0, fcs: false, checksum: false });
      off += 8 + b.readUInt32LE(off + 4);
      continue;
    }
    const h = zstdFrameHeader(b, off)!;
    out.push({ off, magic, dictId: h.dictId, fcs: h.contentSize, checksum: h.checksum });
    off += zstdBinding.findFrameCompressedSize(b.subarray(off));
  }
  return out;
}

/** Records through warcio after decompression: block and payload digests recomputed. */
async function checkDigests(file: string): Promise<number> {
  const recs = await readWarc(file);
  assert.equal(recs[0]!.type, 'warcinfo');
  for (const r of recs) {
    assert.equal(r.headers.get('warc-block-digest'), sha1(r.block), `block digest of a ${r.type} record`);
    if (r.type === 'response') assert.equal(r.headers.get('warc-payload-digest'), sha1(r.payload!));
  }
  return recs.length;
}

/** The dictionary of a file through the zstd tool: `zstd -d -D dict` (skips the dictionary frame itself). */
function zstdCli(file: string, dict: Uint8Array | null, dir: string): Buffer {
  const args = ['-d', '-c', '-q'];
  if (dict !== null) {
    const d = path.join(dir, 'dict.bin');
    writeFileSync(d, dict);
    args.push('-D', d);
  }
  return execFileSync('zstd', [...args, file], { maxBuffer: 1 << 28 });
}

for (const compressed of [true, false]) {
  test(`zstd with a dictionary (${compressed ? 'compressed' : 'plain'} dictionary frame): every file begins with it, every frame names it, reads back whole and by CDXJ offset`, async () => {
    const dir = tmp();
    try {
      const dict = someDictionary();
      const id = dictionaryId(dict);
      assert.ok(id >= 32768 && id <= 2147483647, `random id in the proposal's range: ${id}`);
      const w = await WarcWriter.open({ dir, compression: 'zstd', zstdLevel: 1, zstdDict: newDictSlot(dict.length, dict), zstdDictCompressed: compressed, maxFileBytes: 15_000 });
      for (let i = 0; i < 120; i++) await w.writeExchange(exchange(i));
      await w.close();
      const files = readdirSync(dir).filter((f) => f.endsWith('.warc.zst')).sort().map((f) => path.join(dir, f));
      assert.ok(files.length >= 3, `rotated: ${files.length} files`);
      let responses = 0;
      for (const f of files) {
        const b = readFileSync(f);
        assert.deepStrictEqual([...b.subarray(0, 4)], [0x5d, 0x2a, 0x4d, 0x18], 'the dictionary frame first');
        const user = b.subarray(8, 8 + b.readUInt32LE(4));
        assert.deepStrictEqual([...user.subarray(0, 4)], compressed ? [0x28, 0xb5, 0x2f, 0xfd] : [0x37, 0xa4, 0x30, 0xec]);
        assert.deepStrictEqual(new Uint8Array(await readWarcDictionary(f) ?? []), dict);
        const fr = frames(f);
        assert.equal(fr[0]!.magic, DICT_FRAME_MAGIC);
        for (const x of fr.slice(1)) {
          assert.equal(x.magic, 0xfd2fb528, 'only zstd frames after the dictionary frame');
          assert.deepStrictEqual([x.dictId, x.fcs, x.checksum], [id, true, true], `frame at ${x.off}`);
        }
        const scan = await scanWarc(f, { collect: true });
        assert.equal(scan.error, undefined);
        assert.equal(scan.validLength, statSync(f).size);
        // one frame per record
        assert.equal(scan.records, fr.length - 1);
        assert.deepStrictEqual(scan.list!.map((r) => r.offset), fr.slice(1).map((x) => x.off));
        assert.equal(await checkDigests(f), scan.records);
        // an independent decoder: the zstd tool with the dictionary, and without it refused
        const cli = zstdCli(f, dict, dir);
        assert.ok(cli.equals(decompressWarcZst(b)), 'the zstd tool decodes the same bytes');
        assert.match(cli.subarray(0, 40).toString('latin1'), /^WARC\/1\.1\r\nWARC-Type: warcinfo\r\n/);
        assert.throws(() => zstdCli(f, null, dir));
        // the CDXJ index: each line's offset and length read alone (with the file's dictionary)
        const lines = await readCdxj(cdxjPathFor(f));
        const d = new Decompressor();
        d.loadDictionary(dict);
        for (const l of lines) {
          const [off, len] = [Number(l.json.offset), Number(l.json.length)];
          const rec = Buffer.from(d.decompress(b.subarray(off, off + len)));
          assert.match(rec.toString('latin1', 0, 40), /^WARC\/1\.1\r\nWARC-Type: response\r\n/);
          assert.ok(rec.includes(`WARC-Target-URI: ${l.json.url}\r\n`));
          responses++;
        }
        // and recovery's re-indexing reads the file the same way
        assert.equal((await indexWarcRecords(f)).length, lines.length);
      }
      assert.equal(responses, 120);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('zstd training: files before the dictionary have none, then every file begins with the trained one; groups encoded before it was published are re-encoded', async () => {
  const dir = tmp();
  try {
    const slot = newDictSlot(64 * 1024);
    const w = await WarcWriter.open({ dir, compression: 'zstd', zstdDict: slot, zstdTrain: { sampleBytes: 60_000, dictBytes: 8192 }, maxFileBytes: 200_000 });
    // a "worker" encodes ahead with the options it got at start (the slot still empty)
    const early = encodeExchangeRecords({ ...exchange(9999), warcinfoId: undefined }, w.encodeOptions);
    assert.equal(zstdFrameHeader(early.data)!.dictId, 0);
    for (let i = 0; i < 150; i++) await w.writeExchange(exchange(i));
    const dict = slotDictionary(slot);
    assert.ok(dict !== null, 'trained and published');
    assert.equal(w.dictionaryId, dictionaryId(dict));
    // the early group arrives after the switch: re-encoded with the dictionary
    await w.appendEncoded(early, { url: exchange(9999).url, date: exchange(9999).date, kind: 'response', responseHead: exchange(9999).responseHead });
    // and a worker's group encoded after the publish carries the dictionary already
    const late = encodeExchangeRecords(exchange(10000), w.encodeOptions);
    assert.equal(zstdFrameHeader(late.data)!.dictId, dictionaryId(dict));
    await w.appendEncoded(late, { url: exchange(10000).url, date: exchange(10000).date, kind: 'response', responseHead: exchange(10000).responseHead });
    await w.close();
    const files = readdirSync(dir).filter((f) => f.endsWith('.warc.zst')).sort().map((f) => path.join(dir, f));
    assert.ok(files.length >= 2);
    assert.equal(await readWarcDictionary(files[0]!), null, 'the first file: no dictionary');
    assert.ok(frames(files[0]!).every((x) => x.dictId === 0 && x.magic === 0xfd2fb528));
    let records = 0;
    for (const f of files.slice(1)) {
      assert.deepStrictEqual(new Uint8Array(await readWarcDictionary(f) ?? []), dict);
      assert.ok(frames(f).slice(1).every((x) => x.dictId === dictionaryId(dict)));
    }
    for (const f of files) {
      const scan = await scanWarc(f);
      assert.equal(scan.error, undefined, f);
      assert.equal(scan.validLength, statSync(f).size);
      records += await checkDigests(f);
    }
    assert.equal(records, files.length + 3 * 152 - 0, 'warcinfo per file + response, request, metadata per exchange');
    const uris = new Set((await Promise.all(files.map((f) => readWarc(f)))).flat().filter((r) => r.type === 'response').map((r) => r.headers.get('warc-target-uri')));
    assert.ok(uris.has(exchange(9999).url) && uris.has(exchange(10000).url) && uris.has(exchange(0).url));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A dictionary file of 3 exchanges, returned with its bytes and the offsets of its frames. */
async function dictFile(dir: string, dict: Uint8Array) {
  const w = await WarcWriter.open({ dir, compression: 'zstd', zstdDict: newDictSlot(dict.length, dict), cdxj: false });
  for (let i = 0; i < 3; i++) await w.writeExchange(exchange(i));
  await w.close();
  const f = path.join(dir, readdirSync(dir).find((x) => x.endsWith('.warc.zst'))!);
  return { f, b: readFileSync(f), fr: frames(f) };
}

test('zstd scanner: what the proposal forbids is an error, at the frame where it is', async () => {
  const dir = tmp();
  try {
    const dict = someDictionary(40000);
    const { f, b, fr } = await dictFile(dir, dict);
    const put = (bytes: Uint8Array) => { writeFileSync(f, bytes); };
    const scanErr = async () => (await scanWarc(f)).error ?? '';
    assert.equal(await scanErr(), '');

    // the dictionary frame's magic changed: an extension frame at the start
    const m1 = Buffer.from(b);
    m1.writeUInt32LE(0x184d2a5e, 0);
    put(m1);
    assert.match(await scanErr(), /begins with an extension/);

    // a frame compressed with another dictionary (another ID) in the file
    const other = someDictionary(40001);
    const c = new zstdBinding.CCtx();
    c.setParameter(zstdBinding.CParameter.checksumFlag, 1);
    c.setParameter(zstdBinding.CParameter.contentSizeFlag, 1);
    c.loadDictionary(other);
    const rec = new Decompressor();
    rec.loadDictionary(dict);
    const third = fr[3]!;
    const plain = rec.decompress(b.subarray(third.off, fr[4]!.off));
    const dst = Buffer.alloc(zstdBinding.compressBound(plain.length));
    const foreign = dst.subarray(0, c.compress2(dst, plain));
    put(Buffer.concat([b.subarray(0, third.off), foreign, b.subarray(fr[4]!.off)]));
    const r2 = await scanWarc(f);
    assert.match(r2.error ?? '', /Dictionary_ID 40001 in a file whose dictionary is 40000/);
    assert.equal(r2.validLength, third.off, 'valid up to the frame');

    // a frame without Content_Checksum, one without Frame_Content_Size
    for (const [param, msg] of [[zstdBinding.CParameter.checksumFlag, /without Content_Checksum/], [zstdBinding.CParameter.contentSizeFlag, /without Frame_Content_Size/]] as const) {
      const c2 = new zstdBinding.CCtx();
      c2.setParameter(zstdBinding.CParameter.checksumFlag, 1);
      c2.setParameter(zstdBinding.CParameter.contentSizeFlag, 1);
      c2.setParameter(param, 0);
      c2.loadDictionary(dict);
      // streaming with no pledged size: no content size when asked not to
      const out = Buffer.alloc(zstdBinding.compressBound(plain.length) + 64);
      const [, n] = c2.compressStream2(out, plain, zstdBinding.EndDirective.end);
      put(Buffer.concat([b.subarray(0, third.off), out.subarray(0, n), b.subarray(fr[4]!.off)]));
      assert.match(await scanErr(), msg);
    }

    // a frame naming a dictionary in a file without a dictionary frame
    put(Buffer.concat([b.subarray(fr[1]!.off)]));
    assert.match(await scanErr(), /names dictionary 40000, and the file has no dictionary frame/);

    // a dictionary frame later in the file
    put(Buffer.concat([b, b.subarray(0, fr[1]!.off)]));
    assert.match(await scanErr(), /dictionary frame after the start/);

    // a corrupted dictionary (its magic) and a torn dictionary frame
    const m3 = Buffer.from(b);
    const frameLen = b.readUInt32LE(4);
    const d0 = Buffer.from(dictionaryFrame(dict, false));
    d0.writeUInt32LE(0x12345678, 8);
    put(Buffer.concat([d0, b.subarray(8 + frameLen)]));
    assert.match(await scanErr(), /neither a dictionary nor a zstd frame/);
    put(m3.subarray(0, 8 + (frameLen >> 1)));
    const torn = await scanWarc(f);
    assert.match(torn.error ?? '', /torn dictionary frame/);
    assert.equal(torn.validLength, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('zstd with a dictionary: a torn tail is cut at the last whole record, and a scan from a record boundary reads the dictionary first', async () => {
  const dir = tmp();
  try {
    const dict = someDictionary();
    const { f, b, fr } = await dictFile(dir, dict);
    const all = await scanWarc(f, { collect: true });
    assert.equal(all.records, fr.length - 1);
    // from the second exchange's response record on
    const from = fr[4]!.off;
    const tail = await scanWarc(f, { fromOffset: from, collect: true });
    assert.equal(tail.error, undefined);
    assert.deepStrictEqual(tail.list!.map((r) => r.offset), fr.slice(4).map((x) => x.off));
    // torn inside the last frame: cut to the frame before it
    const last = fr.at(-1)!.off;
    writeFileSync(f, b.subarray(0, last + 9));
    assert.equal(await truncateTornWarc(f), last);
    assert.equal(statSync(f).size, last);
    assert.equal((await scanWarc(f)).validLength, last);
    // a frame with one byte of its Content_Checksum flipped: the checksum catches it. (A flip at
    // a fixed offset inside the compressed block can land on bits the decoder ignores, such as
    // an FSE table's padding, and then changes nothing decoded: the frame's place in the file
    // moves with the WARC-Date and the dictionary's ID, so such an offset fails one run in many.)
    const flipped = Buffer.from(b);
    flipped[fr[3]!.off - 1]! ^= 0x40; // the last byte of frame 2 is its checksum's
    writeFileSync(f, flipped);
    const r = await scanWarc(f);
    assert.ok(r.error !== undefined && r.validLength <= fr[2]!.off, `${r.error} at ${r.validLength}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('buildDictionary: an RFC 8878 §5 dictionary libzstd loads for compression and decompression, with its ID', () => {
  const content = enc.encode('<!DOCTYPE html><html><head><meta charset="utf-8">'.repeat(20));
  const d = buildDictionary(content, 123456);
  assert.equal(dictionaryId(d), 123456);
  assert.equal(new zstdBinding.CDict(d, 3).getDictID(), 123456);
  assert.equal(new zstdBinding.DDict(d).getDictID(), 123456);
  const c = new zstdBinding.CCtx();
  c.setParameter(zstdBinding.CParameter.checksumFlag, 1);
  c.loadDictionary(d);
  const src = enc.encode('<!DOCTYPE html><html><head><meta charset="utf-8"><title>x</title>');
  const dst = Buffer.alloc(256);
  const n = c.compress2(dst, src);
  assert.equal(zstdBinding.getDictIDFromFrame(dst.subarray(0, n)), 123456);
  const dc = new zstdBinding.DCtx();
  dc.loadDictionary(d);
  const out = Buffer.alloc(src.length);
  assert.equal(dc.decompress(out, dst.subarray(0, n)), src.length);
  assert.deepStrictEqual(new Uint8Array(out), src);
});

test('--warc-zstd-dictionary: a file that is not a dictionary is refused (CRAWL_CONFIG_INVALID); a zstd --train style file is taken; a resume takes its checkpoint file\'s dictionary', async () => {
  const { zstdArchiveOptions } = await import('../../src/threads/archive/archive-zstd.js');
  const dir = tmp();
  try {
    const base = { warcCompression: 'zstd', warcZstdLevel: 1, outDir: dir };
    writeFileSync(path.join(dir, 'junk'), 'not a dictionary at all');
    await assert.rejects(zstdArchiveOptions({ ...base, warcZstdDictionary: path.join(dir, 'junk') }, null), (e: Error & { code?: string }) => e.code === 'CRAWL_CONFIG_INVALID' && /not a zstd dictionary/.test(e.message));
    await assert.rejects(zstdArchiveOptions({ ...base, warcZstdDictionary: path.join(dir, 'missing') }, null), (e: Error & { code?: string }) => e.code === 'CRAWL_CONFIG_INVALID');
    const dict = someDictionary(77777);
    writeFileSync(path.join(dir, 'html.dict'), dict);
    const given = await zstdArchiveOptions({ ...base, warcZstdDictionary: path.join(dir, 'html.dict') }, null);
    assert.deepStrictEqual(slotDictionary(given.zstdDict!), dict);
    assert.equal(given.zstdTrain, undefined);
    assert.deepStrictEqual(await zstdArchiveOptions({ ...base, warcCompression: 'gzip', warcZstdDictionary: 'train' }, null), {});
    assert.equal((await zstdArchiveOptions({ ...base, warcZstdDictionary: 'off' }, null)).zstdDict, undefined);
    const fresh = await zstdArchiveOptions({ ...base, warcZstdDictionary: 'train' }, null);
    assert.equal(slotDictionary(fresh.zstdDict!), null);
    assert.ok(fresh.zstdTrain);
    // resume: the checkpoint names a file with a dictionary frame
    const { f } = await dictFile(path.join(dir, 'w'), dict);
    const resumed = await zstdArchiveOptions({ ...base, outDir: path.dirname(f), warcZstdDictionary: 'train' }, { file: path.basename(f) });
    assert.deepStrictEqual(slotDictionary(resumed.zstdDict!), dict);
    assert.equal(resumed.zstdTrain, undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
