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
 * QH (deferred): URLs the frontier read but could not take into RAM because their host already
 * holds its share there (VII.1's per-host RAM queue is bounded) are NOT over budget, so they do not
 * go to QF: in VII.2 j doubles because QF holds URLs "that do not fit into Q_j" — over-budget URLs
 * that must be pushed further back as the crawl grows (eq. 31: j ≈ ½(N / E[B]V + 1)). Counting a
 * full RAM queue as a budget overflow made j double on every wrap of a fast ring (256 within 30 s
 * in the e2e profile, docs/performance.md) and cycled those URLs through QF. So QH is re-spread at
 * each wrap together with QF (same per-pass B-per-PLD counting, so the spam bound holds), over the
 * j new queues when QF is non-empty and j doubles, otherwise over the existing j queues; what does
 * not fit stays in QH, which never doubles j.
 *
 * Invariants
 *   - Nothing is appended to the current queue, so reading it is a plain drain (k ≥ 1).
 *   - Per queue read, a PLD contributes at most B URLs from admissions and at most B from a
 *     re-spread (B taken at placement time), so a spam PLD's share is bounded by its budget.
 *   - Durability (storage in log-queue.ts): ONE combined manifest names every queue with its
 *     committed byte end and its checkpointed read cursor. `commitAppends()` writes the buffered
 *     tails, fdatasyncs each touched queue file and then the manifest, all off the main thread,
 *     chained so that manifests are written in order and each one names only synced bytes.
 *   - Crash safety (at-least-once): a queue's read cursor moves only at `checkpoint` (after the
 *     frontier made what it holds in RAM durable). Moving past an emptied ring queue keeps it in
 *     its slot: later admissions are appended after the records already read, and after a crash
 *     reading restarts at the checkpointed cursor, so what was read since comes back once more.
 *     At a checkpoint a drained ring queue is swapped for a fresh file (the old one is deleted once
 *     the manifest naming its successor is durable), and one whose read prefix dwarfs its unread
 *     part is copied into a fresh file, so disk use stays bounded. (Replacing the queue at every
 *     step instead, and keeping the old one until the checkpoint, would create thousands of files
 *     and a manifest that grows with every step between checkpoints.)
 *   - During a re-spread the old QF/QH stay named (`drain`) until the targets are synced; at open,
 *     leftovers in them are moved back into QF/QH. Queue names are never reused; unreferenced queue
 *     files are removed at open.
 *   - A deferral is durable no earlier than the read cursor of the queue it was read from
 *     (`commitDeferred`, `checkpoint`). A deferred URL was read past a cursor that moves only at a
 *     checkpoint, so after a crash it comes back from there; had its deferred copy been made
 *     durable before (by the commitAppends of the next URLseen bucket), BEAST would hold it twice
 *     and the resumed crawl would fetch it twice within one run. So deferrals wait in QN, a queue
 *     no manifest names (its file is removed at open): at each wrap the URLs of QN whose host has
 *     room go to QV — again a queue no manifest names — at most B per PLD (the re-spread's bound),
 *     and QV is read ahead of the current queue; at a checkpoint what QN and QV still hold moves
 *     to QH, durably with the cursors. QH thus only ever holds URLs whose source cursor has moved
 *     past them, and the deferred URLs still come back at every wrap, as through QH's re-spread.
 *
 * RAM: the ring of j queue handles (a write block each, allocated on first push), the per-pass
 * PLD counter table of a re-spread (≤ maxPassPlds entries; a PLD that does not fit waits for the
 * next pass). The manifest has j + 2 entries (+ 2 during a re-spread).
 */
import { CrawlError } from '../../errors.js';
import { decodeFrontierUrl, encodeFrontierUrlView, peekFrontierUrl, rebudgetRecords, type FrontierUrl } from '../record.js';
import type { BeastQueue, BeastStore, QueueState } from './log-queue.js';
import { U64Map } from '../../util/u64-map.js';
import type { BeastOptions } from './beast-options.js';

export type { BeastOptions } from './beast-options.js';

/** A queue as the manifest names it: name, committed end/pushed, checkpointed cursor. */
interface Entry {
  n: string;
  e: number;
  p: number;
  o: number;
  i: number;
  s: number;
}

interface Manifest {
  version: 3;
  j: number;
  current: number;
  ring: Entry[];
  qf: Entry;
  qh: Entry;
  /** Old QF / QH of a re-spread in progress (their leftovers go back to QF / QH at open). */
  drainF: Entry[];
  drainH: Entry[];
  seq: number;
  doublings: number;
  respreads: number;
  switches: number;
  mark?: number; // committedMark (absent in older manifests: 0)
}

/** One queue: its handle (null once released) and what the next manifest says about it. */
interface QRef {
  name: string;
  q: BeastQueue | null;
  /** Committed end / pushed as of the last capture (synced before any later manifest lands). */
  e: number;
  p: number;
  /** Checkpointed read cursor. */
  o: number;
  i: number;
  s: number;
}

export interface BeastStats {
  j: number;
  current: number;
  /** Number of queues emptied so far (the "pass" index). */
  switches: number;
  doublings: number;
  respreads: number;
  queued: number;
  qf: number;
  /** URLs waiting in QH (deferred because their host was full in RAM). */
  qh: number;
  admitted: number;
  toQf: number;
  deferred: number;
}

/** A queue is compacted at a checkpoint once its read prefix is this large and > 2 × its unread part. */
const COMPACT_MIN_BYTES = 4 << 20;

/** fdatasyncs running at once: the libuv pool (4 threads) is shared with DNS lookups and zlib. */
const SYNC_PARALLEL = 2;

async function syncAll(qs: BeastQueue[]): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < qs.length) await qs[next++]!.sync();
  };
  const lanes: Promise<void>[] = [];
  for (let k = 0; k < Math.min(SYNC_PARALLEL, qs.length); k++) lanes.push(lane());
  await Promise.all(lanes);
}

export class Beast {
  private ring: QRef[] = [];
  private qf!: QRef;
  private qh!: QRef;
  private drainF: QRef[] = [];
  private drainH: QRef[] = [];
  private qn!: QRef; // deferrals since the last checkpoint (see the invariants)
  private qv!: QRef; // deferrals released at the last wrap
  /** A re-spread is reading the drain queues (they must stay named until it is over). */
  private spreading = false;
  private j = 1;
  private c = 0;
  private seq = 0;
  private doublings = 0;
  private respreads = 0;
  private switches = 0;
  committedMark = 0; // see commitAppends
  private admittedCount = 0;
  private toQf = 0;
  private deferredCount = 0;
  /** Queues with appends since the last capture (only those are synced by a commit). */
  private readonly unsynced = new Set<QRef>();
  /** Commits in order: each one syncs its queues, then writes its manifest. */
  private chain: Promise<void> = Promise.resolve();
  private failure: unknown = null;
  private readonly maxQueues: number;
  private readonly maxPassPlds: number;
  private readonly batch: number;
  private readonly counters = new U64Map(1024);
  private readonly peek = new Float64Array(7);
  /** Serialises next()/checkpoint()/close() (admissions and commitAppends need no lock). */
  private lock: Promise<void> = Promise.resolve();

  private constructor(
    private readonly store: BeastStore,
    private readonly opts: BeastOptions,
  ) {
    this.maxQueues = Math.max(1, opts.maxQueues ?? 256);
    this.maxPassPlds = opts.maxPassPlds ?? 1 << 20;
    this.batch = opts.respreadBatch ?? 4096;
  }

  static async open(store: BeastStore, opts: BeastOptions = {}): Promise<Beast> {
    const b = new Beast(store, opts);
    await b.load();
    return b;
  }

  private fresh(prefix: string): QRef {
    const name = `${prefix}${String(this.seq++).padStart(8, '0')}`;
    return { name, q: this.store.open(name, null), e: 0, p: 0, o: 0, i: 0, s: 0 };
  }

  private fromEntry(x: Entry, open: boolean): QRef {
    const st: QueueState = { end: x.e, pushed: x.p, off: x.o, idx: x.i, shifted: x.s };
    const q = open ? this.store.open(x.n, st) : null;
    return { name: x.n, q, e: x.e, p: x.p, o: x.o, i: x.i, s: x.s };
  }

  private async load(): Promise<void> {
    const text = await this.store.readManifest();
    if (text === null) {
      const j0 = Math.max(1, Math.min(this.maxQueues, this.opts.initialQueues ?? 2));
      this.j = j0;
      for (let i = 0; i < j0; i++) this.ring.push(this.fresh('q'));
      this.qf = this.fresh('f');
      this.qh = this.fresh('h');
    } else {
      let m: Manifest;
      try {
        m = JSON.parse(text) as Manifest;
      } catch (cause) {
        throw new CrawlError('CRAWL_FRONTIER_MANIFEST', 'unreadable BEAST manifest', { cause });
      }
      if (m.version !== 3) throw new CrawlError('CRAWL_FRONTIER_MANIFEST', `BEAST manifest version ${String(m.version)} is not supported`);
      this.j = m.j;
      this.c = m.current;
      this.seq = m.seq;
      this.doublings = m.doublings;
      this.respreads = m.respreads;
      this.switches = m.switches;
      this.committedMark = m.mark ?? 0;
      this.ring = m.ring.map((x) => this.fromEntry(x, true));
      this.qf = this.fromEntry(m.qf, true);
      this.qh = this.fromEntry(m.qh, true);
      // A re-spread was interrupted: what its old QF / QH still held goes back into QF / QH (the
      // part already spread may come out twice: at-least-once).
      const drained: string[] = [];
      for (const [list, into] of [
        [m.drainF, this.qf],
        [m.drainH, this.qh],
      ] as const) {
        for (const x of list) {
          const r = this.fromEntry(x, true);
          for (;;) {
            const recs = r.q!.shiftSync(this.batch);
            if (recs.length === 0) break;
            for (const rec of recs) into.q!.push(rec);
          }
          this.unsynced.add(into);
          drained.push(x.n);
        }
      }
      if (drained.length > 0) {
        await this.capture();
        for (const n of drained) await this.store.remove(n);
      }
    }
    // Queue files not named by the manifest are leftovers of an interrupted re-spread.
    const keep = new Set([...this.ring, this.qf, this.qh].map((r) => r.name));
    for (const n of await this.store.list()) if (!keep.has(n)) await this.store.remove(n);
    this.qn = this.fresh('n');
    this.qv = this.fresh('v');
    if (text === null) await this.capture(true);
  }

  private entry(r: QRef): Entry {
    return { n: r.name, e: r.e, p: r.p, o: r.o, i: r.i, s: r.s };
  }

  private manifest(): Manifest {
    return {
      version: 3,
      j: this.j,
      current: this.c,
      ring: this.ring.map((r) => this.entry(r)),
      qf: this.entry(this.qf),
      qh: this.entry(this.qh),
      drainF: this.drainF.map((r) => this.entry(r)),
      drainH: this.drainH.map((r) => this.entry(r)),
      seq: this.seq,
      doublings: this.doublings,
      respreads: this.respreads,
      switches: this.switches,
      mark: this.committedMark,
    };
  }

  /**
   * Synchronously: writes the buffered tails of the unsynced queues and builds the manifest that
   * names them at their new ends. Then, after the previous commits: fdatasync of those queues (and
   * of the queue directory when files were created), then the manifest. Resolves when durable.
   */
  private capture(force = false, mark = 0): Promise<void> {
    if (this.failure !== null) return Promise.reject(this.failure);
    if (this.unsynced.size === 0 && !force && mark <= this.committedMark) return this.chain;
    this.committedMark = Math.max(this.committedMark, mark);
    const refs = [...this.unsynced];
    this.unsynced.clear();
    const qs: BeastQueue[] = [];
    for (const r of refs) {
      const q = r.q!;
      q.flush();
      r.e = q.end;
      r.p = q.pushed;
      qs.push(q);
    }
    // The old QF/QH of a finished re-spread: this commit syncs the targets their records went to
    // (they are in `unsynced`), so its manifest no longer names them; delete them once it landed.
    let drained: QRef[] = [];
    if (!this.spreading && this.drainF.length + this.drainH.length > 0) {
      drained = [...this.drainF, ...this.drainH];
      this.drainF = [];
      this.drainH = [];
    }
    const created = this.store.takeCreated();
    const text = JSON.stringify(this.manifest());
    const run = this.chain.then(async () => {
      await syncAll(qs);
      if (created) await this.store.syncDir();
      await this.store.writeManifest(text);
      for (const r of drained) await this.store.remove(r.name);
    });
    this.chain = run.catch((e: unknown) => {
      this.failure ??= e;
    });
    return run;
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
    this.placeRecord(record ?? encodeFrontierUrlView(u), u.budget, u.admitted);
  }

  /** place() of an encoded record carrying STAR's (B, P); push copies it. */
  placeRecord(rec: Uint8Array, B: number, P: number): void {
    this.admittedCount++;
    const k = B > 0 ? Math.ceil(Math.max(1, P) / B) : Infinity;
    let r: QRef;
    if (k < this.j) r = this.ring[(this.c + k) % this.j]!;
    else {
      r = this.qf;
      this.toQf++;
    }
    r.q!.push(rec);
    this.unsynced.add(r);
  }

  /**
   * Puts back a URL the frontier had no room for in RAM (its host already holds its share there).
   * It waits in QH until the ring wraps, then comes back through the re-spread (B per PLD per
   * queue) — re-reading it sooner would only spin on a host that is still busy. QH does not make
   * j double (see the module comment).
   */
  defer(u: FrontierUrl, record?: Uint8Array): void {
    this.deferRecord(record ?? encodeFrontierUrlView(u)); // push copies it
  }

  /** defer() of an encoded record (no decode/encode round trip). */
  deferRecord(record: Uint8Array): void {
    this.deferredCount++;
    this.qn.q!.push(record); // not durable until the checkpoint (see the invariants)
  }

  /** Records the last re-spread put into ring queues (0: everything stayed in QF/QH). */
  lastRespreadMoved = 0;

  /** QF re-spreads so far (cheap; stats() walks the ring). */
  get respreadCount(): number {
    return this.respreads;
  }

  /** Total URLs waiting in BEAST (ring + QF + QH). */
  get length(): number {
    let n = this.qf.q!.length + this.qh.q!.length + this.qn.q!.length + this.qv.q!.length;
    for (const r of this.ring) n += r.q!.length;
    return n;
  }

  /**
   * Up to `max` URLs from the current queue, moving on (and re-spreading QF/QH) as queues empty.
   * Returns [] only when BEAST holds no URL at all.
   */
  async next(max: number): Promise<FrontierUrl[]> {
    return (await this.nextRecords(max)).map(decodeFrontierUrl);
  }

  /**
   * next() without decoding: encoded records (views; valid until the next BEAST call that reads).
   * `maxSteps` bounds the moves to a next queue (refill pacing: 0 = read only the current queue,
   * whose successor waits until what was read of it is mostly crawled).
   */
  nextRecords(max: number, maxSteps = Infinity): Promise<Uint8Array[]> {
    return this.withLock(() => this.nextLocked(max, maxSteps));
  }

  private async nextLocked(max: number, maxSteps = Infinity): Promise<Uint8Array[]> {
    const out: Uint8Array[] = [];
    let idle = 0;
    // A step = starting to read a non-empty queue after moving on; empty queues are passed freely
    // (they hold nothing to pace), except with maxSteps 0 (paced: stay put, no re-spread either).
    let steps = 0;
    let moved = false;
    while (out.length < max) {
      // QV (deferrals released at the last wrap) is read as the head of the current queue.
      const r = this.qv.q!.length > 0 ? this.qv : this.ring[this.c]!;
      if (r.q!.length > 0) {
        if (moved) {
          if (++steps > maxSteps) break;
          moved = false;
        }
        const recs = r.q!.shiftSync(max - out.length);
        if (recs.length === 0) break;
        for (const rec of recs) out.push(rec);
        idle = 0;
        continue;
      }
      if (maxSteps === 0 || this.length === 0) break;
      if (++idle > 2 * this.j + 2) break;
      await this.advance();
      moved = true;
    }
    return out;
  }

  /**
   * The current queue is empty: move to the next one (re-spreading after Qj). The emptied queue
   * stays in its slot with its read cursor uncommitted (see the invariants): no disk work here.
   */
  private async advance(): Promise<void> {
    this.switches++;
    if (this.c === this.j - 1) {
      const spread = this.qf.q!.length > 0 || this.qh.q!.length > 0;
      if (spread) await this.respread();
      if (this.qn.q!.length > 0) {
        if (!spread) {
          this.respreads++;
          this.lastRespreadMoved = 0;
        }
        this.lastRespreadMoved += await this.releaseDeferred();
      }
      this.c = 0;
    } else this.c++;
  }

  /**
   * At a wrap: the deferrals in QN whose host has room in RAM go to QV, at most B per PLD (as a
   * re-spread puts at most B per PLD into a queue); the rest stay in QN (a fresh file: the old
   * one is removed). Nothing here is durable (see the invariants). Returns the URLs moved.
   */
  private async releaseDeferred(): Promise<number> {
    const old = this.qn;
    this.qn = this.fresh('n');
    if (this.qv.q!.length === 0) {
      const drained = this.qv;
      this.qv = this.fresh('v');
      await this.store.remove(drained.name);
    }
    const counters = this.counters;
    counters.clear();
    const keep = this.opts.hostFull;
    const pk = this.peek;
    let moved = 0;
    for (;;) {
      const recs = old.q!.shiftSync(this.batch);
      if (recs.length === 0) break;
      for (const rec of recs) {
        peekFrontierUrl(rec, pk);
        let seen = counters.get(pk[2]!, pk[3]!);
        const full = keep !== undefined && keep(pk[0]!, pk[1]!);
        if (full || (seen < 0 && counters.size >= this.maxPassPlds) || (pk[4]! > 0 && seen >= pk[4]!)) {
          this.qn.q!.push(rec);
          continue;
        }
        if (seen < 0) seen = 0;
        counters.set(pk[2]!, pk[3]!, seen + 1);
        this.qv.q!.push(rec);
        moved++;
      }
    }
    counters.clear();
    await this.store.remove(old.name);
    return moved;
  }

  /**
   * What QN and QV hold moves to QH (called under the lock, before a capture that makes it
   * durable). Returns the names of the emptied files, to remove once that capture has landed.
   */
  private promoteDeferred(): string[] {
    const gone: string[] = [];
    for (const which of ['qv', 'qn'] as const) {
      const src = this[which];
      if (src.q!.pushed === 0) continue;
      for (;;) {
        const recs = src.q!.shiftSync(this.batch);
        if (recs.length === 0) break;
        for (const rec of recs) this.qh.q!.push(rec);
        this.unsynced.add(this.qh);
      }
      this[which] = this.fresh(which === 'qv' ? 'v' : 'n');
      gone.push(src.name);
    }
    return gone;
  }

  /**
   * Makes the deferrals so far durable (in QH), ahead of a checkpoint: the frontier calls it
   * before it commits QR's cursor, since deferrals also come from QR (a URL whose robots answer
   * came but whose host is full in RAM). A crash between this and the checkpoint's commit of the
   * BEAST cursors may bring such a URL back twice — a window inside the checkpoint, like the
   * frontier's RAM snapshot (named before BEAST's cursors move).
   */
  commitDeferred(): Promise<void> {
    return this.withLock(async () => {
      const gone = this.promoteDeferred();
      await this.capture();
      for (const n of gone) await this.store.remove(n);
    });
  }

  /**
   * Thesis VII.2: re-read QF, split it over j new queues (B per PLD per queue), double j; QH
   * (deferrals) is spread in the same pass, and alone it spreads over the existing queues.
   */
  private async respread(): Promise<void> {
    const jOld = this.j;
    const doubling = this.qf.q!.length > 0 && jOld * 2 <= this.maxQueues;
    const count = jOld;
    const targets: QRef[] = [];
    for (let k = 0; k < count; k++) targets.push(doubling ? this.fresh('q') : this.ring[k]!);
    const oldQf = this.qf;
    const oldQh = this.qh;
    // New admissions and deferrals go to the new QF/QH from now on; the old ones stay named by
    // the manifest (drain) until the targets are durable.
    this.qf = this.fresh('f');
    this.qh = this.fresh('h');
    this.drainF.push(oldQf);
    this.drainH.push(oldQh);
    this.spreading = true;
    const counters = this.counters;
    counters.clear();
    const touched = new Set<QRef>();
    // Deferred URLs first: they had passed the budget already.
    try {
      await this.spread(oldQh, this.qh, targets, touched, this.opts.hostFull);
      await this.spread(oldQf, this.qf, targets, touched);
    } finally {
      this.spreading = false;
    }
    counters.clear();
    if (doubling) {
      for (const t of targets) this.ring.push(t);
      this.j = jOld * 2;
      this.doublings++;
    }
    this.respreads++;
    this.lastRespreadMoved = 0;
    for (const t of touched) if (t !== this.qf && t !== this.qh) this.lastRespreadMoved += t.q!.pushed - t.p;
    this.c = 0;
    // Their records now sit in the targets / the new QF and QH. No commit here (it would cost an
    // fdatasync per target at every wrap): the old QF/QH stay named by the manifest (drain) until
    // the next commit has synced the targets, and are deleted then (see capture).
    this.unsynced.delete(oldQf);
    this.unsynced.delete(oldQh);
    for (const t of touched) this.unsynced.add(t);
  }

  private async spread(src: QRef, overflow: QRef, targets: QRef[], touched: Set<QRef>, keep?: (hi: number, lo: number) => boolean): Promise<void> {
    const counters = this.counters;
    const count = targets.length;
    for (;;) {
      let recs = src.q!.shiftSync(this.batch);
      if (recs.length === 0) break;
      if (this.opts.rebudget) recs = await rebudgetRecords(recs, this.opts.rebudget);
      else if (this.opts.pause) await this.opts.pause();
      const pk = this.peek;
      for (let i = 0; i < recs.length; i++) {
        const rec = recs[i]!;
        peekFrontierUrl(rec, pk);
        if (keep !== undefined && keep(pk[0]!, pk[1]!)) {
          overflow.q!.push(rec); // host still full in RAM: stays deferred
          touched.add(overflow);
          continue;
        }
        const pldHi = pk[2]!;
        const pldLo = pk[3]!;
        const budget = pk[4]!;
        let seen = counters.get(pldHi, pldLo);
        let k = Infinity;
        if (seen >= 0 || counters.size < this.maxPassPlds) {
          if (seen < 0) seen = 0;
          counters.set(pldHi, pldLo, seen + 1);
          if (budget > 0) k = Math.floor(seen / budget);
        }
        const t = k < count ? targets[k]! : overflow;
        t.q!.push(rec);
        touched.add(t);
      }
    }
  }

  /**
   * Makes everything admitted (and deferred) so far durable: an fdatasync per touched queue file and
   * one for the manifest, on the thread pool; no lock (the synchronous part cannot interleave with a
   * read); calls are chained. A `mark` above `committedMark` becomes it, named by this manifest (even
   * with nothing appended) and every later one: after a crash, committedMark ≥ mark iff it landed.
   */
  commitAppends(mark = 0): Promise<void> { return this.capture(false, mark); }

  /**
   * Full checkpoint. Call only once everything read from BEAST so far is durable elsewhere (the
   * frontier's RAM snapshot): commits the read cursors; drained ring queues are swapped for fresh
   * files, and a queue whose read prefix is much larger than its unread part is copied into a fresh
   * file (at most 1/2 of what it frees), so BEAST's disk use stays bounded; the old files are
   * deleted once the manifest naming their successors is durable.
   */
  checkpoint(): Promise<void> {
    return this.withLock(async () => {
      const drop: string[] = this.promoteDeferred();
      for (let k = 0; k < this.ring.length; k++) {
        const r = this.ring[k]!;
        const q = r.q!;
        const cur = q.cursor();
        if (cur.shifted === 0) continue; // nothing read: nothing to free
        const dead = cur.off;
        const live = q.end - cur.off;
        if (q.length === 0 || (dead >= COMPACT_MIN_BYTES && dead > 2 * live)) {
          const fresh = this.fresh('q');
          for (;;) {
            const recs = q.shiftSync(this.batch);
            if (recs.length === 0) break;
            for (const rec of recs) fresh.q!.push(rec);
            if (this.opts.pause) await this.opts.pause();
          }
          if (fresh.q!.pushed > 0) this.unsynced.add(fresh);
          this.unsynced.delete(r);
          this.ring[k] = fresh;
          drop.push(r.name);
        }
      }
      for (const r of [...this.ring, this.qf, this.qh]) {
        const q = r.q!;
        const cur = q.cursor();
        r.o = cur.off;
        r.i = cur.idx;
        r.s = cur.shifted;
        if (q.pushed !== r.p) this.unsynced.add(r);
      }
      await this.capture(true);
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
    for (const r of this.ring) queued += r.q!.length;
    return {
      j: this.j,
      current: this.c,
      switches: this.switches,
      doublings: this.doublings,
      respreads: this.respreads,
      queued,
      qf: this.qf.q!.length,
      qh: this.qh.q!.length + this.qn.q!.length + this.qv.q!.length,
      admitted: this.admittedCount,
      toQf: this.toQf,
      deferred: this.deferredCount,
    };
  }

  /** Waits for commits in flight, then drops every handle (commits nothing: call checkpoint first). */
  async close(): Promise<void> {
    await this.withLock(async () => {
      await this.chain;
      for (const r of [...this.ring, this.qf, this.qh, this.qn, this.qv]) {
        r.q?.release();
        r.q = null;
      }
      this.store.releaseAll();
    });
  }
}
