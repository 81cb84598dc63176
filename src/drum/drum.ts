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
 *   e. retires the old Z_i and the merged bucket files: one of each kind is kept as a spare
 *      (zspare.z, bspare.kv/.aux) that a later Z′ / new generation overwrites instead of writing
 *      new page-cache pages (~1–2.7 s of system CPU per GB new vs 0.15–0.2 overwritten on this
 *      VM, docs/drum.md "File recycling"); the rest are deleted. A Z with other hard links is never
 *      a spare.
 * A crash before (d) leaves the old Z_i and the old bucket files in force: the tuples are merged
 * again on the next merge (results re-delivered: at-least-once). A crash after (d) finds the
 * results already committed by the consumer. So no key reported unique is lost and no unique result
 * is lost. Bucket files past the manifest's bgen are pending too. A spare is never read: Z′ over a
 * spare Z is cut to its length before (d), and recovery checks Z's size against the manifest;
 * a recycled bucket file holds stale blocks of older generations after its live ones, so every
 * bucket block is tagged with its generation (DRUM-wide increasing numbers) and recovery takes the
 * chain of blocks tagged g from offset 0, cutting at the first stale, torn or unreadable block —
 * unless a later block of g, or the other file of the pair, proves it is corruption (recoverGen).
 *
 * RAM bound: 2·M·k write buffers + one loaded bucket (≈ (H+P)/H · r bytes) + the CLOCK cache, which
 * is what the plan (model.ts) sizes from ramBytes. (Recycling adds two fields, no RAM that grows;
 * on disk it keeps one extra bucket pair and one Z, ≈ r·(H+b)/H + |Z|/k bytes.) Results are delivered in chunks of resultChunk.
 * I/O is synchronous in large sequential blocks (merges are batch work); a merge blocks the event
 * loop for the duration of one bucket at most between awaits (≈ r bytes of work) — run DRUM in a
 * worker thread when network I/O must not wait that long.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CrawlError } from '../errors.js';
import {
  BlockReader,
  BlockWriter,
  IoCounters,
  fsyncDir,
  readVarint,
  varintSize,
  writeFileAtomicSync,
  putByteKey,
  writeVarint,
  type Compression,
  type DecodedBlock,
} from '../disk/index.js';
import { BLOCK_HEADER_BYTES, BLOCK_MAGIC, BLOCK_VERSION, NO_TAG, readFully } from '../disk/block.js';
import { SortedRunReader, SortedRunWriter } from '../disk/sorted-file.js';
import { KeyRunReader, KeyRunWriter, gapBytesFor } from '../disk/key-run.js';
import { DiskErrorCode } from '../disk/errors.js';
import { ClockCache } from './clock-cache.js';
import { DrumErrorCode } from './errors.js';
import { bucketBytesFor, drumAlpha, planBuckets, type BucketPlan } from './model.js';
import { POS_MASK, TAG_SHIFT, radixSortKeys, type RadixScratch } from './radix-sort.js';

export type DrumOp = 'check' | 'update' | 'checkUpdate';

export interface DrumResult {
  op: DrumOp;
  keyHi: number;
  keyLo: number;
  /** The key was not in the repository when this tuple was applied. */
  unique: boolean;
  /** The value stored before this tuple was applied (null when unique). */
  value: Uint8Array | null;
  aux: Uint8Array | null;
}

/**
 * Results i = 0 … count−1 of one delivery chunk, as parallel arrays (DrumOptions.onResultChunk).
 * The arrays may be longer than count; entries past count are stale.
 */
export interface DrumResultChunk {
  count: number;
  /** 0 = check, 1 = update, 2 = checkUpdate. */
  readonly op: Uint8Array;
  readonly keyHi: Uint32Array;
  readonly keyLo: Uint32Array;
  /** 1 = the key was not in the repository when this tuple was applied. */
  readonly unique: Uint8Array;
  /** Result i's aux is auxBytes[auxStart[i], auxStart[i + 1]); auxNull[i] = 1 when it had none. */
  auxBytes: Uint8Array;
  readonly auxStart: Uint32Array;
  readonly auxNull: Uint8Array;
  /** Repositories with values: the value stored before the tuple (null when unique). Key-only
   *  repositories: null (a duplicate's stored value is empty). */
  readonly values: (Uint8Array | null)[] | null;
}

export interface DrumOptions {
  /** R: RAM for write buffers, one loaded bucket and the cache (bytes). @default 64 MiB */
  ramBytes?: number;
  /** D: disk for the bucket files (bytes). @default D_opt(R) (Theorem 2, eq. 17) */
  diskBytes?: number;
  /** k, overriding the model (rounded to a power of two, 1..4096). Fixed at creation. */
  buckets?: number;
  /** M: write buffer per bucket file (bytes). @default 262144 (the thesis' 256 KB) */
  bufferBytes?: number;
  /** r, overriding the model: a merge is due when a bucket's key/value file reaches this size. */
  bucketBytes?: number;
  /** Fixed value size in bytes (0 = key only, e.g. URLseen) or 'variable'. Fixed at creation. @default 0 */
  valueBytes?: number | 'variable';
  /** Merges an update into a stored value. @default overwrite (returns incoming) */
  merge?: (old: Uint8Array, incoming: Uint8Array) => Uint8Array;
  /** CLOCK cache entries in front of check+update (thesis V.2); 0 = off. Key-only repositories
   *  (valueBytes 0) with deliver 'unique' or 'none' only: a hit is a duplicate nobody needs to see. */
  cacheEntries?: number;
  /** Block compression of bucket and cache files. @default 'none' */
  compression?: Compression;
  /** Average aux bytes per tuple, for the model. @default 110 (the thesis' b) */
  auxBytesHint?: number;
  /** Average value bytes for 'variable' values, for the model. @default 32 */
  valueBytesHint?: number;
  /** Which results to hand to onResults. @default 'all' */
  deliver?: 'all' | 'unique' | 'none';
  /** Results per onResults call (bounds RAM during delivery). @default 16384 */
  resultChunk?: number;
  /** Shared I/O counters. @default a fresh IoCounters */
  io?: IoCounters;
  /**
   * Results of a bucket merge, in arrival order, in chunks. The returned promise must resolve only
   * when the consumer has durably committed what it needs; DRUM commits Z only after that.
   * Exactly one of onResults and onResultChunk must be given.
   */
  onResults?: (batch: DrumResult[]) => Promise<void> | void;
  /**
   * The same results as onResults, as one reused struct-of-arrays chunk instead of an object per
   * result (no allocation per result: at 8.7 M unique results per round that was most of the
   * delivery's CPU, docs/drum.md "Delivery in chunks"). The chunk and its arrays are overwritten by
   * the next call: read or copy what you need before the returned promise resolves.
   */
  onResultChunk?: (chunk: DrumResultChunk) => Promise<void> | void;
  /**
   * Called once per bucket merge after its last onResults call (also when it delivered nothing)
   * and before DRUM commits Z. A consumer may acknowledge chunks at once and make them durable
   * here instead — one commit (fsync) per bucket rather than per chunk. A throw commits nothing,
   * like a failing onResults.
   */
  beforeCommit?: () => Promise<void> | void;
}

export interface DrumStats {
  /** Keys in the disk cache Z. */
  keys: number;
  /** Keys in Z when this instance was opened (the U of the model). */
  keysAtOpen: number;
  /** Tuples accepted (including cache hits) and tuples merged since open. */
  tuples: number;
  merged: number;
  uniques: number;
  /** Bucket merges (one per non-empty bucket per round) and merge rounds since open. */
  merges: number;
  rounds: number;
  io: IoCounters;
  /** Measured (bytes read + written by DRUM) / (b · n) since open, b = mean aux bytes, n = merged. */
  alpha: number;
  /** drumAlpha() (generalised eq. 14) for the measured n, U, b, p and bucket bytes per round. */
  predictedAlpha: number;
  /** Bytes per key of Z on disk now (8 + value bytes for whole records; ~5 for key-only Z at
   *  U = 10^9, delta-coded), and predictedAlpha evaluated with that Z entry size instead. */
  zBytesPerKey: number;
  predictedAlphaZMeasured: number;
  k: number;
  r: number;
  M: number;
  plan: BucketPlan & { R: number; D: number; H: number; P: number };
  cacheHitRate?: number;
  cacheHits?: number;
  /** CPU time (user + system, ms, whole process) spent in each merge phase since open: reading the
   *  bucket files, sorting, the pass over Z, delivering results (including the consumer's
   *  onResults/beforeCommit), and committing (manifest, fsyncs, deleting old files). */
  mergeCpuMs: { load: number; sort: number; zPass: number; deliver: number; commit: number };
  /** The system-CPU part of mergeCpuMs (page-cache work: reads, writes, fsync, unlink). */
  mergeSysMs: { load: number; sort: number; zPass: number; deliver: number; commit: number };
}

const OP_CHECK = 0;
const OP_UPDATE = 1;
const OP_CU = 2;
const HAS_VALUE = 0x40;
const OP_NAMES: readonly DrumOp[] = ['check', 'update', 'checkUpdate'];
const EMPTY = new Uint8Array(0);
const MANIFEST = 'drum.json';
/** Read size of the merge's sequential streams; Z block size. */
const READ_AHEAD = 4 << 20;
const Z_BLOCK = 1 << 20;

interface BucketGen {
  gen: number;
  kvFd: number;
  auxFd: number;
  kv: BlockWriter;
  aux: BlockWriter;
  tuples: number;
  /** Lower bound of the generations whose (stale) blocks the two files may hold: the gen itself
   *  for fresh or cut files, the recycled spare's bound otherwise (see newGen). */
  oldest: number;
  /** Every block of both files is tagged: the pair may be recycled after its merge (an untagged
   *  file of an older drumcrawl could not be told from stale data once overwritten). */
  recyclable: boolean;
}

/** Where the chunked delivery (Drum.scanAux) stands: in the block (q, k), overall (p), in the chunk (m, ap). */
interface AuxScan {
  q: number;
  k: number;
  p: number;
  m: number;
  ap: number;
  auxBytes: number;
  grow: number;
}

interface BucketState {
  /** Pending generations, oldest first; the last one takes new tuples. */
  gens: BucketGen[];
  kvBuf: Uint8Array;
  kvLen: number;
  auxBuf: Uint8Array;
  auxLen: number;
  bufCount: number;
  /** Pending tuples and key/value bytes (on disk + buffered) over all pending generations. */
  tuples: number;
  kvBytes: number;
  zgen: number;
  zKeys: number;
  zBytes: number;
}

interface ManifestBucket {
  bgen: number;
  zgen: number;
  zKeys: number;
  zBytes: number;
}

/**
 * Manifest version = on-disk format. 1: Z records of 8-byte keys (+ value) for every repository.
 * 2: key-only repositories (valueBytes 0) hold Z as delta-coded key runs
 * (src/disk/key-run.ts); repositories with values keep version 1's Z records. A version-1
 * repository is refused with CRAWL_DRUM_FORMAT rather than misread.
 */
const FORMAT_VERSION = 2;

interface Manifest {
  version: typeof FORMAT_VERSION;
  k: number;
  valueBytes: number | 'variable';
  buckets: ManifestBucket[];
}

const pad = (i: number): string => String(i).padStart(4, '0');

/**
 * Recycled files. Writing into new page-cache pages costs ~1–2.7 s of system CPU per GB on this
 * VM (Firecracker, ext4) and overwriting cached pages of an existing file 0.15–0.2 s
 * (bench/drum/pagecache.ts; docs/drum.md "File recycling"): a round at
 * U = 10^9 writes 9.4 GB of bucket files and 5 GB of Z. So a merged bucket's kv/aux pair and the
 * superseded Z are kept as ONE spare each (not deleted), and the next new generation / Z′ is
 * written over the spare. RAM: two small fields (bSpare, zSpare), nothing that grows.
 */
const SPARE_KV = 'bspare.kv';
const SPARE_AUX = 'bspare.aux';
const SPARE_Z = 'zspare.z';
/**
 * Block tags are the low 16 bits of the generation; generations are DRUM-wide increasing, so a
 * recycled file's stale blocks have older generations. A spare whose stale blocks may be
 * TAG_WINDOW or more generations older than the new one is emptied first, so no stale tag can
 * equal the live one modulo 2^16.
 */
const TAG_WINDOW = 32768;
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
const BOOT_FILE = 'writer-boot';

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

/** What the merge uses of a Z reader/writer (SortedRun* for values, KeyRun* for key-only Z). */
interface ZWriter {
  append(hi: number, lo: number, value: Uint8Array | null): void;
  finish(): number;
  readonly records: number;
  readonly buffer: Uint8Array;
}
interface ZReader {
  readonly has: boolean;
  readonly hi: number;
  readonly lo: number;
  readonly recordsSeen: number;
  readonly buffer: Buffer;
  advance(): void;
  copyBelow(hi: number, lo: number, out: ZWriter): void;
  copyRest(out: ZWriter): void;
}

/** Truncates the file to `len` bytes when it is longer (a recycled file's stale tail); true if it was. */
function cutTo(fd: number, len: number): boolean {
  if (fs.fstatSync(fd).size <= len) return false;
  fs.ftruncateSync(fd, len);
  return true;
}

function isPow2(x: number): boolean {
  return x >= 1 && (x & (x - 1)) === 0;
}

function roundPow2(x: number): number {
  if (x <= 1) return 1;
  const lo = 2 ** Math.floor(Math.log2(x));
  return x / lo < 1.5 ? lo : lo * 2;
}

export class Drum {
  /** Format of the Z (disk cache) files this code writes; the manifest's version follows it. */
  static readonly Z_FORMAT: number = FORMAT_VERSION;
  readonly io: IoCounters;
  readonly k: number;
  readonly r: number;
  readonly M: number;
  private readonly shift: number;
  private readonly valueBytes: number | 'variable';
  private readonly mergeFn: (old: Uint8Array, incoming: Uint8Array) => Uint8Array;
  private readonly onResults: DrumOptions['onResults'];
  private readonly onResultChunk: DrumOptions['onResultChunk'];
  /** The reused delivery chunk, both consumer forms (capacity resultChunk; aux arena ≥ 2 MiB). */
  private soa: DrumResultChunk | null = null;
  private readonly beforeCommit: DrumOptions['beforeCommit'];
  private readonly deliver: 'all' | 'unique' | 'none';
  private readonly resultChunk: number;
  private readonly compression: Compression;
  private readonly cache: ClockCache | null;
  private readonly buckets: BucketState[] = [];
  private readonly plan: DrumStats['plan'];
  private mergeChain: Promise<void> = Promise.resolve();
  /** Next bucket-file generation (DRUM-wide, increasing: block tags rely on it, see TAG_WINDOW). */
  private genNext = 1;
  /** The spare bucket-file pair (SPARE_KV/SPARE_AUX) and its stale generations' lower bound. */
  private bSpare: { oldest: number } | null = null;
  /** SPARE_Z exists (a superseded Z with one link). */
  private zSpare = false;
  /** The machine rebooted since this repository was last opened for writing (see BOOT_FILE). */
  private rebooted = false;
  private closed = false;
  private maxKvBytes = 0;
  private readonly vtmp = new Int32Array(1);
  // Statistics since open.
  private readonly keysAtOpen: number;
  private tuplesIn = 0;
  private mergedTuples = 0;
  private mergedAuxBytes = 0;
  private mergedKvBytes = 0;
  private uniques = 0;
  private merges = 0;
  private rounds = 0;
  private readonly phaseMs = { load: 0, sort: 0, zPass: 0, deliver: 0, commit: 0 };
  private readonly phaseSysMs = { load: 0, sort: 0, zPass: 0, deliver: 0, commit: 0 };
  private phaseMark = process.cpuUsage();
  /** Charges the CPU time since the last mark to `phase` (a few calls per bucket merge). */
  private phase(p: keyof Drum['phaseMs']): void {
    const c = process.cpuUsage(this.phaseMark);
    this.phaseMs[p] += (c.user + c.system) / 1000;
    this.phaseSysMs[p] += c.system / 1000;
    this.phaseMark = process.cpuUsage();
  }

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
    this.mergeFn = opts.merge ?? ((_old, incoming) => incoming);
    this.onResults = opts.onResults;
    this.onResultChunk = opts.onResultChunk;
    this.beforeCommit = opts.beforeCommit;
    this.deliver = opts.deliver ?? 'all';
    this.resultChunk = opts.resultChunk ?? 16384;
    this.compression = opts.compression ?? 'none';
    this.cache = (opts.cacheEntries ?? 0) > 0 ? new ClockCache(opts.cacheEntries!) : null;
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
      });
      keys += mb.zKeys;
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
      try {
        m = JSON.parse(fs.readFileSync(mfile, 'utf8')) as Manifest;
      } catch (cause) {
        throw new CrawlError(DrumErrorCode.MANIFEST, `DRUM manifest ${mfile} is unreadable`, { cause, details: { file: mfile } });
      }
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
      writeFileAtomicSync(mfile, JSON.stringify(m));
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
    opts: {
      buckets: number;
      valueBytes?: number | 'variable';
      compression?: Compression;
      io?: IoCounters;
      /** About how many keys `fill` emits in all (key-only repositories: sets Z's gap width,
       *  see src/disk/key-run.ts; without it keys are stored whole, 8 bytes each). */
      expectedKeys?: number;
    },
    fill: (bucket: number, append: (hi: number, lo: number, value?: Uint8Array | null) => void) => void,
  ): Promise<void> {
    const k = opts.buckets;
    if (!isPow2(k) || k > 4096) throw new CrawlError(DrumErrorCode.OPTIONS, 'options.buckets must be a power of two ≤ 4096');
    const valueBytes = opts.valueBytes ?? 0;
    fs.mkdirSync(dir, { recursive: true });
    const mfile = path.join(dir, MANIFEST);
    if (fs.existsSync(mfile)) throw new CrawlError(DrumErrorCode.OPTIONS, `bulkLoad needs an empty directory, ${dir} holds a repository`);
    const io = opts.io ?? new IoCounters();
    const shift = 32 - Math.log2(k);
    const buckets: ManifestBucket[] = [];
    for (let i = 0; i < k; i++) {
      const file = path.join(dir, `z${pad(i)}-1.z`);
      const fd = fs.openSync(file, 'w');
      try {
        const w =
          valueBytes === 0
            ? new KeyRunWriter(fd, file, opts.expectedKeys === undefined ? 8 : gapBytesFor(64 - Math.log2(k), opts.expectedKeys / k), io, 'cache', opts.compression ?? 'none')
            : new SortedRunWriter(fd, file, valueBytes, io, 'cache', opts.compression ?? 'none');
        const zero = valueBytes === 'variable' ? EMPTY : new Uint8Array(valueBytes);
        fill(i, (hi, lo, value) => {
          if ((k === 1 ? 0 : hi >>> shift) !== i) throw new CrawlError(DrumErrorCode.OPTIONS, `bulkLoad: key ${hi}:${lo} does not belong to bucket ${i}`);
          w.append(hi >>> 0, lo >>> 0, value ?? zero);
        });
        const zBytes = w.finish();
        buckets.push({ bgen: 1, zgen: 1, zKeys: w.records, zBytes });
      } finally {
        fs.closeSync(fd);
      }
    }
    fsyncDir(dir);
    const m: Manifest = { version: FORMAT_VERSION, k, valueBytes, buckets };
    writeFileAtomicSync(mfile, JSON.stringify(m), io);
  }

  // ---------------------------------------------------------------- recovery

  private recover(m: Manifest): void {
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
    // A spare bucket pair left by the last run: its stale generations are unknown, so it cannot be
    // recycled safely (TAG_WINDOW) — delete it. A spare Z needs no such bound (Z is read only up to
    // the manifest's zBytes and cut to it before the commit): keep it.
    fs.rmSync(path.join(this.dir, SPARE_KV), { force: true });
    fs.rmSync(path.join(this.dir, SPARE_AUX), { force: true });
    this.zSpare = fs.existsSync(path.join(this.dir, SPARE_Z));
    for (const f of files) {
      if (f.endsWith('.tmp')) {
        fs.rmSync(path.join(this.dir, f), { force: true });
        continue;
      }
      let mm = /^z(\d{4})-(\d+)\.z$/.exec(f);
      if (mm !== null) {
        const i = Number(mm[1]);
        if (i >= this.k || Number(mm[2]) !== m.buckets[i]!.zgen) this.retireZ(path.join(this.dir, f));
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
    this.genNext = maxGen + 1;
    for (let i = 0; i < this.k; i++) {
      const bk = this.buckets[i]!;
      const mb = m.buckets[i]!;
      if (mb.zgen > 0) {
        const zf = this.zFile(i, mb.zgen);
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
      if (bk.gens.length === 0) bk.gens.push(this.newGen(i, mb.bgen));
      this.allocBuffers(bk);
      this.maxKvBytes = Math.max(this.maxKvBytes, bk.kvBytes);
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
    const kvf = this.bFile(i, g, 'kv');
    const auxf = this.bFile(i, g, 'aux');
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
    const r = new BlockReader(fd, 0, size, file, this.io, kind, READ_AHEAD, true, this.ioBuffer());
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
      if (r.buffer.length <= READ_AHEAD) this.ioBuf = r.buffer;
    }
  }

  /**
   * Is there a readable block tagged g, or an untagged one, starting anywhere in [from, size)?
   * (Recovery only.) Untagged blocks count too: only files of older drumcrawls hold them, and those
   * are never recycled, so one after a break means the break is corruption as well.
   */
  private findTagged(fd: number, file: string, kind: string, from: number, size: number, g: number): boolean {
    const tag = g & 0xffff;
    const buf = this.ioBuffer();
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

  private zFile(i: number, g: number): string {
    return path.join(this.dir, `z${pad(i)}-${g}.z`);
  }

  private bFile(i: number, g: number, ext: 'kv' | 'aux'): string {
    return path.join(this.dir, `b${pad(i)}-${g}.${ext}`);
  }

  /**
   * Files of a new generation g (> every generation written before, see genNext) of bucket i: the
   * spare pair renamed and overwritten from offset 0 when there is one, else new files. Blocks are
   * tagged g, so recovery stops at the first stale block of an older generation after the live
   * ones (recoverGen); during operation nothing is read past the writer's offset.
   */
  private newGen(i: number, g: number): BucketGen {
    const kvf = this.bFile(i, g, 'kv');
    const auxf = this.bFile(i, g, 'aux');
    let oldest = g;
    let kvFd = -1;
    let auxFd = -1;
    const sp = this.bSpare;
    if (sp !== null) {
      this.bSpare = null;
      try {
        fs.renameSync(path.join(this.dir, SPARE_KV), kvf);
        fs.renameSync(path.join(this.dir, SPARE_AUX), auxf);
        kvFd = fs.openSync(kvf, 'r+');
        auxFd = fs.openSync(auxf, 'r+');
        if (g - sp.oldest >= TAG_WINDOW) {
          // Stale blocks could be 2^16 generations old and carry g's tag: start empty.
          fs.ftruncateSync(kvFd, 0);
          fs.ftruncateSync(auxFd, 0);
        } else oldest = sp.oldest;
      } catch {
        // (A spare that vanished: fall back to new files.)
        if (kvFd >= 0) fs.closeSync(kvFd);
        if (auxFd >= 0) fs.closeSync(auxFd);
        kvFd = auxFd = -1;
      }
    }
    if (kvFd < 0) {
      kvFd = fs.openSync(kvf, 'w+');
      auxFd = fs.openSync(auxf, 'w+');
      oldest = g;
    }
    return {
      gen: g,
      kvFd,
      auxFd,
      kv: new BlockWriter(kvFd, 0, this.io, 'bucket-kv', this.compression, g),
      aux: new BlockWriter(auxFd, 0, this.io, 'bucket-aux', this.compression, g),
      tuples: 0,
      oldest,
      recyclable: true,
    };
  }

  /**
   * A superseded Z file: becomes the spare Z (overwritten by the next Z′ written, see openZOut)
   * unless one exists or the file has other links — the benchmark's --z-cache hard-links pristine
   * Z files, which must never be overwritten — then it is deleted.
   */
  private retireZ(file: string): void {
    if (!this.zSpare) {
      try {
        if (fs.statSync(file).nlink === 1) {
          fs.renameSync(file, path.join(this.dir, SPARE_Z));
          this.zSpare = true;
          return;
        }
      } catch {
        return; // already gone
      }
    }
    fs.rmSync(file, { force: true });
  }

  /** Opens Z′ for writing: the spare Z renamed (overwritten from offset 0; cut after finish), or a new file. */
  private openZOut(file: string): number {
    if (this.zSpare) {
      this.zSpare = false;
      try {
        fs.renameSync(path.join(this.dir, SPARE_Z), file);
        const fd = fs.openSync(file, 'r+');
        // Checked again here: a link made after the file became the spare must not be overwritten.
        if (fs.fstatSync(fd).nlink === 1) return fd;
        fs.closeSync(fd);
        fs.rmSync(file, { force: true });
      } catch {
        /* no spare after all: a new file */
      }
    }
    return fs.openSync(file, 'w');
  }

  /** A merged generation's files: the spare pair if it may be recycled and there is none, else deleted. */
  private retireGen(i: number, g: BucketGen): void {
    fs.closeSync(g.kvFd);
    fs.closeSync(g.auxFd);
    const kvf = this.bFile(i, g.gen, 'kv');
    const auxf = this.bFile(i, g.gen, 'aux');
    if (this.bSpare === null && g.recyclable) {
      try {
        fs.renameSync(kvf, path.join(this.dir, SPARE_KV));
        fs.renameSync(auxf, path.join(this.dir, SPARE_AUX));
        this.bSpare = { oldest: g.oldest };
        return;
      } catch {
        fs.rmSync(path.join(this.dir, SPARE_KV), { force: true });
      }
    }
    fs.rmSync(kvf, { force: true });
    fs.rmSync(auxf, { force: true });
  }

  private allocBuffers(bk: BucketState): void {
    bk.kvBuf = new Uint8Array(this.M + 64);
    bk.auxBuf = new Uint8Array(this.M + 64);
    bk.kvLen = 0;
    bk.auxLen = 0;
    bk.bufCount = 0;
  }

  // ---------------------------------------------------------------- input

  private live(): void {
    if (this.closed) throw new CrawlError(DrumErrorCode.CLOSED, `DRUM ${this.dir} is closed`);
  }

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

  /** Batch form of checkUpdate for key-only repositories: keys = [hi0, lo0, hi1, lo1, …]. */
  checkUpdateMany(keys: Uint32Array, aux?: readonly (Uint8Array | null)[]): void {
    const n = keys.length >>> 1;
    for (let j = 0; j < n; j++) this.checkUpdate(keys[2 * j]!, keys[2 * j + 1]!, null, aux === undefined ? null : aux[j]);
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
    let any = false;
    for (let i = 0; i < this.k; i++) {
      if (await this.mergeBucket(i)) any = true;
    }
    if (any) this.rounds++;
    let mx = 0;
    for (const bk of this.buckets) if (bk.kvBytes > mx) mx = bk.kvBytes;
    this.maxKvBytes = mx;
  }

  /** = merge(), then fsync what arrived meanwhile: everything accepted so far is durable. */
  async flush(): Promise<void> {
    await this.merge();
    for (const bk of this.buckets) {
      this.flushBuffers(bk);
      for (const g of bk.gens) {
        fs.fsyncSync(g.kvFd);
        fs.fsyncSync(g.auxFd);
      }
    }
  }

  private async mergeBucket(i: number): Promise<boolean> {
    const bk = this.buckets[i]!;
    this.flushBuffers(bk);
    if (bk.tuples === 0) return false;
    // a. New tuples of this bucket go to a fresh generation from now on.
    const old = bk.gens;
    const n = bk.tuples;
    const kvBytes = bk.kvBytes;
    const nextGen = this.genNext++;
    bk.gens = [this.newGen(i, nextGen)];
    bk.tuples = 0;
    bk.kvBytes = 0;
    const newZ = bk.zgen + 1;
    const newZFile = this.zFile(i, newZ);
    try {
      this.phaseMark = process.cpuUsage();
      const { zKeys, zBytes, added, loaded } = await this.mergeInto(i, bk, old, n, newZFile);
      // d. Commit: the manifest now points at the new Z and the new bucket generation.
      bk.zgen = newZ;
      bk.zKeys = zKeys;
      bk.zBytes = zBytes;
      fsyncDir(this.dir);
      this.writeManifest(i, nextGen);
      // e. Old files are garbage now: the old Z and the largest recyclable pair become spares
      //    (retireGen keeps the first pair it may; the rest are deleted).
      if (newZ > 1) this.retireZ(this.zFile(i, newZ - 1));
      const largestFirst = [...old].sort((x, y) => Number(y.recyclable) - Number(x.recyclable) || y.kv.offset - x.kv.offset);
      for (const g of largestFirst) this.retireGen(i, g);
      this.phase('commit');
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

  private writeManifest(changed: number, bgen: number): void {
    const mfile = path.join(this.dir, MANIFEST);
    const prev = JSON.parse(fs.readFileSync(mfile, 'utf8')) as Manifest;
    const bk = this.buckets[changed]!;
    prev.buckets[changed] = { bgen, zgen: bk.zgen, zKeys: bk.zKeys, zBytes: bk.zBytes };
    writeFileAtomicSync(mfile, JSON.stringify(prev), this.io);
  }

  /** Steps 1–4 for one bucket (load, sort, merge with Z_i into newZFile, deliver). */
  private async mergeInto(
    i: number,
    bk: BucketState,
    gens: BucketGen[],
    n: number,
    newZFile: string,
  ): Promise<{ zKeys: number; zBytes: number; added: number; loaded: { hi: Uint32Array; lo: Uint32Array; ops: Uint8Array; uniq: Uint8Array } }> {
    const vb = this.valueBytes;
    const withValues = vb !== 0;
    // 1. Load the bucket: keys, ops and (when values exist) value offsets into one arena.
    const sc = this.scratchFor(n);
    const hi = sc.hi.subarray(0, n);
    const lo = sc.lo.subarray(0, n);
    const ops = sc.ops.subarray(0, n);
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
      const reader = new BlockReader(g.kvFd, 0, g.kv.offset, this.bFile(i, g.gen, 'kv'), this.io, 'bucket-kv', READ_AHEAD, true, this.ioBuffer());
      const tag = g.gen & 0xffff;
      for (let blk = reader.next(); blk !== null; blk = reader.next()) {
        if (blk.tag !== tag && blk.tag !== NO_TAG) throw this.mismatch(i, g.gen, `block tagged ${blk.tag} among the blocks of this generation`);
        const b = blk.payload;
        let base = 0;
        if (withValues) {
          arena.set(b, arenaLen);
          base = arenaLen;
          arenaLen += b.length;
        }
        let p = 0;
        for (let c = 0; c < blk.count; c++) {
          if (t >= n || p + 9 > b.length) throw this.mismatch(i, g.gen, 'key/value records overrun their block');
          const o = b[p]!;
          ops[t] = o & 3;
          hi[t] = (b[p + 1]! | (b[p + 2]! << 8) | (b[p + 3]! << 16) | (b[p + 4]! << 24)) >>> 0;
          lo[t] = (b[p + 5]! | (b[p + 6]! << 8) | (b[p + 7]! << 16) | (b[p + 8]! << 24)) >>> 0;
          p += 9;
          if ((o & HAS_VALUE) !== 0) {
            let len: number;
            if (vb === 'variable') {
              len = readVarint(b, p, b.length, this.vtmp);
              if (len < 0) throw this.mismatch(i, g.gen, 'bad value length');
              p = this.vtmp[0]!;
            } else len = vb;
            if (p + len > b.length) throw this.mismatch(i, g.gen, 'value overruns its block');
            vOff![t] = base + p;
            vLen![t] = len;
            ops[t] |= 4; // has value
            p += len;
          }
          t++;
        }
        if (p !== b.length) throw this.mismatch(i, g.gen, 'trailing bytes in a key/value block');
      }
      this.ioBuf = reader.buffer;
    }
    if (t !== n) throw this.mismatch(i, gens[0]!.gen, `expected ${n} tuples, found ${t}`);

    this.phase('load');
    // 2. Sort by key, carrying arrival positions (stable) and, in their top bits, the op codes: the
    //    pass below then reads ops sequentially instead of one cache miss per tuple at ops[pos].
    const tagged = n <= POS_MASK + 1;
    const sorted = radixSortKeys(hi, lo, n, sc.radix, tagged ? ops : undefined);
    const shi = sorted.hi;
    const slo = sorted.lo;
    const pos = sorted.pos;

    this.phase('sort');
    // 3. One sequential pass over Z_i, writing the new Z_i.
    const uniq = sc.uniq.subarray(0, n);
    uniq.fill(0);
    const prev: (Uint8Array | null)[] | null = withValues ? new Array<Uint8Array | null>(n).fill(null) : null;
    const zfd = bk.zgen > 0 ? fs.openSync(this.zFile(i, bk.zgen), 'r') : -1;
    const outFd = this.openZOut(newZFile);
    let added = 0;
    let zKeys = 0;
    let zBytes = 0;
    try {
      // Key-only repositories keep Z delta-coded (src/disk/key-run.ts), with a gap width for the
      // keys Z' will hold at most; the others keep whole records. Both share this interface.
      const keyOnly = !withValues;
      const zFile = this.zFile(i, bk.zgen);
      const zr: ZReader | null =
        zfd < 0
          ? null
          : keyOnly
            ? (new KeyRunReader(zfd, bk.zBytes, zFile, this.io, 'cache', READ_AHEAD, this.ioBuffer()) as unknown as ZReader)
            : (new SortedRunReader(zfd, bk.zBytes, zFile, vb, this.io, 'cache', READ_AHEAD, this.ioBuffer()) as unknown as ZReader);
      const zw: ZWriter = keyOnly
        ? new KeyRunWriter(outFd, newZFile, gapBytesFor(64 - Math.log2(this.k), bk.zKeys + n), this.io, 'cache', this.compression, Z_BLOCK, this.zwBuf ?? undefined)
        : new SortedRunWriter(outFd, newZFile, vb, this.io, 'cache', this.compression, Z_BLOCK, this.zwBuf ?? undefined);
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
          if (!leftInZ) zw.append(kh, kl, cur);
          if (!existedBefore) added++;
        }
      }
      if (zr !== null) {
        zr.copyRest(zw);
        if (zr.recordsSeen !== bk.zKeys) {
          throw new CrawlError(DrumErrorCode.CACHE_CORRUPT, `DRUM cache file ${this.zFile(i, bk.zgen)} holds ${zr.recordsSeen} keys, the manifest says ${bk.zKeys}`, {
            details: { file: this.zFile(i, bk.zgen) },
          });
        }
      }
      zBytes = zw.finish();
      // A recycled Z′ may be longer than what was written: cut it (recovery checks size = zBytes).
      if (cutTo(outFd, zBytes)) fs.fsyncSync(outFd);
      zKeys = zw.records;
      this.zwBuf = zw.buffer;
      if (zr !== null) this.ioBuf = zr.buffer;
    } finally {
      if (zfd >= 0) fs.closeSync(zfd);
      fs.closeSync(outFd);
    }

    this.phase('zPass');
    // 4. Arrival order: stream the aux files and hand results onward in chunks.
    if (this.deliver !== 'none') await this.deliverChunks(i, gens, n, ops, hi, lo, uniq, prev);
    if (this.beforeCommit !== undefined) await this.beforeCommit();
    this.phase('deliver');
    return { zKeys, zBytes, added, loaded: { hi, lo, ops, uniq } };
  }

  /** The consumer of a delivery chunk: onResultChunk itself, or onResults through resultsOf. */
  private readonly consumeChunk = (c: DrumResultChunk): Promise<void> | void =>
    this.onResultChunk !== undefined ? this.onResultChunk(c) : this.onResults!(this.resultsOf(c));

  /**
   * A chunk as DrumResult objects (the onResults form). The chunk is reused by the next call, so
   * the aux bytes are copied once into an arena of their own that the results' views share.
   */
  private resultsOf(c: DrumResultChunk): DrumResult[] {
    const n = c.count;
    const arena = c.auxBytes.slice(0, c.auxStart[n]!);
    const out = new Array<DrumResult>(n);
    for (let m = 0; m < n; m++) {
      const u = c.unique[m] === 1;
      out[m] = {
        op: OP_NAMES[c.op[m]!]!,
        keyHi: c.keyHi[m]!,
        keyLo: c.keyLo[m]!,
        unique: u,
        value: u ? null : c.values !== null ? c.values[m]! : EMPTY,
        aux: c.auxNull[m] === 1 ? null : arena.subarray(c.auxStart[m]!, c.auxStart[m + 1]!),
      };
    }
    return out;
  }

  /**
   * Step 4, for both consumer forms: a walk over the aux files in arrival order, writing results
   * into the reused struct-of-arrays chunk (onResults gets objects made from it by resultsOf).
   * With onResultChunk nothing is allocated per result: a result object and an aux view per
   * unique tuple kept V8's young generation scavenging every few MB of results, each scavenge
   * copying the live chunk. The per-record loop is a synchronous
   * method (scanAux), not part of this async function: resuming an async function after an await
   * left the loop in slower code until it was optimized again (measured ~2× on the whole walk).
   */
  private async deliverChunks(
    i: number,
    gens: BucketGen[],
    n: number,
    ops: Uint8Array,
    hi: Uint32Array,
    lo: Uint32Array,
    uniq: Uint8Array,
    prev: (Uint8Array | null)[] | null,
  ): Promise<void> {
    const cap = this.resultChunk;
    const c = (this.soa ??= {
      count: 0,
      op: new Uint8Array(cap),
      keyHi: new Uint32Array(cap),
      keyLo: new Uint32Array(cap),
      unique: new Uint8Array(cap),
      auxBytes: new Uint8Array(2 << 20),
      auxStart: new Uint32Array(cap + 1),
      auxNull: new Uint8Array(cap),
      values: prev !== null ? new Array<Uint8Array | null>(cap).fill(null) : null,
    });
    const st: AuxScan = { q: 0, k: 0, p: 0, m: 0, ap: 0, auxBytes: 0, grow: 0 };
    const flush = async (): Promise<void> => {
      c.count = st.m;
      c.auxStart[st.m] = st.ap;
      this.mergedAuxBytes += st.auxBytes;
      st.auxBytes = 0;
      await this.consumeChunk(c);
      st.m = 0;
      st.ap = 0;
    };
    for (const g of gens) {
      const reader = new BlockReader(g.auxFd, 0, g.aux.offset, this.bFile(i, g.gen, 'aux'), this.io, 'bucket-aux', READ_AHEAD, true, this.ioBuffer());
      for (let blk = reader.next(); blk !== null; blk = reader.next()) {
        if (st.p + blk.count > n) throw this.mismatch(i, g.gen, 'more aux records than key/value records');
        st.q = 0;
        st.k = 0;
        // (The block's payload stays valid while the consumer runs: nothing is read meanwhile.)
        while (!this.scanAux(blk.payload, blk.count, st, c, ops, hi, lo, uniq, prev, i, g.gen)) {
          if (st.m > 0) await flush();
          if (st.grow > c.auxBytes.length) c.auxBytes = new Uint8Array(st.grow); // one huge aux record
          st.grow = 0;
        }
        if (st.q !== blk.payload.length) throw this.mismatch(i, g.gen, 'trailing bytes in an aux block');
      }
      this.ioBuf = reader.buffer;
    }
    if (st.p !== n) throw this.mismatch(i, gens[0]!.gen, `expected ${n} aux records, found ${st.p}`);
    if (st.m > 0) await flush();
    this.mergedAuxBytes += st.auxBytes;
    if (prev !== null) c.values!.fill(null); // drop references to this bucket's values
  }

  /**
   * Walks aux records st.k … count−1 of block `b` from byte st.q, appending the delivered ones to
   * chunk `c`. Returns true at the block's end, false when the chunk is full or its aux arena
   * cannot take the next record (st.grow = the arena size that record needs).
   */
  private scanAux(
    b: Uint8Array,
    count: number,
    st: AuxScan,
    c: DrumResultChunk,
    ops: Uint8Array,
    hi: Uint32Array,
    lo: Uint32Array,
    uniq: Uint8Array,
    prev: (Uint8Array | null)[] | null,
    i: number,
    gen: number,
  ): boolean {
    const bl = b.length;
    const all = this.deliver === 'all';
    const cap = this.resultChunk;
    const ab = c.auxBytes;
    const abl = ab.length;
    const vals = c.values;
    let q = st.q;
    let k = st.k;
    let p = st.p;
    let m = st.m;
    let ap = st.ap;
    let auxBytes = st.auxBytes;
    let done = true;
    for (; k < count; k++) {
      let lenp1 = q < bl ? b[q]! : 0x80;
      let q1 = q + 1;
      if (lenp1 >= 0x80) {
        lenp1 = readVarint(b, q, bl, this.vtmp);
        if (lenp1 < 0) throw this.mismatch(i, gen, 'aux records overrun their block');
        q1 = this.vtmp[0]!;
      }
      const len = lenp1 === 0 ? 0 : lenp1 - 1;
      if (q1 + len > bl) throw this.mismatch(i, gen, 'aux record overruns its block');
      const u = uniq[p]!;
      if (all || u === 1) {
        if (m >= cap || ap + len > abl) {
          if (m === 0) st.grow = len;
          done = false;
          break;
        }
        // A byte loop only for tiny records (for 110 bytes it cost ~300 ns, set() ~100 ns); the
        // source view is made with the constructor, ~2× cheaper than subarray() (no species lookup).
        if (len <= 16) for (let t = 0; t < len; t++) ab[ap + t] = b[q1 + t]!;
        else ab.set(new Uint8Array(b.buffer, b.byteOffset + q1, len), ap);
        c.auxStart[m] = ap;
        c.auxNull[m] = lenp1 === 0 ? 1 : 0;
        ap += len;
        c.op[m] = ops[p]! & 3;
        c.keyHi[m] = hi[p]!;
        c.keyLo[m] = lo[p]!;
        c.unique[m] = u;
        if (vals !== null) vals[m] = u === 1 ? null : prev![p]!;
        m++;
      }
      auxBytes += len;
      q = q1 + len;
      p++;
    }
    st.q = q;
    st.k = k;
    st.p = p;
    st.m = m;
    st.ap = ap;
    st.auxBytes = auxBytes;
    return done;
  }

  /**
   * Per-merge arrays, kept between bucket merges: allocating ~40 bytes × n of typed arrays per bucket
   * makes RSS float far above the live set until V8 collects them. Bounded by the largest bucket.
   * A full-size merge (≥ half of r) gets room for r/H tuples plus 2 % at once: growing by 1.25×
   * from the first bucket's exact n when the next bucket is a few tuples larger would hold both the
   * old and the new arrays (~2.25 × 34 B × n) until V8 collects the old ones: bench:drum's RSS
   * peak would be that (381–391 MiB above baseline at R = 256 MiB, bench/results/drum-ab.json).
   */
  /**
   * One read buffer for the merge's three sequential streams (bucket kv, Z, bucket aux) and the
   * Z writer's buffer, both kept from merge to merge: a fresh 4 MiB buffer per stream and bucket
   * left ~12 MiB of garbage ArrayBuffers per bucket merge until V8 collected them (RSS above R).
   */
  private ioBuf: Buffer | null = null;
  private zwBuf: Uint8Array | null = null;

  private ioBuffer(): Buffer {
    return (this.ioBuf ??= Buffer.allocUnsafeSlow(READ_AHEAD));
  }

  private scratch: { cap: number; hi: Uint32Array; lo: Uint32Array; ops: Uint8Array; uniq: Uint8Array; radix: RadixScratch } | null = null;

  private scratchFor(n: number): NonNullable<Drum['scratch']> {
    if (this.scratch === null || this.scratch.cap < n) {
      const full = Math.ceil(this.r / this.plan.H);
      const cap = n >= full / 2 ? Math.max(n, Math.ceil(full * 1.02)) : Math.max(n, Math.ceil((this.scratch?.cap ?? 0) * 1.25));
      this.scratch = null; // (drop the old arrays before allocating the new ones)
      const u = (): Uint32Array => new Uint32Array(cap);
      this.scratch = { cap, hi: u(), lo: u(), ops: new Uint8Array(cap), uniq: new Uint8Array(cap), radix: { a: u(), b: u(), c: u(), d: u(), e: u(), f: u() } };
    }
    return this.scratch;
  }

  private mismatch(i: number, g: number, msg: string): CrawlError {
    return new CrawlError(DrumErrorCode.BUCKET_MISMATCH, `bucket ${i} generation ${g}: ${msg}`, { details: { bucket: i, gen: g } });
  }

  // ---------------------------------------------------------------- stats, close

  stats(): DrumStats {
    let keys = 0;
    for (const bk of this.buckets) keys += bk.zKeys;
    const n = this.mergedTuples;
    const b = n > 0 ? this.mergedAuxBytes / n : 0;
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
      mergeCpuMs: { ...this.phaseMs },
      mergeSysMs: { ...this.phaseSysMs },
    };
    if (this.cache !== null) {
      s.cacheHitRate = this.cache.hitRate;
      s.cacheHits = this.cache.hits;
    }
    return s;
  }

  /** flush(), then release the files. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.flush();
    // Recycled files hold stale blocks after the live ones: cut them, so that the next open finds
    // each file ending at its live end (no search of the stale tail, see recoverGen).
    for (const bk of this.buckets) {
      for (const g of bk.gens) {
        cutTo(g.kvFd, g.kv.offset);
        cutTo(g.auxFd, g.aux.offset);
      }
    }
    this.abandon();
  }

  /** Releases the files without merging or flushing buffers — what a crash leaves behind (tests). */
  abandon(): void {
    if (this.closed) return;
    this.closed = true;
    for (const bk of this.buckets) {
      for (const g of bk.gens) {
        fs.closeSync(g.kvFd);
        fs.closeSync(g.auxFd);
      }
      bk.gens = [];
    }
  }
}
