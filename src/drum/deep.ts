/**
 * Z's deep part: for repositories merged on time rather than when a bucket reaches r bytes
 * (ContentSeen, whose pages hold their bodies until it answers: src/crawl/merge-schedule.ts; the
 * robots DRUMs, merged by the robots stage's rounds: src/crawl/ports/robots-stage.ts).
 *
 * Why. A merge passes over all of Z_i (thesis IV.3, Fig. 1): its cost is |Z| + the batch, and the
 * thesis keeps the cost per key low by merging only when the batch is r bytes (Theorem 2). A
 * repository merged once a second instead pays |Z| per second, which grows with the crawl: in a
 * 15-minute soak over 10^6 hosts ContentSeen's merges went from 0.24 to 0.68 s apiece
 * (bench/results/soak-1g-1e6-23c7817.json, "contentseen" pauses).
 *
 * Concept. With `settleKeys` set, bucket i's cache is two sorted runs: Z_i, the keys added since
 * its last settling (at most about settleKeys: the pass of every merge is bounded), and the deep
 * part D_i, all the older keys, written in small blocks (DEEP_BLOCK) whose first keys are held in
 * RAM. The merge's pass looks up a key it does not find in Z_i in D_i by reading the one block the
 * key can be in (lookup: a binary search of the index, one read, a scan of the block). Once Z_i
 * holds settleKeys keys it is settled: merged with D_i into D_i′ in one sequential pass (Z_i
 * winning a key both hold), and Z_i starts empty.
 *
 * Invariants. Z_i ∪ D_i holds every key of the bucket, a key of Z_i shadowing the same key of D_i
 * (a deep key whose value a merge changes is written to Z_i′ with its new value; one only checked,
 * or whose merged value is the one stored, stays in D_i alone); the deep part is written with
 * variable-length values whatever the repository's value size;
 * the index has one entry per block of D_i, its first key and offset, in order. The manifest names
 * D_i's generation, key count, bytes and blocks beside Z_i's; D_i′ and its index are written and
 * fsynced under a new generation before the manifest names them, so a crash leaves the old pair in
 * force (recovery deletes the other generations).
 *
 * Cost. Per key: one lookup when it is not in Z_i (a DEEP_BLOCK read, from the page cache while D
 * fits it), and its copies at settlings: D_i is rewritten once per settleKeys new keys, so a key is
 * copied |D_i| / settleKeys times on average over its bucket's life. RAM: the index, 16 bytes per
 * DEEP_BLOCK of D (1/1024 of D's bytes), and one block buffer.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CrawlError } from '../errors.js';
import { BlockReader, readVarint, type Compression, type IoCounters } from '../disk/index.js';
import { DiskErrorCode } from '../disk/errors.js';
import { DrumErrorCode } from './errors.js';
import { SortedRunReader, SortedRunWriter } from '../disk/sorted-file.js';
import { fsyncDir } from '../disk/index.js';
import { READ_AHEAD, cutTo, pad, type BucketState, type DeepState } from './format.js';
import type { Generations } from './generations.js';

/** Payload bytes of a deep block: what one lookup reads. */
export const DEEP_BLOCK = 16 << 10;
/** Bytes of one index entry in the .x file: key hi, key lo (u32 LE), offset (f64 LE). */
const ENTRY = 16;

const rd32 = (b: Uint8Array, p: number): number => (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0;

export function deepFile(dir: string, i: number, g: number): string {
  return path.join(dir, `d${pad(i)}-${g}.z`);
}

export function deepIndexFile(dir: string, i: number, g: number): string {
  return path.join(dir, `d${pad(i)}-${g}.x`);
}

/** A deep file name's bucket and generation (recovery's garbage collection), or null. */
export function parseDeepName(f: string): { i: number; g: number } | null {
  const m = /^d(\d{4})-(\d+)\.[zx]$/.exec(f);
  return m === null ? null : { i: Number(m[1]), g: Number(m[2]) };
}

/** One bucket's deep part, open for lookups. */
export class DeepPart {
  private readonly hi: Uint32Array;
  private readonly lo: Uint32Array;
  private readonly off: Float64Array;
  private buf: Buffer = Buffer.allocUnsafeSlow(DEEP_BLOCK + 4096);
  /** The block last read (index entry), its payload: sorted keys often fall in one block. */
  private cached = -1;
  private payload: Uint8Array = new Uint8Array(0);
  private readonly vtmp = new Int32Array(1);

  private constructor(
    private readonly fd: number,
    private readonly file: string,
    readonly state: DeepState,
    index: Buffer,
    private readonly io: IoCounters,
  ) {
    const n = state.dBlocks;
    this.hi = new Uint32Array(n);
    this.lo = new Uint32Array(n);
    this.off = new Float64Array(n);
    for (let b = 0; b < n; b++) {
      this.hi[b] = index.readUInt32LE(b * ENTRY);
      this.lo[b] = index.readUInt32LE(b * ENTRY + 4);
      this.off[b] = index.readDoubleLE(b * ENTRY + 8);
    }
  }

  /** Opens bucket i's deep part as the manifest describes it; throws CRAWL_DISK_TRUNCATED when its files do not match. */
  static open(dir: string, i: number, st: DeepState, io: IoCounters): DeepPart | null {
    if (st.dgen === 0) return null;
    const file = deepFile(dir, i, st.dgen);
    const xfile = deepIndexFile(dir, i, st.dgen);
    let index: Buffer;
    let fd: number;
    try {
      index = fs.readFileSync(xfile);
      fd = fs.openSync(file, 'r');
    } catch (cause) {
      throw new CrawlError(DiskErrorCode.TRUNCATED, `DRUM deep cache ${file} or its index is missing`, { cause, details: { file } });
    }
    const size = fs.fstatSync(fd).size;
    if (size !== st.dBytes || index.length !== st.dBlocks * ENTRY) {
      fs.closeSync(fd);
      throw new CrawlError(DiskErrorCode.TRUNCATED, `DRUM deep cache ${file} has ${size} bytes and ${index.length / ENTRY} index entries, the manifest says ${st.dBytes} and ${st.dBlocks}`, {
        details: { file, size, expected: st.dBytes },
      });
    }
    io.read('deep-index', index.length);
    return new DeepPart(fd, file, st, index, io);
  }

  /**
   * The value stored with (hi, lo), or null when the key is not here. The returned array is the
   * caller's (a copy).
   */
  lookup(hi: number, lo: number): Uint8Array | null {
    // The last block whose first key is ≤ the key.
    let a = 0;
    let z = this.hi.length;
    while (a < z) {
      const m = (a + z) >>> 1;
      const mh = this.hi[m]!;
      if (mh < hi || (mh === hi && this.lo[m]! <= lo)) a = m + 1;
      else z = m;
    }
    const b = a - 1;
    if (b < 0) return null;
    if (b !== this.cached) {
      const end = b + 1 < this.off.length ? this.off[b + 1]! : this.state.dBytes;
      const r = new BlockReader(this.fd, this.off[b]!, end, this.file, this.io, 'deep', end - this.off[b]!, true, this.buf);
      const blk = r.next();
      this.buf = r.buffer;
      if (blk === null) throw new CrawlError(DiskErrorCode.TRUNCATED, `DRUM deep cache ${this.file} ends before block ${b}`, { details: { file: this.file } });
      this.payload = blk.payload;
      this.cached = b;
    }
    const p = this.payload;
    let at = 0;
    while (at < p.length) {
      const kh = rd32(p, at);
      const kl = rd32(p, at + 4);
      const len = readVarint(p, at + 8, p.length, this.vtmp);
      const vs = this.vtmp[0]!;
      if (len < 0 || vs + len > p.length) throw new CrawlError(DiskErrorCode.CHECKSUM, `bad value length in ${this.file}`, { details: { file: this.file } });
      if (kh === hi && kl === lo) return p.slice(vs, vs + len);
      if (kh > hi || (kh === hi && kl > lo)) return null;
      at = vs + len;
    }
    return null;
  }

  close(): void {
    fs.closeSync(this.fd);
  }
}

/**
 * Settles Z_i into the deep part: writes D_i′ (generation `g`) and its index from the young run
 * `zFile` (zBytes) and the current deep part (null: none), the young value winning a key both
 * hold; fsyncs both files. Returns the new state (the caller commits it in the manifest).
 */
export function settle(
  dir: string, i: number, g: number, zFile: string | null, zBytes: number, zKeys: number, old: DeepPart | null,
  io: IoCounters, compression: Compression, valueBytes: number | 'variable',
): DeepState {
  const file = deepFile(dir, i, g);
  const xfile = deepIndexFile(dir, i, g);
  const out = fs.openSync(file, 'w');
  const entries: number[] = [];
  let dKeys = 0;
  let dBytes = 0;
  const zfd = zFile === null ? -1 : fs.openSync(zFile, 'r');
  const ofd = old === null ? -1 : fs.openSync(deepFile(dir, i, old.state.dgen), 'r');
  try {
    const w = new SortedRunWriter(out, file, 'variable', io, 'deep', compression, DEEP_BLOCK, undefined, (offset, hi, lo) => entries.push(hi, lo, offset));
    // Z_i in the repository's value format; the deep part always 'variable' (lookup reads its lengths).
    const young = zfd < 0 ? null : new SortedRunReader(zfd, zBytes, zFile!, valueBytes, io, 'cache', READ_AHEAD);
    const deep = ofd < 0 ? null : new SortedRunReader(ofd, old!.state.dBytes, deepFile(dir, i, old!.state.dgen), 'variable', io, 'deep', READ_AHEAD);
    for (;;) {
      const y = young !== null && young.has;
      const d = deep !== null && deep.has;
      if (!y && !d) break;
      // Young first on a tie (it shadows the deep value); the deep record of that key is skipped.
      const takeYoung = y && (!d || young.hi < deep!.hi || (young.hi === deep!.hi && young.lo <= deep!.lo));
      if (takeYoung) {
        if (d && young.hi === deep!.hi && young.lo === deep!.lo) deep!.advance();
        w.append(young.hi, young.lo, young.payload.subarray(young.vs, young.ve));
        young.advance();
      } else {
        w.append(deep!.hi, deep!.lo, deep!.payload.subarray(deep!.vs, deep!.ve));
        deep!.advance();
      }
      dKeys++;
    }
    if (young !== null && young.recordsSeen !== zKeys) {
      throw new CrawlError(DrumErrorCode.CACHE_CORRUPT, `DRUM cache file ${zFile} holds ${young.recordsSeen} keys, the manifest says ${zKeys}`, { details: { file: zFile } });
    }
    if (deep !== null && deep.recordsSeen !== old!.state.dKeys) {
      throw new CrawlError(DrumErrorCode.CACHE_CORRUPT, `DRUM deep cache ${deepFile(dir, i, old!.state.dgen)} holds ${deep.recordsSeen} keys, the manifest says ${old!.state.dKeys}`, {
        details: { file: deepFile(dir, i, old!.state.dgen) },
      });
    }
    dBytes = w.finish();
  } finally {
    if (zfd >= 0) fs.closeSync(zfd);
    if (ofd >= 0) fs.closeSync(ofd);
    fs.closeSync(out);
  }
  const n = entries.length / 3;
  const x = Buffer.allocUnsafe(n * ENTRY);
  for (let b = 0; b < n; b++) {
    x.writeUInt32LE(entries[3 * b]!, b * ENTRY);
    x.writeUInt32LE(entries[3 * b + 1]!, b * ENTRY + 4);
    x.writeDoubleLE(entries[3 * b + 2]!, b * ENTRY + 8);
  }
  const xfd = fs.openSync(xfile, 'w');
  try {
    fs.writeSync(xfd, x);
    fs.fsyncSync(xfd);
  } finally {
    fs.closeSync(xfd);
  }
  io.wrote('deep-index', x.length);
  io.synced('deep-index');
  return { dgen: g, dKeys, dBytes, dBlocks: n };
}

/**
 * Settles bucket i: D_i′ from Z_i and D_i (settle), then an empty Z_i of the next generation,
 * both committed by `commit` (the manifest write) once they are durable; the superseded files go
 * after the commit. A crash before it leaves Z_i and D_i in force (recovery deletes the new
 * files); after it, recovery deletes the old ones. Returns the new deep part, open.
 */
export function settleBucket(
  dir: string, i: number, bk: BucketState, old: DeepPart | null, files: Generations, io: IoCounters, compression: Compression,
  valueBytes: number | 'variable', commit: () => void,
): DeepPart | null {
  const st = settle(dir, i, bk.deep.dgen + 1, bk.zgen > 0 ? files.zFile(i, bk.zgen) : null, bk.zBytes, bk.zKeys, old, io, compression, valueBytes);
  const oldZ = bk.zgen;
  const zfd = files.openZOut(files.zFile(i, oldZ + 1));
  try {
    cutTo(zfd, 0);
    fs.fsyncSync(zfd);
  } finally {
    fs.closeSync(zfd);
  }
  fsyncDir(dir);
  bk.zgen = oldZ + 1;
  bk.zKeys = 0;
  bk.zShadows = 0;
  bk.zBytes = 0;
  bk.deep = st;
  commit();
  const deep = DeepPart.open(dir, i, st, io);
  if (old !== null) {
    old.close();
    fs.rmSync(deepFile(dir, i, old.state.dgen), { force: true });
    fs.rmSync(deepIndexFile(dir, i, old.state.dgen), { force: true });
  }
  if (oldZ > 0) files.retireZ(files.zFile(i, oldZ));
  return deep;
}
