/**
 * Key-only sorted runs with delta-coded keys — DRUM's disk cache Z for repositories without values
 * (URLseen, PLDedges, ContentSeen), Z format 2.
 *
 * Z holds strictly increasing 64-bit hashes. U random hashes in a bucket's key range have gaps of
 * about range/U (2^34 at U = 10^9 with 16 buckets), so a gap fits in far fewer than 8 bytes: a
 * block stores its first key whole and every further key as its gap to the one before, in a fixed
 * number w of bytes (little-endian) chosen by the writer for the whole file from the expected key
 * count (`gapBytesFor`). A gap that does not fit w bytes closes the block and starts a new one with
 * that key whole, so any key set can be stored (clustered, non-hash keys just make short blocks).
 * At U = 10^9 this is 5 bytes per key instead of 8: 37 % less Z to read, checksum and write per
 * merge round, and a Z that fits the page cache better (docs/drum.md, "File formats").
 *
 * Block payload (inside the usual checksummed block, block.ts): w (u8, 1..8), first key hi (u32 LE),
 * first key lo (u32 LE), then (count − 1) gaps of w bytes. Gaps must be > 0 (keys strictly
 * increasing), and each block's first key must exceed the previous block's last key; the reader
 * checks both (CRAWL_DRUM_CACHE_CORRUPT) besides the block CRC.
 *
 * Merging costs one decode (an add with carry) per Z key, to find where the bucket's keys fall;
 * runs of untouched keys are then copied to the new Z as raw gap bytes when both files use the
 * same w (the usual case: w changes only when U crosses a power of 256 of the gap).
 */
import { CrawlError } from '../errors.js';
import { BlockReader, BlockWriter, type Compression } from './block.js';
import type { IoCounters } from './io-counters.js';
import { putByteKey } from './codec.js';
import { CACHE_CORRUPT, copyRun } from './sorted-file.js';

const TWO32 = 4294967296;
const HEAD = 9; // w byte + first key

/**
 * Gap width (bytes) for about `keys` random keys spread over a key range of 2^rangeBits: the mean
 * gap times 2^5 (an exponential gap exceeds 32× its mean with probability e^−32), at least 1, at
 * most 8.
 */
export function gapBytesFor(rangeBits: number, keys: number): number {
  if (!(keys >= 1)) return 8;
  const bits = rangeBits - Math.log2(keys) + 5;
  return Math.min(8, Math.max(1, Math.ceil(bits / 8)));
}

/** Writes a key-only delta-coded run; keys must be appended in strictly increasing order. */
export class KeyRunWriter {
  private buf: Uint8Array;
  private len = 0;
  private count = 0;
  private lastHi = -1;
  private lastLo = -1;
  private readonly w: BlockWriter;
  /** max gap + 1 that fits w bytes, as hi/lo limits: gap < 2^(8w). */
  private readonly gapHiLimit: number; // gap hi word must be < this (w > 4)
  private readonly gapLoLimit: number; // gap must be < this when w ≤ 4 (hi word 0)
  /** Records written so far (settled ones: read after finish()). */
  records = 0;
  /**
   * A deferred run (deferGaps): raw gap bytes runSrc[runFrom, runTo) of runCount keys that follow
   * this writer's last key, the last of them (runHi, runLo). They live in the reader's block
   * buffer until settle() copies them; the reader settles before it reuses that buffer. Bound: one
   * block of the source, at most `room` bytes (so no RAM of its own).
   */
  private runSrc: Uint8Array | null = null;
  private runFrom = 0;
  private runTo = 0;
  private runCount = 0;
  private runHi = 0;
  private runLo = 0;

  constructor(
    private readonly fd: number,
    private readonly file: string,
    readonly gapBytes: number,
    io: IoCounters,
    kind: string,
    compression: Compression,
    private readonly blockBytes = 1 << 20,
    initial?: Uint8Array,
  ) {
    if (!Number.isInteger(gapBytes) || gapBytes < 1 || gapBytes > 8) throw new RangeError('gapBytes must be 1..8');
    this.w = new BlockWriter(fd, 0, io, kind, compression);
    this.buf = initial ?? new Uint8Array(Math.min(blockBytes * 2 + 64, 1 << 16));
    this.gapHiLimit = gapBytes > 4 ? 2 ** (8 * (gapBytes - 4)) : 1;
    this.gapLoLimit = gapBytes >= 4 ? TWO32 : 2 ** (8 * gapBytes);
  }

  /** The write buffer (to hand to the next writer). */
  get buffer(): Uint8Array {
    return this.buf;
  }

  get fdNumber(): number {
    return this.fd;
  }

  private room0(n: number): void {
    if (this.len + n <= this.buf.length) return;
    const grown = new Uint8Array(Math.max(this.len + n, Math.min(this.blockBytes * 2 + 64, this.buf.length * 2)));
    grown.set(this.buf.subarray(0, this.len));
    this.buf = grown;
  }

  private flushBlock(): void {
    if (this.count === 0) return;
    this.w.writeBlock(this.buf.subarray(0, this.len), this.count);
    this.len = 0;
    this.count = 0;
  }

  private startBlock(hi: number, lo: number): void {
    this.room0(HEAD);
    putByteKey(this.buf, this.len, this.gapBytes, hi, lo);
    this.len += HEAD;
  }

  /** Bytes the open block can still take (deferred run included) before it reaches blockBytes. */
  get room(): number {
    const r = this.blockBytes - this.len - (this.runTo - this.runFrom);
    return r > 0 ? r : 0;
  }

  /** True when gap bytes at `src[at]` would continue the deferred run. */
  extendsRun(src: Uint8Array, at: number): boolean {
    return this.runSrc === src && this.runTo === at;
  }

  /**
   * Appends `count` keys given as raw gap bytes `src[from, to)` of a run with this writer's gap
   * width that follows the writer's last key (so the gaps are the same in both files); the run's
   * last key is (lastHi, lastLo). The bytes are only remembered (extending the deferred run when
   * they continue it) and copied by settle(): `src` must stay unchanged until then. The caller keeps the open block within
   * blockBytes (`room`): a run cannot be split, since its gaps need their predecessor in the block.
   */
  deferGaps(src: Uint8Array, from: number, to: number, count: number, lastHi: number, lastLo: number): void {
    if (this.runSrc !== src || this.runTo !== from) {
      if (this.runSrc !== null) this.settle();
      this.runSrc = src;
      this.runFrom = from;
    }
    this.runTo = to;
    this.runCount += count;
    this.runHi = lastHi;
    this.runLo = lastLo;
  }

  /** Copies the deferred run into the block (never closes the block: a key may follow as a gap). */
  settle(): void {
    const src = this.runSrc;
    if (src === null) return;
    const len = this.runTo - this.runFrom;
    this.room0(len);
    copyRun(this.buf, this.len, src, this.runFrom, this.runTo);
    this.len += len;
    this.count += this.runCount;
    this.records += this.runCount;
    this.lastHi = this.runHi;
    this.lastLo = this.runLo;
    this.runSrc = null;
    this.runFrom = 0;
    this.runTo = 0;
    this.runCount = 0;
  }

  /** Appends one key (> the last one). */
  append(hi: number, lo: number): void {
    if (this.runSrc !== null) this.settle();
    const lh = this.lastHi;
    const ll = this.lastLo;
    if (hi < lh || (hi === lh && lo <= ll)) {
      throw new CrawlError(CACHE_CORRUPT, `keys out of order writing ${this.file}`, { details: { file: this.file } });
    }
    let gl = lo - ll;
    let gh = hi - lh;
    if (gl < 0) {
      gl += TWO32;
      gh -= 1;
    }
    if (this.count === 0 || gh >= this.gapHiLimit || (gh === 0 ? gl >= this.gapLoLimit : this.gapBytes <= 4)) {
      if (this.len >= this.blockBytes || this.count > 0) this.flushBlock();
      this.startBlock(hi, lo);
    } else {
      const w = this.gapBytes;
      this.room0(w);
      const b = this.buf;
      let p = this.len;
      b[p] = gl;
      if (w > 1) b[p + 1] = gl >>> 8;
      if (w > 2) b[p + 2] = gl >>> 16;
      if (w > 3) b[p + 3] = gl >>> 24;
      for (let t = 4, h = gh; t < w; t++, h >>>= 8) b[p + t] = h; // gh is a difference of hi words: 0 ≤ gh < 2^32
      p += w;
      this.len = p;
    }
    this.count++;
    this.records++;
    this.lastHi = hi;
    this.lastLo = lo;
    if (this.len >= this.blockBytes) this.flushBlock();
  }

  /** True when a raw gap run can follow: an open block (the run's gaps need a predecessor). */
  get canAppendGaps(): boolean {
    return this.count > 0 || this.runSrc !== null;
  }

  /** Writes the last block and fsyncs; returns the file size. */
  finish(): number {
    this.settle();
    this.flushBlock();
    this.w.sync();
    return this.w.offset;
  }
}

const EMPTY = new Uint8Array(0);

/** Streams a key-only delta-coded run. `has` says whether a current key (hi, lo) exists. */
export class KeyRunReader {
  has = false;
  hi = 0;
  lo = 0;
  /** Records in the blocks read so far (checked against the manifest at the end). */
  recordsSeen = 0;
  private payload: Uint8Array = EMPTY;
  /** A DataView of `payload`: the scan loop reads a gap's low word with one unaligned load. */
  private dv: DataView = new DataView(new ArrayBuffer(0));
  private w = 8;
  private next = 0; // offset of the gap after the current key
  private left = 0; // keys after the current one in this block
  private prevHi = -1;
  private prevLo = -1;
  /** Offset of the current key's gap bytes in `payload`; −1 when it is a block's first key (stored whole). */
  private curGap = -1;
  /** The writer holding a deferred run of this block's bytes (settled before the block's buffer is reused). */
  private deferredTo: KeyRunWriter | null = null;
  /** readGap's result. */
  private gLo = 0;
  private gHi = 0;
  /** skipBelow's results besides the offset it returns (copyBelow's fast path). */
  private skipRem = 0;
  private skipGap = 0;
  private readonly reader: BlockReader;

  constructor(
    fd: number,
    size: number,
    private readonly file: string,
    io: IoCounters,
    kind: string,
    readAhead = 4 << 20,
    initial?: Buffer,
  ) {
    this.reader = new BlockReader(fd, 0, size, file, io, kind, readAhead, true, initial);
    this.loadBlock();
  }

  /** The read buffer (to hand to the next reader). */
  get buffer(): Buffer {
    return this.reader.buffer;
  }

  /** Gap width of the current block. */
  get gapBytes(): number {
    return this.w;
  }

  private corrupt(msg: string): CrawlError {
    return new CrawlError(CACHE_CORRUPT, `${msg} in ${this.file}`, { details: { file: this.file } });
  }

  private loadBlock(): void {
    if (this.deferredTo !== null) {
      // The next block may overwrite this one's bytes in the read buffer.
      this.deferredTo.settle();
      this.deferredTo = null;
    }
    this.curGap = -1;
    for (;;) {
      const blk = this.reader.next();
      if (blk === null) {
        this.has = false;
        this.payload = EMPTY;
        return;
      }
      this.recordsSeen += blk.count;
      if (blk.count === 0) continue;
      const b = blk.payload;
      const w = b.length > 0 ? b[0]! : 0;
      if (w < 1 || w > 8 || b.length !== HEAD + (blk.count - 1) * w) throw this.corrupt('bad key block layout');
      const hi = (b[1]! | (b[2]! << 8) | (b[3]! << 16) | (b[4]! << 24)) >>> 0;
      const lo = (b[5]! | (b[6]! << 8) | (b[7]! << 16) | (b[8]! << 24)) >>> 0;
      if (hi < this.prevHi || (hi === this.prevHi && lo <= this.prevLo)) throw this.corrupt('keys out of order');
      this.payload = b;
      this.dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
      this.w = w;
      this.hi = hi;
      this.lo = lo;
      this.next = HEAD;
      this.left = blk.count - 1;
      this.has = true;
      return;
    }
  }

  /** Moves past the current key. */
  advance(): void {
    this.prevHi = this.hi;
    this.prevLo = this.lo;
    if (this.left === 0) {
      this.loadBlock();
      return;
    }
    const p = this.next;
    this.readGap(p);
    let lo = this.lo + this.gLo;
    let hi = this.hi + this.gHi;
    if (lo >= TWO32) {
      lo -= TWO32;
      hi += 1;
    }
    if (hi >= TWO32) throw this.corrupt('key overflows 64 bits');
    this.hi = hi;
    this.lo = lo;
    this.curGap = p;
    this.next = p + this.w;
    this.left--;
  }

  /**
   * Copies every key < (hi, lo) to `out` and stops at the first key ≥ (hi, lo), which becomes
   * current (or `has` turns false at the end).
   *
   * Keys move as raw gap bytes whenever their predecessor in Z is also their predecessor in the
   * new file, and those bytes are not copied at once: `out` keeps them as a deferred run
   * (KeyRunWriter.deferGaps) that the next call extends while nothing is inserted between. A
   * merge mostly meets duplicates (8 of 9 tuples in the bench, thesis V.1's URLseen mix), which
   * leave Z unchanged, so a run is copied once per inserted key or output block instead of once
   * per tuple, and no key is re-encoded at a duplicate. A key is appended (re-encoded) only when
   * it follows an inserted key, starts a block of Z, or starts a block of the new file.
   */
  copyBelow(hi: number, lo: number, out: KeyRunWriter): void {
    while (this.has && (this.hi < hi || (this.hi === hi && this.lo < lo))) {
      // 1. The current key: raw when its gap continues out's deferred run, else re-encoded.
      const w = this.w;
      if (this.curGap >= 0 && out.room >= w && out.extendsRun(this.payload, this.curGap)) {
        out.deferGaps(this.payload, this.curGap, this.next, 1, this.hi, this.lo);
        this.deferredTo = out;
      } else out.append(this.hi, this.lo);
      if (this.left === 0) {
        this.advance(); // next block (loadBlock settles out's run first: the payload is reused)
        continue;
      }
      if (out.gapBytes !== w || !out.canAppendGaps) {
        // Different widths (Z's width changed with U), or out just closed a block: key by key.
        this.advance();
        continue;
      }
      // 2. The following keys of this block while they are < (hi, lo) and fit out's block,
      //    decoded inline; they join out's deferred run as raw gap bytes.
      const b = this.payload;
      const start = this.next;
      const left0 = this.left;
      // Keys that still fit out's current block (≥ 0): out's blocks stay ≤ blockBytes + one key.
      const fit = Math.floor(out.room / w);
      let left = left0 < fit ? left0 : fit;
      let p = start;
      let ch = this.hi;
      let cl = this.lo;
      let lastH = ch;
      let lastL = cl;
      let n = 0;
      let stopped = false;
      let g = 0;
      if (w <= 6 && hi - ch < 1048576) {
        // Fast path (the usual case: gaps of ≤ 6 bytes, target < 2^52 ahead): count the distance
        // to the target down by whole gaps as exact doubles — one subtract and compare per key
        // instead of a two-word add and compare — and rebuild the keys at the stopping point.
        const rem0 = (hi - ch) * TWO32 + (lo - cl); // > 0: the current key is below the target
        p = this.skipBelow(p, left, w, rem0);
        const rem = this.skipRem;
        stopped = this.skipGap > 0;
        g = this.skipGap;
        // skipBelow counts neither keys nor their sum: both follow from p and rem.
        n = (p - start) / w;
        left -= n;
        if (n > 0) {
          const acc = rem0 - rem; // exact: integers < 2^53
          const al = acc % TWO32;
          lastL = cl + al;
          lastH = ch + (acc - al) / TWO32;
          if (lastL >= TWO32) {
            lastL -= TWO32;
            lastH += 1;
          }
          if (lastH >= TWO32) throw this.corrupt('key overflows 64 bits');
        }
      } else
        while (left > 0) {
          this.readGap(p);
          let nl = lastL + this.gLo;
          let nh = lastH + this.gHi;
          if (nl >= TWO32) {
            nl -= TWO32;
            nh += 1;
          }
          if (nh >= TWO32) throw this.corrupt('key overflows 64 bits');
          if (!(nh < hi || (nh === hi && nl < lo))) break;
          lastH = nh;
          lastL = nl;
          p += w;
          left--;
          n++;
        }
      if (n > 0) {
        out.deferGaps(b, start, p, n, lastH, lastL);
        this.deferredTo = out;
      }
      const rest = left0 - n; // keys of the block after the last one copied
      if (rest === 0) {
        // Every key of the block was < target: go on with the next block.
        this.prevHi = lastH;
        this.prevLo = lastL;
        this.left = 0;
        this.loadBlock();
        continue;
      }
      this.settleAt(p, w, rest, lastH, lastL, stopped, g);
    }
  }

  /**
   * copyBelow's fast path over one block: from the gap at offset p, passes at most `left` keys while
   * the distance `rem` to the target stays positive, counting it down by whole gaps as exact doubles
   * (gaps of ≤ 6 bytes). Returns the offset it stopped at; skipRem is the distance left and skipGap
   * the gap it stopped on (0 when it passed all `left` keys).
   */
  private skipBelow(p: number, left: number, w: number, rem: number): number {
    let g = 0;
    let stopped = false;
    if (w === 5 || w === 6) {
      // The widths at U = 10^7..10^9 with 16 buckets: DataView loads (one unaligned 32-bit load
      // instead of four byte loads) made this loop ~2× faster in a microbenchmark (6.5 → 3.2 ns
      // per key at w = 5); it runs once per Z key, 10^9 times per round at U = 10^9. One loop
      // per width: with the width as a variable inside the loop it was slower than before.
      const dv = this.dv;
      if (w === 5) {
        const end = p + left * 5;
        while (p < end) {
          g = dv.getUint32(p, true) + dv.getUint8(p + 4) * TWO32;
          if (g === 0) throw this.corrupt('keys out of order (zero gap)');
          if (g >= rem) {
            stopped = true;
            break;
          }
          rem -= g;
          p += 5;
        }
      } else {
        const end = p + left * 6;
        while (p < end) {
          g = dv.getUint32(p, true) + dv.getUint16(p + 4, true) * TWO32;
          if (g === 0) throw this.corrupt('keys out of order (zero gap)');
          if (g >= rem) {
            stopped = true;
            break;
          }
          rem -= g;
          p += 6;
        }
      }
    } else {
      const end = p + left * w;
      while (p < end) {
        g = this.gapAt(p);
        if (g >= rem) {
          stopped = true;
          break;
        }
        rem -= g;
        p += w;
      }
    }
    this.skipRem = rem;
    this.skipGap = stopped ? g : 0;
    return p;
  }

  /**
   * The key at p becomes current: the first key ≥ target, or (out's block is full) the next
   * one to copy, which the next turn of the loop appends as the head of a new block.
   * `rest` keys of the block are left from p on; `stopped` and `g` are skipBelow's stop.
   */
  private settleAt(p: number, w: number, rest: number, lastH: number, lastL: number, stopped: boolean, g: number): void {
    let gl: number;
    let gh: number;
    if (stopped) {
      // The fast path stopped on gap g (≤ 6 bytes: an exact double).
      gl = g % TWO32;
      gh = (g - gl) / TWO32;
    } else {
      this.readGap(p);
      gl = this.gLo;
      gh = this.gHi;
    }
    let cl = lastL + gl;
    let ch = lastH + gh;
    if (cl >= TWO32) {
      cl -= TWO32;
      ch += 1;
    }
    if (ch >= TWO32) throw this.corrupt('key overflows 64 bits');
    this.prevHi = lastH;
    this.prevLo = lastL;
    this.hi = ch;
    this.lo = cl;
    this.curGap = p;
    this.next = p + w;
    this.left = rest - 1;
  }

  /** The gap at offset p of the current block as a double (exact: only for w ≤ 6); > 0. */
  private gapAt(p: number): number {
    const b = this.payload;
    const w = this.w;
    let g = w >= 4 ? (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0 : w === 3 ? b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) : w === 2 ? b[p]! | (b[p + 1]! << 8) : b[p]!;
    if (w > 4) g += w === 5 ? b[p + 4]! * TWO32 : (b[p + 4]! + b[p + 5]! * 256) * TWO32;
    if (g === 0) throw this.corrupt('keys out of order (zero gap)');
    return g;
  }

  /** Decodes the gap at offset p of the current block (any width) into gLo/gHi; > 0. */
  private readGap(p: number): void {
    const b = this.payload;
    const w = this.w;
    let gl: number;
    let gh = 0;
    if (w >= 4) {
      gl = (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0;
      for (let t = w - 1; t >= 4; t--) gh = gh * 256 + b[p + t]!;
    } else {
      gl = b[p]!;
      if (w > 1) gl |= b[p + 1]! << 8;
      if (w > 2) gl |= b[p + 2]! << 16;
    }
    if (gl === 0 && gh === 0) throw this.corrupt('keys out of order (zero gap)');
    this.gLo = gl;
    this.gHi = gh;
  }

  /** Copies everything that is left. */
  copyRest(out: KeyRunWriter): void {
    this.copyBelow(0xffffffff, 0xffffffff, out);
    if (this.has) {
      // Only the maximal key 2^64−1 can remain.
      out.append(this.hi, this.lo);
      this.advance();
    }
  }
}
