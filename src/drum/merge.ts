/**
 * The merge of one bucket with its slice of the disk cache (thesis IV.3, Fig. 1 steps 1–2: read
 * the bucket into RAM, sort it, merge it with Z_i in one sequential pass, write Z_i′), followed by
 * the delivery of its results (deliver.ts) and the consumer's commit hook.
 *
 * Concept: load (key/value records of the pending generations into typed arrays), sort (radix,
 * stable, carrying arrival positions and op codes), pass over Z (uniqueness of each tuple, merged
 * values, the new Z_i), deliver. Nothing here commits: Drum.mergeBucket rewrites the manifest
 * after mergeInto resolves. Invariant: Z_i′ holds exactly the keys of Z_i plus the new keys of
 * check+update/update tuples, in key order; the first tuple of a key in arrival order is the
 * unique one. Cost (IV.4, Theorem 2): per bucket merge one sequential read of the bucket files and
 * of Z_i and one write of Z_i′ (a bucket of checks only: the read alone, checkZ); RAM ≈ (H+P)/H · r bytes for the loaded bucket (the scratch arrays,
 * reused between merges).
 */
import * as fs from 'node:fs';
import { CrawlError } from '../errors.js';
import { BlockReader, readVarint, type Compression, type IoCounters } from '../disk/index.js';
import { NO_TAG } from '../disk/block.js';
import { SortedRunReader, SortedRunWriter } from '../disk/sorted-file.js';
import { KeyRunReader, KeyRunWriter, gapBytesFor } from '../disk/key-run.js';
import { DrumErrorCode } from './errors.js';
import { EMPTY, HAS_VALUE, OP_CHECK, READ_AHEAD, Z_BLOCK, bucketMismatch, cutTo, type BucketGen, type BucketState, type IoBuffers } from './format.js';
import type { Generations } from './generations.js';
import type { DeepPart } from './deep.js';
import type { Delivery } from './deliver.js';
import type { DrumOptions } from './types.js';
import { POS_MASK, TAG_SHIFT, radixSortKeys, type RadixScratch, type SortedKeys } from './radix-sort.js';

/** What the merge uses of a Z reader/writer (SortedRun* for values, KeyRun* for key-only Z). */
export interface ZWriter {
  append(hi: number, lo: number, value: Uint8Array | null): void;
  finish(): number;
  readonly records: number;
  readonly buffer: Uint8Array;
}
export interface ZReader {
  readonly has: boolean;
  readonly hi: number;
  readonly lo: number;
  readonly recordsSeen: number;
  readonly buffer: Buffer;
  advance(): void;
  copyBelow(hi: number, lo: number, out: ZWriter): void;
  copyRest(out: ZWriter): void;
}


export type MergePhase = 'load' | 'sort' | 'zPass' | 'deliver' | 'commit';

/** CPU time (user + system, whole process) per merge phase since open (DrumStats.mergeCpuMs). */
export class PhaseClock {
  readonly ms = { load: 0, sort: 0, zPass: 0, deliver: 0, commit: 0 };
  readonly sysMs = { load: 0, sort: 0, zPass: 0, deliver: 0, commit: 0 };
  private mark = process.cpuUsage();

  /** Starts the clock of a bucket merge (CPU before it is charged to no phase). */
  start(): void {
    this.mark = process.cpuUsage();
  }

  /** Charges the CPU time since the last mark to `phase` (a few calls per bucket merge). */
  phase(p: MergePhase): void {
    const c = process.cpuUsage(this.mark);
    this.ms[p] += (c.user + c.system) / 1000;
    this.sysMs[p] += c.system / 1000;
    this.mark = process.cpuUsage();
  }
}

interface MergeScratch {
  cap: number;
  hi: Uint32Array;
  lo: Uint32Array;
  ops: Uint8Array;
  uniq: Uint8Array;
  radix: RadixScratch;
}

/** Whether the bucket's n tuples (ops in arrival order) are all checks. */
function checksOnly(ops: Uint8Array, n: number): boolean {
  for (let t = 0; t < n; t++) if ((ops[t]! & 3) !== OP_CHECK) return false;
  return true;
}

/** `a`'s first `used` bytes in a new array of at least `need` bytes (doubling: amortised O(1) per byte). */
function grown(a: Uint8Array, used: number, need: number): Uint8Array {
  const out = new Uint8Array(Math.max(need, 2 * a.length));
  out.set(a.subarray(0, used));
  return out;
}

/** The loaded bucket's values: value t is arena[vOff[t], vOff[t] + vLen[t]) (repositories with values). */
interface LoadedValues {
  arena: Uint8Array;
  vOff: Uint32Array | null;
  vLen: Uint32Array | null;
}

/** What the pass over Z produced (the manifest's new zKeys/zBytes; added = new keys; shadows = deep keys written to Z′ with a changed value). */
interface ZPassResult {
  zKeys: number;
  zBytes: number;
  added: number;
  shadows: number;
}

export interface MergeOutput extends ZPassResult {
  /** Whether newZFile was written (false: a bucket of checks only, Z_i stays in force). */
  rewrote: boolean;
  loaded: { hi: Uint32Array; lo: Uint32Array; ops: Uint8Array; uniq: Uint8Array };
}

export class BucketMerger {
  private scratch: MergeScratch | null = null;
  private readonly vtmp = new Int32Array(1);

  constructor(
    private readonly k: number,
    private readonly r: number,
    /** H of the plan: bytes per bucket entry on disk (scratch sizing). */
    private readonly entryBytes: number,
    private readonly valueBytes: number | 'variable',
    private readonly mergeFn: (old: Uint8Array, incoming: Uint8Array) => Uint8Array,
    private readonly compression: Compression,
    private readonly io: IoCounters,
    private readonly files: Generations,
    private readonly bufs: IoBuffers,
    private readonly delivery: Delivery,
    private readonly deliver: 'all' | 'unique' | 'none',
    private readonly beforeCommit: DrumOptions['beforeCommit'],
    private readonly clock: PhaseClock,
    /** Bucket i's deep part (deep.ts), where the pass looks up a key Z_i does not hold. */
    private readonly deepOf: (i: number) => DeepPart | null = () => null,
  ) {}

  /** Steps 1–4 for one bucket (load, sort, merge with Z_i into newZFile, deliver). */
  async mergeInto(i: number, bk: BucketState, gens: BucketGen[], n: number, newZFile: string): Promise<MergeOutput> {
    const withValues = this.valueBytes !== 0;
    // 1. Load the bucket: keys, ops and (when values exist) value offsets into one arena.
    const sc = this.scratchFor(n);
    const hi = sc.hi.subarray(0, n);
    const lo = sc.lo.subarray(0, n);
    const ops = sc.ops.subarray(0, n);
    const values = this.load(i, gens, n, hi, lo, ops);

    this.clock.phase('load');
    // 2. Sort by key, carrying arrival positions (stable) and, in their top bits, the op codes: the
    //    pass below then reads ops sequentially instead of one cache miss per tuple at ops[pos].
    const tagged = n <= POS_MASK + 1;
    const sorted = radixSortKeys(hi, lo, n, sc.radix, tagged ? ops : undefined);

    this.clock.phase('sort');
    // 3. One sequential pass over Z_i, writing the new Z_i.
    const uniq = sc.uniq.subarray(0, n);
    uniq.fill(0);
    const prev: (Uint8Array | null)[] | null = withValues ? new Array<Uint8Array | null>(n).fill(null) : null;
    // A bucket of checks only cannot change Z_i: it is read, not rewritten (checkZ).
    const rewrote = !(withValues && checksOnly(ops, n));
    const { zKeys, zBytes, added, shadows } = rewrote
      ? this.passZ(i, bk, n, newZFile, sorted, tagged, ops, values, uniq, prev)
      : this.checkZ(i, bk, n, sorted, tagged, uniq, prev);

    this.clock.phase('zPass');
    // 4. Arrival order: stream the aux files and hand results onward in chunks.
    if (this.deliver !== 'none') await this.delivery.deliverChunks(i, gens, n, ops, hi, lo, uniq, prev);
    if (this.beforeCommit !== undefined) await this.beforeCommit(i);
    this.clock.phase('deliver');
    return { zKeys, zBytes, added, shadows, rewrote, loaded: { hi, lo, ops, uniq } };
  }

  /** Step 1: the key/value records of `gens` into hi/lo/ops (arrival order) and the values' arena. */
  private load(i: number, gens: BucketGen[], n: number, hi: Uint32Array, lo: Uint32Array, ops: Uint8Array): LoadedValues {
    const vb = this.valueBytes;
    const withValues = vb !== 0;
    let arena: Uint8Array = EMPTY;
    let vOff: Uint32Array | null = null;
    let vLen: Uint32Array | null = null;
    if (withValues) {
      let total = 0;
      for (const g of gens) total += g.kv.offset;
      arena = new Uint8Array(total);
      vOff = new Uint32Array(n);
      vLen = new Uint32Array(n);
    }
    let t = 0;
    let arenaLen = 0;
    for (const g of gens) {
      const reader = new BlockReader(g.kvFd, 0, g.kv.offset, this.files.bFile(i, g.gen, 'kv'), this.io, 'bucket-kv', READ_AHEAD, true, this.bufs.ioBuffer());
      const tag = g.gen & 0xffff;
      for (let blk = reader.next(); blk !== null; blk = reader.next()) {
        if (blk.tag !== tag && blk.tag !== NO_TAG) throw bucketMismatch(i, g.gen, `block tagged ${blk.tag} among the blocks of this generation`);
        const b = blk.payload;
        let base = 0;
        if (withValues) {
          // The arena starts at the bytes on disk; compressed blocks hold more than that.
          if (arenaLen + b.length > arena.length) arena = grown(arena, arenaLen, arenaLen + b.length);
          arena.set(b, arenaLen);
          base = arenaLen;
          arenaLen += b.length;
        }
        let p = 0;
        for (let c = 0; c < blk.count; c++) {
          if (t >= n || p + 9 > b.length) throw bucketMismatch(i, g.gen, 'key/value records overrun their block');
          const o = b[p]!;
          ops[t] = o & 3;
          hi[t] = (b[p + 1]! | (b[p + 2]! << 8) | (b[p + 3]! << 16) | (b[p + 4]! << 24)) >>> 0;
          lo[t] = (b[p + 5]! | (b[p + 6]! << 8) | (b[p + 7]! << 16) | (b[p + 8]! << 24)) >>> 0;
          p += 9;
          if ((o & HAS_VALUE) !== 0) {
            let len: number;
            if (vb === 'variable') {
              len = readVarint(b, p, b.length, this.vtmp);
              if (len < 0) throw bucketMismatch(i, g.gen, 'bad value length');
              p = this.vtmp[0]!;
            } else len = vb;
            if (p + len > b.length) throw bucketMismatch(i, g.gen, 'value overruns its block');
            vOff![t] = base + p;
            vLen![t] = len;
            ops[t] |= 4; // has value
            p += len;
          }
          t++;
        }
        if (p !== b.length) throw bucketMismatch(i, g.gen, 'trailing bytes in a key/value block');
      }
      this.bufs.ioBuf = reader.buffer;
    }
    if (t !== n) throw bucketMismatch(i, gens[0]!.gen, `expected ${n} tuples, found ${t}`);

    return { arena, vOff, vLen };
  }

  /**
   * Step 3: one sequential pass over Z_i (merging the sorted tuples in), writing Z_i′ to newZFile;
   * sets uniq[p] (and prev[p], the value stored before tuple p) per arrival position p.
   */
  private passZ(
    i: number,
    bk: BucketState,
    n: number,
    newZFile: string,
    sorted: SortedKeys,
    tagged: boolean,
    ops: Uint8Array,
    values: LoadedValues,
    uniq: Uint8Array,
    prev: (Uint8Array | null)[] | null,
  ): ZPassResult {
    const vb = this.valueBytes;
    const withValues = vb !== 0;
    const { arena, vOff, vLen } = values;
    const shi = sorted.hi;
    const slo = sorted.lo;
    const pos = sorted.pos;
    const deep = this.deepOf(i);
    const zfd = bk.zgen > 0 ? fs.openSync(this.files.zFile(i, bk.zgen), 'r') : -1;
    const outFd = this.files.openZOut(newZFile);
    let added = 0;
    let shadows = 0;
    let zKeys = 0;
    let zBytes = 0;
    try {
      const { zr, zw } = this.zStreams(i, bk, n, zfd, outFd, newZFile);
      const fixedZero = vb === 'variable' ? EMPTY : new Uint8Array(vb);
      let j = 0;
      while (j < n) {
        const kh = shi[j]!;
        const kl = slo[j]!;
        let exists = false;
        let cur: Uint8Array | null = null;
        // Key-only: a key already in Z never changes, so it stays in the Z stream and the next
        // copyBelow moves it with the run it belongs to (no per-key advance + append).
        let leftInZ = false;
        if (zr !== null) {
          zr.copyBelow(kh, kl, zw);
          if (zr.has && zr.hi === kh && zr.lo === kl) {
            exists = true;
            if (withValues) {
              const vr = zr as unknown as SortedRunReader;
              cur = vr.payload.slice(vr.vs, vr.ve);
              zr.advance();
            } else {
              cur = EMPTY;
              leftInZ = true;
            }
          }
        }
        // Not in Z_i: the key may be in the deep part (one block read, deep.ts).
        const deepValue = !exists && deep !== null ? deep.lookup(kh, kl) : null;
        if (deepValue !== null) [exists, cur] = [true, deepValue];
        const existedBefore = exists;
        do {
          const pt = pos[j]!;
          const p = tagged ? pt & POS_MASK : pt;
          const o = tagged ? pt >>> TAG_SHIFT : ops[p]!;
          const op = o & 3;
          uniq[p] = exists ? 0 : 1;
          if (prev !== null) prev[p] = cur;
          if (op !== OP_CHECK) {
            if ((o & 4) !== 0) {
              const v = arena.subarray(vOff![p]!, vOff![p]! + vLen![p]!);
              cur = exists ? this.mergeFn(cur!, v) : v.slice();
              if (vb !== 'variable' && cur.length !== vb) {
                throw new CrawlError(DrumErrorCode.VALUE_SIZE, `merge() returned ${cur.length} bytes for a repository of ${vb}-byte values`);
              }
            } else if (!exists) cur = fixedZero;
            exists = true;
          }
          j++;
        } while (j < n && shi[j] === kh && slo[j] === kl);
        if (exists) {
          // A deep key whose value is unchanged stays in the deep part only; a changed one goes to Z_i′,
          // which shadows it (deep.ts).
          if (!leftInZ && !(deepValue !== null && cur === deepValue)) {
            zw.append(kh, kl, cur);
            if (deepValue !== null) shadows++;
          }
          if (!existedBefore) added++;
        }
      }
      if (zr !== null) this.copyRestOfZ(i, bk, zr, zw);
      zBytes = zw.finish();
      // A recycled Z′ may be longer than what was written: cut it (recovery checks size = zBytes).
      if (cutTo(outFd, zBytes)) fs.fsyncSync(outFd);
      zKeys = zw.records;
      this.bufs.zwBuf = zw.buffer;
      if (zr !== null) this.bufs.ioBuf = zr.buffer;
    } finally {
      if (zfd >= 0) fs.closeSync(zfd);
      fs.closeSync(outFd);
    }
    return { zKeys, zBytes, added, shadows };
  }

  /**
   * Step 3 for a bucket of checks only (repositories with values): the answers passZ would give —
   * uniq[p], and prev[p] the value stored — from a read of Z_i up to the batch's last key and
   * lookups in the deep part, writing nothing; Z_i stays as it is (a check changes no key). Such a
   * batch costs a read of Z_i where a merge would read and rewrite it (STAR's in-degree checks,
   * src/frontier/star/star.ts).
   */
  private checkZ(i: number, bk: BucketState, n: number, sorted: SortedKeys, tagged: boolean, uniq: Uint8Array, prev: (Uint8Array | null)[] | null): ZPassResult {
    const shi = sorted.hi;
    const slo = sorted.lo;
    const pos = sorted.pos;
    const deep = this.deepOf(i);
    const zFile = this.files.zFile(i, bk.zgen);
    const zfd = bk.zgen > 0 ? fs.openSync(zFile, 'r') : -1;
    try {
      const zr = zfd < 0 ? null : new SortedRunReader(zfd, bk.zBytes, zFile, this.valueBytes, this.io, 'cache', READ_AHEAD, this.bufs.ioBuffer());
      let j = 0;
      while (j < n) {
        const kh = shi[j]!;
        const kl = slo[j]!;
        let cur: Uint8Array | null = null;
        if (zr !== null) {
          zr.copyBelow(kh, kl, null);
          if (zr.has && zr.hi === kh && zr.lo === kl) cur = zr.payload.slice(zr.vs, zr.ve);
        }
        if (cur === null && deep !== null) cur = deep.lookup(kh, kl);
        do {
          const pt = pos[j]!;
          const p = tagged ? pt & POS_MASK : pt;
          uniq[p] = cur === null ? 1 : 0;
          if (prev !== null) prev[p] = cur;
          j++;
        } while (j < n && shi[j] === kh && slo[j] === kl);
      }
      if (zr !== null) this.bufs.ioBuf = zr.buffer;
    } finally {
      if (zfd >= 0) fs.closeSync(zfd);
    }
    return { zKeys: bk.zKeys, zBytes: bk.zBytes, added: 0, shadows: 0 };
  }

  /** The rest of Z_i into Z_i′ after the last tuple; Z_i must have held the keys the manifest says. */
  private copyRestOfZ(i: number, bk: BucketState, zr: ZReader, zw: ZWriter): void {
    zr.copyRest(zw);
    if (zr.recordsSeen !== bk.zKeys) {
      throw new CrawlError(DrumErrorCode.CACHE_CORRUPT, `DRUM cache file ${this.files.zFile(i, bk.zgen)} holds ${zr.recordsSeen} keys, the manifest says ${bk.zKeys}`, {
        details: { file: this.files.zFile(i, bk.zgen) },
      });
    }
  }

  /**
   * The reader of Z_i (null when Z_i is empty) and the writer of Z_i′. Key-only repositories keep
   * Z delta-coded (src/disk/key-run.ts), with a gap width for the keys Z' will hold at most; the
   * others keep whole records. Both share the ZReader/ZWriter interface.
   */
  private zStreams(i: number, bk: BucketState, n: number, zfd: number, outFd: number, newZFile: string): { zr: ZReader | null; zw: ZWriter } {
    const vb = this.valueBytes;
    const keyOnly = vb === 0;
    const zFile = this.files.zFile(i, bk.zgen);
    const zr: ZReader | null =
      zfd < 0
        ? null
        : keyOnly
          ? (new KeyRunReader(zfd, bk.zBytes, zFile, this.io, 'cache', READ_AHEAD, this.bufs.ioBuffer()) as unknown as ZReader)
          : (new SortedRunReader(zfd, bk.zBytes, zFile, vb, this.io, 'cache', READ_AHEAD, this.bufs.ioBuffer()) as unknown as ZReader);
    const zw: ZWriter = keyOnly
      ? new KeyRunWriter(outFd, newZFile, gapBytesFor(64 - Math.log2(this.k), bk.zKeys + n), this.io, 'cache', this.compression, Z_BLOCK, this.bufs.zwBuf ?? undefined)
      : new SortedRunWriter(outFd, newZFile, vb, this.io, 'cache', this.compression, Z_BLOCK, this.bufs.zwBuf ?? undefined);
    return { zr, zw };
  }

  /**
   * Per-merge arrays, kept between bucket merges: allocating ~40 bytes × n of typed arrays per bucket
   * makes RSS float far above the live set until V8 collects them. Bounded by the largest bucket.
   * A full-size merge (≥ half of r) gets room for r/H tuples plus 2 % at once: growing by 1.25×
   * from the first bucket's exact n when the next bucket is a few tuples larger would hold both the
   * old and the new arrays (~2.25 × 34 B × n) until V8 collects the old ones: bench:drum's RSS
   * peak would be that (381–391 MiB above baseline at R = 256 MiB, bench/results/drum-ab.json).
   */
  private scratchFor(n: number): MergeScratch {
    if (this.scratch === null || this.scratch.cap < n) {
      const full = Math.ceil(this.r / this.entryBytes);
      const cap = n >= full / 2 ? Math.max(n, Math.ceil(full * 1.02)) : Math.max(n, Math.ceil((this.scratch?.cap ?? 0) * 1.25));
      this.scratch = null; // (drop the old arrays before allocating the new ones)
      const u = (): Uint32Array => new Uint32Array(cap);
      this.scratch = { cap, hi: u(), lo: u(), ops: new Uint8Array(cap), uniq: new Uint8Array(cap), radix: { a: u(), b: u(), c: u(), d: u(), e: u(), f: u() } };
    }
    return this.scratch;
  }
}
