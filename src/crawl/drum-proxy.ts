/**
 * A DRUM instance (src/drum) running in its own worker thread (drum-host.ts), with the same call
 * shape as Drum: check/update/checkUpdate are buffered here and shipped in binary batches;
 * merge() runs the merge in the worker and calls `onResults` here, on the event loop, for each
 * chunk of results — the worker waits for each chunk's promise (DRUM's durability contract:
 * Z is committed only after the consumer has committed what it needs).
 *
 * RAM here: one batch buffer (≤ batchBytes, then shipped); the DRUM's own buffers live in the worker.
 */
import { Worker } from 'node:worker_threads';
import { CrawlError } from '../errors.js';
import type { DrumOptions, DrumResult } from '../drum/index.js';
import { BatchWriter, decodeResults } from './drum-codec.js';
import { workerFile } from './worker-file.js';

export interface DrumProxyStats {
  keys: number;
  merges: number;
  k: number;
  r: number;
  cacheHitRate?: number;
}

export class DrumProxy {
  private readonly batch = new BatchWriter();
  private needs = false;
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  private lastStats: DrumProxyStats;
  private failure: Error | null = null;
  private mergeChain: Promise<void> = Promise.resolve();

  private constructor(
    private readonly worker: Worker,
    private readonly onResults: (batch: DrumResult[]) => Promise<void> | void,
    stats: DrumProxyStats,
    private readonly batchBytes: number,
  ) {
    this.lastStats = stats;
    worker.on('message', (m: { t: string; id?: number; buf?: Uint8Array; needsMerge?: boolean; stats?: DrumProxyStats; error?: { message: string; code?: string } }) => {
      switch (m.t) {
        case 'state':
          this.needs = m.needsMerge!;
          break;
        case 'results': {
          const id = m.id!;
          Promise.resolve()
            .then(() => this.onResults(decodeResults(m.buf!)))
            .then(
              () => worker.postMessage({ t: 'ack', id }),
              (e: Error) => this.fail(e),
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
    worker.on('error', (e) => this.fail(e));
    worker.on('exit', (code) => {
      if (this.waiting.size > 0) this.fail(new CrawlError('CRAWL_DRUM_WORKER_EXIT', `DRUM worker exited with code ${code}`));
    });
  }

  static async open(
    dir: string,
    opts: Omit<DrumOptions, 'onResults' | 'merge' | 'io'>,
    onResults: (batch: DrumResult[]) => Promise<void> | void,
    batchBytes = 1 << 20,
  ): Promise<DrumProxy> {
    const worker = new Worker(workerFile('drum-host'), { workerData: { dir, opts } });
    const stats = await new Promise<DrumProxyStats>((resolve, reject) => {
      const onMsg = (m: { t: string; stats?: DrumProxyStats }): void => {
        if (m.t === 'opened') {
          worker.off('message', onMsg);
          resolve(m.stats!);
        }
      };
      worker.on('message', onMsg);
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new CrawlError('CRAWL_DRUM_WORKER_EXIT', `DRUM worker for ${dir} exited with code ${code} while opening`)));
    });
    worker.removeAllListeners('error');
    worker.removeAllListeners('exit');
    return new DrumProxy(worker, onResults, stats, batchBytes);
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

  private maybeShip(): void {
    if (this.batch.length >= this.batchBytes) this.ship();
  }

  private ship(): void {
    if (this.batch.count === 0) return;
    const buf = this.batch.take();
    this.worker.postMessage({ t: 'tuples', buf }, [buf.buffer as ArrayBuffer]);
  }

  private call(t: 'merge' | 'flush' | 'close'): Promise<void> {
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
      await this.worker.terminate();
    }
  }
}
