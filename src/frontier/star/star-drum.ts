/**
 * STAR's two tables on DRUM (thesis VI.2, Fig. 4), for crawls whose PLD graph does not fit in RAM:
 *
 *   PLDedges     key = hash(source PLD, target PLD), no value; batched check+update, and each
 *                unique (new) edge becomes an in-degree increment of its target;
 *   PLDindegree  key = PLD hash, value = (d: u32, P: u32) merged by addition. URLs do a batched
 *                check+update with (0, 1): the value stored before it gives d and P − 1. In-degree
 *                lookups (`indegrees`: trust checks, re-budgeting) are batches of checks only,
 *                which DRUM answers from a read of Z without rewriting it (src/drum/merge.ts checkZ).
 *
 * Each call is one DRUM batch (merge) — the caller passes whole batches (e.g. everything one
 * URLseen merge delivered), which is how the thesis chains DRUMs. Results come back from DRUM in
 * bucket order; the aux of every tuple carries its index in the batch to put them back in place.
 * Crash safety: PLDedges commits a round only after the in-degree increments it produced are
 * flushed into PLDindegree (its onResults awaits PLDindegree.flush()).
 */
import path from 'node:path';
import { Drum, type DrumOptions, type DrumResult } from '../../drum/index.js';
import { edgeKey, type DegreeListener, type PldStore } from './star.js';

const ONE_D = new Uint8Array([0, 0, 0, 1, 0, 0, 0, 0]);
const ONE_P = new Uint8Array([0, 0, 0, 0, 0, 0, 0, 1]);

// Byte arithmetic on purpose, no DataView: `new DataView(small.buffer)` on a fresh ≤ 64-byte typed
// array makes V8 move it off the heap (a malloc'd ArrayBuffer, later swept by the GC's ArrayBuffer
// sweeper) — once per URL, per PLD pair and per merged value, in the STAR host thread.
/** Big-endian u32 at `o`. */
const be32 = (v: Uint8Array, o: number): number => ((v[o]! << 24) | (v[o + 1]! << 16) | (v[o + 2]! << 8) | v[o + 3]!) >>> 0;

function putBe32(v: Uint8Array, o: number, x: number): void {
  v[o] = x >>> 24;
  v[o + 1] = (x >>> 16) & 0xff;
  v[o + 2] = (x >>> 8) & 0xff;
  v[o + 3] = x & 0xff;
}

function addValues(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(8);
  putBe32(out, 0, (be32(a, 0) + be32(b, 0)) >>> 0);
  putBe32(out, 4, (be32(a, 4) + be32(b, 4)) >>> 0);
  return out;
}

const d32 = (v: Uint8Array | null, o: number): number => (v === null ? 0 : be32(v, o));

export interface DrumPldStoreOptions {
  /** RAM for each of the two DRUMs (bytes). @default 16 MiB */
  ramBytes?: number;
  drum?: Partial<Omit<DrumOptions, 'onResults' | 'valueBytes' | 'merge'>>;
}

export class DrumPldStore implements PldStore {
  private sink: ((r: DrumResult) => void) | null = null;
  private onDegree: DegreeListener | null = null;

  private constructor(
    private readonly edges: Drum,
    private readonly indeg: Drum,
  ) {}

  static async open(dir: string, opts: DrumPldStoreOptions = {}): Promise<DrumPldStore> {
    const ram = opts.ramBytes ?? 16 * 1024 * 1024;
    let store: DrumPldStore | null = null;
    const indeg = await Drum.open(path.join(dir, 'pld-indegree'), {
      ramBytes: ram,
      auxBytesHint: 4,
      ...opts.drum,
      valueBytes: 8,
      merge: addValues,
      deliver: 'all',
      onResults: (batch) => {
        for (const r of batch) store!.onIndegree(r);
      },
    });
    const edges = await Drum.open(path.join(dir, 'pld-edges'), {
      ramBytes: ram,
      auxBytesHint: 8,
      ...opts.drum,
      valueBytes: 0,
      deliver: 'unique',
      onResults: async (batch) => {
        for (const r of batch) {
          const a = r.aux!;
          indeg.update(be32(a, 0), be32(a, 4), ONE_D);
        }
        await indeg.flush();
      },
    });
    store = new DrumPldStore(edges, indeg);
    return store;
  }

  private onIndegree(r: DrumResult): void {
    if (r.op === 'update') {
      const from = d32(r.value, 0);
      this.onDegree?.(from, from + 1, r.keyHi, r.keyLo);
    } else this.sink?.(r);
  }

  async addEdges(edges: Uint32Array, count: number, onDegree: DegreeListener): Promise<void> {
    const ek = new Uint32Array(2);
    const aux = new Uint8Array(8); // DRUM copies a tuple's aux at once: one scratch for the batch
    for (let i = 0; i < count; i++) {
      const o = i * 4;
      edgeKey(edges[o]!, edges[o + 1]!, edges[o + 2]!, edges[o + 3]!, ek, 0);
      putBe32(aux, 0, edges[o + 2]!);
      putBe32(aux, 4, edges[o + 3]!);
      this.edges.checkUpdate(ek[0]!, ek[1]!, null, aux);
    }
    this.onDegree = onDegree;
    try {
      await this.edges.merge();
    } finally {
      this.onDegree = null;
    }
  }

  private async run(count: number, push: (i: number, aux: Uint8Array) => void, take: (i: number, r: DrumResult) => void): Promise<void> {
    const aux = new Uint8Array(4); // copied by DRUM at once (see addEdges)
    for (let i = 0; i < count; i++) {
      putBe32(aux, 0, i);
      push(i, aux);
    }
    this.sink = (r) => take(be32(r.aux!, 0), r);
    try {
      await this.indeg.merge();
    } finally {
      this.sink = null;
    }
  }

  async admit(keys: Uint32Array, count: number, outD: Float64Array, outP: Float64Array): Promise<void> {
    await this.run(
      count,
      (i, aux) => this.indeg.checkUpdate(keys[2 * i]!, keys[2 * i + 1]!, ONE_P, aux),
      (i, r) => {
        outD[i] = d32(r.value, 0);
        outP[i] = d32(r.value, 4) + 1;
      },
    );
  }

  async indegrees(keys: Uint32Array, count: number, outD: Float64Array): Promise<void> {
    await this.run(
      count,
      (i, aux) => this.indeg.check(keys[2 * i]!, keys[2 * i + 1]!, aux),
      (i, r) => {
        outD[i] = d32(r.value, 0);
      },
    );
  }

  async commit(): Promise<void> {
    await this.edges.flush();
    await this.indeg.flush();
  }

  async close(): Promise<void> {
    await this.edges.close();
    await this.indeg.close();
  }
}
