import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { BlockReader, IoCounters, frameBlock } from '../../src/disk/index.js';
import { NO_TAG } from '../../src/disk/block.js';
import { isCrawlError } from '../../src/errors.js';

const tmpFile = (): string => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'block-')), 'f');

/** A block of format 1.0: flags 0, CRC-32 over header[0,20) + payload. */
function crcBlock(payload: Uint8Array, count: number): Buffer {
  const h = Buffer.alloc(24);
  h.writeUInt32LE(0x4b4c4244, 0);
  h[5] = 1;
  h.writeUInt32LE(count, 8);
  h.writeUInt32LE(payload.length, 12);
  h.writeUInt32LE(payload.length, 16);
  h.writeUInt32LE(zlib.crc32(payload, zlib.crc32(h.subarray(0, 20))) >>> 0, 20);
  return Buffer.concat([h, payload]);
}

function readAll(file: string): { count: number; payload: Buffer }[] {
  const fd = fs.openSync(file, 'r');
  try {
    const r = new BlockReader(fd, 0, fs.fstatSync(fd).size, file, new IoCounters(), 'test', 4096);
    const out: { count: number; payload: Buffer }[] = [];
    for (let b = r.next(); b !== null; b = r.next()) out.push({ count: b.count, payload: Buffer.from(b.payload) });
    return out;
  } finally {
    fs.closeSync(fd);
  }
}

test('blocks: XXH64-checksummed blocks (flag bit 1) and older CRC-32 blocks are both read; a flipped byte in either is CRAWL_DISK_CHECKSUM', () => {
  const file = tmpFile();
  const small = Uint8Array.from({ length: 1000 }, (_, i) => (i * 7) & 255);
  // Larger than the 4 MiB piece XXH64 is fed in: the streamed hash must equal what the reader computes.
  const large = Uint8Array.from({ length: (4 << 20) + 12345 }, (_, i) => (i * 13 + (i >>> 9)) & 255);
  const xs = frameBlock(small, 3, 'none');
  const xl = frameBlock(large, 5, 'none');
  assert.equal(xs[4]! & 2, 2, 'new blocks carry the XXH64 flag');
  const old = crcBlock(small, 3);
  fs.writeFileSync(file, Buffer.concat([xs, old, xl]));
  const got = readAll(file);
  assert.deepEqual(got.map((b) => b.count), [3, 3, 5]);
  assert.deepEqual(got[0]!.payload, Buffer.from(small));
  assert.deepEqual(got[1]!.payload, Buffer.from(small));
  assert.deepEqual(got[2]!.payload, Buffer.from(large));
  for (const [at, what] of [
    [24 + 500, 'XXH64 block payload'],
    [xs.length + 24 + 10, 'CRC-32 block payload'],
    [xs.length + old.length + 24 + (4 << 20) + 7, 'large XXH64 block, second piece'],
    [9, 'XXH64 block header (count)'],
  ] as const) {
    const bad = Buffer.concat([xs, old, xl]);
    bad[at]! ^= 0x10;
    fs.writeFileSync(file, bad);
    assert.throws(() => readAll(file), (e: unknown) => isCrawlError(e, 'CRAWL_DISK_CHECKSUM'), what);
  }
  fs.rmSync(path.dirname(file), { recursive: true, force: true });
});

test('blocks: a tag (flag bit 2, header bytes 6–7) round-trips and is covered by the checksum; untagged blocks read as NO_TAG', () => {
  const file = tmpFile();
  const payload = Uint8Array.from({ length: 300 }, (_, i) => i & 255);
  const tagged = frameBlock(payload, 2, 'none', 70000); // only the low 16 bits are kept
  const plain = frameBlock(payload, 2, 'none');
  assert.equal(tagged[4]! & 4, 4);
  assert.equal(plain[4]! & 4, 0);
  fs.writeFileSync(file, Buffer.concat([tagged, plain]));
  const fd = fs.openSync(file, 'r');
  try {
    const r = new BlockReader(fd, 0, fs.fstatSync(fd).size, file, new IoCounters(), 'test');
    assert.equal(r.next()!.tag, 70000 & 0xffff);
    assert.equal(r.next()!.tag, NO_TAG);
  } finally {
    fs.closeSync(fd);
  }
  // A changed tag is a changed header: the checksum (seeded with the header) fails.
  const bad = Buffer.concat([tagged]);
  bad[6]! ^= 1;
  fs.writeFileSync(file, bad);
  assert.throws(() => readAll(file), (e: unknown) => isCrawlError(e, 'CRAWL_DISK_CHECKSUM'));
  fs.rmSync(path.dirname(file), { recursive: true, force: true });
});
