/**
 * Crash recovery of a DRUM repository at open (thesis IV.3; the crash-point argument is in
 * docs/drum.md, "Crash safety").
 *
 * Concept: the manifest names, per bucket, the Z file in force and the first pending bucket-file
 * generation; recovery checks each Z against the manifest, deletes garbage (older generations,
 * temp files, superseded Z), and reopens every pending generation at the end of its live chain of
 * blocks, telling a torn or stale tail (cut) from corruption inside the chain (reported).
 * Invariant: after recover() every bucket's pending files end at their last complete block pair,
 * and Generations.next is above every block tag ever written. Cost: one sequential read of the
 * pending bucket files (at most about k·r bytes), plus a forward search of a file's tail only
 * when its chain stopped early.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CrawlError } from '../errors.js';
import { BlockReader, BlockWriter, fsyncDir, writeFileAtomicSync, type Compression, type DecodedBlock, type IoCounters } from '../disk/index.js';
import { BLOCK_HEADER_BYTES, BLOCK_MAGIC, BLOCK_VERSION, NO_TAG, readFully } from '../disk/block.js';
import { DiskErrorCode } from '../disk/errors.js';
import { DrumErrorCode } from './errors.js';
import { READ_AHEAD, type BucketState, type IoBuffers, type Manifest } from './format.js';
import type { Generations } from './generations.js';
import { parseDeepName } from './deep.js';

/**
 * Names the boot (Linux `boot_id`) during which this repository was last opened for writing.
 * Why: the corruption rules of recovery (recoverGen) hold for a process crash, where the page
 * cache keeps every completed write, but not after a power loss or reboot, when bucket pages
 * written after the last fsync may reach the disk in any order (a recycled file then shows stale
 * blocks between live ones). Such pages were never reported (no key in them is in Z, and the
 * crawler re-fetches the pages whose links were not merged), so after a reboot a break in a chain
 * ends it; within one boot it is corruption and is reported. Unknown boot (no /proc, or a
 * repository older than this file): the strict rule, as before.
 */
export const BOOT_FILE = 'writer-boot';

function currentBootId(): string | null {
  try {
    const id = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    return id.length > 0 ? id : null;
  } catch {
    return null;
  }
}

/** The block magic as bytes (little-endian), for the forward search of recovery. */
const MAGIC_BYTES = Buffer.from([BLOCK_MAGIC & 0xff, (BLOCK_MAGIC >>> 8) & 0xff, (BLOCK_MAGIC >>> 16) & 0xff, BLOCK_MAGIC >>> 24]);

/** What scanGen found in one bucket file. */
interface GenScan {
  blocks: { count: number; end: number }[];
  /** Offset where the live chain stopped (end of its last block). */
  stopAt: number;
  /** The file ended exactly there. */
  clean: boolean;
  /** Why the block at stopAt was not taken, when it was unreadable (null: clean end or stale block). */
  stopErr: CrawlError | null;
  /** The file's first block is untagged (block format 1.1 or older): never recycled. */
  legacy: boolean;
  size: number;
}

export class Recovery {
  /** The machine rebooted since this repository was last opened for writing (see BOOT_FILE). */
  private rebooted = false;

  constructor(
    private readonly dir: string,
    private readonly k: number,
    private readonly buckets: BucketState[],
    private readonly io: IoCounters,
    private readonly compression: Compression,
    private readonly files: Generations,
    private readonly bufs: IoBuffers,
  ) {}

  recover(m: Manifest): void {
    const boot = currentBootId();
    const bootFile = path.join(this.dir, BOOT_FILE);
    let writerBoot: string | null = null;
    try {
      writerBoot = fs.readFileSync(bootFile, 'utf8').trim();
    } catch {
      writerBoot = null;
    }
    this.rebooted = boot !== null && writerBoot !== null && writerBoot !== boot;
    const files = fs.readdirSync(this.dir);
    const pending = new Map<number, number[]>();
    let maxGen = 0;
    for (let i = 0; i < this.k; i++) maxGen = Math.max(maxGen, m.buckets[i]!.bgen);
    // Spares left by the last run (Generations.adoptSpares).
    this.files.adoptSpares();
    for (const f of files) {
      if (f.endsWith('.tmp')) {
        fs.rmSync(path.join(this.dir, f), { force: true });
        continue;
      }
      // A deep part (deep.ts) of another generation than the manifest's: a settling that did not
      // commit, or one superseded and not yet deleted.
      const d = parseDeepName(f);
      if (d !== null) {
        if (d.i >= this.k || d.g !== (m.buckets[d.i]!.dgen ?? 0)) fs.rmSync(path.join(this.dir, f), { force: true });
        continue;
      }
      let mm = /^z(\d{4})-(\d+)\.z$/.exec(f);
      if (mm !== null) {
        const i = Number(mm[1]);
        if (i >= this.k || Number(mm[2]) !== m.buckets[i]!.zgen) this.files.retireZ(path.join(this.dir, f));
        continue;
      }
      mm = /^b(\d{4})-(\d+)\.(kv|aux)$/.exec(f);
      if (mm !== null) {
        const i = Number(mm[1]);
        const g = Number(mm[2]);
        maxGen = Math.max(maxGen, g);
        if (i >= this.k || g < m.buckets[i]!.bgen) {
          fs.rmSync(path.join(this.dir, f), { force: true });
          continue;
        }
        const list = pending.get(i) ?? [];
        if (!list.includes(g)) list.push(g);
        pending.set(i, list);
      }
    }
    // Every block tag ever written is ≤ maxGen: a block of gen G lives in b…-G.* until its merge
    // commits, which sets that bucket's bgen to a later generation; spares are deleted above.
    this.files.next = maxGen + 1;
    for (let i = 0; i < this.k; i++) {
      const bk = this.buckets[i]!;
      const mb = m.buckets[i]!;
      if (mb.zgen > 0) {
        const zf = this.files.zFile(i, mb.zgen);
        let size: number;
        try {
          size = fs.statSync(zf).size;
        } catch {
          throw new CrawlError(DiskErrorCode.TRUNCATED, `DRUM cache file ${zf} is missing`, { details: { file: zf } });
        }
        if (size !== mb.zBytes) {
          throw new CrawlError(DiskErrorCode.TRUNCATED, `DRUM cache file ${zf} has ${size} bytes, the manifest says ${mb.zBytes}`, {
            details: { file: zf, size, expected: mb.zBytes },
          });
        }
      }
      const gens = (pending.get(i) ?? []).sort((a, b) => a - b);
      for (const g of gens) this.recoverGen(bk, i, g);
      // (No file of generation bgen exists, and the spare pair is gone: new, empty files.)
      if (bk.gens.length === 0) bk.gens.push(this.files.newGen(i, mb.bgen));
    }
    // From here on this boot writes: recorded before any new bucket write (atomic, fsynced).
    if (boot !== null && writerBoot !== boot) writeFileAtomicSync(bootFile, boot + '\n', this.io);
    fsyncDir(this.dir);
  }

  /**
   * Opens generation g of bucket i: the live chain of each file is cut after its last complete
   * block pair (a torn write, or the stale blocks of a recycled file), unless what follows proves
   * corruption inside the chain (docs/drum.md, "Crash safety"):
   *   - a readable block tagged g anywhere after the point where the chain stopped (blocks of a
   *     generation are written back to back from offset 0, so nothing of g can follow a break);
   *   - a kv block j that stopped the chain while aux block j is readable, or an aux block j while
   *     kv block j + 1 is (a pair is written kv then aux, one write(2) each: the later write
   *     completed, so the earlier one did too).
   * Files of older drumcrawls (untagged blocks, never recycled) keep the old rule: a torn tail is
   * cut, any other error is corruption.
   */
  private recoverGen(bk: BucketState, i: number, g: number): void {
    const kvf = this.files.bFile(i, g, 'kv');
    const auxf = this.files.bFile(i, g, 'aux');
    const kvFd = fs.openSync(kvf, fs.existsSync(kvf) ? 'r+' : 'w+');
    const auxFd = fs.openSync(auxf, fs.existsSync(auxf) ? 'r+' : 'w+');
    const kvS = this.scanGen(kvFd, kvf, 'bucket-kv', g);
    const auxS = this.scanGen(auxFd, auxf, 'bucket-aux', g);
    // The reader's own error when it says what is wrong (checksum, format); a torn-looking block
    // or a stale one inside the chain is corruption too, reported as a checksum error.
    const broken = (s: GenScan, file: string, what: string): CrawlError =>
      s.stopErr !== null && s.stopErr.code !== DiskErrorCode.TRUNCATED
        ? s.stopErr
        : new CrawlError(DiskErrorCode.CHECKSUM, `bucket ${i} generation ${g}: ${what} in ${file} at offset ${s.stopAt}`, {
            cause: s.stopErr ?? undefined,
            details: { file, offset: s.stopAt, bucket: i, gen: g },
          });
    // After a reboot unsynced pages may have reached the disk in any order: a break ends the
    // chain (BOOT_FILE); the rules below prove corruption only within one boot.
    const strict = !this.rebooted;
    for (const [s, fd, file, kind] of [
      [kvS, kvFd, kvf, 'bucket-kv'],
      [auxS, auxFd, auxf, 'bucket-aux'],
    ] as const) {
      if (strict && !s.legacy && !s.clean && this.findTagged(fd, file, kind, s.stopAt + 1, s.size, g)) {
        throw broken(s, file, 'a block of this generation follows a break in its chain (corruption)');
      }
    }
    const c = kvS.blocks.length;
    const a = auxS.blocks.length;
    if (!strict) {
      // After a reboot: no rule applies; both chains are cut at the last complete pair below.
    } else if (kvS.legacy || auxS.legacy) {
      // A pair of an older drumcrawl (never recycled, so no stale blocks): only a torn tail may
      // end a chain early (its partner's first block may be the broken one).
      for (const [sc, file] of [
        [kvS, kvf],
        [auxS, auxf],
      ] as const) {
        if (!sc.clean && sc.stopErr?.code !== DiskErrorCode.TRUNCATED) throw broken(sc, file, 'unreadable block in a file of untagged blocks');
      }
    } else {
      if (a > c) throw broken(kvS, kvf, `key/value block ${c} is missing but its aux block was written after it (corruption)`);
      if (c > a + 1) throw broken(auxS, auxf, `aux block ${a} is missing but key/value block ${a + 1} was written after it (corruption)`);
    }
    const pairs = Math.min(c, a);
    let tuples = 0;
    let kvEnd = 0;
    let auxEnd = 0;
    for (let j = 0; j < pairs; j++) {
      if (kvS.blocks[j]!.count !== auxS.blocks[j]!.count) {
        throw new CrawlError(DrumErrorCode.BUCKET_MISMATCH, `bucket ${i} generation ${g}: block ${j} holds ${kvS.blocks[j]!.count} key/value records but ${auxS.blocks[j]!.count} aux records`, {
          details: { bucket: i, gen: g, block: j },
        });
      }
      tuples += kvS.blocks[j]!.count;
      kvEnd = kvS.blocks[j]!.end;
      auxEnd = auxS.blocks[j]!.end;
    }
    // Cut at the live end: a torn tail, or a recycled file's stale blocks (after this the files
    // hold nothing older than g, hence oldest = g). Rare path (after a crash).
    if (kvS.size !== kvEnd) fs.ftruncateSync(kvFd, kvEnd);
    if (auxS.size !== auxEnd) fs.ftruncateSync(auxFd, auxEnd);
    bk.gens.push({
      gen: g,
      kvFd,
      auxFd,
      kv: new BlockWriter(kvFd, kvEnd, this.io, 'bucket-kv', this.compression, g),
      aux: new BlockWriter(auxFd, auxEnd, this.io, 'bucket-aux', this.compression, g),
      tuples,
      oldest: g,
      recyclable: !kvS.legacy && !auxS.legacy,
    });
    bk.tuples += tuples;
    bk.kvBytes += kvEnd;
  }

  /**
   * The live chain of generation g in one bucket file: blocks from offset 0 while they are
   * readable and tagged g. In a legacy file (first block untagged) every readable block counts
   * and any error but a torn tail is thrown.
   */
  private scanGen(fd: number, file: string, kind: string, g: number): GenScan {
    const size = fs.fstatSync(fd).size;
    const tag = g & 0xffff;
    const r = new BlockReader(fd, 0, size, file, this.io, kind, READ_AHEAD, true, this.bufs.ioBuffer());
    const blocks: { count: number; end: number }[] = [];
    let legacy = false;
    let at = 0;
    try {
      for (;;) {
        let blk: DecodedBlock | null;
        try {
          blk = r.next();
        } catch (e) {
          if (!(e instanceof CrawlError) || (legacy && !this.rebooted && e.code !== DiskErrorCode.TRUNCATED)) throw e;
          return { blocks, stopAt: at, clean: false, stopErr: e, legacy, size };
        }
        if (blk === null) return { blocks, stopAt: at, clean: true, stopErr: null, legacy, size };
        if (blocks.length === 0 && blk.tag === NO_TAG) legacy = true;
        if (!legacy && blk.tag !== tag) return { blocks, stopAt: at, clean: false, stopErr: null, legacy, size };
        blocks.push({ count: blk.count, end: blk.nextOffset });
        at = blk.nextOffset;
      }
    } finally {
      // Keep the read buffer unless a (corrupt or stale) header made the reader grow it: the
      // merge's buffer stays READ_AHEAD bytes.
      if (r.buffer.length <= READ_AHEAD) this.bufs.ioBuf = r.buffer;
    }
  }

  /**
   * Is there a readable block tagged g, or an untagged one, starting anywhere in [from, size)?
   * (Recovery only.) Untagged blocks count too: only files of older drumcrawls hold them, and those
   * are never recycled, so one after a break means the break is corruption as well.
   */
  private findTagged(fd: number, file: string, kind: string, from: number, size: number, g: number): boolean {
    const tag = g & 0xffff;
    const buf = this.bufs.ioBuffer();
    for (let base = from; base + BLOCK_HEADER_BYTES <= size; ) {
      const n = readFully(fd, buf, Math.min(buf.length, size - base), base);
      const last = base + n >= size;
      // Windows overlap by a header less one byte, so a header straddling two is seen whole once.
      const step = last ? n : n - BLOCK_HEADER_BYTES + 1;
      const w = buf.subarray(0, n);
      for (let p = w.indexOf(MAGIC_BYTES); p >= 0 && p < step; p = w.indexOf(MAGIC_BYTES, p + 1)) {
        if (p + BLOCK_HEADER_BYTES > n) break;
        // (Flag bit 2 = tagged, block.ts.)
        if (w[p + 5] !== BLOCK_VERSION || ((w[p + 4]! & 4) !== 0 && w.readUInt16LE(p + 6) !== tag)) continue;
        const at = base + p;
        const end = at + BLOCK_HEADER_BYTES + w.readUInt32LE(p + 16);
        if (end > size) continue;
        try {
          // (Its own small reader: the candidate is checked whole, checksum included.)
          if (new BlockReader(fd, at, end, file, this.io, kind).next() !== null) return true;
        } catch {
          /* not a block of g: stale data or chance bytes */
        }
      }
      if (last) break;
      base += step;
    }
    return false;
  }
}
