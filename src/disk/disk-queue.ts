/**
 * DiskQueue: a FIFO of byte records on disk (used by BEAST's queues Q1..Qj/QF, and by QR and QD,
 * thesis VII.2 and Fig. 2). It is what lets the crawler keep "all queues on disk" with RAM bounded
 * by one write block and one read block per queue.
 *
 * Layout of `dir`:
 *   seg-<12-digit id>.dq   append-only segment files of blocks (src/disk/block.ts); a block's
 *                          payload is `count` records, each a varint length followed by the bytes.
 *   manifest.json          written atomically at commit(): committed write end (segment, offset),
 *                          read cursor (segment, block offset, records consumed in that block),
 *                          and the record counters pushed/shifted at that point.
 *
 * Invariants / guarantees:
 *   - FIFO; at-least-once: records shifted since the last commit() are delivered again after a
 *     crash; records pushed before a commit() are never lost.
 *   - Records in blocks written (full write buffer) after the last commit survive a process crash
 *     too (they are in the OS page cache); on reopen the tail past the committed end is scanned and a
 *     torn last block (interrupted write) is cut off, so they are kept when intact.
 *   - Corruption before the committed end is never skipped silently: reading it throws
 *     CRAWL_DISK_CHECKSUM / CRAWL_DISK_TRUNCATED.
 *   - Segments wholly before the committed read cursor are deleted after the manifest is durable.
 *
 * RAM bound: one write buffer (≤ blockBytes + one record) and one decoded read block per queue.
 * I/O is synchronous (fs.*Sync) in large blocks: a 1 MiB write to the page cache costs well under a
 * millisecond, which keeps ordering trivial; the async signatures leave room for a worker later.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CrawlError } from '../errors.js';
import { BlockReader, BlockWriter, scanValidPrefix, type Compression } from './block.js';
import { writeFileAtomicSync, fsyncDir } from './atomic.js';
import { readVarint, varintSize, writeVarint } from './codec.js';
import { DiskErrorCode } from './errors.js';
import { IoCounters } from './io-counters.js';

export interface DiskQueueOptions {
  /** Write-buffer size: records are written to disk in blocks of about this many bytes. @default 262144 */
  blockBytes?: number;
  /** Block compression. @default 'none' */
  compression?: Compression;
  /** A new segment file starts once the current one reaches this size. @default 67108864 (64 MiB) */
  segmentBytes?: number;
  /** I/O counters to add to (shared by several queues, e.g. all of BEAST). @default a fresh one */
  io?: IoCounters;
  /**
   * What reopen does with blocks written after the last commit: 'keep' the intact ones, or 'cut'
   * them — for a queue whose uncommitted pushes all come back from committed state after a crash
   * (the frontier's QR: what it re-pushed or took from BEAST since its last commit is read again
   * from the committed cursors; kept, those records would be there twice). @default 'keep'
   */
  uncommittedTail?: 'keep' | 'cut';
}

interface Manifest {
  version: 1;
  writeSeg: number;
  writeOff: number;
  readSeg: number;
  readOff: number;
  readIdx: number;
  pushed: number;
  shifted: number;
}

const KIND = 'queue';
const segName = (id: number): string => `seg-${String(id).padStart(12, '0')}.dq`;

export class DiskQueue {
  readonly io: IoCounters;
  private readonly blockBytes: number;
  private readonly segmentBytes: number;
  private readonly compression: Compression;
  private closed = false;

  // Writer: current segment and pending (not yet written) records.
  private writeSeg: number;
  private writer: BlockWriter;
  private pend: Uint8Array;
  private pendLen = 0;
  private pendCount = 0;
  /** Segments written since the last commit that still need an fsync (rotated-out ones). */
  private unsyncedFds: number[] = [];

  // Reader cursor: (readSeg, readOff) = block start; readIdx = records consumed in it.
  private readSeg: number;
  private readOff: number;
  private readIdx: number;
  private block: Uint8Array[] | null = null; // decoded records of the block at readOff (disk blocks)
  private blockNext = 0;
  private reader: BlockReader | null = null;
  private readerFd = -1;
  private readerSeg = -1;
  /** Parse position inside `pend` for records consumed from the unwritten buffer. */
  private pendReadPos = 0;

  private pushed: number;
  private shifted: number;
  private readonly vtmp = new Int32Array(1);

  private constructor(
    readonly dir: string,
    m: Manifest,
    opts: Required<Omit<DiskQueueOptions, 'io'>> & { io: IoCounters },
    writeOff: number,
    pushedTotal: number,
  ) {
    this.io = opts.io;
    this.blockBytes = opts.blockBytes;
    this.segmentBytes = opts.segmentBytes;
    this.compression = opts.compression;
    this.writeSeg = m.writeSeg;
    const fd = fs.openSync(path.join(dir, segName(this.writeSeg)), 'r+');
    this.writer = new BlockWriter(fd, writeOff, this.io, KIND, this.compression);
    this.pend = new Uint8Array(this.blockBytes + 64);
    this.readSeg = m.readSeg;
    this.readOff = m.readOff;
    this.readIdx = m.readIdx;
    this.pushed = pushedTotal;
    this.shifted = m.shifted;
  }

  /**
   * Opens (creating if needed) the queue in `dir`. Recovery: segments before the read cursor are
   * removed; the tail after the committed write end is scanned and a torn last block is cut off.
   */
  static async open(dir: string, opts: DiskQueueOptions = {}): Promise<DiskQueue> {
    const o = {
      blockBytes: opts.blockBytes ?? 256 * 1024,
      compression: opts.compression ?? 'none',
      segmentBytes: opts.segmentBytes ?? 64 * 1024 * 1024,
      io: opts.io ?? new IoCounters(),
      uncommittedTail: opts.uncommittedTail ?? 'keep',
    };
    if (!Number.isInteger(o.blockBytes) || o.blockBytes < 16 || o.blockBytes > 256 * 1024 * 1024) {
      throw new CrawlError(DiskErrorCode.OPTIONS, 'options.blockBytes must be an integer in [16, 256 MiB]');
    }
    if (!Number.isInteger(o.segmentBytes) || o.segmentBytes < 1) {
      throw new CrawlError(DiskErrorCode.OPTIONS, 'options.segmentBytes must be a positive integer');
    }
    if (o.compression !== 'zstd' && o.compression !== 'none') {
      throw new CrawlError(DiskErrorCode.OPTIONS, "options.compression must be 'zstd' or 'none'");
    }
    fs.mkdirSync(dir, { recursive: true });
    const mfile = path.join(dir, 'manifest.json');
    let m: Manifest;
    if (!fs.existsSync(mfile)) {
      m = { version: 1, writeSeg: 1, writeOff: 0, readSeg: 1, readOff: 0, readIdx: 0, pushed: 0, shifted: 0 };
      // A leftover segment 1 from a crash before the first manifest holds nothing committed.
      fs.writeFileSync(path.join(dir, segName(1)), new Uint8Array(0));
      writeFileAtomicSync(mfile, JSON.stringify(m), o.io);
      return new DiskQueue(dir, m, o, 0, 0);
    }
    m = DiskQueue.readManifest(mfile);
    const segs = fs
      .readdirSync(dir)
      .map((f) => /^seg-(\d{12})\.dq$/.exec(f))
      .filter((x): x is RegExpExecArray => x !== null)
      .map((x) => Number(x[1]))
      .sort((a, b) => a - b);
    for (const s of segs) if (s < m.readSeg) fs.rmSync(path.join(dir, segName(s)), { force: true });
    // Recover the tail written after the last commit.
    let pushed = m.pushed;
    let lastSeg = m.writeSeg;
    let lastEnd = m.writeOff;
    const wfile = path.join(dir, segName(m.writeSeg));
    if (!fs.existsSync(wfile)) {
      throw new CrawlError(DiskErrorCode.TRUNCATED, `queue segment ${wfile} is missing`, { details: { file: wfile } });
    }
    const later = segs.filter((s) => s > m.writeSeg);
    const cut = o.uncommittedTail === 'cut';
    let torn = false;
    for (const s of [m.writeSeg, ...later]) {
      const f = path.join(dir, segName(s));
      if (torn || (cut && s !== m.writeSeg)) {
        fs.rmSync(f, { force: true });
        continue;
      }
      const fd = fs.openSync(f, 'r+');
      try {
        const size = fs.fstatSync(fd).size;
        const start = s === m.writeSeg ? m.writeOff : 0;
        if (size < start) {
          throw new CrawlError(DiskErrorCode.TRUNCATED, `queue segment ${f} is shorter (${size}) than its committed length (${start})`, {
            details: { file: f, size, committed: start },
          });
        }
        if (cut) {
          if (size > start) fs.ftruncateSync(fd, start);
          lastSeg = s;
          lastEnd = start;
          continue;
        }
        const scan = scanValidPrefix(fd, start, size, f, o.io, KIND);
        pushed += scan.records;
        if (scan.torn || scan.validEnd < size) {
          fs.ftruncateSync(fd, scan.validEnd);
          torn = true;
        }
        lastSeg = s;
        lastEnd = scan.validEnd;
      } finally {
        fs.closeSync(fd);
      }
    }
    const cur: Manifest = { ...m, writeSeg: lastSeg };
    const q = new DiskQueue(dir, cur, o, lastEnd, pushed);
    return q;
  }

  private static readManifest(file: string): Manifest {
    let m: Manifest;
    try {
      m = JSON.parse(fs.readFileSync(file, 'utf8')) as Manifest;
    } catch (cause) {
      throw new CrawlError(DiskErrorCode.FORMAT, `queue manifest ${file} is unreadable`, { cause, details: { file } });
    }
    const ints = [m.writeSeg, m.writeOff, m.readSeg, m.readOff, m.readIdx, m.pushed, m.shifted];
    if (m.version !== 1 || !ints.every((x) => Number.isSafeInteger(x) && x >= 0) || m.readSeg > m.writeSeg || m.shifted > m.pushed) {
      throw new CrawlError(DiskErrorCode.FORMAT, `queue manifest ${file} is invalid`, { details: { file } });
    }
    return m;
  }

  /** Records pushed and not yet shifted. */
  get length(): number {
    return this.pushed - this.shifted;
  }

  private check(): void {
    if (this.closed) throw new CrawlError(DiskErrorCode.CLOSED, `queue ${this.dir} is closed`);
  }

  /** Appends a record (copied). Written to disk when the write buffer reaches blockBytes. */
  push(record: Uint8Array): void {
    this.pushBytes(record, 0, record.length);
  }

  /** Appends the record src[start, end) (copied): push() without a view per record, e.g. from
   *  DRUM's struct-of-arrays result chunks (one aux arena, offsets). */
  pushBytes(src: Uint8Array, start: number, end: number): void {
    this.check();
    const len = end - start;
    if (!(start >= 0 && len >= 0 && end <= src.length)) throw new RangeError('pushBytes: range outside the source');
    const need = varintSize(len) + len;
    if (this.pendLen + need > this.pend.length) {
      if (this.pendCount > 0) this.flushPending();
      if (need > this.pend.length) this.pend = new Uint8Array(need);
    }
    let p = writeVarint(this.pend, this.pendLen, len);
    // (A view by the constructor: ~2× cheaper than subarray(), which looks up the species.)
    this.pend.set(start === 0 && end === src.length ? src : new Uint8Array(src.buffer, src.byteOffset + start, len), p);
    p += len;
    this.pendLen = p;
    this.pendCount++;
    this.pushed++;
    if (this.pendLen >= this.blockBytes) this.flushPending();
  }

  pushMany(records: readonly Uint8Array[]): void {
    for (const r of records) this.push(r);
  }

  /** Is the read cursor at the writer's end, i.e. reading from the unwritten buffer? */
  private readerAtWriteEnd(): boolean {
    return this.readSeg === this.writeSeg && this.readOff === this.writer.offset;
  }

  /** Writes the pending buffer as one block; converts a reader position inside it to block terms. */
  private flushPending(): void {
    if (this.pendCount === 0) return;
    const raw = this.pend.subarray(0, this.pendLen);
    const inPend = this.readerAtWriteEnd();
    const at = this.writer.writeBlock(raw, this.pendCount);
    if (inPend) {
      // The reader consumed readIdx records of this very block: keep it decoded to avoid re-reading.
      this.block = this.decode(raw.slice(), this.pendCount, at);
      this.blockNext = this.writer.offset;
      this.readOff = at;
    }
    this.pend = new Uint8Array(Math.max(this.blockBytes + 64, this.pend.length));
    this.pendLen = 0;
    this.pendCount = 0;
    this.pendReadPos = 0;
    if (this.writer.offset >= this.segmentBytes) this.rotate();
  }

  private rotate(): void {
    this.sealed.set(this.writeSeg, this.writer.offset);
    this.unsyncedFds.push(this.writer.fd);
    this.writeSeg++;
    const fd = fs.openSync(path.join(this.dir, segName(this.writeSeg)), 'w+');
    this.writer = new BlockWriter(fd, 0, this.io, KIND, this.compression);
  }

  private decode(payload: Uint8Array, count: number, offset: number): Uint8Array[] {
    const out: Uint8Array[] = new Array(count);
    let p = 0;
    for (let i = 0; i < count; i++) {
      const len = readVarint(payload, p, payload.length, this.vtmp);
      if (len < 0 || this.vtmp[0]! + len > payload.length) {
        throw new CrawlError(DiskErrorCode.FORMAT, `bad record framing in ${this.dir} segment ${this.readSeg} block at ${offset}`, {
          details: { dir: this.dir, segment: this.readSeg, offset },
        });
      }
      p = this.vtmp[0]!;
      out[i] = new Uint8Array(payload.buffer, payload.byteOffset + p, len); // = subarray(p, p + len), ~2× cheaper
      p += len;
    }
    return out;
  }

  /** Sizes of sealed segments (they never change once rotated out). Bounded by the segment count. */
  private readonly sealed = new Map<number, number>();

  private segEnd(seg: number): number {
    if (seg === this.writeSeg) return this.writer.offset;
    let size = this.sealed.get(seg);
    if (size === undefined) {
      size = fs.statSync(path.join(this.dir, segName(seg))).size;
      this.sealed.set(seg, size);
    }
    return size;
  }

  private readerEnd = -1;

  private openReader(): void {
    const end = this.segEnd(this.readSeg);
    if (this.readerSeg === this.readSeg && this.reader !== null && this.reader.offset === this.readOff && this.readerEnd === end) {
      return; // keep the read-ahead buffer
    }
    if (this.readerFd >= 0 && this.readerSeg !== this.readSeg) {
      fs.closeSync(this.readerFd);
      this.readerFd = -1;
    }
    if (this.readerFd < 0) this.readerFd = fs.openSync(path.join(this.dir, segName(this.readSeg)), 'r');
    this.readerSeg = this.readSeg;
    // The write segment's end moves as the writer appends: a new reader is bounded by the current end.
    this.reader = new BlockReader(this.readerFd, this.readOff, end, segName(this.readSeg), this.io, KIND);
    this.readerEnd = end;
  }

  /** Next up to `max` records in FIFO order ([] when empty). */
  async shift(max: number): Promise<Uint8Array[]> {
    return this.shiftSync(max);
  }

  /** Synchronous form of shift(). */
  shiftSync(max: number): Uint8Array[] {
    this.check();
    const out: Uint8Array[] = [];
    while (out.length < max && this.shifted < this.pushed) {
      if (this.block !== null) {
        if (this.readIdx < this.block.length) {
          out.push(this.block[this.readIdx++]!);
          this.shifted++;
          continue;
        }
        this.block = null;
        this.readOff = this.blockNext;
        this.readIdx = 0;
      }
      if (this.readerAtWriteEnd()) {
        // Records still in the write buffer: read them in place (a copy, the buffer is reused).
        while (out.length < max && this.readIdx < this.pendCount) {
          const len = readVarint(this.pend, this.pendReadPos, this.pendLen, this.vtmp);
          const p = this.vtmp[0]!;
          out.push(this.pend.slice(p, p + len));
          this.pendReadPos = p + len;
          this.readIdx++;
          this.shifted++;
        }
        break;
      }
      if (this.readSeg < this.writeSeg && this.readOff >= this.segEnd(this.readSeg)) {
        this.readSeg++;
        this.readOff = 0;
        this.readIdx = 0;
        continue;
      }
      this.openReader();
      const blk = this.reader!.next();
      if (blk === null) {
        throw new CrawlError(DiskErrorCode.TRUNCATED, `queue ${this.dir}: records missing at segment ${this.readSeg} offset ${this.readOff}`, {
          details: { dir: this.dir, segment: this.readSeg, offset: this.readOff },
        });
      }
      this.block = this.decode(blk.payload, blk.count, blk.offset);
      this.blockNext = blk.nextOffset;
      if (this.readIdx > this.block.length) {
        throw new CrawlError(DiskErrorCode.FORMAT, `queue ${this.dir}: read cursor past the end of its block`, {
          details: { dir: this.dir, segment: this.readSeg, offset: this.readOff },
        });
      }
    }
    return out;
  }

  /** Writes out the buffered records, fsyncs all appended data, persists the read cursor. */
  async commit(): Promise<void> {
    this.commitSync();
  }

  commitSync(): void {
    this.check();
    this.flushPending();
    for (const fd of this.unsyncedFds) {
      fs.fsyncSync(fd);
      this.io.synced(KIND);
      fs.closeSync(fd);
    }
    const rotated = this.unsyncedFds.length > 0;
    this.unsyncedFds = [];
    this.writer.sync();
    // Normalise the cursor: a fully consumed block means the start of the next one, and the end
    // of an older segment means the start of the next segment (so that it can be deleted).
    if (this.block !== null && this.readIdx >= this.block.length) {
      this.block = null;
      this.readOff = this.blockNext;
      this.readIdx = 0;
    }
    while (this.block === null && this.readSeg < this.writeSeg && this.readIdx === 0 && this.readOff >= this.segEnd(this.readSeg)) {
      this.readSeg++;
      this.readOff = 0;
    }
    const readSeg = this.readSeg;
    const readOff = this.readOff;
    const readIdx = this.readIdx;
    const m: Manifest = {
      version: 1,
      writeSeg: this.writeSeg,
      writeOff: this.writer.offset,
      readSeg,
      readOff,
      readIdx,
      pushed: this.pushed,
      shifted: this.shifted,
    };
    if (rotated) fsyncDir(this.dir);
    writeFileAtomicSync(path.join(this.dir, 'manifest.json'), JSON.stringify(m), this.io);
    // Delete segments that lie wholly before the durable read cursor.
    let deleted = false;
    for (const f of fs.readdirSync(this.dir)) {
      const mm = /^seg-(\d{12})\.dq$/.exec(f);
      if (mm !== null && Number(mm[1]) < readSeg) {
        if (this.readerFd >= 0 && Number(mm[1]) === this.readerSeg) {
          fs.closeSync(this.readerFd);
          this.readerFd = -1;
          this.reader = null;
        }
        fs.rmSync(path.join(this.dir, f), { force: true });
        this.sealed.delete(Number(mm[1]));
        deleted = true;
      }
    }
    if (deleted) fsyncDir(this.dir);
  }

  /**
   * commit(), then releases the file handles. With `{ commit: false }` the handles are released at
   * once, WITHOUT writing the buffer or committing the read cursor: the files are left as a crash
   * leaves them (records pushed since the last commit may be lost, records shifted since then come
   * back). For an owner that is shutting down after a fatal error, or that keeps its own commit
   * record (the frontier's queue store releases queues this way). Synchronous despite the promise.
   */
  async close(opts: { commit?: boolean } = {}): Promise<void> {
    if (this.closed) return;
    if (opts.commit !== false) this.commitSync();
    this.releaseHandles();
  }

  private releaseHandles(): void {
    if (this.closed) return;
    this.closed = true;
    for (const fd of this.unsyncedFds) fs.closeSync(fd);
    this.unsyncedFds = [];
    fs.closeSync(this.writer.fd);
    if (this.readerFd >= 0) fs.closeSync(this.readerFd);
    this.readerFd = -1;
  }
}
