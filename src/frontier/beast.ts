/**
 * BEAST — Budget Enforcement with Anti-Spam Tactics (thesis VII.2, Fig. 5, Theorem 7).
 *
 * BEAST never discards a URL; it delays it. Queues Q1..Qj (a ring; `current` is being read) and QF
 * live on disk. A URL admitted while Q_c is current with STAR's (B, P) goes k = ceil(P/B) queues
 * ahead: the first B URLs of a PLD to Q_{c+1}, the next B to Q_{c+2} …, wrapping around; those with
 * k ≥ j do not fit before the current queue comes round again and go to QF. When the last queue of
 * the ring is emptied, QF is re-read and spread over j NEW queues appended to the ring — B URLs of a
 * PLD per queue, counted per pass — with what does not fit going to a new QF, and j doubles
 * (up to `maxQueues`; at the cap QF is spread over the existing j queues instead). Reading then
 * continues at Q1. Disk I/O per crawled URL stays bounded as the crawl grows (Theorem 7), unlike
 * re-scanning QF every time Q empties (Theorem 6): see bench/beast.
 *
 * Invariants
 *   - Nothing is appended to the current queue, so reading it is a plain drain (k ≥ 1).
 *   - Per queue read, a PLD contributes at most B URLs from admissions and at most B from a QF
 *     re-spread (B taken at placement time), so a spam PLD's share is bounded by its budget.
 *   - Crash safety (at-least-once): a queue is read only while it is current; once emptied it is
 *     *retired* (replaced in the ring by a fresh queue) and deleted only at the next checkpoint,
 *     after the frontier has made durable the URLs it still holds in RAM. Retired queues found at
 *     open are read again first (`replay`). Re-spreads commit their targets, then the manifest,
 *     then drop the old QF. Queue names are never reused; unreferenced queues are removed at open.
 *
 * RAM: the ring of j queue handles (each one block of buffer), the per-pass PLD counter table of a
 * re-spread (≤ maxPassPlds entries; a PLD that does not fit waits in QF for the next pass).
 */
import { CrawlError } from '../errors.js';
import { decodeFrontierUrl, encodeFrontierUrl, peekFrontierUrl, type FrontierUrl } from './record.js';
import type { QueueStore, UrlQueue } from './queue.js';
import { U64Map } from './u64-map.js';

export interface BeastOptions {
  /** Initial number of queues j (≥ 1). @default 2 */
  initialQueues?: number;
  /** Cap on j ("some maximum OS-imposed limit"). @default 256 */
  maxQueues?: number;
  /** Distinct PLDs counted in one QF re-spread pass. @default 1_048_576 (≈ 24 MB) */
  maxPassPlds?: number;
  /** Records read from QF per batch during a re-spread. @default 4096 */
  respreadBatch?: number;
  /** Refreshes the budget B of URLs read back from QF (e.g. `star.rebudget`). */
  rebudget?: (urls: FrontierUrl[]) => Promise<void>;
}

interface Manifest {
  version: 1;
  j: number;
  current: number;
  ring: string[];
  qf: string;
  retired: string[];
  seq: number;
  doublings: number;
  respreads: number;
  switches: number;
}

const META = 'beast.json';

export interface BeastStats {
  j: number;
  current: number;
  /** Number of queues emptied so far (the "pass" index). */
  switches: number;
  doublings: number;
  respreads: number;
  queued: number;
  qf: number;
  replay: number;
  admitted: number;
  toQf: number;
  deferred: number;
}

export class Beast {
  private ring: UrlQueue[] = [];
  private ringNames: string[] = [];
  private qf!: UrlQueue;
  private qfName = '';
  private replay: { name: string; q: UrlQueue }[] = [];
  private retired: string[] = [];
  private j = 1;
  private c = 0;
  private seq = 0;
  private doublings = 0;
  private respreads = 0;
  private switches = 0;
  private admittedCount = 0;
  private toQf = 0;
  private deferredCount = 0;
  private dirty = false;
  /** Queues with appends since their last commit (only those are fsynced by commitAppends). */
  private readonly unsynced = new Set<UrlQueue>();
  /**
   * Ring queues opened by advance/respread that nothing was ever pushed to or read from: moving
   * past one needs no retire + fresh queue (no disk work), it keeps its ring slot. Without this
   * every step of the ring over an empty queue costs an fsync'd manifest + a directory fsync.
   */
  private readonly virgin = new WeakSet<UrlQueue>();
  private readonly maxQueues: number;
  private readonly maxPassPlds: number;
  private readonly batch: number;
  private readonly counters = new U64Map(1024);
  private readonly peek = new Float64Array(6);
  /** Serialises next()/commit()/respread (admissions are synchronous pushes). */
  private lock: Promise<void> = Promise.resolve();

  private constructor(
    private readonly store: QueueStore,
    private readonly opts: BeastOptions,
  ) {
    this.maxQueues = Math.max(1, opts.maxQueues ?? 256);
    this.maxPassPlds = opts.maxPassPlds ?? 1 << 20;
    this.batch = opts.respreadBatch ?? 4096;
  }

  static async open(store: QueueStore, opts: BeastOptions = {}): Promise<Beast> {
    const b = new Beast(store, opts);
    await b.load();
    return b;
  }

  private name(prefix: string): string {
    return `${prefix}${String(this.seq++).padStart(8, '0')}`;
  }

  private async load(): Promise<void> {
    const text = await this.store.readMeta(META);
    if (text === null) {
      const j0 = Math.max(1, Math.min(this.maxQueues, this.opts.initialQueues ?? 2));
      this.j = j0;
      for (let i = 0; i < j0; i++) this.ringNames.push(this.name('q'));
      this.qfName = this.name('f');
    } else {
      let m: Manifest;
      try {
        m = JSON.parse(text) as Manifest;
      } catch (cause) {
        throw new CrawlError('CRAWL_FRONTIER_MANIFEST', 'unreadable BEAST manifest', { cause });
      }
      this.j = m.j;
      this.c = m.current;
      this.ringNames = m.ring;
      this.qfName = m.qf;
      this.retired = m.retired;
      this.seq = m.seq;
      this.doublings = m.doublings;
      this.respreads = m.respreads;
      this.switches = m.switches;
    }
    for (const n of this.ringNames) this.ring.push(await this.store.open(n));
    this.qf = await this.store.open(this.qfName);
    for (const n of this.retired) this.replay.push({ name: n, q: await this.store.open(n) });
    // Queues not referenced by the manifest are leftovers of an interrupted re-spread.
    const keep = new Set([...this.ringNames, this.qfName, ...this.retired]);
    for (const n of await this.store.list()) if (!keep.has(n)) await this.store.remove(n);
    await this.writeManifest();
  }

  private manifest(): Manifest {
    return {
      version: 1,
      j: this.j,
      current: this.c,
      ring: this.ringNames,
      qf: this.qfName,
      retired: this.retired,
      seq: this.seq,
      doublings: this.doublings,
      respreads: this.respreads,
      switches: this.switches,
    };
  }

  private async writeManifest(): Promise<void> {
    await this.store.writeMeta(META, JSON.stringify(this.manifest()));
    this.dirty = false;
  }

  private withLock<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn);
    this.lock = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** Fresh admission of a URL carrying STAR's (B, P): queue ceil(P/B) ahead, or QF. */
  place(u: FrontierUrl, record?: Uint8Array): void {
    const rec = record ?? encodeFrontierUrl(u);
    this.admittedCount++;
    const B = u.budget;
    const k = B > 0 ? Math.ceil(Math.max(1, u.admitted) / B) : Infinity;
    const q = k < this.j ? this.ring[(this.c + k) % this.j]! : this.qf;
    if (q === this.qf) this.toQf++;
    q.push(rec);
    this.virgin.delete(q);
    this.unsynced.add(q);
  }

  /**
   * Puts back a URL the frontier had no room for in RAM (its host already holds its share there).
   * It waits in QF, i.e. one full round of the ring, and comes back through the next re-spread
   * (B per PLD per queue) — re-reading it sooner would only spin on a host that is still busy.
   */
  defer(u: FrontierUrl, record?: Uint8Array): void {
    const rec = record ?? encodeFrontierUrl(u);
    this.deferredCount++;
    this.qf.push(rec);
    this.unsynced.add(this.qf);
  }

  /** QF re-spreads so far (cheap; stats() walks the ring). */
  get respreadCount(): number {
    return this.respreads;
  }

  /** Total URLs waiting in BEAST (ring + QF + replay). */
  get length(): number {
    let n = this.qf.length;
    for (const q of this.ring) n += q.length;
    for (const r of this.replay) n += r.q.length;
    return n;
  }

  /**
   * Up to `max` URLs from the current queue, moving on (and re-spreading QF) as queues empty.
   * Returns [] only when BEAST holds no URL at all.
   */
  next(max: number): Promise<FrontierUrl[]> {
    return this.withLock(() => this.nextLocked(max));
  }

  private async nextLocked(max: number): Promise<FrontierUrl[]> {
    const out: FrontierUrl[] = [];
    while (this.replay.length > 0 && out.length < max) {
      const r = this.replay[0]!;
      const recs = await r.q.shift(max - out.length);
      for (const rec of recs) out.push(decodeFrontierUrl(rec));
      if (r.q.length === 0) {
        this.replay.shift(); // stays in `retired` until the next checkpoint
        this.store.release(r.name);
      }
    }
    let idle = 0;
    while (out.length < max) {
      const q = this.ring[this.c]!;
      if (q.length > 0) {
        const recs = await q.shift(max - out.length);
        if (recs.length === 0) break;
        for (const rec of recs) out.push(decodeFrontierUrl(rec));
        idle = 0;
        continue;
      }
      if (this.length === 0) break;
      if (++idle > 2 * this.j + 2) break;
      await this.advance();
    }
    return out;
  }

  /** The current queue is empty: retire it, then move to the next one (re-spreading QF after Qj). */
  private async advance(): Promise<void> {
    if (!this.virgin.has(this.ring[this.c]!)) {
      const oldName = this.ringNames[this.c]!;
      this.unsynced.delete(this.ring[this.c]!);
      const fresh = this.name('q');
      const q = await this.store.open(fresh);
      this.virgin.add(q);
      this.ring[this.c] = q;
      this.ringNames[this.c] = fresh;
      this.retired.push(oldName);
      // Drop its handle (and buffers) without committing its read cursor: see the invariants above.
      this.store.release(oldName);
    }
    this.switches++;
    this.dirty = true;
    if (this.c === this.j - 1) {
      if (this.qf.length > 0) await this.respread();
      this.c = 0;
    } else this.c++;
  }

  /** Thesis VII.2: re-read QF, split it over j new queues (B per PLD per queue), double j. */
  private async respread(): Promise<void> {
    const jOld = this.j;
    const doubling = jOld * 2 <= this.maxQueues;
    const base = doubling ? jOld : 0;
    const count = jOld;
    if (doubling) {
      for (let i = 0; i < jOld; i++) {
        const n = this.name('q');
        this.ringNames.push(n);
        const q = await this.store.open(n);
        this.virgin.add(q);
        this.ring.push(q);
      }
    }
    const oldQf = this.qf;
    const oldQfName = this.qfName;
    const newQfName = this.name('f');
    const newQf = await this.store.open(newQfName);
    const counters = this.counters;
    counters.clear();
    const targets = new Set<UrlQueue>();
    for (;;) {
      const recs = await oldQf.shift(this.batch);
      if (recs.length === 0) break;
      let urls: FrontierUrl[] | null = null;
      if (this.opts.rebudget) {
        urls = recs.map(decodeFrontierUrl);
        const before = urls.map((u) => u.budget);
        await this.opts.rebudget(urls);
        for (let i = 0; i < urls.length; i++) if (urls[i]!.budget !== before[i]) recs[i] = encodeFrontierUrl(urls[i]!);
      }
      const pk = this.peek;
      for (let i = 0; i < recs.length; i++) {
        const rec = recs[i]!;
        peekFrontierUrl(rec, pk);
        const pldHi = pk[2]!;
        const pldLo = pk[3]!;
        const budget = pk[4]!;
        let seen = counters.get(pldHi, pldLo);
        if (seen < 0) {
          if (counters.size >= this.maxPassPlds) {
            newQf.push(rec);
            continue;
          }
          seen = 0;
        }
        counters.set(pldHi, pldLo, seen + 1);
        const k = budget > 0 ? Math.floor(seen / budget) : Infinity;
        if (k < count) {
          const q = this.ring[base + k]!;
          q.push(rec);
          this.virgin.delete(q);
          targets.add(q);
        } else newQf.push(rec);
      }
    }
    counters.clear();
    if (doubling) {
      this.j = jOld * 2;
      this.doublings++;
    }
    this.respreads++;
    this.qf = newQf;
    this.qfName = newQfName;
    // Its records now sit in the targets / the new QF (committed below), and it is removed below:
    // a later commitRingAppends must not commit the closed handle (CRAWL_DISK_CLOSED crash).
    this.unsynced.delete(oldQf);
    // Durable order: targets, then the manifest that names them, then drop the old QF.
    for (const q of targets) await q.commit();
    await newQf.commit();
    await this.writeManifest();
    await this.store.remove(oldQfName);
  }

  private async commitRingAppends(): Promise<void> {
    // Manifest first: a queue holding committed records must always be named by it.
    if (this.dirty) await this.writeManifest();
    // Never the current queue: committing it would move its read cursor (see checkpoint).
    const cur = this.ring[this.c]!;
    for (const q of this.unsynced) if (q !== cur) await q.commit();
    const keepCur = this.unsynced.has(cur);
    this.unsynced.clear();
    if (keepCur) this.unsynced.add(cur);
  }

  /**
   * Makes admitted URLs durable: commits every queue that is not being read (the current queue's
   * read cursor moves only at `checkpoint`). Cheap enough to call after every admission batch.
   */
  commitAppends(): Promise<void> {
    return this.withLock(() => this.commitRingAppends());
  }

  /**
   * Full checkpoint. Call only once everything read from BEAST so far is durable elsewhere (the
   * frontier's RAM snapshot): commits read cursors and deletes retired queues.
   */
  checkpoint(): Promise<void> {
    return this.withLock(async () => {
      if (this.dirty) await this.writeManifest();
      for (const q of this.ring) await q.commit();
      await this.qf.commit();
      this.unsynced.clear();
      const keep: string[] = [];
      for (const r of this.replay) {
        await r.q.commit();
        keep.push(r.name);
      }
      const drop = this.retired.filter((n) => !keep.includes(n));
      this.retired = keep;
      await this.writeManifest();
      for (const n of drop) await this.store.remove(n);
    });
  }

  /** Queue of the ring that a URL with this (B, P) would go to now (-1 = QF); for tests. */
  targetOf(budget: number, admitted: number): number {
    const k = budget > 0 ? Math.ceil(Math.max(1, admitted) / budget) : Infinity;
    return k < this.j ? (this.c + k) % this.j : -1;
  }

  stats(): BeastStats {
    let queued = 0;
    for (const q of this.ring) queued += q.length;
    let replay = 0;
    for (const r of this.replay) replay += r.q.length;
    return {
      j: this.j,
      current: this.c,
      switches: this.switches,
      doublings: this.doublings,
      respreads: this.respreads,
      queued,
      qf: this.qf.length,
      replay,
      admitted: this.admittedCount,
      toQf: this.toQf,
      deferred: this.deferredCount,
    };
  }

  async close(): Promise<void> {
    await this.withLock(async () => {
      for (const q of this.ring) await q.close();
      await this.qf.close();
      for (const r of this.replay) await r.q.close();
    });
  }
}
