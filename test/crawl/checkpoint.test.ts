import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, writeFile, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import {
  writeManifest, readManifest, writePending, readPending, encodePending, decodePending, emptyCounters,
  writeFileAtomic, encodeDoneRecords, decodeDoneRecords, readDoneLog, DoneLog, DONE_FILE, type CheckpointManifest,
} from '../../src/state/checkpoint.js';
import { resolveCrawlConfig } from '../../src/config/config.js';
import { encodeLinks, LinkTable } from '../../src/threads/links-codec.js';

test('manifest round-trips and the write leaves no temp file behind', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dc-ckpt-'));
  assert.equal(await readManifest(dir), null);
  const m: CheckpointManifest = {
    version: 1, epoch: 3, writtenAt: new Date().toISOString(), reason: 'periodic', finished: false,
    config: resolveCrawlConfig({ stateDir: dir }), counters: { ...emptyCounters(), pages: 7, outcomes: { ok: 7 } },
    warc: { file: 'a.warc.gz', offset: 123 }, seedsInjected: true, scopeHosts: ['a.test'], scopePlds: ['a.test'], pending: 0,
  };
  await writeManifest(dir, m);
  const { checksum, ...read } = (await readManifest(dir))!;
  assert.match(checksum ?? '', /^[0-9a-f]{8}$/, 'the manifest is sealed with its CRC-32');
  assert.deepEqual(read, JSON.parse(JSON.stringify(m)));
  assert.deepEqual(await readdir(dir), ['manifest.json']);
  await writeFile(path.join(dir, 'manifest.json'), '{"version": 99}');
  await assert.rejects(readManifest(dir), /version 99 is not supported/);
  await writeFile(path.join(dir, 'manifest.json'), '{');
  await assert.rejects(readManifest(dir), (e: { code?: string }) => e.code === 'CRAWL_CHECKPOINT_CORRUPT');
  await writeFileAtomic(path.join(dir, 'x'), 'hello');
  assert.equal(await readFile(path.join(dir, 'x'), 'utf8'), 'hello');
});

test('pending set round-trips (property) and a truncated file is rejected', async () => {
  fc.assert(fc.property(fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 50 }), (recs) => {
    const back = decodePending(encodePending(recs));
    assert.deepEqual(back.map((b) => [...b]), recs.map((b) => [...b]));
  }));
  const enc = encodePending([new Uint8Array([1, 2, 3])]);
  assert.throws(() => decodePending(enc.subarray(0, enc.length - 1)), { code: 'CRAWL_CHECKPOINT_CORRUPT' });
  // every cut and every flipped bit is refused naming the file (the CRC-32 trailer, src/disk/sealed.ts)
  // (except the cut of exactly the trailer: that is a whole file of the format before it, every
  // record there, read below)
  for (let at = 0; at < enc.length; at++) {
    if (at !== enc.length - 8) assert.throws(() => decodePending(enc.subarray(0, at), 'x/pending.bin'), (e: Error & { code?: string }) => e.code === 'CRAWL_CHECKPOINT_CORRUPT' && e.message.startsWith('x/pending.bin is damaged'), `cut at ${at}`);
    for (let bit = 0; bit < 8; bit++) {
      const b = enc.slice();
      b[at] = b[at]! ^ (1 << bit);
      assert.throws(() => decodePending(b, 'x/pending.bin'), { code: 'CRAWL_CHECKPOINT_CORRUPT' }, `bit ${bit} of byte ${at}`);
    }
  }
  // a pending.bin written before the trailer existed (records using up the file) is read
  assert.deepEqual(decodePending(enc.subarray(0, enc.length - 8)), [new Uint8Array([1, 2, 3])]);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dc-pend-'));
  assert.deepEqual(await readPending(dir), []);
  await writePending(dir, [new Uint8Array([9]), new Uint8Array([])]);
  assert.deepEqual((await readPending(dir)).map((b) => [...b]), [[9], []]);
});

test('link table codec round-trips (property)', () => {
  const u32 = fc.nat({ max: 0xffffffff });
  const entry = fc.record({ hi: u32, lo: u32, hostHi: u32, hostLo: u32, pldHi: u32, pldLo: u32, url: fc.webUrl() });
  fc.assert(fc.property(fc.array(entry, { maxLength: 40 }), (links) => {
    const t = new LinkTable(encodeLinks(links));
    assert.equal(t.count, links.length);
    links.forEach((l, i) => {
      assert.equal(t.hi(i), l.hi);
      assert.equal(t.lo(i), l.lo);
      assert.deepEqual(t.entry(i), { ...l });
    });
  }));
});

test('done.log: records round-trip (property); parsing stops at a torn or corrupt record', () => {
  fc.assert(fc.property(fc.array(fc.uint8Array({ maxLength: 80 }), { maxLength: 40 }), fc.nat(), (recs, cut) => {
    const enc = encodeDoneRecords(recs);
    assert.deepEqual(decodeDoneRecords(enc).map((b) => [...b]), recs.map((b) => [...b]));
    // Any prefix decodes to a prefix of the records (a torn append loses only the torn record).
    const pre = decodeDoneRecords(enc.subarray(0, enc.length === 0 ? 0 : cut % (enc.length + 1)));
    assert.deepEqual(pre.map((b) => [...b]), recs.slice(0, pre.length).map((b) => [...b]));
  }));
  const enc = encodeDoneRecords([new Uint8Array([1, 2]), new Uint8Array([3, 4, 5]), new Uint8Array([6])]);
  const bad = enc.slice();
  bad[10 + 8 + 1] ^= 0xff; // a byte of the second record's payload: its CRC fails
  assert.deepEqual(decodeDoneRecords(bad).map((b) => [...b]), [[1, 2]]);
  assert.deepEqual(decodeDoneRecords(new Uint8Array(64)).map((b) => [...b]), Array(8).fill([]), 'zero-length records are valid');
});

test('done.log: open cuts a torn tail and appends after it; mark/rewrite keeps what was appended since the mark', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dc-done-'));
  assert.deepEqual(await readDoneLog(dir), []);
  const a = new Uint8Array([1]), b = new Uint8Array([2, 2]), c = new Uint8Array([3, 3, 3]), d = new Uint8Array([4]);
  const log = await DoneLog.open(dir);
  log.append([a, b]);
  log.close();
  // A torn append (a SIGKILL or power cut mid-write): half a record at the end.
  const file = path.join(dir, DONE_FILE);
  const whole = await readFile(file);
  await writeFile(file, Buffer.concat([whole, Buffer.from(encodeDoneRecords([c]).subarray(0, 6))]));
  const log2 = await DoneLog.open(dir);
  assert.deepEqual((await readDoneLog(dir)).map((x) => [...x]), [[1], [2, 2]], 'the torn record is cut at open');
  log2.append([c]);
  assert.deepEqual((await readDoneLog(dir)).map((x) => [...x]), [[1], [2, 2], [3, 3, 3]]);
  // Checkpoint: mark, (frontier commit), an append during it, rewrite with the carried entries.
  log2.mark();
  log2.append([d]);
  log2.rewrite([b]);
  assert.deepEqual((await readDoneLog(dir)).map((x) => [...x]), [[2, 2], [4]]);
  log2.append([a]);
  log2.rewrite([]);
  assert.deepEqual(await readDoneLog(dir), [], 'without a mark, a rewrite keeps only what it is given');
  log2.close();
  assert.deepEqual((await readdir(dir)).sort(), [DONE_FILE]);
});

test('done.log: open with the records a resume has just read (readDoneLog) cuts a torn tail as open without them does', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dc-done-'));
  const a = new Uint8Array([1]), b = new Uint8Array([2, 2]), c = new Uint8Array([3, 3, 3]);
  const file = path.join(dir, DONE_FILE);
  await writeFile(file, Buffer.concat([Buffer.from(encodeDoneRecords([a, b])), Buffer.from(encodeDoneRecords([c]).subarray(0, 6))]));
  const read = await readDoneLog(dir);
  assert.deepEqual(read.map((x) => [...x]), [[1], [2, 2]]);
  const log = await DoneLog.open(dir, read);
  assert.equal((await readFile(file)).length, encodeDoneRecords([a, b]).length, 'the torn record is cut at open');
  log.append([c]);
  assert.deepEqual((await readDoneLog(dir)).map((x) => [...x]), [[1], [2, 2], [3, 3, 3]], 'new records follow the valid prefix');
  log.close();
});
