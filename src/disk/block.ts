/**
 * The block format shared by every drumcrawl data file (DRUM buckets, the sorted cache Z, disk
 * queues). A file is a sequence of self-describing blocks, each written with one sequential write:
 *
 *   offset size
 *   0      4    magic 0x4B4C4244 ("DBLK", little-endian)
 *   4      1    flags: bit 0 = payload is zstd-compressed; bit 1 = checksum is XXH64 (below);
 *               bit 2 = bytes 6–7 hold a tag (DRUM bucket files: the generation, below)
 *   5      1    version = 1
 *   6      2    tag (u16 LE) when flag bit 2 is set, else 0
 *   8      4    record count in the block
 *   12     4    raw (uncompressed) payload length
 *   16     4    stored payload length
 *   20     4    checksum: flag bit 1 clear = CRC-32 (zlib) of header bytes [0,20) followed by the
 *               stored payload; set = the low 32 bits of XXH64(stored payload, seed = CRC-32 of
 *               header bytes [0,20))
 *   24     …    stored payload
 *
 * Format revisions (all with version byte 1, told apart by the flags): 1.0 = CRC-32 checksum, no
 * tag; 1.1 = XXH64 checksum (flag bit 1); 1.2 = 1.1 plus a generation tag (flag bit 2), in DRUM
 * bucket files. Writers write 1.1 (1.2 in bucket files); readers read all three.
 *
 * The checksum lets a reader tell a torn tail (file ends inside a block → CRAWL_DISK_TRUNCATED)
 * and corruption (mismatch → CRAWL_DISK_CHECKSUM) from good data; it never yields a wrong record
 * silently. Recovery code decides which of these is an expected crash artefact (past the last
 * committed offset) and which is an error (before it).
 *
 * Tags (block format 1.2). DRUM recycles bucket files (overwrites a merged generation's files
 * instead of writing new ones: new page-cache pages cost ~1–2.7 s of system CPU per GB on this VM,
 * overwriting cached ones 0.15–0.2, docs/drum.md "File recycling"), so a bucket file holds stale
 * blocks of older generations after its live data. Each block of a bucket file carries its
 * generation's tag (the header bytes 6–7, covered by the checksum's seed), so that recovery can
 * tell the live chain from stale blocks (src/drum/drum.ts). Untagged blocks (flag bit 2 clear) are
 * still read; a reader of format 1.1 or older refuses tagged blocks with CRAWL_DISK_FORMAT (unknown
 * flag), never misreads them.
 *
 * Checksums (block format 1.1): writers use XXH64 (flag bit 1); readers accept both it and the
 * CRC-32 of format 1.0. Why: every byte DRUM moves is checksummed once written and once read
 * (~20–30 GB per merge round at U = 10^9), and zlib's CRC-32 runs at ~3.2 GB/s on this machine
 * while xxhash-wasm's XXH64 runs at ~5.5–6 GB/s including the copy into wasm memory (docs/drum.md,
 * "Block checksums"). Both detect a corrupted block except with probability 2^-32; CRC-32's
 * guarantee for short bursts is not what protects these files (a torn or flipped block is checked
 * as a whole).
 */
import * as fs from 'node:fs';
import * as zlib from 'node:zlib';
import * as zstd from 'zstd-napi';
import xxhash from 'xxhash-wasm';
import { CrawlError } from '../errors.js';
import { DiskErrorCode } from './errors.js';
import type { IoCounters } from './io-counters.js';

export const BLOCK_MAGIC = 0x4b4c4244;
export const BLOCK_VERSION = 1;
export const BLOCK_HEADER_BYTES = 24;
/** Largest payload a block may declare; anything larger is treated as corruption. */
export const MAX_BLOCK_PAYLOAD = 1 << 30;
const FLAG_ZSTD = 1;
const FLAG_XXH64 = 2;
const FLAG_TAG = 4;
/** No tag: DecodedBlock.tag of an untagged block; BlockWriter's tag for untagged blocks. */
export const NO_TAG = -1;

const XX = await xxhash();
/**
 * Largest piece hashed in one call: xxhash-wasm grows its memory to the input, so this bounds it
 * (4 MiB: above DRUM's Z blocks, which are a little over 1 MiB — with a 1 MiB bound every Z block
 * took the streaming path, whose per-call state copies showed in the merge's profile).
 */
const XX_PIECE = 4 << 20;

/** Low 32 bits of XXH64(stored, seed = CRC-32 of the header's first 20 bytes). */
function xxSum(head20: Uint8Array, stored: Uint8Array): number {
  const seed = BigInt(zlib.crc32(head20));
  let h: bigint;
  if (stored.length <= XX_PIECE) h = XX.h64Raw(stored, seed);
  else {
    // Streaming gives the same hash as one call; pieces keep the wasm memory at ≤ 1 MiB.
    const st = XX.create64(seed);
    for (let o = 0; o < stored.length; o += XX_PIECE) st.update(stored.subarray(o, Math.min(stored.length, o + XX_PIECE)));
    h = st.digest();
  }
  return Number(h & 0xffffffffn);
}

export type Compression = 'zstd' | 'none';

/** Writes all of `buf` at `pos` (loops over short writes). */
export function writeFully(fd: number, buf: Uint8Array, pos: number): void {
  let off = 0;
  while (off < buf.length) off += fs.writeSync(fd, buf, off, buf.length - off, pos + off);
}

/** Reads up to `len` bytes at `pos` into `buf[0..]`; returns bytes read (short only at end of file). */
export function readFully(fd: number, buf: Uint8Array, len: number, pos: number): number {
  let off = 0;
  while (off < len) {
    const n = fs.readSync(fd, buf, off, len - off, pos + off);
    if (n === 0) break;
    off += n;
  }
  return off;
}

/**
 * Frames `raw` (count records) as one block: returns the bytes to write. Compression is applied
 * only when it actually shrinks the payload (incompressible blocks are stored raw, flag clear).
 */
export function frameBlock(raw: Uint8Array, count: number, compression: Compression, tag = NO_TAG): Uint8Array {
  const { header, stored } = frameParts(raw, count, compression, tag);
  const out = new Uint8Array(header.length + stored.length);
  out.set(header);
  out.set(stored, header.length);
  return out;
}

/**
 * Header and stored payload of a block, separately, so that a writer can hand both to writev(2)
 * without copying the payload into a framed buffer.
 */
export function frameParts(raw: Uint8Array, count: number, compression: Compression, tag = NO_TAG): { header: Buffer; stored: Uint8Array } {
  let stored = raw;
  let flags = 0;
  if (compression === 'zstd' && raw.length > 64) {
    const c = zstd.compress(raw, { compressionLevel: 1 });
    if (c.length < raw.length) {
      stored = c;
      flags = FLAG_ZSTD;
    }
  }
  const header = Buffer.allocUnsafe(BLOCK_HEADER_BYTES);
  header.writeUInt32LE(BLOCK_MAGIC, 0);
  header[4] = flags | FLAG_XXH64 | (tag === NO_TAG ? 0 : FLAG_TAG);
  header[5] = BLOCK_VERSION;
  header.writeUInt16LE(tag === NO_TAG ? 0 : tag & 0xffff, 6);
  header.writeUInt32LE(count >>> 0, 8);
  header.writeUInt32LE(raw.length >>> 0, 12);
  header.writeUInt32LE(stored.length >>> 0, 16);
  header.writeUInt32LE(xxSum(header.subarray(0, 20), stored) >>> 0, 20);
  return { header, stored };
}

export interface DecodedBlock {
  /** Decoded (uncompressed) payload. */
  payload: Uint8Array;
  count: number;
  /** The block's tag (0..65535), NO_TAG when it has none. */
  tag: number;
  /** Offset of the block in its file. */
  offset: number;
  /** Offset just after it. */
  nextOffset: number;
}

/**
 * Sequential reader of the blocks of one file between `start` and `end`, with a read-ahead buffer
 * so that small blocks do not cost one system call each. It never seeks backwards.
 */
export class BlockReader {
  private buf: Buffer;
  private bufStart = 0; // file offset of buf[0]
  private bufLen = 0;
  private pos: number;

  constructor(
    private readonly fd: number,
    start: number,
    private readonly end: number,
    private readonly file: string,
    private readonly io: IoCounters,
    private readonly kind: string,
    private readonly readAhead = 1 << 20,
    /**
     * Reuse one read-ahead buffer: a payload returned by next() is then valid only until the
     * following next() call. For consumers that parse or copy each block at once (DRUM's merge);
     * without it every refill allocates, and garbage buffers inflate RSS until V8 collects them.
     */
    private readonly reuse = false,
    /**
     * With `reuse`: a buffer to read into (grown when a block needs more), e.g. one that the
     * caller keeps across readers so that each new reader allocates nothing (take it back from
     * `buffer` when done: it may have been replaced by a larger one).
     */
    initial?: Buffer,
  ) {
    this.pos = start;
    this.bufStart = start;
    this.buf = reuse && initial !== undefined ? initial : Buffer.allocUnsafe(0);
  }

  /** The read buffer (see `initial`). */
  get buffer(): Buffer {
    return this.buf;
  }

  /** Offset of the next block to read. */
  get offset(): number {
    return this.pos;
  }

  /** Ensures bytes [pos, pos+len) are in the buffer; returns how many are available (< len at end). */
  private fill(len: number): number {
    const have = this.bufStart + this.bufLen - this.pos;
    if (this.pos >= this.bufStart && have >= len) return len;
    const avail = this.end - this.pos;
    const want = Math.min(Math.max(len, this.readAhead), avail);
    // A fresh buffer per refill: decoded payloads handed out earlier are views into the old one
    // and stay valid (no per-block copy). Keep the bytes we already have.
    const old = this.buf;
    if (!this.reuse || this.buf.length < want) this.buf = Buffer.allocUnsafe(this.reuse ? Math.max(want, this.readAhead) : want);
    let kept = 0;
    if (this.pos >= this.bufStart && have > 0) {
      old.copy(this.buf, 0, this.pos - this.bufStart, this.pos - this.bufStart + have); // memmove-safe
      kept = have;
    }
    const n = want - kept > 0 ? readFully(this.fd, this.buf.subarray(kept), want - kept, this.pos + kept) : 0;
    if (n > 0) this.io.read(this.kind, n);
    this.bufStart = this.pos;
    this.bufLen = kept + n;
    return Math.min(len, this.bufLen);
  }

  private err(code: string, msg: string, offset: number): CrawlError {
    return new CrawlError(code, `${msg} in ${this.file} at offset ${offset}`, {
      details: { file: this.file, offset },
    });
  }

  /**
   * The next block, or null at `end`. Throws CRAWL_DISK_TRUNCATED when the file ends inside a
   * block, CRAWL_DISK_CHECKSUM on a CRC mismatch, CRAWL_DISK_FORMAT on a bad header.
   */
  next(): DecodedBlock | null {
    if (this.pos >= this.end) return null;
    const at = this.pos;
    if (this.fill(BLOCK_HEADER_BYTES) < BLOCK_HEADER_BYTES) {
      throw this.err(DiskErrorCode.TRUNCATED, 'file ends inside a block header', at);
    }
    let h = at - this.bufStart;
    const b = this.buf;
    if (b.readUInt32LE(h) !== BLOCK_MAGIC || b[h + 5] !== BLOCK_VERSION) {
      throw this.err(DiskErrorCode.FORMAT, 'not a drumcrawl block (bad magic or version)', at);
    }
    const flags = b[h + 4]!;
    const count = b.readUInt32LE(h + 8);
    const rawLen = b.readUInt32LE(h + 12);
    const storedLen = b.readUInt32LE(h + 16);
    const crc = b.readUInt32LE(h + 20);
    const tag = (flags & FLAG_TAG) !== 0 ? b.readUInt16LE(h + 6) : NO_TAG;
    if (storedLen > MAX_BLOCK_PAYLOAD || rawLen > MAX_BLOCK_PAYLOAD || (flags & ~(FLAG_ZSTD | FLAG_XXH64 | FLAG_TAG)) !== 0) {
      throw this.err(DiskErrorCode.FORMAT, 'impossible block header', at);
    }
    const total = BLOCK_HEADER_BYTES + storedLen;
    if (this.fill(total) < total) {
      throw this.err(DiskErrorCode.TRUNCATED, 'file ends inside a block', at);
    }
    h = at - this.bufStart;
    const bb = this.buf; // fill() may have replaced the buffer
    const stored = bb.subarray(h + BLOCK_HEADER_BYTES, h + total);
    const actual = (flags & FLAG_XXH64) !== 0 ? xxSum(bb.subarray(h, h + 20), stored) >>> 0 : zlib.crc32(stored, zlib.crc32(bb.subarray(h, h + 20))) >>> 0;
    if (actual !== crc) throw this.err(DiskErrorCode.CHECKSUM, 'block checksum mismatch', at);
    let payload: Uint8Array;
    if ((flags & FLAG_ZSTD) !== 0) {
      try {
        const d = zstd.decompress(stored);
        payload = new Uint8Array(d.buffer, d.byteOffset, d.length);
      } catch (cause) {
        throw new CrawlError(DiskErrorCode.CHECKSUM, `zstd payload does not decode in ${this.file} at offset ${at}`, {
          cause,
          details: { file: this.file, offset: at },
        });
      }
      if (payload.length !== rawLen) throw this.err(DiskErrorCode.CHECKSUM, 'decoded length mismatch', at);
    } else {
      if (rawLen !== storedLen) throw this.err(DiskErrorCode.FORMAT, 'raw/stored length mismatch', at);
      // A view: the read-ahead buffer is never reused (see fill()).
      payload = new Uint8Array(stored.buffer, stored.byteOffset, stored.length);
    }
    this.pos = at + total;
    return { payload, count, tag, offset: at, nextOffset: this.pos };
  }
}

/**
 * Scans blocks from `start` to the end of the file and returns the offset just after the last good
 * block and the number of records in the good blocks. Used by recovery: everything past the
 * returned offset is a torn tail of an interrupted write (or garbage) and may be cut off.
 */
export function scanValidPrefix(
  fd: number,
  start: number,
  end: number,
  file: string,
  io: IoCounters,
  kind: string,
): { validEnd: number; records: number; blocks: number; torn: boolean } {
  const r = new BlockReader(fd, start, end, file, io, kind);
  let records = 0;
  let blocks = 0;
  let validEnd = start;
  for (;;) {
    let blk: DecodedBlock | null;
    try {
      blk = r.next();
    } catch {
      return { validEnd, records, blocks, torn: true };
    }
    if (blk === null) return { validEnd, records, blocks, torn: false };
    records += blk.count;
    blocks++;
    validEnd = blk.nextOffset;
  }
}

/** Appends framed blocks to a file at a known offset with one positional write each. */
export class BlockWriter {
  constructor(
    readonly fd: number,
    private pos: number,
    private readonly io: IoCounters,
    private readonly kind: string,
    private readonly compression: Compression,
    /** Tag of every block written (0..65535; only the low 16 bits are kept), or NO_TAG. */
    private readonly tag = NO_TAG,
  ) {}

  get offset(): number {
    return this.pos;
  }

  /** Writes one block holding `count` records; returns its offset. */
  writeBlock(raw: Uint8Array, count: number): number {
    const { header, stored } = frameParts(raw, count, this.compression, this.tag);
    const at = this.pos;
    const total = header.length + stored.length;
    const n = fs.writevSync(this.fd, [header, stored], at);
    if (n < total) {
      // Short write (rare): finish with plain positional writes.
      const framed = frameBlock(raw, count, this.compression, this.tag);
      writeFully(this.fd, framed.subarray(n), at + n);
    }
    this.pos += total;
    this.io.wrote(this.kind, total);
    return at;
  }

  sync(): void {
    fs.fsyncSync(this.fd);
    this.io.synced(this.kind);
  }
}
