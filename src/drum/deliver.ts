/**
 * Delivery of a bucket merge's results in arrival order (thesis IV.3, step 3 of Fig. 1: results
 * <op, key, unique, stored value, aux> are handed onward after the merge with Z).
 *
 * Concept: the aux files of the merged generations are read sequentially (the same FIFO order as
 * the key/value records), joined with the per-tuple outcomes of the merge by arrival position, and
 * written into one reused struct-of-arrays chunk that the consumer receives (onResultChunk), or
 * objects made from it (onResults). Invariant: results leave in arrival order within a bucket,
 * every delivered chunk is awaited before the next is filled, and the chunk holds at most
 * resultChunk results and a 2 MiB aux arena (larger only for one huge aux record). Cost: one
 * sequential read of the aux files (the b·n term of the cost model) and no allocation per result
 * with onResultChunk.
 */
import { BlockReader, readVarint, type IoCounters } from '../disk/index.js';
import { EMPTY, OP_NAMES, READ_AHEAD, bucketMismatch, type BucketGen, type IoBuffers } from './format.js';
import type { Generations } from './generations.js';
import type { DrumOptions, DrumResult, DrumResultChunk } from './types.js';

/** Where the chunked delivery (Delivery.scanAux) stands: in the block (q, k), overall (p), in the chunk (m, ap). */
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

export class Delivery {
  /** The reused delivery chunk, both consumer forms (capacity resultChunk; aux arena ≥ 2 MiB). */
  private soa: DrumResultChunk | null = null;
  private readonly vtmp = new Int32Array(1);
  /** Aux bytes read by deliveries since open (the measured b of Drum.stats). */
  mergedAuxBytes = 0;

  constructor(
    private readonly deliver: 'all' | 'unique' | 'none',
    private readonly resultChunk: number,
    private readonly onResults: DrumOptions['onResults'],
    private readonly onResultChunk: DrumOptions['onResultChunk'],
    private readonly io: IoCounters,
    private readonly files: Generations,
    private readonly bufs: IoBuffers,
  ) {}

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
  async deliverChunks(
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
      const reader = new BlockReader(g.auxFd, 0, g.aux.offset, this.files.bFile(i, g.gen, 'aux'), this.io, 'bucket-aux', READ_AHEAD, true, this.bufs.ioBuffer());
      for (let blk = reader.next(); blk !== null; blk = reader.next()) {
        if (st.p + blk.count > n) throw bucketMismatch(i, g.gen, 'more aux records than key/value records');
        st.q = 0;
        st.k = 0;
        // (The block's payload stays valid while the consumer runs: nothing is read meanwhile.)
        while (!this.scanAux(blk.payload, blk.count, st, c, ops, hi, lo, uniq, prev, i, g.gen)) {
          if (st.m > 0) await flush();
          if (st.grow > c.auxBytes.length) c.auxBytes = new Uint8Array(st.grow); // one huge aux record
          st.grow = 0;
        }
        if (st.q !== blk.payload.length) throw bucketMismatch(i, g.gen, 'trailing bytes in an aux block');
      }
      this.bufs.ioBuf = reader.buffer;
    }
    if (st.p !== n) throw bucketMismatch(i, gens[0]!.gen, `expected ${n} aux records, found ${st.p}`);
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
        if (lenp1 < 0) throw bucketMismatch(i, gen, 'aux records overrun their block');
        q1 = this.vtmp[0]!;
      }
      const len = lenp1 === 0 ? 0 : lenp1 - 1;
      if (q1 + len > bl) throw bucketMismatch(i, gen, 'aux record overruns its block');
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
}
