/**
 * A resume's WARC recovery (src/state/recovery.ts) reads only the crawl's own bytes after the
 * checkpoint's offset (or after the last sync's mark: warc-synced.ts), keeps complete records there,
 * cuts a torn tail, and leaves every other file alone; relocate() follows a moved state directory.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync, appendFileSync, statSync, readdirSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WarcWriter, scanWarc } from '../../src/store/index.js';
import { recoverWarc, relocate } from '../../src/state/recovery.js';
import { SyncedPositionLog, readSyncedPosition } from '../../src/state/warc-synced.js';

const head = new TextEncoder().encode('GET / HTTP/1.1\r\nhost: a.test\r\n\r\n');
const resp = new TextEncoder().encode('HTTP/1.1 200 OK\r\ncontent-type: text/html\r\n\r\n');

async function writeSome(dir: string, n: number, maxFileBytes = 1 << 30): Promise<WarcWriter> {
  const w = await WarcWriter.open({ dir, compression: 'gzip', maxFileBytes });
  for (let i = 0; i < n; i++) {
    await w.writeExchange({ url: `http://a.test/${i}`, ip: '127.0.0.1', date: new Date(), requestHead: head, responseHead: resp, body: new Uint8Array(300).fill(65 + (i % 26)) });
  }
  await w.sync();
  return w;
}

test('recovery scans from the checkpoint offset: bytes before it are not judged, complete records after it stay, a torn tail goes', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dc-recovery-'));
  const w = await writeSome(dir, 3);
  const pos = w.position();
  await w.writeExchange({ url: 'http://a.test/after', ip: '127.0.0.1', date: new Date(), requestHead: head, responseHead: resp, body: new Uint8Array(500).fill(66) });
  await w.sync();
  const complete = statSync(pos.file).size;
  await w.close();
  // A torn record after the complete one (a SIGKILL mid-write) ...
  appendFileSync(pos.file, Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3]));
  // ... and bytes before the offset that are not WARC at all: recovery must not read them (a
  // full scan would cut the file to 0 here).
  const buf = readFileSync(pos.file);
  buf.fill(0x58, 10, pos.offset - 10);
  writeFileSync(pos.file, buf);
  const r = await recoverWarc(dir, { file: path.basename(pos.file), offset: pos.offset });
  assert.equal(r.length, 1);
  assert.equal(r[0]!.from, pos.offset);
  assert.equal(r[0]!.scanned, complete + 13 - pos.offset, 'only the bytes after the offset were scanned');
  assert.equal(statSync(pos.file).size, complete, 'the torn tail is cut, the record after the offset kept');
  assert.equal((await scanWarc(pos.file, { fromOffset: pos.offset })).records, 2, 'its response and request records');
});

test('recovery touches only its own writer\'s files: later rotations of the same writer, never foreign files', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dc-recovery-'));
  // A foreign file: a complete record followed by junk (a full-scan recovery would cut it).
  const foreign = path.join(dir, 'other-tool.warc');
  const fbytes = Buffer.from('WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 3\r\n\r\nabc\r\n\r\nno more WARC');
  writeFileSync(foreign, fbytes);
  // Another writer's file (an earlier run of some crawl) with a torn tail: not ours either.
  const other = await writeSome(path.join(dir), 1);
  const otherFile = other.position().file;
  await other.close();
  appendFileSync(otherFile, Buffer.from([0x1f, 0x8b, 8]));
  const otherSize = statSync(otherFile).size;
  await new Promise((r) => setTimeout(r, 5)); // a different stamp for the next writer
  // Ours: rotates every record; the checkpoint names its first file.
  const w = await writeSome(dir, 1, 600);
  const pos = w.position();
  for (let i = 0; i < 3; i++) await w.writeExchange({ url: `http://a.test/r${i}`, ip: '127.0.0.1', date: new Date(), requestHead: head, responseHead: resp, body: new Uint8Array(400).fill(67) });
  await w.sync();
  const last = w.position().file;
  await w.close();
  assert.ok(w.files.length >= 3, `${w.files.length} files`);
  appendFileSync(last, Buffer.from([0x1f, 0x8b, 8, 0]));
  const r = await recoverWarc(dir, { file: path.basename(pos.file), offset: pos.offset });
  assert.deepEqual(r.map((x) => x.file).sort(), w.files.filter((f) => f >= pos.file).sort(), 'the recorded file and its later rotations');
  assert.deepEqual(readFileSync(foreign), fbytes, 'a foreign file is left as it was');
  assert.equal(statSync(otherFile).size, otherSize, 'another writer\'s file is left as it was');
  const s = await scanWarc(last);
  assert.equal(s.validLength, s.fileLength, 'our torn tail was cut');
  assert.ok(readdirSync(dir).length >= 5);
});

test('the last sync\'s mark: recovery reads from it, not from the checkpoint; a mark that is not a record boundary or names another writer is not trusted', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dc-recovery-'));
  const w = await writeSome(dir, 3);
  const ckpt = w.position();
  for (let i = 0; i < 4; i++) {
    await w.writeExchange({ url: `http://a.test/s${i}`, ip: '127.0.0.1', date: new Date(), requestHead: head, responseHead: resp, body: new Uint8Array(400).fill(67) });
  }
  await w.sync();
  const mark = w.position();
  await w.writeExchange({ url: 'http://a.test/after', ip: '127.0.0.1', date: new Date(), requestHead: head, responseHead: resp, body: new Uint8Array(500).fill(66) });
  await w.sync();
  const complete = statSync(ckpt.file).size;
  await w.close();
  appendFileSync(ckpt.file, Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3])); // a torn record
  const name = path.basename(ckpt.file);
  const checkpoint = { file: name, offset: ckpt.offset };
  const saved = readFileSync(ckpt.file);
  const again = (): void => writeFileSync(ckpt.file, saved);

  // The mark, through its file as the crawler writes it.
  const state = mkdtempSync(path.join(os.tmpdir(), 'dc-recovery-state-'));
  await new SyncedPositionLog(state).record({ file: ckpt.file, offset: mark.offset });
  const read = await readSyncedPosition(state);
  assert.deepEqual(read, { file: name, offset: mark.offset });
  let r = await recoverWarc(dir, checkpoint, read);
  assert.deepEqual(r.map((x) => [x.from, x.scanned]), [[mark.offset, complete + 13 - mark.offset]], 'only the bytes after the mark are read');
  assert.equal(statSync(ckpt.file).size, complete, 'the torn tail is cut, the records after the mark kept');
  assert.equal((await scanWarc(ckpt.file)).records, 1 + 2 * 8, 'the warcinfo and every exchange\'s request and response');

  // A mark inside a record: no record starts there, so the bytes are read from the checkpoint.
  again();
  r = await recoverWarc(dir, checkpoint, { file: name, offset: mark.offset + 7 });
  assert.deepEqual(r.map((x) => x.from), [ckpt.offset]);
  assert.equal(statSync(ckpt.file).size, complete);
  // Another writer's mark (an older run's file), and a mark behind the checkpoint: not used.
  for (const m of [{ file: name.replace(/-\d{17}-/, '-20000101000000000-'), offset: mark.offset }, { file: name, offset: ckpt.offset - 1 }]) {
    again();
    r = await recoverWarc(dir, checkpoint, m);
    assert.deepEqual(r.map((x) => x.from), [ckpt.offset], JSON.stringify(m));
    assert.equal(statSync(ckpt.file).size, complete);
  }
  // A damaged mark file is no mark.
  const f = path.join(state, 'warc-synced.bin');
  const b = readFileSync(f);
  b[3] ^= 1;
  writeFileSync(f, b);
  assert.equal(await readSyncedPosition(state), null);
});

test('relocate: a moved state dir is used where it is; the output dir moves with it when it was moved along', async () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'dc-relocate-'));
  const now = path.join(root, 'b');
  const warc = { file: 'drumcrawl-20260101000000000-00001.warc.gz', offset: 10 };
  const own = (dir: string): void => writeFileSync(path.join(dir, warc.file), Buffer.alloc(12));
  mkdirSync(path.join(now, 'state'), { recursive: true });
  mkdirSync(path.join(now, 'out'), { recursive: true });
  own(path.join(now, 'out'));
  assert.deepEqual(await relocate(path.join(now, 'state'), '/gone/a/state', '/gone/a/out', undefined, warc), { stateDir: path.join(now, 'state'), outDir: path.join(now, 'out') });
  // Output not moved along (it stayed at its recorded, existing place).
  const kept = path.join(root, 'kept-out');
  mkdirSync(kept);
  own(kept);
  assert.deepEqual(await relocate(path.join(now, 'state'), '/gone/x/state', kept, undefined, warc), { stateDir: path.join(now, 'state'), outDir: kept });
  // --out wins.
  assert.equal((await relocate(path.join(now, 'state'), '/gone/a/state', '/gone/a/out', '/tmp/z', warc)).outDir, '/tmp/z');
  // At neither place (moved under another name, or deleted), whether the state moved or not.
  await assert.rejects(relocate(path.join(now, 'state'), '/gone/y/state', '/gone/y/elsewhere', undefined, warc), { code: 'CRAWL_OUT_MISSING' });
  await assert.rejects(relocate(path.join(now, 'state'), path.join(now, 'state'), path.join(now, 'out-renamed'), undefined, warc), { code: 'CRAWL_OUT_MISSING' });
  // A directory that exists at a recorded place but lacks the crawl's mark (the checkpoint's WARC
  // file, a regular file at least as long as its durable offset) is not taken for the output: an
  // edited manifest naming any directory, a link at the WARC's name, a shorter file, no WARC named.
  const foreign = path.join(root, 'foreign');
  mkdirSync(foreign);
  writeFileSync(path.join(foreign, 'precious'), 'x');
  await assert.rejects(relocate(path.join(now, 'state'), path.join(now, 'state'), foreign, undefined, warc), (e: Error & { code?: string }) => e.code === 'CRAWL_OUT_UNVERIFIED' && e.message.includes(foreign) && e.message.includes(warc.file));
  symlinkSync(path.join(kept, warc.file), path.join(foreign, warc.file));
  await assert.rejects(relocate(path.join(now, 'state'), path.join(now, 'state'), foreign, undefined, warc), { code: 'CRAWL_STATE_LINK' });
  await assert.rejects(relocate(path.join(now, 'state'), '/gone/x/state', kept, undefined, { ...warc, offset: 13 }), { code: 'CRAWL_OUT_UNVERIFIED' });
  await assert.rejects(relocate(path.join(now, 'state'), '/gone/x/state', kept, undefined, null), { code: 'CRAWL_OUT_UNVERIFIED' });
  assert.deepEqual(readdirSync(foreign).sort(), ['drumcrawl-20260101000000000-00001.warc.gz', 'precious']);
  assert.deepEqual(readdirSync(now).sort(), ['out', 'state'], 'nothing created');
});
