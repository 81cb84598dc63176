/**
 * Sorted-run files of (64-bit key, value) records — DRUM's disk cache Z (one file per bucket) for
 * repositories with values; key-only repositories use the delta-coded runs of key-run.ts.
 * Blocks as in block.ts; a record is key hi (u32 LE), key lo (u32 LE), then the value: exactly
 * `valueBytes` bytes when fixed, or a varint length and the bytes when 'variable'. Keys are strictly
 * increasing across the whole file; the writer enforces it, so a disordered run can never be
 * produced, and the reader reports one it finds (block-boundary check) as CRAWL_DRUM_CACHE_CORRUPT.
 *
 * The reader streams: it holds one decoded block and a read-ahead buffer, never the whole file.
 * For fixed-size records it finds the next key by binary search inside a block and copies the runs
 * of smaller records to the writer in bulk, so a merge that touches few records of a large Z costs
 * memory bandwidth, not per-record work (the U ≫ n regime of Theorem 2).
 */
import * as fs from 'node:fs';
import { CrawlError } from '../errors.js';
import { BlockReader, BlockWriter, type Compression } from './block.js';
import { readVarint, varintSize, writeVarint } from './codec.js';
import type { IoCounters } from './io-counters.js';

/**
 * Copies src[from, to) to dst at `at`. Short runs (the common case when a bucket touches most of
 * Z) go byte by byte: a loop beats creating a subarray object for set().
 */
export function copyRun(dst: Uint8Array, at: number, src: Uint8Array, from: number, to: number): void {
  if (to - from <= 64) {
    for (let i = from; i < to; i++) dst[at++] = src[i]!;
  } else dst.set(src.subarray(from, to), at);
}

export const CACHE_CORRUPT = 'CRAWL_DRUM_CACHE_CORRUPT';

const rd32 = (b: Uint8Array, p: number): number => (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0;
const wr32 = (b: Uint8Array, p: number, v: number): void => {
  b[p] = v;
  b[p + 1] = v >>> 8;
  b[p + 2] = v >>> 16;
  b[p + 3] = v >>> 24;
};

export class SortedRunWriter {
  private buf: Uint8Array;
  private len = 0;
  private count = 0;
  private lastHi = -1;
  private lastLo = -1;
  /** The first key of the block being filled (for onBlock). */
  private firstHi = 0;
  private firstLo = 0;
  private readonly w: BlockWriter;
  /** Records written so far. */
  records = 0;

  constructor(
    private readonly fd: number,
    private readonly file: string,
    private readonly valueBytes: number | 'variable',
    io: IoCounters,
    kind: string,
    compression: Compression,
    private readonly blockBytes = 1 << 20,
    /** A buffer to start from (e.g. the previous writer's `buffer`, so a merge allocates nothing). */
    initial?: Uint8Array,
    /** Called before each block is written, with its offset and first key (a block index: src/drum/deep.ts). */
    private readonly onBlock?: (offset: number, hi: number, lo: number) => void,
  ) {
    this.w = new BlockWriter(fd, 0, io, kind, compression);
    // Grows on demand up to 2 blocks (a block plus a bulk run): a small Z stays cheap to rewrite.
    this.buf = initial ?? new Uint8Array(Math.min(blockBytes * 2 + 64, 1 << 16));
  }

  /** The write buffer (to hand to the next writer). */
  get buffer(): Uint8Array {
    return this.buf;
  }

  private order(hi: number, lo: number): void {
    if (hi < this.lastHi || (hi === this.lastHi && lo <= this.lastLo)) {
      throw new CrawlError(CACHE_CORRUPT, `keys out of order writing ${this.file}`, { details: { file: this.file } });
    }
  }

  private room(n: number): void {
    if (this.len + n <= this.buf.length) return;
    const cap = this.blockBytes * 2 + 64;
    if (this.len + n > cap) {
      this.flushBlock();
      if (n <= this.buf.length) return;
    }
    const grown = new Uint8Array(Math.max(this.len + n, Math.min(cap, this.buf.length * 2)));
    grown.set(this.buf.subarray(0, this.len));
    this.buf = grown;
  }

  private flushBlock(): void {
    if (this.count === 0) return;
    if (this.onBlock !== undefined) this.onBlock(this.w.offset, this.firstHi, this.firstLo);
    this.w.writeBlock(this.buf.subarray(0, this.len), this.count);
    this.len = 0;
    this.count = 0;
  }

  append(hi: number, lo: number, value: Uint8Array | null): void {
    this.order(hi, lo);
    const v = value ?? EMPTY;
    const n = 8 + (this.valueBytes === 'variable' ? varintSize(v.length) + v.length : this.valueBytes);
    this.room(n);
    if (this.count === 0) {
      this.firstHi = hi;
      this.firstLo = lo;
    }
    const b = this.buf;
    let p = this.len;
    wr32(b, p, hi);
    wr32(b, p + 4, lo);
    p += 8;
    if (this.valueBytes === 'variable') p = writeVarint(b, p, v.length);
    if (v.length > 0) b.set(v, p);
    this.len = p + (this.valueBytes === 'variable' ? v.length : this.valueBytes);
    this.count++;
    this.records++;
    this.lastHi = hi;
    this.lastLo = lo;
    if (this.len >= this.blockBytes) this.flushBlock();
  }

  /**
   * Appends `count` whole records copied from `src[from, to)` (a run of a sorted input); the run's
   * first key is `firstHi/firstLo` and its last `lastHi/lastLo`, both checked for order.
   */
  appendRun(src: Uint8Array, from: number, to: number, count: number, firstHi: number, firstLo: number, lastHi: number, lastLo: number): void {
    if (count === 0) return;
    this.order(firstHi, firstLo);
    const len = to - from;
    this.room(len);
    if (this.count === 0) {
      this.firstHi = firstHi;
      this.firstLo = firstLo;
    }
    copyRun(this.buf, this.len, src, from, to);
    this.len += len;
    this.count += count;
    this.records += count;
    this.lastHi = lastHi;
    this.lastLo = lastLo;
    if (this.len >= this.blockBytes) this.flushBlock();
  }

  /** Writes the last block and fsyncs; returns the file size. */
  finish(): number {
    this.flushBlock();
    this.w.sync();
    return this.w.offset;
  }

  get fdNumber(): number {
    return this.fd;
  }
}

const EMPTY = new Uint8Array(0);

/**
 * Streams a sorted run. `has` says whether a current record exists; (hi, lo) is its key and
 * payload[vs, ve) its value.
 */
export class SortedRunReader {
  payload: Uint8Array = EMPTY;
  private pos = 0; // start of the current record
  private next = 0; // start of the record after it
  has = false;
  hi = 0;
  lo = 0;
  vs = 0;
  ve = 0;
  /** Records in the blocks read so far (checked against the manifest at the end). */
  recordsSeen = 0;
  private readonly reader: BlockReader;
  private readonly rec: number; // fixed record size, 0 when variable
  private readonly vtmp = new Int32Array(1);
  private prevHi = -1;
  private prevLo = -1;

  constructor(
    fd: number,
    size: number,
    private readonly file: string,
    private readonly valueBytes: number | 'variable',
    io: IoCounters,
    kind: string,
    readAhead = 4 << 20,
    /** A read buffer to start from (see BlockReader's `initial`). */
    initial?: Buffer,
  ) {
    this.reader = new BlockReader(fd, 0, size, file, io, kind, readAhead, true, initial);
    this.rec = valueBytes === 'variable' ? 0 : 8 + valueBytes;
    this.loadBlock();
  }

  /** The read buffer (to hand to the next reader). */
  get buffer(): Buffer {
    return this.reader.buffer;
  }

  private corrupt(msg: string): CrawlError {
    return new CrawlError(CACHE_CORRUPT, `${msg} in ${this.file}`, { details: { file: this.file } });
  }

  private loadBlock(): void {
    for (;;) {
      const blk = this.reader.next();
      if (blk === null) {
        this.has = false;
        this.payload = EMPTY;
        return;
      }
      this.recordsSeen += blk.count;
      if (this.rec > 0 && blk.payload.length !== blk.count * this.rec) throw this.corrupt('block length is not count × record size');
      if (blk.count === 0) continue;
      this.payload = blk.payload;
      this.pos = 0;
      this.parse();
      if (this.hi < this.prevHi || (this.hi === this.prevHi && this.lo <= this.prevLo)) throw this.corrupt('keys out of order');
      return;
    }
  }

  /** Parses the record at this.pos (which must exist in the current block). */
  private parse(): void {
    const b = this.payload;
    const p = this.pos;
    if (p + 8 > b.length) throw this.corrupt('record runs past its block');
    this.hi = rd32(b, p);
    this.lo = rd32(b, p + 4);
    if (this.rec > 0) {
      this.vs = p + 8;
      this.ve = p + this.rec;
    } else {
      const len = readVarint(b, p + 8, b.length, this.vtmp);
      if (len < 0 || this.vtmp[0]! + len > b.length) throw this.corrupt('bad value length');
      this.vs = this.vtmp[0]!;
      this.ve = this.vs + len;
    }
    this.next = this.ve;
    this.has = true;
  }

  /** Moves past the current record. */
  advance(): void {
    this.prevHi = this.hi;
    this.prevLo = this.lo;
    this.pos = this.next;
    if (this.pos >= this.payload.length) this.loadBlock();
    else this.parse();
  }

  /**
   * Copies every record with key < (hi, lo) to `out` (in bulk runs; `null`: passes over them) and
   * stops at the first record with key ≥ (hi, lo), which becomes current (or `has` turns false at
   * the end).
   */
  copyBelow(hi: number, lo: number, out: SortedRunWriter | null): void {
    while (this.has) {
      if (this.hi > hi || (this.hi === hi && this.lo >= lo)) return;
      const b = this.payload;
      const start = this.pos;
      const firstHi = this.hi;
      const firstLo = this.lo;
      let lastHi: number;
      let lastLo: number;
      let count: number;
      let end: number;
      if (this.rec > 0) {
        // The first record ≥ key in [pos, blockEnd): galloping (exponential then binary) search
        // from the current record, so a dense merge (most Z records touched) costs O(1) per key
        // and a sparse one (U ≫ n) O(log gap).
        const rec = this.rec;
        const total = b.length / rec;
        let a = start / rec + 1; // records before a are < key (the current one is)
        if (a < total) {
          const mh0 = rd32(b, a * rec);
          if (mh0 < hi || (mh0 === hi && rd32(b, a * rec + 4) < lo)) {
            let prev = a; // < key
            let step = 1;
            let probe = a + 1;
            for (;;) {
              if (probe >= total) break;
              const ph = rd32(b, probe * rec);
              if (!(ph < hi || (ph === hi && rd32(b, probe * rec + 4) < lo))) break;
              prev = probe;
              step *= 2;
              probe = prev + step;
            }
            a = prev + 1;
            let z = Math.min(probe, total);
            while (a < z) {
              const m = (a + z) >>> 1;
              const mh = rd32(b, m * rec);
              if (mh < hi || (mh === hi && rd32(b, m * rec + 4) < lo)) a = m + 1;
              else z = m;
            }
          }
        }
        end = a * rec;
        count = (end - start) / rec;
        lastHi = rd32(b, end - rec);
        lastLo = rd32(b, end - rec + 4);
        out?.appendRun(b, start, end, count, firstHi, firstLo, lastHi, lastLo);
        this.prevHi = lastHi;
        this.prevLo = lastLo;
        this.pos = end;
        if (end >= b.length) this.loadBlock();
        else this.parse();
      } else {
        count = 0;
        do {
          lastHi = this.hi;
          lastLo = this.lo;
          count++;
          this.pos = this.next;
          if (this.pos >= b.length) break;
          this.parse();
        } while (this.hi < hi || (this.hi === hi && this.lo < lo));
        end = this.pos;
        out?.appendRun(b, start, end, count, firstHi, firstLo, lastHi, lastLo);
        this.prevHi = lastHi;
        this.prevLo = lastLo;
        if (end >= b.length) this.loadBlock();
      }
    }
  }

  /** Copies everything that is left. */
  copyRest(out: SortedRunWriter): void {
    this.copyBelow(0xffffffff, 0xffffffff, out);
    if (this.has) {
      // Only the maximal key 2^64−1 can remain.
      out.append(this.hi, this.lo, this.payload.subarray(this.vs, this.ve));
      this.advance();
    }
  }
}

/** Opens a file for reading, or returns -1 when it does not exist. */
export function openIfExists(file: string): number {
  try {
    return fs.openSync(file, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return -1;
    throw e;
  }
}
