/**
 * The parse pool: a piscina pool of parse-worker.ts threads, up to one per core, started as the
 * pages need them (one at first: `active` in the class), with a supervisor
 * in the Dominos sense — a worker that crashes (exits, throws out of memory) or hangs past
 * `parseTimeoutMs` on a page is terminated and replaced by piscina, and the page comes back with
 * an outcome code instead of being lost:
 *
 *   CRAWL_PARSE_TIMEOUT  the worker did not answer in time (it was terminated and replaced)
 *   CRAWL_PARSE_CRASH    the worker died (exit, OOM under resourceLimits) while parsing this page
 *   CRAWL_PARSE_ERROR    the parser threw (the worker survives)
 *   CRAWL_PARSE_LIMIT    the page is beyond the parser's bounds (src/html/fallback-limit.ts; the
 *                        worker survives)
 *   CRAWL_PARSE_ABORTED  a stopping crawl gave the page up before its parse began (abandonWaiting)
 *
 * A worker can also hang outside any page (while receiving a batch, between pages): a batch with
 * no page in progress whose progress has not moved for `stuckMs` is aborted the same way; none
 * of its pages is blamed, all are re-run.
 *
 * `replaced` counts the workers piscina took down while the pool was open (its 'workerDestroy'
 * event: a crash, an out-of-memory exit, a termination for a hang), whichever page — if any — was
 * in progress; piscina starts a new worker when a batch next needs one.
 *
 * Hand-off (docs/performance.md, "Parse side"): with one page per piscina task and one task per
 * worker, the worker would idle from each answer until the busy event loop handled it and posted
 * the next page, and piscina's per-task work costs the event loop ~0.06 ms per page. So:
 *   - the pages waiting when a worker slot frees go as ONE task (a batch, one transferred buffer,
 *     at most `batch` pages), and
 *   - each worker holds `concurrentTasksPerWorker` (2) batches, so the next one is already queued
 *     in the worker while it parses the current one.
 * Supervision with several pages per worker: the worker writes each page's sequence number into a
 * shared progress array when it starts it and its complement when it is done (parse-worker.ts).
 * When piscina rejects a batch (its worker died, or the sweep aborted it), the page in progress is
 * the one blamed; the innocent pages — done (their answer died with the worker), not begun, or in
 * the other batch queued on that worker — are re-run, first in line. A page's deadline runs from
 * its own start in the worker (read from the progress array), not from its submission. A page
 * re-run more than MAX_RERUNS times without having been blamed is given up as CRAWL_PARSE_CRASH (a
 * worker that dies between pages must not loop forever).
 *
 * Bound: pages in the pool ≤ what the pipeline submits (its parse back-pressure, see `saturated`);
 * at most active × concurrentTasksPerWorker (active ≤ threads) batches of ≤ `batch` pages are in piscina; each
 * worker's V8 heap is capped via resourceLimits. The caller keeps every page's bytes (a batch is a
 * copy), which is what makes re-running possible; the copies in flight are at most `copyBytes`
 * together (a batch is launched when it fits in what is left; a page larger than that goes alone,
 * once no other batch is in flight), so a run of 8 MiB pages cannot hold 16 copies at once.
 */
import { Piscina } from 'piscina';
import { workerFile } from '../worker-file.js';
import { packBatch, splitBatchOutput, PAGE_OK, PAGE_LIMIT, PROGRESS_MASK, PROGRESS_SLOTS, type ParseTask, type ParseWorkerData } from './parse-worker.js';
import { splitParseOutput, type EncodedGroupLike } from '../links-codec.js';

export type ParseOutcome =
  | { ok: true; table: Uint8Array; group: EncodedGroupLike | null }
  | { ok: false; code: 'CRAWL_PARSE_TIMEOUT' | 'CRAWL_PARSE_CRASH' | 'CRAWL_PARSE_ERROR' | 'CRAWL_PARSE_LIMIT' | 'CRAWL_PARSE_ABORTED'; message: string };

export interface ParsePoolOptions {
  threads: number;
  timeoutMs: number;
  /** Each worker's heap budget, MiB (resourceLimits). */
  heapMb?: number;
  concurrentTasksPerWorker?: number;
  batch?: number;
  /** Bytes of the batch copies in flight at most (one page larger than this goes alone). @default unbounded */
  copyBytes?: number;
  /**
   * A batch with fewer than `batch` pages is launched this long after its first page came (a full
   * one at once): the pages of a few milliseconds share one piscina task, one wake of a worker and
   * one answer. 0: launched as soon as a worker slot is free. @default 0
   */
  holdMs?: number;
  /**
   * The worker module (a file path or URL whose default export is parse-worker.ts's `run`).
   * @default workerFile(import.meta.url, 'parse-worker')
   */
  worker?: string;
  /**
   * A batch in which no page starts or finishes for this long, while none is in progress, is
   * taken as a worker hung outside any page (e.g. while receiving the batch): it is aborted, the
   * worker replaced, and its pages re-run. @default max(30 s, timeoutMs × (batch × (ctpw − 1) + 2))
   */
  stuckMs?: number;
  /**
   * No worker until the first warmup() or run(): the crawler starts it once its first request is
   * on the wire (crawler-core.ts afterFirstRequest), not before it. @default false (one worker at
   * construction)
   */
  deferStart?: boolean;
}

/** young generation per parse worker (MiB), part of its heap budget */
const YOUNG_MB = 8;
/** batches queued per worker: the next one waits in the worker while it parses the current one */
const DEFAULT_CTPW = 2;
/** pages per batch at most (a batch's answer comes back only when its last page is done) */
const DEFAULT_BATCH = 8;
/**
 * The crawler's hold of an under-full batch (ParsePoolOptions.holdMs), ms: on the bench web a page
 * went alone to piscina almost every time (the workers were idle when it came), each with its
 * task, its wake of a worker and its answer message.
 * (DRUMCRAWL_PARSE_HOLD_MS: experiment knob like DRUMCRAWL_PARSE_CTPW.)
 */
export function parseHoldMs(): number {
  const env = process.env.DRUMCRAWL_PARSE_HOLD_MS;
  return env !== undefined && env !== '' && Number.isFinite(Number(env)) ? Number(env) : DEFAULT_HOLD_MS;
}
const DEFAULT_HOLD_MS = 2;

/** re-runs of an innocent page before it is given up (see the header) */
const MAX_RERUNS = 3;

interface Job {
  task: ParseTask;
  resolve: (o: ParseOutcome) => void;
  seq: number;
  reruns: number;
  /** bytes its copy in a batch takes */
  bytes: number;
}

interface Batch {
  jobs: Job[];
  /** bytes of its copy */
  bytes: number;
  ctl: AbortController;
  /** the seq of the page the sweep found past its deadline (the batch was aborted for it) */
  timedOut: number | null;
  /** pages of the batch seen done by the sweep, and since when that count has not moved with no page in progress */
  doneSeen: number;
  idleSince: number;
  /** aborted as stuck (no page in progress; every page is re-run) */
  stuck: boolean;
}

export class ParsePool {
  private readonly pool: Piscina;
  /** submitted, not yet in piscina (FIFO; re-run pages go to the front) */
  private waiting: Job[] = [];
  private waitHead = 0;
  private readonly batches = new Set<Batch>();
  /** bytes of the batch copies in piscina */
  private copyBytes = 0;
  private inFlight = 0;
  private nextSeq = 1;
  private closed = false;
  /**
   * Workers the pool may keep busy (1 … threads): it starts with one and adds one whenever a full
   * batch waits while every slot of the ones it has is taken (pump) — see the constructor.
   */
  private active = 1;
  private readonly ctpw: number;
  private readonly batchMax: number;
  private readonly stuckMs: number;
  private readonly progress: Int32Array;
  private readonly startedAt: Float64Array;
  private sweeper: NodeJS.Timeout | null = null;
  /** the timer that launches an under-full batch after holdMs (see ParsePoolOptions.holdMs) */
  private holdTimer: NodeJS.Timeout | null = null;
  /** under-full batches may go now (the hold timer fired, or no hold) */
  private flushing = false;
  private readonly holdMs: number;
  /** workers taken down (crashed, ran out of memory, or terminated for a hang) and replaced */
  replaced = 0;
  /** batches handed to piscina (one task, one wake of a worker and one answer each) */
  launched = 0;

  constructor(
    workerData: ParseWorkerData,
    private readonly opts: ParsePoolOptions,
  ) {
    this.ctpw = Math.max(1, opts.concurrentTasksPerWorker ?? (Number(process.env.DRUMCRAWL_PARSE_CTPW) || DEFAULT_CTPW));
    this.batchMax = Math.max(1, opts.batch ?? (Number(process.env.DRUMCRAWL_PARSE_BATCH) || DEFAULT_BATCH));
    // a batch may wait behind the worker's other batches (each page of which is bounded by the
    // per-page timeout) before its first page starts
    this.holdMs = Math.max(0, opts.holdMs ?? 0);
    this.stuckMs = opts.stuckMs ?? Math.max(30_000, opts.timeoutMs * (this.batchMax * (this.ctpw - 1) + 2));
    // (DRUMCRAWL_PARSE_YOUNG_MB: experiment knob like DRUMCRAWL_PARSE_CTPW; 8 vs 32 MiB was not
    // told apart by bench:e2e pairs, docs/performance.md)
    const youngMb = Number(process.env.DRUMCRAWL_PARSE_YOUNG_MB) || YOUNG_MB;
    const progress = new SharedArrayBuffer(PROGRESS_SLOTS * 4);
    const startedAt = new SharedArrayBuffer(PROGRESS_SLOTS * 8);
    this.progress = new Int32Array(progress);
    this.startedAt = new Float64Array(startedAt);
    // One worker at first, more only when the pages outrun it (pump): each worker is an isolate that
    // boots node (~0.12 s of CPU), loads its modules and compiles the parse code anew (the first
    // pages of a thread cost several times a warm one's), so a crawl whose pages one worker keeps
    // up with (a few hosts, politeness delays) never pays for the others; the bench web's crawl
    // adds the second within its first second (docs/performance.md "Start-up"). piscina starts a
    // worker when a task finds every started one at concurrentTasksPerWorker, and pump hands it
    // no more batches than `active` workers take. A started worker stays (idleTimeout Infinity).
    this.pool = new Piscina({
      filename: opts.worker ?? workerFile(import.meta.url, 'parse-worker'),
      minThreads: opts.deferStart === true ? 0 : 1,
      maxThreads: Math.max(1, opts.threads),
      concurrentTasksPerWorker: this.ctpw,
      idleTimeout: Infinity,
      workerData: { ...workerData, progress, startedAt },
      // `heapMb` is the worker's whole heap budget: V8 adds the young generation on top of the old
      // space cap (default 3 × 16 MiB semi-spaces), so it is capped too and taken out of heapMb. A
      // parse keeps one page's objects alive at a time, so a small young generation scavenges
      // more often but each scavenge copies little (issue #7 RSS, docs/performance.md "Memory").
      resourceLimits: opts.heapMb
        ? { maxOldGenerationSizeMb: Math.max(16, opts.heapMb - youngMb), maxYoungGenerationSizeMb: youngMb }
        : undefined,
    });
    // A worker that exits unexpectedly emits 'error' on the pool; its tasks are rejected (handled
    // in launch) and piscina starts a replacement. Without a listener the process would crash.
    this.pool.on('error', () => undefined);
    this.pool.on('workerDestroy', () => {
      if (!this.closed) this.replaced++;
    });
  }

  get threads(): number {
    return this.pool.threads.length;
  }

  /** pages submitted and not yet answered (in workers + waiting) */
  get pending(): number {
    return this.inFlight;
  }

  /**
   * Back-pressure for the pipeline: every worker's batches are full and a full batch per worker
   * waits here besides — more submitted pages would only wait longer (and hold their bodies).
   */
  get saturated(): boolean {
    return this.waiting.length - this.waitHead >= this.batchMax * Math.max(1, this.opts.threads);
  }

  /**
   * Start the first thread and load the worker module (no timeout): the per-page timeout should
   * measure parsing, not a cold start (module loading takes seconds under tsx on a busy box). A
   * later thread's cold start does not count either: a page counts from when the worker starts it
   * (the progress slots), and a batch counts as stuck only after stuckMs.
   */
  async warmup(): Promise<void> {
    if (this.closed) return;
    const b = new Uint8Array(0);
    try {
      await this.pool.run({ url: 'http://warmup.invalid/', body: b, decoded: b, html: false, follow: false });
    } catch (e) {
      if (!this.closed) throw e; // a pool closed while its first worker started (a crawl that ended at once)
    }
  }

  run(task: ParseTask): Promise<ParseOutcome> {
    if (this.closed) return Promise.resolve({ ok: false, code: 'CRAWL_PARSE_ERROR', message: 'parse pool closed' });
    this.inFlight++;
    const x = task.exchange;
    const bytes = task.body.byteLength + (task.decoded === task.body ? 0 : task.decoded.byteLength) + (x ? x.requestHead.byteLength + x.responseHead.byteLength : 0);
    return new Promise<ParseOutcome>((resolve) => {
      this.waiting.push({ task, resolve, seq: 0, reruns: 0, bytes });
      this.pump();
    });
  }

  /**
   * A stopping crawl gives up the pages whose parse has not begun (stop.ts): each is answered
   * CRAWL_PARSE_ABORTED now; batches in piscina finish.
   */
  abandonWaiting(): number {
    if (this.holdTimer !== null) clearTimeout(this.holdTimer);
    this.holdTimer = null;
    const left = this.waiting.slice(this.waitHead);
    this.waiting = [];
    this.waitHead = 0;
    for (const j of left) this.answer(j, { ok: false, code: 'CRAWL_PARSE_ABORTED', message: 'the crawl stopped before this page was parsed' });
    return left.length;
  }

  private answer(j: Job, o: ParseOutcome): void {
    this.inFlight--;
    j.resolve(o);
  }

  /** Hand the waiting pages to piscina, a batch per free worker slot. */
  private pump(): void {
    const limit = this.opts.copyBytes ?? Infinity;
    for (;;) {
      const slots = this.active * this.ctpw;
      if (this.closed || this.waitHead >= this.waiting.length) break;
      if (this.batches.size >= slots) {
        // every slot taken and a full batch waiting: the workers started so far fall behind
        if (this.active < Math.max(1, this.opts.threads) && this.waiting.length - this.waitHead >= this.batchMax) {
          this.active++;
          continue;
        }
        break;
      }
      // as many waiting pages as fit in what is left of the copy bound (the first alone when none is in flight)
      let bytes = 0;
      let end = this.waitHead;
      while (end < this.waiting.length && end - this.waitHead < this.batchMax) {
        const b = this.waiting[end]!.bytes;
        if (this.copyBytes + bytes + b > limit && !(end === this.waitHead && this.batches.size === 0)) break;
        bytes += b;
        end++;
      }
      if (end === this.waitHead) break;
      // An under-full batch (every waiting page fits in it) waits for more pages until the hold
      // timer fires; a re-run page (reruns > 0) never waits.
      if (end - this.waitHead < this.batchMax && end === this.waiting.length && this.holdMs > 0 && !this.flushing && this.waiting[this.waitHead]!.reruns === 0) {
        this.holdTimer ??= setTimeout(() => {
          this.holdTimer = null;
          this.flushing = true;
          try {
            this.pump();
          } finally {
            this.flushing = false;
          }
        }, this.holdMs);
        break;
      }
      const jobs = this.waiting.slice(this.waitHead, end);
      this.waitHead = end;
      this.launch(jobs, bytes);
    }
    if (this.waitHead === this.waiting.length) {
      this.waiting = [];
      this.waitHead = 0;
    } else if (this.waitHead > 1024 && this.waitHead * 2 > this.waiting.length) {
      this.waiting = this.waiting.slice(this.waitHead);
      this.waitHead = 0;
    }
  }

  private launch(jobs: Job[], bytes: number): void {
    for (const j of jobs) {
      j.seq = this.nextSeq;
      this.nextSeq = (this.nextSeq + 1) | 0 || 1; // never 0 (a slot's initial value)
      Atomics.store(this.progress, j.seq & PROGRESS_MASK, 0);
    }
    const b: Batch = { jobs, bytes, ctl: new AbortController(), timedOut: null, doneSeen: 0, idleSince: Date.now(), stuck: false };
    this.batches.add(b);
    this.launched++;
    this.copyBytes += bytes;
    // One buffer for the batch, transferred (the caller keeps its own arrays: nothing is lost).
    const wire = packBatch(jobs.map((j) => j.task), jobs.map((j) => j.seq));
    this.pool.run(wire, { signal: b.ctl.signal, transferList: [wire.buf.buffer as ArrayBuffer] }).then(
      (r: unknown) => {
        this.batches.delete(b);
        this.copyBytes -= b.bytes;
        const outs = splitBatchOutput(r instanceof Uint8Array ? r : new Uint8Array(r as ArrayBuffer));
        for (let i = 0; i < jobs.length; i++) {
          const o = outs[i];
          if (o === undefined) this.answer(jobs[i]!, { ok: false, code: 'CRAWL_PARSE_ERROR', message: 'parse worker answered too few pages' });
          else if (o.status === PAGE_OK) this.answer(jobs[i]!, { ok: true, ...splitParseOutput(o.bytes) });
          else this.answer(jobs[i]!, { ok: false, code: o.status === PAGE_LIMIT ? 'CRAWL_PARSE_LIMIT' : 'CRAWL_PARSE_ERROR', message: new TextDecoder().decode(o.bytes) });
        }
        this.pump();
      },
      (e: unknown) => {
        this.batches.delete(b);
        this.copyBytes -= b.bytes;
        this.failed(b, e as Error & { code?: string });
        this.pump();
      },
    );
    if (this.sweeper === null) {
      // Checked every timeoutMs/8 (≥ 10 ms): a hung page is given up within 1⅛ × timeoutMs.
      this.sweeper = setInterval(() => this.sweep(), Math.max(10, this.opts.timeoutMs / 8));
      this.sweeper.unref(); // the tasks themselves keep the process alive while they run
    }
  }

  /** piscina rejected a batch: blame the page in progress, re-run the others (see the header). */
  private failed(b: Batch, err: Error & { code?: string }): void {
    if (this.closed) {
      for (const j of b.jobs) this.answer(j, { ok: false, code: 'CRAWL_PARSE_ERROR', message: 'parse pool closed' });
      return;
    }
    const rerun: Job[] = [];
    for (const j of b.jobs) {
      const state = Atomics.load(this.progress, j.seq & PROGRESS_MASK);
      if (state === j.seq || b.timedOut === j.seq) {
        if (b.timedOut === j.seq) {
          this.answer(j, { ok: false, code: 'CRAWL_PARSE_TIMEOUT', message: `parser did not finish in ${this.opts.timeoutMs} ms; worker replaced` });
        } else {
          this.answer(j, { ok: false, code: 'CRAWL_PARSE_CRASH', message: `parse worker died: ${err?.message ?? String(err)}` });
        }
      } else if (++j.reruns > MAX_RERUNS) {
        this.answer(j, { ok: false, code: 'CRAWL_PARSE_CRASH', message: `parse worker died ${MAX_RERUNS + 1} times with this page queued: ${err?.message ?? String(err)}` });
      } else {
        rerun.push(j);
      }
    }
    if (rerun.length > 0) {
      this.waiting = rerun.concat(this.waiting.slice(this.waitHead));
      this.waitHead = 0;
    }
  }

  /**
   * Abort the batch whose page in progress is past its deadline, or that made no progress for
   * stuckMs with no page in progress (piscina then terminates and replaces its worker).
   */
  private sweep(): void {
    if (this.batches.size === 0 && this.sweeper !== null) {
      clearInterval(this.sweeper);
      this.sweeper = null;
      return;
    }
    const now = Date.now();
    for (const b of this.batches) {
      if (b.timedOut !== null || b.stuck) continue;
      let running = false;
      let done = 0;
      for (const j of b.jobs) {
        const slot = j.seq & PROGRESS_MASK;
        const state = Atomics.load(this.progress, slot);
        if (state === ~j.seq) done++;
        if (state !== j.seq) continue;
        running = true;
        if (now - this.startedAt[slot]! > this.opts.timeoutMs) {
          b.timedOut = j.seq;
          b.ctl.abort();
        }
        break; // a worker parses one page at a time
      }
      if (running || done !== b.doneSeen) {
        b.doneSeen = done;
        b.idleSince = now;
      } else if (now - b.idleSince > this.stuckMs) {
        b.stuck = true;
        b.ctl.abort();
      }
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.sweeper !== null) clearInterval(this.sweeper);
    this.sweeper = null;
    if (this.holdTimer !== null) clearTimeout(this.holdTimer);
    this.holdTimer = null;
    const left = this.waiting.slice(this.waitHead);
    this.waiting = [];
    this.waitHead = 0;
    for (const j of left) this.answer(j, { ok: false, code: 'CRAWL_PARSE_ERROR', message: 'parse pool closed' });
    // piscina rejects the batches still running (failed() answers their pages as closed)
    await this.pool.destroy();
  }
}
