/**
 * DRUM — Disk Repository with Update Management (thesis IV.3, Fig. 1; cost model IV.4, Theorem 2).
 *
 * A repository of <key, value> pairs (64-bit keys as (hi, lo) uint32 pairs) fed a stream of
 * check / update / check+update tuples <key, value, aux>, answered in batches:
 *
 *  1. Tuples are spread over k buckets by the key's top log2(k) bits. Bucket i has a key/value file
 *     (op, key, value) and an aux file, in the same FIFO order, written through one write buffer of
 *     M bytes each. The two buffers of a bucket are always written together, so block j of the kv
 *     file and block j of the aux file hold the same tuples ("paired blocks", used by recovery).
 *  2. When the largest bucket reaches r bytes (needsMerge) or on merge()/flush(), each bucket in turn
 *     is read into RAM, radix-sorted by key carrying arrival positions (stable: the first
 *     check+update of a key in a batch is the unique one), merged in one sequential pass with the
 *     bucket's slice Z_i of the sorted disk cache (one file per bucket, so the merge of bucket i
 *     reads and writes only Z_i — the thesis' layout), and Z_i is rewritten as a new file.
 *  3. Arrival order is restored from the carried positions; the aux file is read sequentially and
 *     results <op, key, unique, stored value, aux> are handed to onResults in chunks, in order.
 *
 * Crash safety (docs/drum.md has the argument per crash point). Per bucket, the manifest records
 * the generation of its bucket files (bgen) and of its Z file (zgen). A merge of bucket i:
 *   a. redirects new tuples of bucket i to bucket files of a new generation;
 *   b. writes Z_i of generation zgen+1 beside the old one and fsyncs it;
 *   c. delivers the results and AWAITS onResults, then beforeCommit (the consumer commits them
 *      durably in one or the other);
 *   d. rewrites the manifest atomically: bucket i → {bgen: new, zgen: zgen+1};
 *   e. retires the old Z_i and the merged bucket files (one of each kind kept as a spare that a
 *      later file overwrites: generations.ts, docs/drum.md "File recycling").
 * A crash before (d) leaves the old Z_i and the old bucket files in force: the tuples are merged
 * again on the next merge (results re-delivered: at-least-once). A crash after (d) finds the
 * results already committed by the consumer. So no key reported unique is lost and no unique result
 * is lost. Bucket files past the manifest's bgen are pending too; persist() makes every tuple
 * accepted so far durable in them without a merge. A spare is never read (Z′ over a spare Z is cut
 * before (d); recovery checks Z's size against the manifest, and takes a bucket file's chain of
 * blocks tagged with its generation, recoverGen).
 *
 * RAM bound: 2·M·k write buffers + one loaded bucket (≈ (H+P)/H · r bytes) + the CLOCK cache, which
 * is what the plan (model.ts) sizes from ramBytes. Results are delivered in chunks of resultChunk.
 * With settleKeys (deep.ts), Z_i holds the recent keys and a deep part the older ones, looked up
 * per key, so that a repository merged on time passes over a bounded Z (index: 1/1024 of D's bytes).
 * I/O is synchronous in large sequential blocks (merges are batch work); a merge blocks the event
 * loop for the duration of one bucket at most between awaits (≈ r bytes of work) — run DRUM in a
 * worker thread when network I/O must not wait that long.
 *
 * The parts, one concept per file: types.ts (public types), format.ts (on-disk layout, shared
 * state), generations.ts (bucket-file generations, recycled spares), recovery.ts (open after a
 * crash), merge.ts (load, sort, pass over Z), deliver.ts (results in arrival order), bulk-load.ts
 * (Z written from a sorted key set). This file: the Drum façade — options and plan, ingest into
 * the write buffers, merge rounds and their commit, statistics, close.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CrawlError } from '../errors.js';
import { IoCounters, fsyncDir, varintSize, writeFileAtomicSync, putByteKey, writeVarint, type Compression } from '../disk/index.js';
import { ClockCache } from './clock-cache.js';
import { DrumErrorCode } from './errors.js';
import { bucketBytesFor, drumAlpha, planBuckets } from './model.js';
import { FORMAT_VERSION, HAS_VALUE, IoBuffers, MANIFEST, NO_DEEP, decodeManifest, encodeManifest, OP_CHECK, OP_CU, OP_UPDATE, cutTo, isPow2, roundPow2, type BucketState, type Manifest, type ManifestBucket } from './format.js';
import { DeepPart, settleBucket } from './deep.js';
import { Generations } from './generations.js';
import { Recovery } from './recovery.js';
import { BucketMerger, PhaseClock } from './merge.js';
import { Delivery } from './deliver.js';
import { bulkLoad, type BulkLoadOptions } from './bulk-load.js';
import type { DrumOptions, DrumStats } from './types.js';

export type { DrumOp, DrumOptions, DrumResult, DrumResultChunk, DrumStats } from './types.js';

export class Drum {
  /** Format of the Z (disk cache) files this code writes; the manifest's version follows it. */
  static readonly Z_FORMAT: number = FORMAT_VERSION;
  readonly io: IoCounters;
  readonly k: number;
  readonly r: number;
  readonly M: number;
  private readonly shift: number;
  private readonly valueBytes: number | 'variable';
  private readonly compression: Compression;
  private readonly cache: ClockCache | null;
  private readonly buckets: BucketState[] = [];
  // The deep parts (deep.ts; null: none yet), DrumOptions.settleKeys (0: none), and whether this
  // merge round settled a bucket (at most one a round: a settling rewrites D_i).
  private readonly deeps: (DeepPart | null)[] = [];
  private readonly settleKeys: number;
  private settledThisRound = false;
  private readonly plan: DrumStats['plan'];
  private readonly files: Generations;
  private readonly bufs = new IoBuffers();
  private readonly delivery: Delivery;
  private readonly merger: BucketMerger;
  private readonly clock = new PhaseClock();
  private mergeChain: Promise<void> = Promise.resolve();
  private closed = false;
  private maxKvBytes = 0;
  // Statistics since open.
  private readonly keysAtOpen: number;
  private tuplesIn = 0;
  private mergedTuples = 0;
  private mergedKvBytes = 0;
  private uniques = 0;
  private merges = 0;
  private rounds = 0;
  private settlings = 0; // and their CPU (ms): DrumStats
  private settleCpuMs = 0;
  private persists = 0; // persist() calls (DrumStats), and those under way (close waits for them)
  private readonly syncs = new Set<Promise<void>>();

  private constructor(
    readonly dir: string,
    opts: DrumOptions,
    m: Manifest,
    r: number,
    M: number,
    plan: DrumStats['plan'],
  ) {
    this.io = opts.io ?? new IoCounters();
    this.k = m.k;
    this.shift = 32 - Math.log2(m.k);
    this.r = r;
    this.M = M;
    this.plan = plan;
    this.valueBytes = m.valueBytes;
    this.compression = opts.compression ?? 'none';
    this.cache = (opts.cacheEntries ?? 0) > 0 ? new ClockCache(opts.cacheEntries!) : null;
    this.files = new Generations(dir, this.io, this.compression);
    const deliver = opts.deliver ?? 'all';
    this.delivery = new Delivery(deliver, opts.resultChunk ?? 16384, opts.onResults, opts.onResultChunk, this.io, this.files, this.bufs);
    const mergeFn = opts.keepFirst === true ? (old: Uint8Array): Uint8Array => old : (opts.merge ?? ((_old: Uint8Array, incoming: Uint8Array): Uint8Array => incoming));
    this.settleKeys = opts.settleKeys ?? 0;
    this.merger = new BucketMerger(this.k, r, plan.H, m.valueBytes, mergeFn, this.compression, this.io, this.files, this.bufs, this.delivery, deliver, opts.beforeCommit, this.clock,
      (i) => this.deeps[i] ?? null);
    let keys = 0;
    for (let i = 0; i < m.k; i++) {
      const mb = m.buckets[i]!;
      this.buckets.push({
        gens: [],
        kvBuf: new Uint8Array(0),
        kvLen: 0,
        auxBuf: new Uint8Array(0),
        auxLen: 0,
        bufCount: 0,
        tuples: 0,
        kvBytes: 0,
        zgen: mb.zgen,
        zKeys: mb.zKeys,
        zBytes: mb.zBytes,
        zShadows: mb.zShadows ?? 0,
        deep: mb.dgen !== undefined && mb.dgen > 0 ? { dgen: mb.dgen, dKeys: mb.dKeys ?? 0, dBytes: mb.dBytes ?? 0, dBlocks: mb.dBlocks ?? 0 } : NO_DEEP,
      });
      keys += mb.zKeys + (mb.dKeys ?? 0) - (mb.zShadows ?? 0);
    }
    this.keysAtOpen = keys;
  }
  /** Opens (creating if needed) the repository in `dir`; recovers from a crash (see the module comment). */
  static async open(dir: string, opts: DrumOptions): Promise<Drum> {
    if ((typeof opts?.onResults === 'function') === (typeof opts?.onResultChunk === 'function')) {
      throw new CrawlError(DrumErrorCode.OPTIONS, 'exactly one of options.onResults and options.onResultChunk must be a function');
    }
    const valueBytes = opts.valueBytes ?? 0;
    if (valueBytes !== 'variable' && (!Number.isInteger(valueBytes) || valueBytes < 0 || valueBytes > 1 << 20)) {
      throw new CrawlError(DrumErrorCode.OPTIONS, "options.valueBytes must be an integer in [0, 1 MiB] or 'variable'");
    }
    const cacheEntries = opts.cacheEntries ?? 0;
    if (!Number.isInteger(cacheEntries) || cacheEntries < 0) throw new CrawlError(DrumErrorCode.OPTIONS, 'options.cacheEntries must be a non-negative integer');
    const settleKeys = opts.settleKeys ?? 0; // (a deep key whose value changes is shadowed by its copy in Z_i: deep.ts)
    if (!Number.isInteger(settleKeys) || settleKeys < 0 || (settleKeys > 0 && valueBytes === 0)) throw new CrawlError(DrumErrorCode.OPTIONS, 'options.settleKeys must be a non-negative integer, and > 0 only with values (valueBytes > 0 or variable)');
    if (cacheEntries > 0 && (valueBytes !== 0 || (opts.deliver ?? 'all') === 'all')) {
      throw new CrawlError(DrumErrorCode.OPTIONS, "options.cacheEntries needs valueBytes 0 and deliver 'unique' or 'none' (a cache hit is a duplicate that is not delivered)");
    }
    const R = opts.ramBytes ?? 64 * 1024 * 1024;
    const M = opts.bufferBytes ?? 256 * 1024;
    if (!(R > 0) || !Number.isInteger(M) || M < 64) throw new CrawlError(DrumErrorCode.OPTIONS, 'options.ramBytes must be > 0 and options.bufferBytes an integer ≥ 64');
    const b = opts.auxBytesHint ?? 110;
    const vAvg = valueBytes === 'variable' ? (opts.valueBytesHint ?? 32) + 1 : valueBytes;
    // H: bytes per bucket entry on disk (op + key + value); P: RAM per loaded entry beyond H
    // (original and sorted key copies, positions, radix scratch, flags; values add offsets and a
    // reference per entry) — measured from the merge code below, see docs/drum.md.
    const H = 9 + vAvg;
    // 34 B/entry of typed arrays plus ~10 B/entry of JS-heap headroom (result objects, GC slack),
    // sized from the RSS the benchmark measures.
    const P = valueBytes === 0 ? 44 : 44 + 8 + 16 + vAvg;
    const cacheRam = cacheEntries > 0 ? ClockCache.bytesFor(cacheEntries) : 0;
    const Rb = R - cacheRam;
    if (Rb <= 0) throw new CrawlError(DrumErrorCode.OPTIONS, 'options.cacheEntries leaves no RAM for the buckets');
    const D = opts.diskBytes ?? (Rb * Rb * (H + b)) / (8 * M * (H + P));
    const plan0 = planBuckets({ R: Rb, D, b, H, P, M });

    fs.mkdirSync(dir, { recursive: true });
    const mfile = path.join(dir, MANIFEST);
    let m: Manifest;
    if (fs.existsSync(mfile)) {
      let text: string;
      try {
        text = fs.readFileSync(mfile, 'utf8');
      } catch (cause) {
        throw new CrawlError(DrumErrorCode.MANIFEST, `DRUM manifest ${mfile} is unreadable`, { cause, details: { file: mfile } });
      }
      m = decodeManifest(text, mfile);
      if (typeof m.version === 'number' && m.version !== FORMAT_VERSION) {
        throw new CrawlError(DrumErrorCode.FORMAT, `DRUM repository ${dir} has on-disk format ${m.version}; this drumcrawl reads format ${FORMAT_VERSION} only (rebuild it, e.g. from the crawl's URL logs)`, {
          details: { file: mfile, version: m.version, supported: FORMAT_VERSION },
        });
      }
      if (m.version !== FORMAT_VERSION || !isPow2(m.k) || !Array.isArray(m.buckets) || m.buckets.length !== m.k) {
        throw new CrawlError(DrumErrorCode.MANIFEST, `DRUM manifest ${mfile} is invalid`, { details: { file: mfile } });
      }
      if (m.valueBytes !== valueBytes) {
        throw new CrawlError(DrumErrorCode.OPTIONS, `repository ${dir} has valueBytes ${m.valueBytes}, opened with ${valueBytes}`);
      }
      if (opts.buckets !== undefined && roundPow2(opts.buckets) !== m.k) {
        throw new CrawlError(DrumErrorCode.OPTIONS, `repository ${dir} has ${m.k} buckets, opened with buckets ${opts.buckets}`);
      }
    } else {
      let k = opts.buckets ?? plan0.kModel;
      if (!(k >= 1)) k = 1;
      k = Math.min(4096, roundPow2(k));
      m = { version: FORMAT_VERSION, k, valueBytes, buckets: Array.from({ length: k }, () => ({ bgen: 1, zgen: 0, zKeys: 0, zBytes: 0 })) };
      writeFileAtomicSync(mfile, encodeManifest(m));
    }
    const r = Math.floor(opts.bucketBytes ?? bucketBytesFor(Rb, m.k, M, H, P));
    if (!(r >= 64)) {
      throw new CrawlError(DrumErrorCode.OPTIONS, `ramBytes ${R} is too small for ${m.k} buckets of ${M}-byte buffers (r = ${r}); raise ramBytes or lower bufferBytes/buckets`);
    }
    const drum = new Drum(dir, opts, m, r, M, { ...plan0, R: Rb, D, H, P });
    drum.recover(m);
    return drum;
  }

  /**
   * Creates a repository whose disk cache Z holds the keys `fill` emits, written directly as sorted
   * runs (no buckets, no merges) — for benchmarks and imports that start from a known key set.
   * `fill(i, append)` must append bucket i's keys (top log2(k) bits = i) in strictly increasing
   * order; the writer rejects anything else (CRAWL_DRUM_CACHE_CORRUPT / CRAWL_DRUM_OPTIONS).
   */
  static async bulkLoad(
    dir: string,
    opts: BulkLoadOptions,
    fill: (bucket: number, append: (hi: number, lo: number, value?: Uint8Array | null) => void) => void,
  ): Promise<void> {
    return bulkLoad(dir, opts, fill);
  }

  /** Recovery (recovery.ts), then the write buffers of every bucket. */
  private recover(m: Manifest): void {
    new Recovery(this.dir, this.k, this.buckets, this.io, this.compression, this.files, this.bufs).recover(m);
    for (let i = 0; i < this.k; i++) this.deeps.push(DeepPart.open(this.dir, i, this.buckets[i]!.deep, this.io));
    for (const bk of this.buckets) {
      this.allocBuffers(bk);
      this.maxKvBytes = Math.max(this.maxKvBytes, bk.kvBytes);
      for (const g of bk.gens) this.files.written(g); // a crash's pending files: in the page cache only
    }
  }

  private allocBuffers(bk: BucketState): void {
    bk.kvBuf = new Uint8Array(this.M + 64);
    bk.auxBuf = new Uint8Array(this.M + 64);
    bk.kvLen = 0;
    bk.auxLen = 0;
    bk.bufCount = 0;
  }

  // ---------------------------------------------------------------- input

  private live(): void { if (this.closed) throw new CrawlError(DrumErrorCode.CLOSED, `DRUM ${this.dir} is closed`); }

  /** Checks a key: unique or duplicate (with its stored value). Does not change the repository. */
  check(hi: number, lo: number, aux?: Uint8Array | null): void {
    this.append(OP_CHECK, hi >>> 0, lo >>> 0, null, aux ?? null);
  }

  /** Merges `value` into the key's stored value (inserts it when the key is new). */
  update(hi: number, lo: number, value: Uint8Array, aux?: Uint8Array | null): void {
    this.append(OP_UPDATE, hi >>> 0, lo >>> 0, value, aux ?? null);
  }

  /**
   * Checks then updates in one pass: unique if the key was new (it is inserted with `value`, or a
   * zero value when omitted); a duplicate's stored value is merged with `value` when given.
   */
  checkUpdate(hi: number, lo: number, value?: Uint8Array | null, aux?: Uint8Array | null): void {
    hi >>>= 0;
    lo >>>= 0;
    if (value === undefined || value === null) {
      if (this.cache !== null && this.cache.lookup(hi, lo)) {
        this.tuplesIn++;
        return;
      }
      if (aux !== undefined && aux !== null && aux.length < 0x7f && !this.closed) {
        this.appendKeyAux(OP_CU, hi, lo, aux);
        return;
      }
    }
    this.append(OP_CU, hi, lo, value ?? null, aux ?? null);
  }

  /**
   * append() for the crawl's common tuple — no value, an aux of < 127 bytes (a one-byte varint) —
   * with nothing to decide per field. It writes the same records as append() (the property tests
   * in test/drum/drum.test.ts mix both paths in one bucket file); ~15 % less user CPU per ingested
   * tuple in a microbenchmark (10 M tuples with 110-byte aux, 3 pairs; bench/drum/micro/ingest.ts).
   */
  private appendKeyAux(op: number, hi: number, lo: number, aux: Uint8Array): void {
    const bk = this.buckets[this.k === 1 ? 0 : hi >>> this.shift]!;
    const alen = aux.length;
    if (bk.kvLen + 9 > bk.kvBuf.length || bk.auxLen + 1 + alen > bk.auxBuf.length) {
      this.append(op, hi, lo, null, aux);
      return;
    }
    const p = bk.kvLen;
    putByteKey(bk.kvBuf, p, op, hi, lo);
    bk.kvLen = p + 9;
    const ab = bk.auxBuf;
    const q = bk.auxLen;
    ab[q] = alen + 1;
    ab.set(aux, q + 1);
    bk.auxLen = q + 1 + alen;
    bk.bufCount++;
    bk.tuples++;
    const kvBytes = (bk.kvBytes += 9);
    this.tuplesIn++;
    if (kvBytes > this.maxKvBytes) this.maxKvBytes = kvBytes;
    if (bk.kvLen >= this.M || bk.auxLen >= this.M) this.flushBuffers(bk);
  }

  private append(op: number, hi: number, lo: number, value: Uint8Array | null, aux: Uint8Array | null): void {
    this.live();
    const vb = this.valueBytes;
    if (value !== null && vb !== 'variable' && value.length !== vb) {
      throw new CrawlError(DrumErrorCode.VALUE_SIZE, `value of ${value.length} bytes for a repository of ${vb}-byte values`);
    }
    if (op === OP_UPDATE && value === null) throw new CrawlError(DrumErrorCode.OPTIONS, 'update needs a value');
    if (vb === 0) value = null; // key-only repository: nothing to store or merge
    const bk = this.buckets[this.k === 1 ? 0 : hi >>> this.shift]!;
    const vlen = value === null ? 0 : value.length;
    const kvNeed = 9 + (value === null ? 0 : vb === 'variable' ? varintSize(vlen) + vlen : vlen);
    const alen = aux === null ? 0 : aux.length;
    const auxNeed = varintSize(alen + 1) + alen;
    if (bk.kvLen + kvNeed > bk.kvBuf.length || bk.auxLen + auxNeed > bk.auxBuf.length) {
      this.flushBuffers(bk);
      if (kvNeed > bk.kvBuf.length) bk.kvBuf = new Uint8Array(kvNeed);
      if (auxNeed > bk.auxBuf.length) bk.auxBuf = new Uint8Array(auxNeed);
    }
    const kb = bk.kvBuf;
    let p = bk.kvLen;
    putByteKey(kb, p, value === null ? op : op | HAS_VALUE, hi, lo);
    p += 9;
    if (value !== null) {
      if (vb === 'variable') p = writeVarint(kb, p, vlen);
      kb.set(value, p);
      p += vlen;
    }
    bk.kvLen = p;
    const ab = bk.auxBuf;
    let q = writeVarint(ab, bk.auxLen, aux === null ? 0 : alen + 1);
    if (aux !== null) {
      ab.set(aux, q);
      q += alen;
    }
    bk.auxLen = q;
    bk.bufCount++;
    bk.tuples++;
    bk.kvBytes += kvNeed;
    this.tuplesIn++;
    if (bk.kvBytes > this.maxKvBytes) this.maxKvBytes = bk.kvBytes;
    if (bk.kvLen >= this.M || bk.auxLen >= this.M) this.flushBuffers(bk);
  }

  /** Writes a bucket's two buffers as one pair of blocks (kv first, then aux). */
  private flushBuffers(bk: BucketState): void {
    if (bk.bufCount === 0) return;
    const g = bk.gens[bk.gens.length - 1]!;
    g.kv.writeBlock(bk.kvBuf.subarray(0, bk.kvLen), bk.bufCount);
    g.aux.writeBlock(bk.auxBuf.subarray(0, bk.auxLen), bk.bufCount);
    g.tuples += bk.bufCount;
    this.files.written(g);
    bk.kvLen = 0;
    bk.auxLen = 0;
    bk.bufCount = 0;
  }

  /** The largest bucket reached r bytes: the caller should await merge(). */
  get needsMerge(): boolean {
    return this.maxKvBytes >= this.r;
  }

  // ---------------------------------------------------------------- merge

  /** Merges every bucket with its slice of Z now (one round). Serialised with other merges. */
  merge(): Promise<void> {
    const run = this.mergeChain.then(() => this.mergeRound());
    this.mergeChain = run.catch(() => undefined);
    return run;
  }

  private async mergeRound(): Promise<void> {
    this.live();
    this.settledThisRound = false;
    let any = false;
    for (let i = 0; i < this.k; i++) {
      if (await this.mergeBucket(i)) any = true;
      // After the merge's commit, outside its undo path: a settling commits on its own.
      if (this.settleKeys > 0 && !this.settledThisRound && this.buckets[i]!.zKeys >= this.settleKeys) {
        this.settledThisRound = true;
        this.settleBucket(i);
      }
    }
    if (any) this.rounds++;
    let mx = 0;
    for (const bk of this.buckets) if (bk.kvBytes > mx) mx = bk.kvBytes;
    this.maxKvBytes = mx;
  }

  /** = merge(), then persist() what arrived meanwhile: everything accepted so far is durable. */
  async flush(): Promise<void> {
    await this.merge();
    await this.persist();
  }

  /**
   * Every tuple accepted so far written to its bucket file and fsynced, without a merge: no crash
   * loses them (recovery.ts reopens them, the next merge delivers their results). Runs between a
   * merge's buckets too (not used by the crawl: docs/performance.md, "A page's durability").
   */
  async persist(): Promise<void> {
    this.live();
    for (const bk of this.buckets) this.flushBuffers(bk);
    this.persists++;
    const run = this.files.sync();
    this.syncs.add(run);
    await run.finally(() => this.syncs.delete(run));
  }

  private async mergeBucket(i: number): Promise<boolean> {
    const bk = this.buckets[i]!;
    this.flushBuffers(bk);
    if (bk.tuples === 0) return false;
    // a. New tuples of this bucket go to a fresh generation from now on.
    const old = bk.gens;
    const n = bk.tuples;
    const kvBytes = bk.kvBytes;
    const nextGen = this.files.next++;
    bk.gens = [this.files.newGen(i, nextGen)];
    bk.tuples = 0;
    bk.kvBytes = 0;
    const newZ = bk.zgen + 1;
    const newZFile = this.files.zFile(i, newZ);
    try {
      this.clock.start();
      const { zKeys, zBytes, added, shadows, rewrote, loaded } = await this.merger.mergeInto(i, bk, old, n, newZFile);
      // d. Commit: the manifest now points at the new Z (unless a bucket of checks left Z as it
      //    was: merge.ts checkZ) and the new bucket generation.
      if (rewrote) Object.assign(bk, { zgen: newZ, zKeys, zBytes, zShadows: bk.zShadows + shadows });
      fsyncDir(this.dir);
      this.writeManifest(i, nextGen);
      // e. Old files are garbage now: the old Z and the largest recyclable pair become spares
      //    (retireGen keeps the first pair it may; the rest are deleted).
      if (rewrote && newZ > 1) this.files.retireZ(this.files.zFile(i, newZ - 1));
      const largestFirst = [...old].sort((x, y) => Number(y.recyclable) - Number(x.recyclable) || y.kv.offset - x.kv.offset);
      for (const g of largestFirst) this.files.retireGen(i, g);
      this.clock.phase('commit');
      this.merges++;
      this.mergedTuples += n;
      this.mergedKvBytes += kvBytes;
      this.uniques += added;
      // The cache learns keys only once they are committed to Z.
      if (this.cache !== null) {
        const { hi, lo, ops, uniq } = loaded;
        for (let p = 0; p < n; p++) if (!((ops[p]! & 3) === OP_CHECK && uniq[p] === 1)) this.cache.insert(hi[p]!, lo[p]!);
      }
      return true;
    } catch (e) {
      // Nothing committed: the merged generations stay pending, ahead of the new one.
      bk.gens = old.concat(bk.gens);
      bk.tuples += n;
      bk.kvBytes += kvBytes;
      fs.rmSync(newZFile, { force: true });
      throw e;
    }
  }

  /** Settles bucket i into its deep part (deep.ts settleBucket; at most one bucket a round). */
  private settleBucket(i: number): void {
    const t0 = process.cpuUsage();
    this.deeps[i] = settleBucket(this.dir, i, this.buckets[i]!, this.deeps[i] ?? null, this.files, this.io, this.compression, this.valueBytes, () => this.writeManifest(i));
    const c = process.cpuUsage(t0);
    this.settleCpuMs += (c.user + c.system) / 1000;
    this.settlings++;
  }

  /** Rewrites bucket `changed`'s manifest entry from its state; `bgen` undefined: the entry's own. */
  private writeManifest(changed: number, bgen?: number): void {
    const mfile = path.join(this.dir, MANIFEST);
    const prev = decodeManifest(fs.readFileSync(mfile, 'utf8'), mfile);
    const bk = this.buckets[changed]!;
    const entry: ManifestBucket = { bgen: bgen ?? prev.buckets[changed]!.bgen, zgen: bk.zgen, zKeys: bk.zKeys, zBytes: bk.zBytes, ...(bk.zShadows > 0 ? { zShadows: bk.zShadows } : {}) };
    if (bk.deep.dgen > 0) Object.assign(entry, bk.deep);
    prev.buckets[changed] = entry;
    writeFileAtomicSync(mfile, encodeManifest(prev), this.io);
  }

  // ---------------------------------------------------------------- stats, close

  stats(): DrumStats {
    let keys = 0;
    for (const bk of this.buckets) keys += bk.zKeys + bk.deep.dKeys - bk.zShadows;
    const n = this.mergedTuples;
    const b = n > 0 ? this.delivery.mergedAuxBytes / n : 0;
    const tot = this.io.total();
    const alpha = n > 0 && b > 0 ? (tot.bytesRead + tot.bytesWritten) / (b * n) : 0;
    let predictedAlpha = 0;
    let predictedAlphaZMeasured = 0;
    let zBytesAll = 0;
    for (const bk of this.buckets) zBytesAll += bk.zBytes;
    const zBytesPerKey = keys > 0 ? zBytesAll / keys : 0;
    if (n > 0 && b > 0 && this.rounds > 0) {
      const Hb = this.mergedKvBytes / n;
      const vz = this.valueBytes === 'variable' ? this.plan.H - 9 : this.valueBytes;
      const alphaIn = {
        n,
        U: this.keysAtOpen,
        b,
        p: this.uniques / n,
        k: 1,
        r: this.mergedKvBytes / this.rounds, // bucket bytes merged per round: the measured k·r
        Hz: 8 + vz,
        Hb,
        auxOverhead: varintSize(Math.round(b) + 1),
        queueBytes: 0, // DRUM's own I/O; the consumer's queue is its own
      };
      predictedAlpha = drumAlpha(alphaIn);
      predictedAlphaZMeasured = zBytesPerKey > 0 ? drumAlpha({ ...alphaIn, Hz: zBytesPerKey }) : predictedAlpha;
    }
    const s: DrumStats = {
      keys,
      keysAtOpen: this.keysAtOpen,
      tuples: this.tuplesIn,
      merged: n,
      uniques: this.uniques,
      merges: this.merges,
      rounds: this.rounds,
      io: this.io,
      alpha,
      predictedAlpha,
      zBytesPerKey,
      predictedAlphaZMeasured,
      k: this.k,
      r: this.r,
      M: this.M,
      plan: this.plan,
      mergeCpuMs: { ...this.clock.ms },
      mergeSysMs: { ...this.clock.sysMs },
      persists: this.persists,
    };
    if (this.settleKeys > 0) Object.assign(s, { settlings: this.settlings, settleCpuMs: this.settleCpuMs, deepKeys: this.buckets.reduce((a, bk) => a + bk.deep.dKeys, 0) });
    if (this.cache !== null) {
      s.cacheHitRate = this.cache.hitRate;
      s.cacheHits = this.cache.hits;
    }
    return s;
  }

  /**
   * flush(), then releases the files. With `{ flush: false }`: releases the files at once, without
   * merging or writing the buffered tuples and without cutting recycled files to their live end —
   * for an owner that stops without needing the tail (a benchmark after its last measured round,
   * a process shutting down after a fatal error). The files are left as a crash leaves them; the
   * next open recovers them (recovery.ts) and the pending tuples on disk are merged again.
   */
  async close(opts: { flush?: boolean } = {}): Promise<void> {
    if (this.closed) return;
    await Promise.allSettled([...this.syncs]);
    if (opts.flush === false) return this.releaseFiles();
    await this.flush();
    // Recycled files hold stale blocks after the live ones: cut them, so that the next open finds
    // each file ending at its live end (no search of the stale tail, see recoverGen).
    for (const bk of this.buckets) {
      for (const g of bk.gens) {
        cutTo(g.kvFd, g.kv.offset);
        cutTo(g.auxFd, g.aux.offset);
      }
    }
    this.releaseFiles();
  }

  private releaseFiles(): void {
    if (this.closed) return;
    this.closed = true;
    this.files.forget();
    for (const d of this.deeps) d?.close();
    this.deeps.length = 0;
    for (const bk of this.buckets) {
      for (const g of bk.gens) {
        fs.closeSync(g.kvFd);
        fs.closeSync(g.auxFd);
      }
      bk.gens = [];
    }
  }
}
