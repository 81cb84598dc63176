/**
 * STAR — Spam Tracking and Avoidance through Reputation (thesis VI.2, Fig. 4).
 *
 * Crawling threads send PLD→PLD link pairs; `PLDedges` keeps the distinct pairs so that each source
 * PLD counts once toward the in-degree d_x of its target in `PLDindegree`. Unique URLs arriving from
 * URLseen do a batched check+update against `PLDindegree`: P_x is incremented and the URL leaves
 * with (B_x, P_x), B_x = F(d_x), on its way to BEAST.
 *
 * The two tables grow with the crawl (one entry per PLD / per distinct PLD edge), so in a real crawl
 * they are DRUM instances on disk (`DrumPldStore`, src/frontier/star/star-drum.ts); `MemoryPldStore`
 * implements the same interface in RAM for simulations and small crawls. The only RAM STAR itself
 * keeps is the in-degree histogram used to rank PLDs for the crawl preset (bounded, see budget.ts).
 */
import { IndegreeHistogram, type BudgetContext, type BudgetFunction } from './budget.js';
import { U64Map } from '../../util/u64-map.js';
import type { FrontierUrl } from '../record.js';
import { writeAtomic } from '../queue.js';
import { readFile } from 'node:fs/promises';
import { damagedFile, seal, unseal } from '../../disk/index.js';
import { edgeKey } from './edge-key.js';
import { PendingVotes } from './pending-votes.js';

/** Called for every change of a PLD's in-degree (from = 0 for a PLD first seen as a target); (hi, lo) is the PLD's key. */
export type DegreeListener = (from: number, to: number, hi: number, lo: number) => void;

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

export { edgeKey } from './edge-key.js';

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
      onDegree(from, from + 1, edges[o + 2]!, edges[o + 3]!);
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


/**
 * Trusted in-degree (the reputation STAR ranks by when it is on): a link counts toward its target's
 * in-degree only if its source PLD is itself trusted — a seed's PLD (the operator vouches for it) or
 * a PLD whose own trusted in-degree has reached `threshold`. Each source PLD casts up to
 * `votesPerSource` votes for a target, one per distinct page slot (a hash of the linking page's
 * path, query left out, mod votesPerSource: edge-key.ts, pathSlot), so a site that links to another
 * from several pages says more than one stray link, copies of one page under session ids count
 * once, and no single site can make another trusted beyond its votes.
 *
 * Why (thesis VI.2, VIII.2): in-degree from distinct PLDs is what a spammer pays for — one PLD per
 * point. A spammer who controls several PLDs (bought in-degree, a clique of small PLDs) gives each
 * of them a high plain in-degree from the others, but those links come from PLDs that nothing
 * trusted links to, so here they count nothing: the farm's reputation is bounded by the links the
 * real web gives it. PLDedges stays key-only: a vote is the edge key of (source PLD ⊕ slot, target).
 */
export interface TrustOptions {
  /** Trusted in-degree at which a PLD's own links start to count (default TRUST_THRESHOLD). */
  threshold?: number;
  /** Votes one source PLD can cast for one target (default 4). */
  votesPerSource?: number;
  /** Votes of not-yet-trusted sources kept for when they are promoted (default 2^18). */
  pendingVotes?: number;
}

/**
 * Trusted in-degree at which a PLD's links start to count: one stray link (a farm's one bought
 * link, a comment) does not make a PLD trusted; two page votes from trusted sites do. At 1 every
 * farm linked once from a trusted page would be trusted, and a clique of farms then trusts itself
 * (each member has one such link). On simweb's adv-* good web, whose sites link to the next two
 * from every page, trust reaches all 20 PLDs as they are crawled. The price is on a sparse web
 * grown from one seed: with those links removed (20 PLDs, 249 links to other PLDs in 1,080 pages)
 * only the seed's PLD reaches 2, against all 20 at 1 — there reputation tells the real web from a
 * farm nothing, and spam resistance is the low-PLD pace's (1) alone (pld-pace.ts).
 */
export const TRUST_THRESHOLD = 2;

/**
 * Promotions kept for takePromoted between two calls: the frontier learns of them so that URLs
 * STAR budgeted before their PLD was trusted do not wait as untrusted (pld-pace.ts). Beyond the
 * bound a promotion is not reported, and such a PLD's old URLs wait as untrusted: it only slows.
 */
const MAX_PROMOTED = 1 << 16;

/** Source key words of the operator's vouches (seeds): never a PLD fingerprint's high word in practice. */
const SEED_HI = 0xffffffff;

export class Star {
  readonly histogram = new IndegreeHistogram();
  /**
   * What budgets rank a PLD's in-degree against: this STAR's own histogram, or one covering more
   * PLDs than this store holds (a cluster crawl's partitions together: src/cluster).
   */
  rankContext: BudgetContext = this.histogram;
  private keys = new Uint32Array(2048);
  private outD = new Float64Array(1024);
  private outP = new Float64Array(1024);
  private edgeBuf = new Uint32Array(4096);
  /** A PLD crossed the trust threshold since PendingVotes were last looked at. */
  private promoted = false;
  /** Keys of PLDs that crossed the trust threshold, packed [hi, lo]*, until takePromoted (at most MAX_PROMOTED). */
  private promotedKeys: number[] = [];
  /** vouch() is adding the operator's votes: a seed's PLD is trusted, not promoted through links. */
  private vouching = false;
  private readonly onDegree: DegreeListener = (from, to, hi, lo) => {
    this.histogram.move(from, to);
    if (this.trust !== null && from < this.trust.threshold && to >= this.trust.threshold) {
      this.promoted = true;
      if (!this.vouching && this.promotedKeys.length < 2 * MAX_PROMOTED) this.promotedKeys.push(hi, lo);
    }
  };

  /** null: plain in-degree (every distinct source PLD counts once), as in the thesis. */
  readonly trust: Required<TrustOptions> | null;
  /** Votes of sources not trusted yet (bounded, see pending-votes.ts). */
  readonly pending: PendingVotes;
  private srcKeys = new Uint32Array(512);
  private srcD = new Float64Array(256);

  constructor(
    readonly store: PldStore,
    readonly budgetFn: BudgetFunction,
    /** Where commit() keeps the in-degree histogram (the crawl preset's ranks) across restarts. */
    private readonly histogramFile?: string,
    trust?: TrustOptions,
  ) {
    this.trust = trust === undefined ? null : { threshold: trust.threshold ?? TRUST_THRESHOLD, votesPerSource: trust.votesPerSource ?? 4, pendingVotes: trust.pendingVotes ?? 1 << 18 };
    if (this.trust !== null && !(this.trust.threshold >= 1 && this.trust.votesPerSource >= 1)) {
      throw new RangeError('trust threshold and votesPerSource must be at least 1');
    }
    this.pending = new PendingVotes(this.trust === null ? 1 : this.trust.pendingVotes);
  }

  /** A Star whose rank histogram is restored from `histogramFile` (when present) and saved at commit. */
  static async open(store: PldStore, budgetFn: BudgetFunction, histogramFile?: string, trust?: TrustOptions): Promise<Star> {
    const s = new Star(store, budgetFn, histogramFile, trust);
    if (histogramFile !== undefined) {
      let buf: Uint8Array | null = null;
      try {
        buf = new Uint8Array(await readFile(histogramFile));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      }
      // Sealed with a CRC-32 (src/disk/sealed.ts; files written before the seal existed are read
      // when their length fits): a damaged file is refused, never read as in-degree counts.
      if (buf !== null) {
        const { body, bad } = unseal(buf);
        if (bad || !s.histogram.fromBytes(body)) {
          throw damagedFile(histogramFile, bad ? 'its CRC-32 does not match its content' : `${body.byteLength} bytes, not the size of STAR's in-degree histogram`,
            `It holds STAR's in-degree histogram (the ranks of the crawl budget); remove it to resume: the histogram then restarts empty and counts the in-degrees the crawl sees from then on (URLs already queued keep their place).`);
        }
      }
    }
    return s;
  }

  /**
   * The PLDs that crossed the trust threshold since the last call, packed [hi, lo]* (empty with
   * trust off): a PLD's URLs budgeted before then still carry the B of an untrusted PLD.
   */
  takePromoted(): Uint32Array {
    const out = Uint32Array.from(this.promotedKeys);
    this.promotedKeys = [];
    return out;
  }

  /** B = F(d) under the current ranking. */
  budgetFor(d: number): number {
    return this.budgetFn.budget(d, this.rankContext);
  }

  /**
   * Feeds PLD→PLD links found on pages (packed [srcHi, srcLo, dstHi, dstLo]*; `slots[i]`, when
   * given, is the linking page's slot — any small integer that differs between pages of one PLD).
   * Self-links are skipped here: a PLD cannot raise its own reputation (VI.2: in-degree counts
   * other PLDs only). With trust on, links from untrusted sources are dropped (they count once
   * their source is trusted and links again).
   */
  async addLinks(pairs: Uint32Array, count: number, slots?: Uint8Array): Promise<void> {
    if (this.edgeBuf.length < count * 4) this.edgeBuf = new Uint32Array(count * 4);
    let m = 0;
    for (let i = 0; i < count; i++) {
      const o = i * 4;
      if (pairs[o] === pairs[o + 2] && pairs[o + 1] === pairs[o + 3]) continue;
      this.edgeBuf.set(pairs.subarray(o, o + 4), m * 4);
      if (this.trust !== null) {
        // The vote's slot folded into the source's low word: distinct (source, slot) pairs are
        // distinct PLDedges keys, so each counts once however often its links are seen again.
        const slot = slots === undefined ? 0 : slots[i]! % this.trust.votesPerSource;
        this.edgeBuf[m * 4 + 1] = (pairs[o + 1]! ^ Math.imul(slot, 0x9e3779b1)) >>> 0;
      }
      m++;
    }
    if (this.trust !== null) m = await this.keepTrusted(pairs, count, m);
    if (m > 0) await this.store.addEdges(this.edgeBuf, m, this.onDegree);
    await this.countPromoted();
  }

  /**
   * After PLDs crossed the trust threshold: the votes their pages gave while they were untrusted
   * (PendingVotes) now count. A promotion this causes starts another round (at most 8 per call;
   * the rest waits for the next call).
   */
  private async countPromoted(): Promise<void> {
    for (let round = 0; round < 8 && this.promoted && this.pending.size > 0; round++) {
      this.promoted = false;
      const src = this.pending.sources();
      const k = src.length / 2;
      if (this.srcD.length < k) this.srcD = new Float64Array(k);
      await this.store.indegrees(src, k, this.srcD);
      const trusted = new U64Map(64);
      for (let i = 0; i < k; i++) if (this.srcD[i]! >= this.trust!.threshold) trusted.set(src[2 * i]!, src[2 * i + 1]!, 1);
      if (trusted.size === 0) return;
      const votes = this.pending.take(trusted);
      if (votes.length > 0) await this.store.addEdges(votes, votes.length / 4, this.onDegree);
    }
  }

  /**
   * Keeps in edgeBuf the first `m` edges whose source PLD is trusted (one batched in-degree check
   * of the distinct sources); returns how many are kept. The sources are read from `pairs` (the
   * edge buffer holds slot-mixed words), skipping self-links as addLinks did.
   */
  private async keepTrusted(pairs: Uint32Array, count: number, m: number): Promise<number> {
    const sources = new Map<number, number>(); // folded source key → index into srcKeys
    const srcOf = new Int32Array(m);
    let k = 0;
    for (let i = 0, j = 0; i < count && j < m; i++) {
      const o = i * 4;
      const hi = pairs[o]!;
      const lo = pairs[o + 1]!;
      if (hi === pairs[o + 2] && lo === pairs[o + 3]) continue;
      // A lossy fold of the two words as the Map key; a collision is caught by the word check below.
      const fold = hi * 0x1_0000_0000 + lo;
      let s = sources.get(fold);
      if (s === undefined || this.srcKeys[2 * s] !== hi || this.srcKeys[2 * s + 1] !== lo) {
        s = k++;
        if (this.srcKeys.length < k * 2) {
          const nk = new Uint32Array(k * 4);
          nk.set(this.srcKeys);
          this.srcKeys = nk;
        }
        this.srcKeys[2 * s] = hi;
        this.srcKeys[2 * s + 1] = lo;
        sources.set(fold, s);
      }
      srcOf[j++] = s;
    }
    if (this.srcD.length < k) this.srcD = new Float64Array(k * 2);
    await this.store.indegrees(this.srcKeys, k, this.srcD);
    const t = this.trust!.threshold;
    let kept = 0;
    for (let j = 0; j < m; j++) {
      const s = srcOf[j]!;
      if (this.srcD[s]! < t) {
        this.pending.add(this.srcKeys[2 * s]!, this.srcKeys[2 * s + 1]!, this.edgeBuf, j * 4);
        continue;
      }
      if (kept !== j) this.edgeBuf.copyWithin(kept * 4, j * 4, j * 4 + 4);
      kept++;
    }
    return kept;
  }

  /**
   * Votes counted elsewhere as coming from trusted (or, with trust off, any) sources, packed as
   * the store takes them ([sHi, sLo ⊕ slot, tHi, tLo]*, self-links already left out): added as
   * they are. A cluster crawl's partition gets here the votes of other partitions' pages for its
   * PLDs; each source's trust was judged by the partition that owns the source (src/cluster).
   */
  async addVotes(edges: Uint32Array, count: number): Promise<void> {
    if (count === 0) return;
    await this.store.addEdges(edges, count, this.onDegree);
    await this.countPromoted();
  }

  /**
   * The operator's vouch for the seeds' PLDs (packed [hi, lo]*): each gets `threshold` votes from
   * pseudo-sources, so its links count from the start. Idempotent (the votes are PLDedges keys).
   */
  async vouch(keys: Uint32Array, count: number): Promise<void> {
    if (this.trust === null || count === 0) return;
    const t = this.trust.threshold;
    if (this.edgeBuf.length < count * t * 4) this.edgeBuf = new Uint32Array(count * t * 4);
    let m = 0;
    for (let i = 0; i < count; i++) {
      for (let v = 0; v < t; v++) {
        this.edgeBuf[m * 4] = SEED_HI;
        this.edgeBuf[m * 4 + 1] = v;
        this.edgeBuf[m * 4 + 2] = keys[2 * i]!;
        this.edgeBuf[m * 4 + 3] = keys[2 * i + 1]!;
        m++;
      }
    }
    this.vouching = true;
    try {
      await this.store.addEdges(this.edgeBuf, m, this.onDegree);
    } finally {
      this.vouching = false;
    }
  }

  /** The URLs' PLD keys into `keys` (two words each), the buffers sized for them. */
  private loadKeys(urls: readonly FrontierUrl[]): void {
    this.ensure(urls.length);
    for (let i = 0; i < urls.length; i++) {
      this.keys[2 * i] = urls[i]!.pldHi;
      this.keys[2 * i + 1] = urls[i]!.pldLo;
    }
  }

  /** Batched check+update: gives each unique URL its (B, P) and d; mutates `budget`, `admitted` and `indegree`. */
  async assign(urls: readonly FrontierUrl[]): Promise<void> {
    const n = urls.length;
    if (n === 0) return;
    this.loadKeys(urls);
    const budget = new Float64Array(n);
    const admitted = new Float64Array(n);
    const indegree = new Float64Array(n);
    await this.assignKeys(this.keys, n, budget, admitted, indegree);
    for (let i = 0; i < n; i++) {
      const u = urls[i]!;
      u.budget = budget[i]!;
      u.admitted = admitted[i]!;
      u.indegree = indegree[i]!;
    }
  }

  /**
   * assign() for PLD keys given as words (two per URL, as URLseen's result scan lays them out):
   * URL i's B, P and d into budget[i], admitted[i] and indegree[i]. No FrontierUrl needed.
   */
  async assignKeys(keys: Uint32Array, n: number, budget: Float64Array, admitted: Float64Array, indegree: Float64Array): Promise<void> {
    if (n === 0) return;
    this.ensure(n);
    await this.store.admit(keys, n, this.outD, this.outP);
    for (let i = 0; i < n; i++) {
      const d = this.outD[i]!;
      budget[i] = this.budgetFor(d);
      admitted[i] = this.outP[i]!;
      indegree[i] = d;
    }
  }

  /** Re-budgets URLs waiting in QF with their PLD's current B (P unchanged) — BEAST's hook. */
  async rebudget(urls: readonly FrontierUrl[]): Promise<void> {
    const n = urls.length;
    if (n === 0) return;
    this.loadKeys(urls);
    await this.store.indegrees(this.keys, n, this.outD);
    for (let i = 0; i < n; i++) {
      urls[i]!.budget = this.budgetFor(this.outD[i]!);
      urls[i]!.indegree = this.outD[i]!;
    }
  }

  async commit(): Promise<void> {
    await this.store.commit();
    if (this.histogramFile !== undefined) await writeAtomic(this.histogramFile, seal(this.histogram.toBytes()));
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
