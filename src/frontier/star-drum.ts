/**
 * STAR's two tables on DRUM (thesis VI.2, Fig. 4), for crawls whose PLD graph does not fit in RAM:
 *
 *   PLDedges     key = hash(source PLD, target PLD), no value; batched check+update, and each
 *                unique (new) edge becomes an in-degree increment of its target;
 *   PLDindegree  key = PLD hash, value = (d: u32, P: u32) merged by addition. URLs do a batched
 *                check+update with (0, 1): the value stored before it gives d and P − 1.
 *
 * Each call is one DRUM batch (merge) — the caller passes whole batches (e.g. everything one
 * URLseen merge delivered), which is how the thesis chains DRUMs. Results come back from DRUM in
 * bucket order; the aux of every tuple carries its index in the batch to put them back in place.
 * Crash safety: PLDedges commits a round only after the in-degree increments it produced are
 * flushed into PLDindegree (its onResults awaits PLDindegree.flush()).
 */
import path from 'node:path';
import { Drum, type DrumOptions, type DrumResult } from '../drum/index.js';
import { edgeKey, type DegreeListener, type PldStore } from './star.js';

const ONE_D = new Uint8Array([0, 0, 0, 1, 0, 0, 0, 0]);
const ONE_P = new Uint8Array([0, 0, 0, 0, 0, 0, 0, 1]);

function addValues(a: Uint8Array, b: Uint8Array): Uint8Array {
  const dv = new DataView(a.buffer, a.byteOffset, 8);
  const ev = new DataView(b.buffer, b.byteOffset, 8);
  const out = new Uint8Array(8);
  const ov = new DataView(out.buffer);
  ov.setUint32(0, (dv.getUint32(0) + ev.getUint32(0)) >>> 0);
  ov.setUint32(4, (dv.getUint32(4) + ev.getUint32(4)) >>> 0);
  return out;
}

const d32 = (v: Uint8Array | null, o: number): number => (v === null ? 0 : new DataView(v.buffer, v.byteOffset, 8).getUint32(o));

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
          const v = new DataView(a.buffer, a.byteOffset, 8);
          indeg.update(v.getUint32(0), v.getUint32(4), ONE_D);
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
      this.onDegree?.(from, from + 1);
    } else this.sink?.(r);
  }

  async addEdges(edges: Uint32Array, count: number, onDegree: DegreeListener): Promise<void> {
    const ek = new Uint32Array(2);
    for (let i = 0; i < count; i++) {
      const o = i * 4;
      edgeKey(edges[o]!, edges[o + 1]!, edges[o + 2]!, edges[o + 3]!, ek, 0);
      const aux = new Uint8Array(8);
      const v = new DataView(aux.buffer);
      v.setUint32(0, edges[o + 2]!);
      v.setUint32(4, edges[o + 3]!);
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
    for (let i = 0; i < count; i++) {
      const aux = new Uint8Array(4);
      new DataView(aux.buffer).setUint32(0, i);
      push(i, aux);
    }
    this.sink = (r) => take(new DataView(r.aux!.buffer, r.aux!.byteOffset, 4).getUint32(0), r);
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
