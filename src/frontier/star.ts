/**
 * STAR — Spam Tracking and Avoidance through Reputation (thesis VI.2, Fig. 4).
 *
 * Crawling threads send PLD→PLD link pairs; `PLDedges` keeps the distinct pairs so that each source
 * PLD counts once toward the in-degree d_x of its target in `PLDindegree`. Unique URLs arriving from
 * URLseen do a batched check+update against `PLDindegree`: P_x is incremented and the URL leaves
 * with (B_x, P_x), B_x = F(d_x), on its way to BEAST.
 *
 * The two tables grow with the crawl (one entry per PLD / per distinct PLD edge), so in a real crawl
 * they are DRUM instances on disk (`DrumPldStore`, src/frontier/star-drum.ts); `MemoryPldStore`
 * implements the same interface in RAM for simulations and small crawls. The only RAM STAR itself
 * keeps is the in-degree histogram used to rank PLDs for the crawl preset (bounded, see budget.ts).
 */
import { IndegreeHistogram, type BudgetFunction } from './budget.js';
import { U64Map } from './u64-map.js';
import type { FrontierUrl } from './record.js';
import { writeAtomic } from './queue.js';
import { readFile } from 'node:fs/promises';

/** Called for every change of a PLD's in-degree (from = 0 for a PLD first seen as a target). */
export type DegreeListener = (from: number, to: number) => void;

/** The storage behind STAR: PLDedges + PLDindegree. Batched; keys are (hi, lo) uint32 pairs. */
export interface PldStore {
  /**
   * Adds `count` PLD edges packed as [srcHi, srcLo, dstHi, dstLo]*; every edge not seen before
   * increments its target's in-degree (self-edges must already be filtered out).
   */
  addEdges(edges: Uint32Array, count: number, onDegree: DegreeListener): Promise<void>;
  /**
   * For each of `count` PLD keys packed as [hi, lo]*, in order: P += 1; writes the in-degree and the
   * new P into outD[i], outP[i] (a PLD repeated in one batch gets consecutive P values).
   */
  admit(keys: Uint32Array, count: number, outD: Float64Array, outP: Float64Array): Promise<void>;
  /** In-degree of each PLD key (no P change), for re-budgeting URLs waiting in QF. */
  indegrees(keys: Uint32Array, count: number, outD: Float64Array): Promise<void>;
  commit(): Promise<void>;
  close(): Promise<void>;
}

/** Edge key: two independent 32-bit mixes of the four words (the thesis keys PLDedges by a hash). */
export function edgeKey(sHi: number, sLo: number, dHi: number, dLo: number, out: Uint32Array, o: number): void {
  let a = Math.imul(sHi ^ 0x9e3779b9, 0x85ebca6b) ^ sLo;
  a = Math.imul(a ^ (a >>> 15), 0xc2b2ae35) ^ dHi;
  a = Math.imul(a ^ (a >>> 13), 0x27d4eb2f) ^ dLo;
  a = Math.imul(a ^ (a >>> 16), 0x165667b1);
  let b = Math.imul(dLo ^ 0x7f4a7c15, 0xcc9e2d51) ^ dHi;
  b = Math.imul(b ^ (b >>> 15), 0x1b873593) ^ sLo;
  b = Math.imul(b ^ (b >>> 13), 0xe6546b64) ^ sHi;
  b = Math.imul(b ^ (b >>> 16), 0x85ebca6b);
  out[o] = (a ^ (a >>> 16)) >>> 0;
  out[o + 1] = (b ^ (b >>> 16)) >>> 0;
}

/** PLDedges + PLDindegree in RAM (simulations, tests, small crawls). RAM: O(PLDs + distinct edges). */
export class MemoryPldStore implements PldStore {
  private readonly index = new U64Map(1024);
  private d = new Float64Array(1024);
  private p = new Float64Array(1024);
  private n = 0;
  private readonly edges = new U64Map(1024);
  private readonly ek = new Uint32Array(2);

  private id(hi: number, lo: number): number {
    let i = this.index.get(hi, lo);
    if (i < 0) {
      i = this.n++;
      if (i >= this.d.length) {
        const d = new Float64Array(this.d.length * 2);
        d.set(this.d);
        const p = new Float64Array(this.p.length * 2);
        p.set(this.p);
        this.d = d;
        this.p = p;
      }
      this.index.set(hi, lo, i);
    }
    return i;
  }

  async addEdges(edges: Uint32Array, count: number, onDegree: DegreeListener): Promise<void> {
    const ek = this.ek;
    for (let i = 0; i < count; i++) {
      const o = i * 4;
      edgeKey(edges[o]!, edges[o + 1]!, edges[o + 2]!, edges[o + 3]!, ek, 0);
      if (this.edges.get(ek[0]!, ek[1]!) >= 0) continue;
      this.edges.set(ek[0]!, ek[1]!, 1);
      const t = this.id(edges[o + 2]!, edges[o + 3]!);
      const from = this.d[t]!;
      this.d[t] = from + 1;
      onDegree(from, from + 1);
    }
  }

  async admit(keys: Uint32Array, count: number, outD: Float64Array, outP: Float64Array): Promise<void> {
    for (let i = 0; i < count; i++) {
      const t = this.id(keys[2 * i]!, keys[2 * i + 1]!);
      const p = this.p[t]! + 1;
      this.p[t] = p;
      outD[i] = this.d[t]!;
      outP[i] = p;
    }
  }

  async indegrees(keys: Uint32Array, count: number, outD: Float64Array): Promise<void> {
    for (let i = 0; i < count; i++) {
      const t = this.index.get(keys[2 * i]!, keys[2 * i + 1]!);
      outD[i] = t < 0 ? 0 : this.d[t]!;
    }
  }

  async commit(): Promise<void> {}
  async close(): Promise<void> {}
}

export class Star {
  readonly histogram = new IndegreeHistogram();
  private keys = new Uint32Array(2048);
  private outD = new Float64Array(1024);
  private outP = new Float64Array(1024);
  private edgeBuf = new Uint32Array(4096);
  private readonly onDegree: DegreeListener = (from, to) => this.histogram.move(from, to);

  constructor(
    readonly store: PldStore,
    readonly budgetFn: BudgetFunction,
    /** Where commit() keeps the in-degree histogram (the crawl preset's ranks) across restarts. */
    private readonly histogramFile?: string,
  ) {}

  /** A Star whose rank histogram is restored from `histogramFile` (when present) and saved at commit. */
  static async open(store: PldStore, budgetFn: BudgetFunction, histogramFile?: string): Promise<Star> {
    const s = new Star(store, budgetFn, histogramFile);
    if (histogramFile !== undefined) {
      try {
        s.histogram.fromBytes(new Uint8Array(await readFile(histogramFile)));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      }
    }
    return s;
  }

  /** B = F(d) under the current ranking. */
  budgetFor(d: number): number {
    return this.budgetFn.budget(d, this.histogram);
  }

  /**
   * Feeds PLD→PLD links found on pages (packed [srcHi, srcLo, dstHi, dstLo]*). Self-links are
   * skipped here: a PLD cannot raise its own reputation (VI.2: in-degree counts other PLDs only).
   */
  async addLinks(pairs: Uint32Array, count: number): Promise<void> {
    if (this.edgeBuf.length < count * 4) this.edgeBuf = new Uint32Array(count * 4);
    let m = 0;
    for (let i = 0; i < count; i++) {
      const o = i * 4;
      if (pairs[o] === pairs[o + 2] && pairs[o + 1] === pairs[o + 3]) continue;
      this.edgeBuf.set(pairs.subarray(o, o + 4), m * 4);
      m++;
    }
    if (m > 0) await this.store.addEdges(this.edgeBuf, m, this.onDegree);
  }

  /** Batched check+update: gives each unique URL its (B, P); mutates `budget` and `admitted`. */
  async assign(urls: readonly FrontierUrl[]): Promise<void> {
    const n = urls.length;
    if (n === 0) return;
    this.ensure(n);
    for (let i = 0; i < n; i++) {
      this.keys[2 * i] = urls[i]!.pldHi;
      this.keys[2 * i + 1] = urls[i]!.pldLo;
    }
    await this.store.admit(this.keys, n, this.outD, this.outP);
    for (let i = 0; i < n; i++) {
      const u = urls[i]!;
      u.budget = this.budgetFor(this.outD[i]!);
      u.admitted = this.outP[i]!;
    }
  }

  /** Re-budgets URLs waiting in QF with their PLD's current B (P unchanged) — BEAST's hook. */
  async rebudget(urls: readonly FrontierUrl[]): Promise<void> {
    const n = urls.length;
    if (n === 0) return;
    this.ensure(n);
    for (let i = 0; i < n; i++) {
      this.keys[2 * i] = urls[i]!.pldHi;
      this.keys[2 * i + 1] = urls[i]!.pldLo;
    }
    await this.store.indegrees(this.keys, n, this.outD);
    for (let i = 0; i < n; i++) urls[i]!.budget = this.budgetFor(this.outD[i]!);
  }

  async commit(): Promise<void> {
    await this.store.commit();
    if (this.histogramFile !== undefined) await writeAtomic(this.histogramFile, this.histogram.toBytes());
  }

  close(): Promise<void> {
    return this.store.close();
  }

  private ensure(n: number): void {
    if (this.outD.length < n) {
      this.keys = new Uint32Array(n * 2);
      this.outD = new Float64Array(n);
      this.outP = new Float64Array(n);
    }
  }
}
