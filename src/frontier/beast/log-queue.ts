/**
 * BEAST's queue storage: one append-only file per queue, no per-queue manifest. BEAST keeps the
 * state of every queue (committed byte end, records pushed, checkpointed read cursor) in ONE
 * combined manifest, written once per commit into one of two alternating slot files. A commit is
 * then: write the buffered tail of each touched queue (page cache, synchronous, cheap), one
 * fdatasync per touched queue file plus one for the manifest slot — all on the libuv thread pool,
 * so the crawler's event loop keeps serving sockets meanwhile — and a directory fsync only when a
 * queue file was created since the last commit. The previous design (src/disk's DiskQueue per
 * queue) paid, per touched queue and on the main thread: fsync of the data, an fsync'd manifest
 * temp file, a rename and a directory fsync (docs/performance.md, "Main thread": BEAST commits).
 *
 * Queue file: a sequence of src/disk blocks (block.ts: magic, count, CRC-32, optional zstd), each
 * holding `count` records framed as varint length + bytes. Everything past the committed end
 * named by the manifest is cut off at open (it was never promised durable).
 *
 * Manifest slots `beast.m0` / `beast.m1`: header (u32 magic "BMF2", u32 body length, u32
 * generation, u32 CRC-32 of generation + body) then the JSON body. Generation g goes to slot g & 1,
 * written in place and fdatasync'd; open takes the valid slot with the highest generation. A torn
 * write fails its CRC, and the other slot still holds the previous complete manifest. Writes are
 * strictly sequential (BEAST chains its commits), so the fallback is always the last completed one.
 * A slot that fails its checks and may be the newer one is refused rather than fallen back from
 * (readManifest: damage and a torn write look alike, and only the torn write makes the fallback
 * lossless); the refusal says how to take the fallback when the machine lost power.
 *
 * RAM per open queue: its write buffer (≈ blockBytes, from the first push until the next flush, i.e.
 * BEAST's next commit) and the reader's read-ahead (4 × blockBytes, until the queue is drained). So
 * the j ring queues cost RAM only while appended to or read, not for the crawl's life.
 */
import * as fs from 'node:fs';
import * as zlib from 'node:zlib';
import path from 'node:path';
import { CrawlError } from '../../errors.js';
import { BlockReader, BlockWriter, IoCounters, readVarint, varintSize, writeVarint, type Compression } from '../../disk/index.js';
import type { IoCount } from '../queue.js';
import type { BeastQueue, BeastStore, QueueState } from './queue-store.js';

export type { BeastQueue, BeastStore, QueueState } from './queue-store.js';
export { MemoryBeastQueue, MemoryBeastStore } from './memory-store.js';

const KIND = 'queue';
const MAGIC = 0x32464d42; // "BMF2"
const SLOT_HEADER = 16;

function fdatasync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fdatasync(fd, (e) => (e ? reject(e) : resolve())));
}

function writeAt(fd: number, buf: Uint8Array, pos: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let off = 0;
    const step = (): void => {
      fs.write(fd, buf, off, buf.length - off, pos + off, (e, n) => {
        if (e) return reject(e);
        off += n;
        if (off < buf.length) step();
        else resolve();
      });
    };
    step();
  });
}

/** One queue in one file (see the module comment). */
export class LogQueue implements BeastQueue {
  private fd = -1;
  private writer: BlockWriter | null = null;
  private writeEnd: number;
  private pend: Uint8Array | null = null;
  private pendLen = 0;
  private pendCount = 0;
  private pushedN: number;
  private shifted: number;
  private readOff: number;
  private readIdx: number;
  private block: Uint8Array[] | null = null;
  private blockNext = 0;
  private reader: BlockReader | null = null;
  private readerEnd = -1;
  private readonly vtmp = new Int32Array(1);
  private syncing = 0;
  private closed = false;
  /** An asynchronous create/open of the file is running on the thread pool. */
  private opening = false;

  constructor(
    readonly file: string,
    state: QueueState | null,
    private readonly opts: { blockBytes: number; compression: Compression; io: IoCounters; onCreate: () => void },
  ) {
    const s = state ?? { end: 0, pushed: 0, off: 0, idx: 0, shifted: 0 };
    this.writeEnd = s.end;
    this.pushedN = s.pushed;
    this.shifted = s.shifted;
    this.readOff = s.off;
    this.readIdx = s.idx;
    if (s.end > 0) {
      let size: number;
      try {
        size = fs.statSync(file).size;
      } catch {
        size = -1;
      }
      if (size < s.end) {
        throw new CrawlError('CRAWL_DISK_TRUNCATED', `BEAST queue ${file} is shorter (${size}) than its committed length (${s.end})`, {
          details: { file, size, committed: s.end },
        });
      }
      this.fd = fs.openSync(file, 'r+');
      // The tail past the committed end was never promised durable: cut it off.
      if (size > s.end) fs.ftruncateSync(this.fd, s.end);
      this.writer = new BlockWriter(this.fd, s.end, opts.io, KIND, opts.compression);
    } else if (fs.existsSync(file)) {
      fs.rmSync(file, { force: true }); // created, nothing committed: start it afresh
    }
  }

  get length(): number {
    return this.pushedN - this.shifted;
  }

  get pushed(): number {
    return this.pushedN;
  }

  get end(): number {
    return this.writeEnd;
  }

  private check(): void {
    if (this.closed) throw new CrawlError('CRAWL_DISK_CLOSED', `BEAST queue ${this.file} is closed`);
  }

  push(record: Uint8Array): void {
    this.check();
    if (this.fd < 0 && !this.opening) this.startOpen();
    const need = varintSize(record.length) + record.length;
    if (this.pend === null) this.pend = new Uint8Array(Math.max(this.opts.blockBytes + 64, need));
    if (this.pendLen + need > this.pend.length) {
      if (this.pendCount > 0) this.writePending();
      if (need > this.pend.length) this.pend = new Uint8Array(need);
    }
    const p = writeVarint(this.pend, this.pendLen, record.length);
    this.pend.set(record, p);
    this.pendLen = p + record.length;
    this.pendCount++;
    this.pushedN++;
    if (this.pendLen >= this.opts.blockBytes) this.writePending();
  }

  /**
   * Creating a file costs a synchronous open(O_CREAT) of ~0.5 ms on a busy box (800 ms of main
   * thread in a 30 k-page bench with thousands of queue switches): the first push starts it on the
   * thread pool, so that by the first flush the descriptor is usually there. No O_TRUNC on either
   * path (the synchronous fallback in flush() may race this one; whichever loses is closed).
   */
  private startOpen(): void {
    this.opening = true;
    fs.open(this.file, fs.constants.O_RDWR | fs.constants.O_CREAT, 0o644, (err, fd) => {
      this.opening = false;
      if (err) return; // flush() opens synchronously and reports the error there
      if (this.fd >= 0 || this.closed) {
        fs.close(fd, () => {});
        return;
      }
      this.adopt(fd);
    });
  }

  private adopt(fd: number): BlockWriter {
    this.fd = fd;
    const w = new BlockWriter(fd, 0, this.opts.io, KIND, this.opts.compression);
    this.writer = w;
    // Only now does the directory entry exist: the next commit fsyncs the directory.
    this.opts.onCreate();
    return w;
  }

  /**
   * Writes the buffered records and lets the write buffer go: BEAST flushes a queue when it commits
   * and before it reads it, and a ring queue may then get no append for a whole pass; j queues each
   * keeping blockBytes would grow with j, i.e. with the crawl (issue #7). The next push allocates it
   * again (one allocation per queue per commit).
   */
  flush(): void {
    this.writePending();
    this.pend = null;
  }

  private writePending(): void {
    if (this.pendCount === 0) return;
    this.check();
    const w = this.writer ?? this.adopt(fs.openSync(this.file, fs.constants.O_RDWR | fs.constants.O_CREAT, 0o644));
    w.writeBlock(this.pend!.subarray(0, this.pendLen), this.pendCount);
    this.writeEnd = w.offset;
    this.pendLen = 0;
    this.pendCount = 0;
  }

  shiftSync(max: number): Uint8Array[] {
    this.check();
    const out: Uint8Array[] = [];
    while (out.length < max && this.shifted < this.pushedN) {
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
      // Records still buffered: write them as a block first (BEAST never appends to the queue it
      // reads, so this happens at most once per queue).
      if (this.readOff >= this.writeEnd) this.flush();
      if (this.reader === null || this.reader.offset !== this.readOff || this.readerEnd !== this.writeEnd) {
        this.reader = new BlockReader(this.fd, this.readOff, this.writeEnd, this.file, this.opts.io, KIND, 4 * this.opts.blockBytes);
        this.readerEnd = this.writeEnd;
      }
      const blk = this.reader.next();
      if (blk === null) {
        throw new CrawlError('CRAWL_DISK_TRUNCATED', `BEAST queue ${this.file}: records missing at offset ${this.readOff}`, {
          details: { file: this.file, offset: this.readOff },
        });
      }
      this.block = this.decode(blk.payload, blk.count, blk.offset);
      this.readOff = blk.offset;
      this.blockNext = blk.nextOffset;
    }
    if (this.shifted === this.pushedN && this.block !== null && this.readIdx >= this.block.length) {
      // Drained: drop the read-ahead buffer and the decoded block (the records handed out are
      // views that keep their own bytes alive), normalising the cursor as cursor() does.
      this.block = null;
      this.reader = null;
      this.readOff = this.blockNext;
      this.readIdx = 0;
    }
    return out;
  }

  private decode(payload: Uint8Array, count: number, offset: number): Uint8Array[] {
    const out: Uint8Array[] = new Array(count);
    let p = 0;
    for (let i = 0; i < count; i++) {
      const len = readVarint(payload, p, payload.length, this.vtmp);
      if (len < 0 || this.vtmp[0]! + len > payload.length) {
        throw new CrawlError('CRAWL_DISK_FORMAT', `bad record framing in ${this.file} block at ${offset}`, { details: { file: this.file, offset } });
      }
      p = this.vtmp[0]!;
      out[i] = payload.subarray(p, p + len);
      p += len;
    }
    return out;
  }

  cursor(): { off: number; idx: number; shifted: number } {
    if (this.block !== null && this.readIdx >= this.block.length) return { off: this.blockNext, idx: 0, shifted: this.shifted };
    return { off: this.readOff, idx: this.readIdx, shifted: this.shifted };
  }

  async sync(): Promise<void> {
    if (this.fd < 0 || this.closed) return;
    this.syncing++;
    try {
      await fdatasync(this.fd);
      this.opts.io.synced(KIND);
    } finally {
      if (--this.syncing === 0 && this.closed) this.closeFd();
    }
  }

  private closeFd(): void {
    if (this.fd >= 0) fs.closeSync(this.fd);
    this.fd = -1;
  }

  release(): void {
    if (this.closed) return;
    this.closed = true;
    this.reader = null;
    this.block = null;
    this.pend = null;
    // An fdatasync on the thread pool still uses the descriptor: close it when that returns
    // (closing now could let the number be reused under the running sync).
    if (this.syncing === 0) this.closeFd();
  }
}

/** BEAST's queues as files `dir/q/<name>` with the double-slot manifest in `dir`. */
export class FileBeastStore implements BeastStore {
  readonly counters = new IoCounters();
  private readonly open_ = new Map<string, LogQueue>();
  private created = false;
  private gen = 0;
  private slotFd: [number, number] = [-1, -1];
  private readonly qdir: string;
  private readonly blockBytes: number;
  private readonly compression: Compression;

  constructor(
    readonly dir: string,
    opts: { blockBytes?: number; compression?: Compression } = {},
  ) {
    this.qdir = path.join(dir, 'q');
    this.blockBytes = opts.blockBytes ?? 65536;
    this.compression = opts.compression ?? 'zstd';
    fs.mkdirSync(this.qdir, { recursive: true });
  }

  open(name: string, state: QueueState | null): BeastQueue {
    const have = this.open_.get(name);
    if (have) have.release();
    const q = new LogQueue(path.join(this.qdir, name), state, {
      blockBytes: this.blockBytes,
      compression: this.compression,
      io: this.counters,
      onCreate: () => {
        this.created = true;
      },
    });
    this.open_.set(name, q);
    return q;
  }

  async remove(name: string): Promise<void> {
    const q = this.open_.get(name);
    if (q) {
      q.release();
      this.open_.delete(name);
    }
    await fs.promises.rm(path.join(this.qdir, name), { force: true });
  }

  async list(): Promise<string[]> {
    return (await fs.promises.readdir(this.qdir)).filter((n) => !n.startsWith('.'));
  }

  takeCreated(): boolean {
    const c = this.created;
    this.created = false;
    return c;
  }

  async syncDir(): Promise<void> {
    const fh = await fs.promises.open(this.qdir, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  }

  private slotFile(i: number): string {
    return path.join(this.dir, `beast.m${i}`);
  }

  /**
   * The manifest of the newest valid slot. A slot that exists but fails its checks (too short for
   * its header or body, wrong magic, CRC mismatch) is accepted beside a valid one only when its
   * header says it is the older generation (the newest one is then intact). When it may be the
   * newer one, falling back would drop the appends of the last commit — and URLseen commits a
   * bucket only after BEAST's commit landed, so those URLs would be lost for good unless the slot
   * was torn while being written (a power loss during the commit; a SIGKILL cannot tear one
   * pwrite into the page cache). Damage and a torn write cannot be told apart from the bytes, so
   * it is refused (CRAWL_FRONTIER_MANIFEST naming the slot and what removing it costs).
   */
  async readManifest(): Promise<string | null> {
    const slots: ({ gen: number; text: string } | { bad: string; gen: number | null } | null)[] = [];
    for (let i = 0; i < 2; i++) {
      let buf: Buffer;
      try {
        buf = await fs.promises.readFile(this.slotFile(i));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
          slots.push(null);
          continue;
        }
        throw e;
      }
      const headGen = buf.length >= 12 && buf.readUInt32LE(0) === MAGIC ? buf.readUInt32LE(8) : null;
      if (buf.length < SLOT_HEADER || buf.readUInt32LE(0) !== MAGIC) {
        slots.push({ bad: buf.length < SLOT_HEADER ? `${buf.length} bytes, shorter than a slot header` : 'no slot magic', gen: headGen });
        continue;
      }
      const len = buf.readUInt32LE(4);
      const gen = buf.readUInt32LE(8);
      if (SLOT_HEADER + len > buf.length) {
        slots.push({ bad: `${buf.length} bytes, shorter than its ${SLOT_HEADER + len}-byte manifest (torn or cut)`, gen }); // torn
        continue;
      }
      const body = buf.subarray(SLOT_HEADER, SLOT_HEADER + len);
      const crc = zlib.crc32(body, zlib.crc32(buf.subarray(8, 12))) >>> 0;
      if (crc !== buf.readUInt32LE(12)) {
        slots.push({ bad: 'its CRC-32 does not match its content', gen }); // torn or corrupt
        continue;
      }
      slots.push({ gen, text: body.toString('utf8') });
    }
    let best: { gen: number; text: string } | null = null;
    for (const x of slots) if (x !== null && 'text' in x && (best === null || x.gen > best.gen)) best = x;
    for (let i = 0; i < 2; i++) {
      const x = slots[i];
      if (x === null || x === undefined || 'text' in x) continue;
      // The older generation of the two, by its own header and slot (generation g lives in slot g & 1).
      if (best !== null && x.gen !== null && x.gen === best.gen - 1 && (x.gen & 1) === i) continue;
      const other = this.slotFile(1 - i);
      const file = this.slotFile(i);
      throw new CrawlError('CRAWL_FRONTIER_MANIFEST', best === null
        ? `${file} is damaged (${x.bad}) and ${other} holds no valid manifest either: BEAST's queues cannot be read, nothing was resumed (restore the state directory from a copy)`
        : `${file} is damaged (${x.bad}); it may hold BEAST's newest commit, after the one in ${other} (generation ${best.gen}): nothing was resumed. If the machine lost power during the crawl's last BEAST commit, remove ${file} to resume from ${other} (URLseen had not committed that commit's URLs and delivers them again); otherwise the URLs admitted in that commit would be lost: restore the state directory from a copy`,
      { details: { file } });
    }
    if (best === null) {
      if (slots.some((x) => x !== null) && (await this.list()).length > 0) {
        throw new CrawlError('CRAWL_FRONTIER_MANIFEST', `no valid BEAST manifest slot in ${this.dir}`);
      }
      return null;
    }
    this.gen = best.gen;
    return best.text;
  }

  async writeManifest(text: string): Promise<void> {
    const gen = ++this.gen;
    const slot = gen & 1;
    const body = Buffer.from(text, 'utf8');
    const buf = Buffer.allocUnsafe(SLOT_HEADER + body.length);
    buf.writeUInt32LE(MAGIC, 0);
    buf.writeUInt32LE(body.length, 4);
    buf.writeUInt32LE(gen >>> 0, 8);
    body.copy(buf, SLOT_HEADER);
    buf.writeUInt32LE(zlib.crc32(body, zlib.crc32(buf.subarray(8, 12))) >>> 0, 12);
    if (this.slotFd[slot] < 0) {
      const file = this.slotFile(slot);
      const existed = fs.existsSync(file);
      this.slotFd[slot] = fs.openSync(file, existed ? 'r+' : 'w+');
      if (!existed) this.slotCreated = true; // its directory entry: fsync'd below
    }
    const fd = this.slotFd[slot];
    await writeAt(fd, buf, 0);
    await fdatasync(fd);
    if (this.takeCreatedSlot()) await this.syncTopDir();
    this.counters.wrote('manifest', buf.length);
    this.counters.synced('manifest');
  }

  /** A slot file created by writeManifest needs its own directory (dir, not dir/q) fsync'd. */
  private takeCreatedSlot(): boolean {
    const was = this.slotCreated;
    this.slotCreated = false;
    return was;
  }
  private slotCreated = false;

  private async syncTopDir(): Promise<void> {
    const fh = await fs.promises.open(this.dir, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  }

  io(): IoCount {
    const t = this.counters.total();
    return { bytesRead: t.bytesRead, bytesWritten: t.bytesWritten };
  }

  releaseAll(): void {
    for (const q of this.open_.values()) q.release();
    this.open_.clear();
    for (let i = 0; i < 2; i++) {
      if (this.slotFd[i]! >= 0) fs.closeSync(this.slotFd[i]!);
      this.slotFd[i] = -1;
    }
  }

  /** Closes the manifest slots (queues are dropped by BEAST itself). */
  close(): void {
    this.releaseAll();
  }
}
