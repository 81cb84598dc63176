/**
 * The parse pool: parse-worker.ts threads sized to the cores, with a supervisor in the Dominos
 * sense — a worker that crashes (exits, throws out of memory) or hangs past `parseTimeoutMs` on a
 * page is terminated and replaced, and the page comes back with an outcome code instead of being
 * lost:
 *
 *   CRAWL_PARSE_TIMEOUT  the worker did not answer in time (it was terminated and replaced)
 *   CRAWL_PARSE_CRASH    the worker died (exit, OOM under resourceLimits) while parsing this page
 *   CRAWL_PARSE_ERROR    the parser threw (the worker survives)
 *
 * Hand-off: each worker has up to `depth` tasks posted to its MessagePort at once and answers them
 * in order, so it goes from one page to the next without waiting for the main thread (piscina with
 * one task per worker, used before, left the worker idle from each answer until the busy event
 * loop handled it and posted the next page: the parse thread was busy only ~half the time while
 * the crawl was parse-gated; docs/performance.md, session 3). The worker being FIFO, the oldest
 * unanswered task of a worker is the one it is working on:
 *   - its deadline runs from when the worker could start it: the later of its posting and the
 *     previous answer's arrival (lenient by the event loop's delay, never early);
 *   - when a worker dies or is terminated, that task is the one blamed; the innocent tasks queued
 *     behind it are re-run (first in line) on the replacement, not lost.
 * The caller keeps its own copy of every task's bytes (packTask copies into the transferred
 * buffer), which is what makes re-running possible.
 *
 * Bound: tasks in the pool ≤ what the pipeline submits (its parse back-pressure), of which at
 * most threads × depth sit in workers; each worker's V8 heap is capped via resourceLimits.
 */
import { Worker } from 'node:worker_threads';
import { workerFile } from './worker-file.js';
import { packTask, type ParseTask, type ParseWorkerData } from './parse-worker.js';
import { splitParseOutput, type EncodedGroupLike } from './links-codec.js';

export type ParseOutcome = { ok: true; table: Uint8Array; group: EncodedGroupLike | null } | { ok: false; code: 'CRAWL_PARSE_TIMEOUT' | 'CRAWL_PARSE_CRASH' | 'CRAWL_PARSE_ERROR'; message: string };

/** young generation per parse worker (MiB), part of its heap budget */
const YOUNG_MB = 8;
/** tasks posted to one worker at once (measured: docs/performance.md, session 3 parse side) */
const DEFAULT_DEPTH = 4;
/** a worker that dies this many times in a row before it loaded means the module is broken */
const MAX_START_FAILURES = 3;

interface Job {
  task: ParseTask;
  resolve: (o: ParseOutcome) => void;
  /** performance.now() when posted to its current worker */
  sentAt: number;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  /** posted, unanswered, in posting order (the worker answers in this order) */
  queue: Job[];
  /** performance.now() of the last answer (the worker started the next task no later) */
  lastAnswer: number;
  /** terminated or exited: ignore whatever it still says */
  dead: boolean;
  /** the last 'error' event (exit reason for the report) */
  error: Error | null;
}

export class ParsePool {
  private readonly slots: Slot[] = [];
  /** submitted, not yet posted to a worker (FIFO; re-run tasks go to the front) */
  private waiting: Job[] = [];
  private waitHead = 0;
  private inFlight = 0;
  private closed = false;
  private startFailures = 0;
  private readonly depth: number;
  private readonly workerData: ParseWorkerData;
  private readonly resourceLimits: { maxOldGenerationSizeMb: number; maxYoungGenerationSizeMb: number } | undefined;
  private sweeper: NodeJS.Timeout | null = null;
  private readyWaiters: (() => void)[] = [];
  /** workers terminated because they crashed or hung */
  replaced = 0;

  constructor(
    workerData: ParseWorkerData,
    private readonly opts: { threads: number; timeoutMs: number; heapMb?: number; depth?: number },
  ) {
    this.depth = Math.max(1, opts.depth ?? (Number(process.env.DRUMCRAWL_PARSE_DEPTH) || DEFAULT_DEPTH));
    this.workerData = { ...workerData, serve: true };
    // `heapMb` is the worker's whole heap budget: V8 adds the young generation on top of the old
    // space cap (default 3 × 16 MiB semi-spaces), so it is capped too and taken out of heapMb. A
    // parse keeps one page's objects alive at a time, so a small young generation scavenges
    // more often but each scavenge copies little (H7, issue #7 RSS).
    this.resourceLimits = opts.heapMb
      ? { maxOldGenerationSizeMb: Math.max(16, opts.heapMb - YOUNG_MB), maxYoungGenerationSizeMb: YOUNG_MB }
      : undefined;
    for (let i = 0; i < opts.threads; i++) this.slots.push(this.spawn());
  }

  get threads(): number {
    return this.slots.length;
  }

  /** pages submitted and not yet answered (in workers + waiting) */
  get pending(): number {
    return this.inFlight;
  }

  /**
   * Back-pressure for the pipeline: every worker has `depth` pages queued and as many again wait
   * here, ready to be posted the moment a worker answers — more submitted pages would only wait
   * longer (and hold their bodies in RAM).
   */
  get saturated(): boolean {
    return this.inFlight >= 2 * this.depth * this.slots.length;
  }

  private spawn(): Slot {
    const worker = new Worker(workerFile('parse-worker'), { workerData: this.workerData, resourceLimits: this.resourceLimits });
    const slot: Slot = { worker, ready: false, queue: [], lastAnswer: 0, dead: false, error: null };
    worker.on('message', (m: unknown) => this.onMessage(slot, m));
    // Without an 'error' listener a worker's uncaught exception would crash the process; the
    // 'exit' that follows does the recovery.
    worker.on('error', (e: Error) => {
      slot.error = e;
    });
    worker.on('exit', (code: number) => this.onExit(slot, code));
    return slot;
  }

  private onMessage(slot: Slot, m: unknown): void {
    if (slot.dead) return;
    if (m === 'ready') {
      slot.ready = true;
      this.startFailures = 0;
      this.pump();
      if (this.slots.every((s) => s.ready)) for (const w of this.readyWaiters.splice(0)) w();
      return;
    }
    const job = slot.queue.shift();
    if (job === undefined) return; // cannot happen: one answer per task
    slot.lastAnswer = performance.now();
    this.inFlight--;
    if (m instanceof Uint8Array) {
      job.resolve({ ok: true, ...splitParseOutput(m) });
    } else {
      const msg = (m as { error?: string } | null)?.error;
      job.resolve({ ok: false, code: 'CRAWL_PARSE_ERROR', message: msg ?? 'parse worker sent an unknown answer' });
    }
    this.pump();
  }

  /**
   * A worker is gone (crash, OOM, or terminated by the sweep): blame the task it was working on
   * (unless the sweep already answered it), put the innocent ones back at the front of the line,
   * start a replacement.
   */
  private onExit(slot: Slot, code: number): void {
    const i = this.slots.indexOf(slot);
    const wasDead = slot.dead;
    slot.dead = true;
    if (this.closed || i < 0) return;
    if (!wasDead) {
      // died by itself
      const head = slot.queue.shift();
      if (head !== undefined) {
        this.replaced++;
        this.inFlight--;
        const why = slot.error !== null ? slot.error.message : `exit code ${code}`;
        head.resolve({ ok: false, code: 'CRAWL_PARSE_CRASH', message: `parse worker died: ${why}` });
      }
      if (!slot.ready && ++this.startFailures >= MAX_START_FAILURES) {
        // The worker module does not load: fail what waits instead of respawning forever.
        const why = slot.error !== null ? slot.error.message : `exit code ${code}`;
        for (const j of this.takeWaiting()) {
          this.inFlight--;
          j.resolve({ ok: false, code: 'CRAWL_PARSE_CRASH', message: `parse worker does not start: ${why}` });
        }
      }
    }
    this.requeue(slot.queue);
    slot.queue = [];
    this.slots[i] = this.spawn();
  }

  private takeWaiting(): Job[] {
    const w = this.waiting.slice(this.waitHead);
    this.waiting = [];
    this.waitHead = 0;
    return w;
  }

  private requeue(jobs: Job[]): void {
    if (jobs.length === 0) return;
    this.waiting = jobs.concat(this.takeWaiting());
  }

  /** Post waiting tasks to ready workers with room, fewest queued first. */
  private pump(): void {
    while (this.waitHead < this.waiting.length) {
      let best: Slot | null = null;
      for (const s of this.slots) {
        if (!s.ready || s.dead || s.queue.length >= this.depth) continue;
        if (best === null || s.queue.length < best.queue.length) best = s;
      }
      if (best === null) break;
      const job = this.waiting[this.waitHead]!;
      this.waiting[this.waitHead++] = undefined as unknown as Job;
      this.post(best, job);
    }
    if (this.waitHead === this.waiting.length) {
      this.waiting = [];
      this.waitHead = 0;
    } else if (this.waitHead > 1024 && this.waitHead * 2 > this.waiting.length) {
      this.waiting = this.waiting.slice(this.waitHead);
      this.waitHead = 0;
    }
  }

  private post(slot: Slot, job: Job): void {
    // One buffer, transferred (the caller keeps its own arrays: a crashed worker loses nothing).
    const wire = packTask(job.task);
    job.sentAt = performance.now();
    if (slot.queue.length === 0) slot.lastAnswer = job.sentAt;
    slot.queue.push(job);
    slot.worker.postMessage(wire, [wire.buf.buffer as ArrayBuffer]);
    if (this.sweeper === null) {
      // Checked every timeoutMs/8 (≥ 10 ms): a hung page is given up within 1⅛ × timeoutMs.
      this.sweeper = setInterval(() => this.sweep(), Math.max(10, this.opts.timeoutMs / 8));
      this.sweeper.unref(); // the tasks themselves keep the process alive while they run
    }
  }

  /** Terminate a worker whose current task is past its deadline (one timer for the pool). */
  private sweep(): void {
    const now = performance.now();
    let busy = false;
    for (const s of this.slots) {
      const head = s.queue[0];
      if (s.dead || head === undefined) continue;
      busy = true;
      if (now - Math.max(head.sentAt, s.lastAnswer) <= this.opts.timeoutMs) continue;
      s.dead = true;
      s.queue.shift();
      this.replaced++;
      this.inFlight--;
      head.resolve({ ok: false, code: 'CRAWL_PARSE_TIMEOUT', message: `parser did not finish in ${this.opts.timeoutMs} ms; worker replaced` });
      // 'exit' follows: the tasks queued behind go back in line, a replacement starts.
      void s.worker.terminate();
    }
    if (!busy && this.sweeper !== null) {
      clearInterval(this.sweeper);
      this.sweeper = null;
    }
  }

  /**
   * Wait until every thread has loaded the worker module (no timeout): the per-page timeout should
   * measure parsing, not a cold start (module loading takes seconds under tsx on a busy box).
   */
  async warmup(): Promise<void> {
    if (this.slots.every((s) => s.ready)) return;
    await new Promise<void>((r) => this.readyWaiters.push(r));
  }

  run(task: ParseTask): Promise<ParseOutcome> {
    if (this.closed) return Promise.resolve({ ok: false, code: 'CRAWL_PARSE_ERROR', message: 'parse pool closed' });
    this.inFlight++;
    return new Promise<ParseOutcome>((resolve) => {
      this.waiting.push({ task, resolve, sentAt: 0 });
      this.pump();
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.sweeper !== null) clearInterval(this.sweeper);
    this.sweeper = null;
    const left = this.takeWaiting();
    for (const s of this.slots) left.push(...s.queue.splice(0));
    for (const j of left) j.resolve({ ok: false, code: 'CRAWL_PARSE_ERROR', message: 'parse pool closed' });
    this.inFlight = 0;
    for (const w of this.readyWaiters.splice(0)) w();
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }
}
