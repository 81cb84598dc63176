import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { BlockReader, IoCounters, frameBlock } from '../../src/disk/index.js';
import { KeyRunReader, KeyRunWriter, gapBytesFor } from '../../src/disk/key-run.js';
import { isCrawlError } from '../../src/errors.js';

const tmpDir = (): string => fs.mkdtempSync(path.join(os.tmpdir(), 'keyrun-'));

/** Distinct 64-bit keys as bigints: clusters (small gaps) and jumps (gaps of any width). */
const keySet = fc
  .array(fc.tuple(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 63 })), { maxLength: 40 })
  .map((seeds) => {
    const s = new Set<bigint>();
    for (const [base, n, bits] of seeds) {
      let k = base;
      for (let i = 0; i < n && k < 1n << 64n; i++) {
        s.add(k);
        k += 1n + (BigInt(i * 2654435761) & ((1n << BigInt(bits)) - 1n));
      }
    }
    return [...s].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  });

const hiOf = (k: bigint): number => Number(k >> 32n);
const loOf = (k: bigint): number => Number(k & 0xffffffffn);

function writeRun(file: string, keys: readonly bigint[], gapBytes: number, blockBytes: number): { bytes: number; records: number } {
  const fd = fs.openSync(file, 'w');
  try {
    const w = new KeyRunWriter(fd, file, gapBytes, new IoCounters(), 'cache', 'none', blockBytes);
    for (const k of keys) w.append(hiOf(k), loOf(k));
    return { bytes: w.finish(), records: w.records };
  } finally {
    fs.closeSync(fd);
  }
}

function readAll(file: string, size: number): bigint[] {
  const fd = fs.openSync(file, 'r');
  try {
    const r = new KeyRunReader(fd, size, file, new IoCounters(), 'cache', 4096);
    const out: bigint[] = [];
    while (r.has) {
      out.push((BigInt(r.hi) << 32n) | BigInt(r.lo));
      r.advance();
    }
    return out;
  } finally {
    fs.closeSync(fd);
  }
}

test('key runs: any strictly increasing key set round-trips at every gap width (gaps too wide start new blocks)', () => {
  const dir = tmpDir();
  const file = path.join(dir, 'z');
  fc.assert(
    fc.property(keySet, fc.integer({ min: 1, max: 8 }), fc.integer({ min: 16, max: 300 }), (keys, w, blockBytes) => {
      const { bytes, records } = writeRun(file, keys, w, blockBytes);
      assert.equal(records, keys.length);
      assert.deepEqual(readAll(file, bytes), keys);
    }),
    { numRuns: 150 },
  );
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Payload sizes of the blocks of a run file. */
function blockSizes(file: string, size: number): number[] {
  const fd = fs.openSync(file, 'r');
  try {
    const r = new BlockReader(fd, 0, size, file, new IoCounters(), 'cache');
    const out: number[] = [];
    for (let b = r.next(); b !== null; b = r.next()) out.push(b.payload.length);
    return out;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * One DRUM-style merge of `incoming` (sorted, distinct) into the run in `a`, written to `b`:
 * copyBelow up to each key, append the key when Z lacks it (present keys stay in the stream).
 */
function mergeRun(a: string, za: { bytes: number }, b: string, incoming: readonly bigint[], wb: number, blockBytes: number, readAhead: number): { bytes: number; records: number; seen: number } {
  const fdA = fs.openSync(a, 'r');
  const fdB = fs.openSync(b, 'w');
  const io = new IoCounters();
  try {
    const r = new KeyRunReader(fdA, za.bytes, a, io, 'cache', readAhead);
    const w = new KeyRunWriter(fdB, b, wb, io, 'cache', 'none', blockBytes);
    for (const k of incoming) {
      const hi = hiOf(k);
      const lo = loOf(k);
      r.copyBelow(hi, lo, w);
      if (!(r.has && r.hi === hi && r.lo === lo)) w.append(hi, lo);
    }
    r.copyRest(w);
    return { bytes: w.finish(), records: w.records, seen: r.recordsSeen };
  } finally {
    fs.closeSync(fdA);
    fs.closeSync(fdB);
  }
}

const sortBig = (xs: Iterable<bigint>): bigint[] => [...new Set(xs)].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));

test('key runs: a merge (copyBelow + append, as DRUM does) yields the sorted union, across gap widths', () => {
  const dir = tmpDir();
  const a = path.join(dir, 'a');
  const b = path.join(dir, 'b');
  fc.assert(
    fc.property(keySet, keySet, fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 8 }), fc.integer({ min: 16, max: 200 }), fc.integer({ min: 0, max: 5 }), (zKeys, fresh, wa, wb, blockBytes, every) => {
      // Incoming keys: new ones and (every > 0) every `every`-th key already in Z.
      const old = every === 0 ? [] : zKeys.filter((_, i) => i % every === 0);
      const incoming = sortBig([...fresh, ...old]);
      const za = writeRun(a, zKeys, wa, blockBytes);
      const wrote = mergeRun(a, za, b, incoming, wb, blockBytes, 64);
      assert.equal(wrote.seen, zKeys.length);
      const union = sortBig([...zKeys, ...incoming]);
      assert.equal(wrote.records, union.length);
      assert.deepEqual(readAll(b, wrote.bytes), union);
    }),
    { numRuns: 150 },
  );
  fs.rmSync(dir, { recursive: true, force: true });
});

test('key runs: merges that copy raw gap runs across duplicates keep every key, and blocks stay ≤ blockBytes + one key, round after round', () => {
  // Same gap width on both sides (DRUM's usual case), so untouched keys move as deferred raw runs;
  // mostly duplicates in the incoming keys (URLseen's mix), a few new ones, several rounds so the
  // merged output is itself merged again (a block-size bound that held only once would grow).
  const dir = tmpDir();
  const files = [path.join(dir, 'a'), path.join(dir, 'b')];
  fc.assert(
    fc.property(
      keySet,
      fc.array(fc.tuple(keySet, fc.integer({ min: 1, max: 12 })), { minLength: 1, maxLength: 4 }),
      fc.integer({ min: 1, max: 8 }),
      fc.integer({ min: 16, max: 400 }),
      fc.integer({ min: 1, max: 300 }),
      (zKeys, rounds, w, blockBytes, readAhead) => {
        let model = sortBig(zKeys);
        let cur = writeRun(files[0]!, model, w, blockBytes);
        let at = 0;
        for (const [fresh, every] of rounds) {
          const dups = model.filter((_, i) => i % every === 0);
          const incoming = sortBig([...fresh, ...dups]);
          const out = mergeRun(files[at]!, cur, files[1 - at]!, incoming, w, blockBytes, readAhead);
          at = 1 - at;
          assert.equal(out.seen, model.length);
          model = sortBig([...model, ...incoming]);
          assert.equal(out.records, model.length);
          assert.deepEqual(readAll(files[at]!, out.bytes), model);
          for (const len of blockSizes(files[at]!, out.bytes)) assert.ok(len <= blockBytes + 9, `block of ${len} bytes for blockBytes ${blockBytes}`);
          cur = out;
        }
      },
    ),
    { numRuns: 150 },
  );
  fs.rmSync(dir, { recursive: true, force: true });
});

test('key runs: gap width from the expected key count; random hashes at U = 1e9 take 5 bytes a key', () => {
  assert.equal(gapBytesFor(60, 1e9 / 16), 5); // 16 buckets, U = 1e9: mean gap 2^34
  assert.equal(gapBytesFor(62, 1e7 / 4), 6);
  assert.equal(gapBytesFor(64, 0), 8);
  assert.equal(gapBytesFor(64, 1), 8);
  assert.equal(gapBytesFor(10, 1e6), 1);
  // 200,000 random keys in a 2^60 range: 5.0x bytes per key with the chosen width, all read back.
  const dir = tmpDir();
  const file = path.join(dir, 'z');
  let x = 12345n;
  const keys = new Set<bigint>();
  while (keys.size < 200_000) {
    x = (x * 6364136223846793005n + 1442695040888963407n) & ((1n << 64n) - 1n);
    keys.add(x >> 4n);
  }
  const sorted = [...keys].sort((p, q) => (p < q ? -1 : p > q ? 1 : 0));
  const w = gapBytesFor(60, 200_000);
  const { bytes } = writeRun(file, sorted, w, 1 << 20);
  assert.ok(bytes / sorted.length < w + 0.01, `${bytes / sorted.length} bytes per key`);
  assert.deepEqual(readAll(file, bytes), sorted);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('key runs: corruption is detected (CRC), and a block with a zero gap or out-of-order keys is CRAWL_DRUM_CACHE_CORRUPT', () => {
  const dir = tmpDir();
  const file = path.join(dir, 'z');
  const keys = Array.from({ length: 1000 }, (_, i) => BigInt(i) * 1000003n + 7n);
  const { bytes } = writeRun(file, keys, 3, 1 << 20);
  const buf = fs.readFileSync(file);
  buf[100]! ^= 0x10;
  fs.writeFileSync(file, buf);
  assert.throws(() => readAll(file, bytes), (e: unknown) => isCrawlError(e) && e.code === 'CRAWL_DISK_CHECKSUM');
  // Valid CRC, invalid content: first key 5, then a zero gap.
  const payload = Uint8Array.from([2, 0, 0, 0, 0, 5, 0, 0, 0, 1, 0, 0, 0]);
  fs.writeFileSync(file, frameBlock(payload, 3, 'none'));
  assert.throws(() => readAll(file, fs.statSync(file).size), (e: unknown) => isCrawlError(e) && e.code === 'CRAWL_DRUM_CACHE_CORRUPT');
  // Two blocks whose keys go backwards across the boundary.
  const b1 = frameBlock(Uint8Array.from([8, 0, 0, 0, 0, 9, 0, 0, 0]), 1, 'none');
  const b2 = frameBlock(Uint8Array.from([8, 0, 0, 0, 0, 3, 0, 0, 0]), 1, 'none');
  fs.writeFileSync(file, Buffer.concat([b1, b2]));
  assert.throws(() => readAll(file, fs.statSync(file).size), (e: unknown) => isCrawlError(e) && e.code === 'CRAWL_DRUM_CACHE_CORRUPT');
  // A block whose length does not match its count.
  fs.writeFileSync(file, frameBlock(Uint8Array.from([2, 0, 0, 0, 0, 5, 0, 0, 0, 1]), 3, 'none'));
  assert.throws(() => readAll(file, fs.statSync(file).size), (e: unknown) => isCrawlError(e) && e.code === 'CRAWL_DRUM_CACHE_CORRUPT');
  fs.rmSync(dir, { recursive: true, force: true });
});
