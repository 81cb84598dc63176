/**
 * BEAST's queues on disk and the one manifest that names them (thesis VII.2; beast.ts says what the
 * queues are for): the ring Q1..Qj, QF, QH, the drain queues of a re-spread in progress and the
 * unnamed QN/QV, each with its committed end and checkpointed read cursor; opening them (a
 * re-spread cut by a crash is undone here), and the chained commits that make appends durable
 * (capture: the touched queues' fdatasyncs, then the manifest, off the main thread, in order).
 */
import { CrawlError } from '../../errors.js';
import type { BeastQueue, BeastStore, QueueState } from './log-queue.js';
import { U64Map } from '../../util/u64-map.js';
import type { BeastOptions } from './beast-options.js';

/** A queue as the manifest names it: name, committed end/pushed, checkpointed cursor. */
export interface Entry {
  n: string;
  e: number;
  p: number;
  o: number;
  i: number;
  s: number;
}

export interface Manifest {
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
export interface QRef {
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

/** BEAST's queues, their manifest and its commits; the re-spread (respread.ts), the checkpoint (beast-checkpoint.ts) and the reads (beast.ts) build on it. */
export abstract class BeastQueues {
  protected ring: QRef[] = [];
  protected qf!: QRef;
  protected qh!: QRef;
  protected drainF: QRef[] = [];
  protected drainH: QRef[] = [];
  protected qn!: QRef; // deferrals since the last checkpoint (see the invariants)
  protected qv!: QRef; // deferrals released at the last wrap
  /** A re-spread is reading the drain queues (they must stay named until it is over). */
  protected spreading = false;
  protected j = 1;
  protected c = 0;
  protected seq = 0;
  protected doublings = 0;
  protected respreads = 0;
  protected switches = 0;
  committedMark = 0; // see commitAppends
  protected admittedCount = 0;
  protected toQf = 0;
  protected deferredCount = 0;
  /** Queues with appends since the last capture (only those are synced by a commit). */
  protected readonly unsynced = new Set<QRef>();
  /** Commits in order: each one syncs its queues, then writes its manifest. */
  protected chain: Promise<void> = Promise.resolve();
  protected failure: unknown = null;
  protected readonly maxQueues: number;
  protected readonly maxPassPlds: number;
  protected readonly batch: number;
  protected readonly counters = new U64Map(1024);
  protected readonly peek = new Float64Array(7);
  /** Serialises next()/checkpoint()/close() (admissions and commitAppends need no lock). */
  protected lock: Promise<void> = Promise.resolve();

  protected constructor(
    protected readonly store: BeastStore,
    protected readonly opts: BeastOptions,
  ) {
    this.maxQueues = Math.max(1, opts.maxQueues ?? 256);
    this.maxPassPlds = opts.maxPassPlds ?? 1 << 20;
    this.batch = opts.respreadBatch ?? 4096;
  }

  protected fresh(prefix: string): QRef {
    const name = `${prefix}${String(this.seq++).padStart(8, '0')}`;
    return { name, q: this.store.open(name, null), e: 0, p: 0, o: 0, i: 0, s: 0 };
  }

  protected fromEntry(x: Entry, open: boolean): QRef {
    const st: QueueState = { end: x.e, pushed: x.p, off: x.o, idx: x.i, shifted: x.s };
    const q = open ? this.store.open(x.n, st) : null;
    return { name: x.n, q, e: x.e, p: x.p, o: x.o, i: x.i, s: x.s };
  }

  protected async load(): Promise<void> {
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

  protected entry(r: QRef): Entry {
    return { n: r.name, e: r.e, p: r.p, o: r.o, i: r.i, s: r.s };
  }

  protected manifest(): Manifest {
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
  protected capture(force = false, mark = 0): Promise<void> {
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

  protected withLock<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn);
    this.lock = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }
}
