/**
 * The parse pool: a piscina pool of parse-worker.ts threads sized to the cores, with a supervisor
 * in the Dominos sense — a worker that crashes (exits, throws out of memory) or hangs past
 * `parseTimeoutMs` on a page is terminated and replaced by piscina, and the page comes back with an
 * outcome code instead of being lost:
 *
 *   CRAWL_PARSE_TIMEOUT  the worker did not answer in time (it was terminated and replaced)
 *   CRAWL_PARSE_CRASH    the worker died (exit, OOM under resourceLimits) while parsing this page
 *   CRAWL_PARSE_ERROR    the parser threw (the worker survives)
 *
 * Bound: the pipeline keeps at most `maxQueued` tasks submitted (back-pressure: it stops reading
 * fetch results while the pool is full), and each worker's V8 heap is capped via resourceLimits.
 */
import { Piscina } from 'piscina';
import { workerFile } from './worker-file.js';
import { packTask, type ParseTask, type ParseWorkerData } from './parse-worker.js';
import { splitParseOutput, type EncodedGroupLike } from './links-codec.js';

export type ParseOutcome = { ok: true; table: Uint8Array; group: EncodedGroupLike | null } | { ok: false; code: 'CRAWL_PARSE_TIMEOUT' | 'CRAWL_PARSE_CRASH' | 'CRAWL_PARSE_ERROR'; message: string };

/** young generation per parse worker (MiB), part of its heap budget */
const YOUNG_MB = 8;

export class ParsePool {
  private readonly pool: Piscina;
  private inFlight = 0;
  /** workers terminated because they crashed or hung */
  replaced = 0;

  constructor(
    workerData: ParseWorkerData,
    private readonly opts: { threads: number; timeoutMs: number; heapMb?: number },
  ) {
    this.pool = new Piscina({
      filename: workerFile('parse-worker'),
      minThreads: opts.threads,
      maxThreads: opts.threads,
      // each worker holds one page at a time; a short queue keeps the threads fed
      concurrentTasksPerWorker: 1,
      idleTimeout: 60_000,
      workerData,
      // `heapMb` is the worker's whole heap budget: V8 adds the young generation on top of the old
      // space cap (default 3 × 16 MiB semi-spaces), so it is capped too and taken out of heapMb. A
      // parse keeps one page's objects alive at a time, so a small young generation scavenges
      // more often but each scavenge copies little (H7, issue #7 RSS).
      resourceLimits: opts.heapMb
        ? { maxOldGenerationSizeMb: Math.max(16, opts.heapMb - YOUNG_MB), maxYoungGenerationSizeMb: YOUNG_MB }
        : undefined,
    });
    // A worker that exits unexpectedly emits 'error' on the pool; its task is rejected (handled
    // in run) and piscina starts a replacement. Without a listener the process would crash.
    this.pool.on('error', () => undefined);
  }

  get threads(): number {
    return this.pool.threads.length;
  }

  get pending(): number {
    return this.inFlight;
  }

  /**
   * Start every thread and load the worker module (no timeout): the per-page timeout should
   * measure parsing, not a cold start (module loading takes seconds under tsx on a busy box).
   */
  async warmup(): Promise<void> {
    const b = new Uint8Array(0);
    await Promise.all(
      Array.from({ length: this.opts.threads }, () => this.pool.run({ url: 'http://warmup.invalid/', body: b, decoded: b, html: false, follow: false })),
    );
  }

  /**
   * Deadlines of the tasks in the pool, checked by one sweep timer (an AbortSignal.timeout per
   * page — a timer, a weak ref and a finalizer each — was ~4 % of the event loop's CPU). Bound:
   * the tasks submitted (≤ the pipeline's parse back-pressure limit).
   */
  private readonly deadlines = new Map<AbortController, number>();
  private sweeper: NodeJS.Timeout | null = null;

  private sweep(): void {
    const now = performance.now();
    for (const [c, t] of this.deadlines) {
      if (t <= now) {
        this.deadlines.delete(c);
        c.abort();
      }
    }
    if (this.deadlines.size === 0 && this.sweeper !== null) {
      clearInterval(this.sweeper);
      this.sweeper = null;
    }
  }

  async run(task: ParseTask): Promise<ParseOutcome> {
    this.inFlight++;
    const ctl = new AbortController();
    const signal = ctl.signal;
    this.deadlines.set(ctl, performance.now() + this.opts.timeoutMs);
    // Checked every timeoutMs/8 (≥ 10 ms): a hung page is aborted within 1⅛ × timeoutMs.
    if (this.sweeper === null) {
      this.sweeper = setInterval(() => this.sweep(), Math.max(10, this.opts.timeoutMs / 8));
      this.sweeper.unref(); // the task itself keeps the process alive while it runs
    }
    try {
      // One buffer, transferred (the caller keeps its own arrays: a crashed worker loses nothing).
      const wire = packTask(task);
      const r = (await this.pool.run(wire, { signal, transferList: [wire.buf.buffer as ArrayBuffer] })) as Uint8Array;
      return { ok: true, ...splitParseOutput(r instanceof Uint8Array ? r : new Uint8Array(r as ArrayBuffer)) };
    } catch (e) {
      const err = e as Error & { name?: string; code?: string };
      if (signal.aborted || err.name === 'AbortError') {
        this.replaced++;
        return { ok: false, code: 'CRAWL_PARSE_TIMEOUT', message: `parser did not finish in ${this.opts.timeoutMs} ms; worker replaced` };
      }
      if (/exited|terminated|worker/i.test(err.message ?? '') || err.code === 'ERR_WORKER_OUT_OF_MEMORY') {
        this.replaced++;
        return { ok: false, code: 'CRAWL_PARSE_CRASH', message: `parse worker died: ${err.message}` };
      }
      return { ok: false, code: 'CRAWL_PARSE_ERROR', message: err.message ?? String(e) };
    } finally {
      this.deadlines.delete(ctl);
      this.inFlight--;
    }
  }

  async close(): Promise<void> {
    if (this.sweeper !== null) clearInterval(this.sweeper);
    this.sweeper = null;
    await this.pool.destroy();
  }
}
