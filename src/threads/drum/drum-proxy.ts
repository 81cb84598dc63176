/**
 * A DRUM instance (src/drum) running in its own worker thread (drum-host.ts), with the same call
 * shape as Drum: check/update/checkUpdate are buffered here and shipped in binary batches;
 * merge() runs the merge in the worker and calls `onResults` here, on the event loop, for each
 * chunk of results — the worker waits for each chunk's promise, and, when given, for
 * `beforeCommit` once per bucket after its last chunk (DRUM's durability contract: Z is committed
 * only after the consumer has committed what it needs; with `beforeCommit` the consumer may place
 * chunks without committing them and commit once per bucket).
 *
 * RAM here: one batch buffer (≤ batchBytes, then shipped); the DRUM's own buffers live in the worker.
 *
 * Each proxy talks to its instance over its own MessagePort; the thread (DrumThread) may host
 * several instances (`thread` option): one isolate instead of one per instance.
 */
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { CrawlError } from '../../errors.js';
import type { DrumOptions, DrumResult } from '../../drum/index.js';
import type { DegreeListener, DrumPldStoreOptions, PldStore } from '../../frontier/index.js';
import { BatchWriter, decodeResults } from './drum-codec.js';
import { workerFile } from '../worker-file.js';
import type { HostData } from './drum-host.js';

/**
 * V8 limits of a DRUM host thread (fixed constants). Its buffers, loaded bucket and CLOCK cache are
 * ArrayBuffers outside the V8 heap, bounded by the DRUM's ramBytes; the heap holds one result
 * chunk's objects and the merge's bookkeeping: 15–35 MiB used in bench/mem. Without limits V8 grows
 * each host's young generation to 2 × 16 MiB semi-spaces (43–51 MiB committed per host, three hosts;
 * issue #7, docs/performance.md "Memory"). A 12 MiB young generation (4 MiB semi-spaces) halves
 * that at no measurable CPU cost (these threads allocate little); the old-space cap is a bound
 * well above the use, not a squeeze. The URLseen host is the exception (`youngGenMb` 24, see
 * pipeline.ts): bench:drum at U = 1e8 measured 0.98 M tuples per CPU-second with 12 MiB vs 1.15 M
 * with 24 MiB (docs/drum.md "Z format 2") when delivery still made an object per result; with
 * chunked delivery (nothing allocated per result) the gap has not been re-measured.
 */
const DRUM_HOST_LIMITS = { maxYoungGenerationSizeMb: 12, maxOldGenerationSizeMb: 128 };

/** A thread's death as its instances' proxies hear it: 'error' (uncaught) or 'exit' (code). */
type Death = { kind: 'error' | 'exit'; error: Error };

/**
 * A worker thread hosting DRUM instances (drum-host.ts): DrumProxy / PldStoreProxy instances opened
 * with the same `thread` share its isolate — the hot code is JIT-compiled once for all of them and
 * one heap is collected (the crawl's ContentSeen and STAR: docs/performance.md, "Threads"); their
 * calls then run one after another in that thread. The thread ends when its last instance closes.
 * RAM: one V8 heap (young generation `youngGenMb`, old space capped at 128 MiB) for all its
 * instances; the DRUMs' buffers are ArrayBuffers outside it, bounded by each DRUM's ramBytes.
 */
export class DrumThread {
  private readonly worker: Worker;
  private users = 0;
  private ended = false;
  private readonly listeners = new Set<(d: Death) => void>();

  constructor(youngGenMb = DRUM_HOST_LIMITS.maxYoungGenerationSizeMb) {
    this.worker = new Worker(workerFile(import.meta.url, 'drum-host'), {
      resourceLimits: { ...DRUM_HOST_LIMITS, maxYoungGenerationSizeMb: youngGenMb },
    });
    this.worker.on('error', (e) => this.die({ kind: 'error', error: e }));
    this.worker.on('exit', (code) => this.die({ kind: 'exit', error: new CrawlError('CRAWL_DRUM_WORKER_EXIT', `DRUM worker exited with code ${code}`) }));
  }

  private die(d: Death): void {
    if (this.ended) return;
    if (d.kind === 'exit') this.ended = true;
    for (const l of [...this.listeners]) l(d);
  }

  /** Hear the thread's death (until the returned function is called). */
  onDeath(l: (d: Death) => void): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  /** Start an instance in the thread; resolves with its port once it reports 'opened'. */
  async host<T>(data: HostData, what: string): Promise<{ port: MessagePort; opened: T }> {
    if (this.ended) throw new CrawlError('CRAWL_DRUM_WORKER_EXIT', `DRUM worker for ${data.dir} has exited`);
    const { port1, port2 } = new MessageChannel();
    this.users++;
    try {
      const opened = await new Promise<T>((resolve, reject) => {
        const off = this.onDeath((d) => {
          off();
          reject(d.kind === 'exit' ? new CrawlError('CRAWL_DRUM_WORKER_EXIT', `${what} worker for ${data.dir} exited while opening`) : d.error);
        });
        port2.on('message', function onMsg(m: { t: string; error?: { message: string; code?: string } }) {
          if (m.t !== 'opened' && m.t !== 'openFailed') return;
          port2.off('message', onMsg);
          off();
          if (m.t === 'opened') resolve(m as T);
          else reject(new CrawlError(m.error!.code ?? 'CRAWL_DRUM_ERROR', m.error!.message));
        });
        this.worker.postMessage({ t: 'host', port: port1, data }, [port1]);
      });
      return { port: port2, opened };
    } catch (e) {
      port2.close();
      await this.release();
      throw e;
    }
  }

  /**
   * Keeps the thread alive without an instance (until the matching release()): a process whose
   * crawls open and close DRUMs over time (a cluster node's partitions) holds its threads this way.
   */
  retain(): void {
    if (this.ended) throw new CrawlError('CRAWL_DRUM_WORKER_EXIT', 'DRUM worker has exited');
    this.users++;
  }

  /** An instance closed: the last one ends the thread. */
  async release(): Promise<void> {
    if (--this.users > 0) return;
    this.ended = true;
    await this.worker.terminate();
  }
}

export interface DrumProxyStats {
  keys: number;
  merges: number;
  k: number;
  r: number;
  cacheHitRate?: number;
  /** tuples merged, and the bytes DRUM read and wrote, since open (reported after each merge) */
  tuples?: number;
  bytesRead?: number;
  bytesWritten?: number;
}

export class DrumProxy {
  private readonly batch = new BatchWriter();
  /** a batch buffer the DRUM thread gave back once read: the next batch is written into it */
  private spare: Uint8Array | undefined;
  private needs = false;
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  private lastStats: DrumProxyStats;
  private failure: Error | null = null;
  private mergeChain: Promise<void> = Promise.resolve();

  private readonly offDeath: () => void;

  private constructor(
    private readonly worker: MessagePort,
    private readonly thread: DrumThread,
    private readonly onResults: (batch: Uint8Array) => Promise<void> | void,
    stats: DrumProxyStats,
    private readonly batchBytes: number,
    private readonly beforeCommit?: (bucket: number) => Promise<void> | void,
  ) {
    this.lastStats = stats;
    worker.on('message', (m: { t: string; id?: number; bucket?: number; buf?: Uint8Array; needsMerge?: boolean; stats?: DrumProxyStats; error?: { message: string; code?: string } }) => {
      switch (m.t) {
        case 'state':
          this.needs = m.needsMerge!;
          break;
        case 'spare':
          // (one kept: the writer's buffer, the batch in flight and this one at most)
          this.spare ??= new Uint8Array(m.buf!.buffer);
          break;
        case 'results': {
          const id = m.id!;
          Promise.resolve()
            .then(() => this.onResults(m.buf!))
            .then(
              () => worker.postMessage({ t: 'ack', id }),
              (e: Error) => this.fail(e),
            );
          break;
        }
        case 'beforeCommit': {
          // Sent only after the bucket's last chunk was acked, i.e. after its onResults resolved.
          const id = m.id!;
          Promise.resolve()
            .then(() => this.beforeCommit?.(m.bucket!))
            .then(
              () => worker.postMessage({ t: 'ack', id }),
              (e: Error & { code?: string }) => worker.postMessage({ t: 'ack', id, error: { message: e.message, code: e.code } }),
            );
          break;
        }
        case 'done': {
          const w = this.waiting.get(m.id!);
          this.waiting.delete(m.id!);
          if (m.stats) this.lastStats = m.stats;
          if (m.error) w?.reject(new CrawlError(m.error.code ?? 'CRAWL_DRUM_ERROR', m.error.message));
          else w?.resolve();
          break;
        }
      }
    });
    // The thread's death: an uncaught error fails every call from then on; an exit fails the
    // calls waiting (a closed instance's thread may end).
    this.offDeath = thread.onDeath((d) => {
      if (d.kind === 'error' || this.waiting.size > 0) this.fail(d.error);
    });
  }

  static async open(
    dir: string,
    opts: Omit<DrumOptions, 'onResults' | 'merge' | 'io' | 'beforeCommit'>,
    onResults: (batch: DrumResult[]) => Promise<void> | void,
    host: DrumProxyHostOptions = {},
  ): Promise<DrumProxy> {
    return DrumProxy.openBytes(dir, opts, (buf) => onResults(decodeResults(buf)), host);
  }

  /**
   * open() with each result chunk handed over as its encoded bytes (drum-codec.ts layout; read with
   * forEachResult): no DrumResult object, no subarray per result (URLseen: ~25 results per page).
   */
  static async openBytes(
    dir: string,
    opts: Omit<DrumOptions, 'onResults' | 'merge' | 'io' | 'beforeCommit'>,
    onResultBytes: (batch: Uint8Array) => Promise<void> | void,
    host: DrumProxyHostOptions = {},
  ): Promise<DrumProxy> {
    const thread = host.thread ?? new DrumThread(host.youngGenMb);
    const { port, opened } = await thread.host<{ stats: DrumProxyStats }>({ dir, opts, beforeCommit: host.beforeCommit !== undefined }, 'DRUM');
    return new DrumProxy(port, thread, onResultBytes, opened.stats, host.batchBytes ?? 1 << 20, host.beforeCommit);
  }

  private fail(e: Error): void {
    this.failure ??= e;
    for (const w of this.waiting.values()) w.reject(e);
    this.waiting.clear();
  }

  get k(): number {
    return this.lastStats.k;
  }

  /** The worker reported that its largest bucket reached r (or this batch is large). */
  get needsMerge(): boolean {
    return this.needs;
  }

  stats(): DrumProxyStats {
    return this.lastStats;
  }

  check(hi: number, lo: number, aux?: Uint8Array | null): void {
    this.batch.tuple('check', hi, lo, null, aux);
    this.maybeShip();
  }

  update(hi: number, lo: number, value: Uint8Array, aux?: Uint8Array | null): void {
    this.batch.tuple('update', hi, lo, value, aux);
    this.maybeShip();
  }

  checkUpdate(hi: number, lo: number, value?: Uint8Array | null, aux?: Uint8Array | null): void {
    this.batch.tuple('checkUpdate', hi, lo, value, aux);
    this.maybeShip();
  }

  /** A page's links as one entry, expanded into checkUpdate tuples in the DRUM thread (BatchWriter.linkTable). */
  linkTable(table: Uint8Array, links: number, hops: number, suffix: Uint8Array): void {
    this.batch.linkTable(table, links, hops, suffix);
    this.maybeShip();
  }

  private maybeShip(): void {
    if (this.batch.length >= this.batchBytes) this.ship();
  }

  private ship(): void {
    if (this.batch.count === 0) return;
    // The writer's own buffer goes (no copy); the thread gives it back once read ('spare')
    const buf = this.batch.handOver(this.spare);
    this.spare = undefined;
    this.worker.postMessage({ t: 'tuples', buf }, [buf.buffer as ArrayBuffer]);
  }

  private call(t: 'merge' | 'flush' | 'persist' | 'close'): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    this.ship();
    const id = this.nextId++;
    return new Promise<void>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ t, id });
    });
  }

  /** Merge everything shipped so far (tuples added meanwhile wait for the next merge). */
  merge(): Promise<void> {
    const run = this.mergeChain.then(() => this.call('merge'));
    this.mergeChain = run.catch(() => undefined);
    return run;
  }

  /**
   * Drum.persist() in the thread: every tuple shipped so far (this call ships the batch first) is
   * in a bucket file and fsynced when it resolves. Not queued behind a merge: the thread runs it
   * between two buckets of the merge under way (drum-host.ts). (The crawl does not call it:
   * docs/performance.md, "A page's durability".)
   */
  persist(): Promise<void> {
    return this.call('persist');
  }

  flush(): Promise<void> {
    const run = this.mergeChain.then(() => this.call('flush'));
    this.mergeChain = run.catch(() => undefined);
    return run;
  }

  async close(): Promise<void> {
    try {
      await this.mergeChain;
      await this.call('close');
    } finally {
      this.offDeath();
      this.worker.close();
      await this.thread.release();
    }
  }
}

export interface DrumProxyHostOptions {
  /** tuples buffered here before a batch is shipped (bytes; default 1 MiB) */
  batchBytes?: number;
  /** DrumOptions.beforeCommit, run here on the event loop (one round trip per bucket commit) */
  beforeCommit?: (bucket: number) => Promise<void> | void;
  /** host the instance in this thread (shared with other instances); default: a thread of its own */
  thread?: DrumThread;
  /** young generation of the thread of its own, MiB (default DRUM_HOST_LIMITS'); ignored with `thread` */
  youngGenMb?: number;
}

/**
 * STAR's PldStore (PLDedges + PLDindegree, src/frontier/star/star-drum.ts) in a worker thread
 * (drum-host.ts, kind 'star'). Each call is one DRUM batch with synchronous merges and fsyncs in
 * the store: on the event loop they stalled sockets and parse replies for ~1/3 of the wall time
 * (docs/performance.md). Inputs are copied before the first await (Star reuses its buffers);
 * outputs come back as transferred typed arrays. The worker runs calls one at a time, in order.
 * RAM here: the arrays of the calls in progress.
 */
export class PldStoreProxy implements PldStore {
  private nextId = 1;
  private failure: Error | null = null;
  private readonly waiting = new Map<number, { resolve: (m: StarReply) => void; reject: (e: Error) => void }>();

  private readonly offDeath: () => void;

  private constructor(
    private readonly worker: MessagePort,
    private readonly thread: DrumThread,
  ) {
    worker.on('message', (m: StarReply) => {
      if (m.t !== 'done') return;
      const w = this.waiting.get(m.id);
      this.waiting.delete(m.id);
      if (m.error) w?.reject(new CrawlError(m.error.code ?? 'CRAWL_DRUM_ERROR', m.error.message));
      else w?.resolve(m);
    });
    this.offDeath = thread.onDeath((d) => {
      if (d.kind === 'error' || this.waiting.size > 0) this.fail(d.kind === 'exit' ? new CrawlError('CRAWL_DRUM_WORKER_EXIT', `STAR ${d.error.message}`) : d.error);
    });
  }

  /** `thread`: host it in that (shared) thread; default: a thread of its own. */
  static async open(dir: string, opts: DrumPldStoreOptions, thread?: DrumThread): Promise<PldStoreProxy> {
    const t = thread ?? new DrumThread();
    const { port } = await t.host<unknown>({ dir, opts: {}, kind: 'star', starOpts: opts }, 'STAR');
    return new PldStoreProxy(port, t);
  }

  private fail(e: Error): void {
    this.failure ??= e;
    for (const w of this.waiting.values()) w.reject(e);
    this.waiting.clear();
  }

  private call(op: string, buf?: Uint32Array, count = 0): Promise<StarReply> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise<StarReply>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ t: 'star', id, op, buf, count }, buf ? [buf.buffer as ArrayBuffer] : []);
    });
  }

  async addEdges(edges: Uint32Array, count: number, onDegree: DegreeListener): Promise<void> {
    const r = await this.call('addEdges', edges.slice(0, count * 4), count);
    const d = r.degrees!;
    for (let i = 0; i < d.length; i += 4) onDegree(d[i]!, d[i + 1]!, d[i + 2]!, d[i + 3]!);
  }

  async admit(keys: Uint32Array, count: number, outD: Float64Array, outP: Float64Array): Promise<void> {
    const r = await this.call('admit', keys.slice(0, count * 2), count);
    outD.set(r.outD!);
    outP.set(r.outP!);
  }

  async indegrees(keys: Uint32Array, count: number, outD: Float64Array): Promise<void> {
    const r = await this.call('indegrees', keys.slice(0, count * 2), count);
    outD.set(r.outD!);
  }

  async commit(): Promise<void> {
    await this.call('commit');
  }

  async close(): Promise<void> {
    try {
      if (this.failure === null) await this.call('close');
    } finally {
      this.offDeath();
      this.worker.close();
      await this.thread.release();
    }
  }
}

interface StarReply {
  t: string;
  id: number;
  degrees?: Float64Array;
  outD?: Float64Array;
  outP?: Float64Array;
  error?: { message: string; code?: string };
}
