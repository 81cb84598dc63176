/**
 * STAR across nodes (docs/cluster.md, "STAR across nodes"). A PLD's in-degree lives with the
 * partition that owns the PLD; links are found by the partition that owns their source. So:
 *
 *   - each partition's STAR runs as in one process (star.ts): it judges a link's source (its own
 *     PLD: the page's) trusted or not from its own in-degree table, keeps the votes of untrusted
 *     sources pending, and releases them when the source is promoted — promotions never leave the
 *     partition, because the pending votes wait where their source lives;
 *   - StarLink, the store it sees, sends each counted vote (trusted source, or trust off) for a
 *     PLD of another partition to that partition's owner (Router.vote), which adds it as it is
 *     (Star.addVotes): PLDedges there counts it once however often it arrives.
 * The owner of a PLD therefore counts exactly the distinct (source ⊕ slot, target) votes of
 * trusted sources a single node would, and promotions it causes there release that PLD's own
 * pending votes in turn.
 *
 * Budgets rank a PLD against all PLDs (budget.ts rankAbove): ClusterRanks adds the histograms of
 * every other partition (published in the KV bucket as hist.<p>, refreshed each second) to the
 * partition's own live one. Rank counts are sums over partitions, so the context is the single
 * node's up to the refresh delay.
 */
import { IndegreeHistogram, type BudgetContext, type DegreeListener, type PldStore } from '../frontier/index.js';
import { partitionOf } from './partition.js';
import type { Router } from './engine/router.js';

export class StarLink implements PldStore {
  private buf = new Uint32Array(1024);

  constructor(
    private readonly inner: PldStore,
    private readonly p: number,
    private readonly P: number,
    private readonly router: Router,
  ) {}

  async addEdges(edges: Uint32Array, count: number, onDegree: DegreeListener): Promise<void> {
    if (this.buf.length < count * 4) this.buf = new Uint32Array(count * 4);
    let m = 0;
    for (let i = 0; i < count; i++) {
      const o = i * 4;
      const t = partitionOf(edges[o + 2]!, edges[o + 3]!, this.P);
      if (t !== this.p) {
        this.router.vote(t, edges, o);
        continue;
      }
      this.buf.set(edges.subarray(o, o + 4), m * 4);
      m++;
    }
    if (m > 0) await this.inner.addEdges(this.buf.slice(0, m * 4), m, onDegree);
  }

  admit(keys: Uint32Array, count: number, outD: Float64Array, outP: Float64Array): Promise<void> {
    return this.inner.admit(keys, count, outD, outP);
  }

  indegrees(keys: Uint32Array, count: number, outD: Float64Array): Promise<void> {
    return this.inner.indegrees(keys, count, outD);
  }

  commit(): Promise<void> {
    return this.inner.commit();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** Histogram bytes (IndegreeHistogram.toBytes: float64 [total, exact…, log…]) → sparse: u32 n, n × (u32 index, f64 count). */
export function sparseHistogram(h: IndegreeHistogram): Uint8Array {
  const dense = new Float64Array(h.toBytes().buffer);
  let n = 0;
  for (let i = 0; i < dense.length; i++) if (dense[i] !== 0) n++;
  const out = new Uint8Array(4 + n * 12);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, n, true);
  let p = 4;
  for (let i = 0; i < dense.length; i++) {
    if (dense[i] === 0) continue;
    dv.setUint32(p, i, true);
    dv.setFloat64(p + 4, dense[i]!, true);
    p += 12;
  }
  return out;
}

/** Adds a sparse histogram into dense float64 counts (the toBytes layout). Ignores a malformed one. */
function addSparse(into: Float64Array, b: Uint8Array): void {
  if (b.byteLength < 4) return;
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const n = dv.getUint32(0, true);
  if (b.byteLength !== 4 + n * 12) return;
  for (let k = 0, p = 4; k < n; k++, p += 12) {
    const i = dv.getUint32(p, true);
    if (i < into.length) into[i] = into[i]! + dv.getFloat64(p + 4, true);
  }
}

/** The rank context of the whole crawl, seen from the partitions one node hosts. */
export class ClusterRanks {
  /** the node's own partitions' live histograms */
  private readonly local = new Map<number, IndegreeHistogram>();
  /** every other partition's last published histogram, summed (rebuilt by refresh) */
  private others = new Map<number, IndegreeHistogram>();
  private readonly size = new IndegreeHistogram().toBytes().byteLength / 8;

  /** `own` is partition p's live histogram: its context is own + every other partition's. */
  context(p: number, own: IndegreeHistogram): BudgetContext {
    this.local.set(p, own);
    const self = this;
    return {
      get plds(): number {
        return own.plds + (self.others.get(p)?.plds ?? 0);
      },
      rankAbove(d: number): number {
        return own.rankAbove(d) + (self.others.get(p)?.rankAbove(d) ?? 0);
      },
    };
  }

  /** Partition p left this node: its histogram is published and read back from KV from now on. */
  forget(p: number): void {
    this.local.delete(p);
  }

  /** Hosted partitions' histograms, sparse, to publish (KV hist.<p>). */
  ownSparse(): Map<number, Uint8Array> {
    const out = new Map<number, Uint8Array>();
    for (const [p, h] of this.local) out.set(p, sparseHistogram(h));
    return out;
  }

  /**
   * Rebuilds each hosted partition's "others" from the published histograms (`published`: KV
   * hist.<p> of every partition) and the live ones of this node's other partitions.
   */
  refresh(published: ReadonlyMap<number, Uint8Array>): void {
    const remote = new Float64Array(this.size);
    for (const [q, b] of published) if (!this.local.has(q)) addSparse(remote, b);
    const locals = [...this.local.entries()].map(([q, h]) => ({ q, dense: new Float64Array(h.toBytes().buffer) }));
    // others(q) = remote + every local partition but q = (remote + all locals) − q's own.
    const total = remote;
    for (const o of locals) for (let i = 0; i < total.length; i++) total[i] = total[i]! + o.dense[i]!;
    const next = new Map<number, IndegreeHistogram>();
    for (const { q, dense } of locals) {
      const sum = total.slice();
      for (let i = 0; i < sum.length; i++) sum[i] = sum[i]! - dense[i]!;
      const h = new IndegreeHistogram();
      h.fromBytes(new Uint8Array(sum.buffer));
      next.set(q, h);
    }
    this.others = next;
  }
}
