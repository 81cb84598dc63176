/**
 * The crawl's WARC writer (src/store WarcWriter, with its CDXJ index) in a worker thread of its own
 * (archive-host.ts), behind the calls the pipeline makes. The main thread keeps only what must be
 * serial (the frontier's decisions, DRUM orchestration, checkpoints); appending a page's records —
 * rotation, the CDXJ line (SURT key, HTTP head parse, JSON), the writev, the fsyncs — and encoding
 * the main thread's own records (robots.txt exchanges, revisits, `dns:` answers, gzip included)
 * happen there.
 *
 * Calls are queued and sent together every SEND_EVERY_MS, in one message: the pages' encoded
 * groups packed into one transferred buffer (archive-pack.ts; a page worker's group is not copied
 * there: its own buffer is transferred beside the pack), the other records
 * structured-cloned. The thread runs them in the order they were made, so the files are those a
 * WarcWriter in this thread would write, and a later sync() or position() covers every call made
 * before it. A call resolves when queued: a write's failure
 * is reported by the thread and rejects every later call, sync() included (the pipeline marks a
 * page done only after a sync: nothing is lost unnoticed).
 *
 * RAM here: the queued calls (≤ PACK_SEND_BYTES of groups) plus the calls sent and not yet done,
 * at most MAX_INFLIGHT_BYTES (appendEncoded waits beyond it: the thread sets the pace); the
 * thread's writer buffers 1 MiB (WarcWriterOptions.bufferBytes) and its V8 heap is capped
 * (ARCHIVE_LIMITS).
 */
import { Worker } from 'node:worker_threads';
import { CrawlError } from '../../errors.js';
import type { CdxSource, DnsAnswerInput, EncodedGroup, ExchangeInput, RevisitInput, WarcCompression, WarcWriterOptions } from '../../store/index.js';
import { Pack } from './archive-pack.js';
import { workerFile } from '../worker-file.js';

/** The writer's options that cross to the thread (no functions). */
export type ArchiveOptions = Omit<WarcWriterOptions, 'now'>;

/**
 * Calls sent and not yet done, in bytes, beyond which appendEncoded waits: ~1,100 pages of the
 * bench web (7 KB of gzip records each), a lag the thread catches up on in under a second; the
 * close() at the end of a crawl waits for it. With 32 MiB, bench:e2e runs of 20 s ended 0.5–1.4 s
 * later than with the writer on the main thread (bench/results/e2e-ab-e80a48a-8735110.json); with
 * 8 MiB, 0.1–0.5 s (e2e-ab-e80a48a-cca20be.json).
 */
const MAX_INFLIGHT_BYTES = 8 << 20;
/**
 * Calls are sent SEND_EVERY_MS after the first one queued (a message per turn of the event loop
 * cost the main thread more than the packing), or at once when the packed groups reach
 * PACK_SEND_BYTES, or when a sync(), position() or close() needs them sent.
 */
const SEND_EVERY_MS = 10;
const PACK_SEND_BYTES = 1 << 20;

/**
 * V8 limits of the archive thread. Its heap holds one message's calls and the CDXJ lines of the
 * current file's unsorted tail; the records themselves are ArrayBuffers outside it.
 */
const ARCHIVE_LIMITS = { maxYoungGenerationSizeMb: 12, maxOldGenerationSizeMb: 128 };

/** A record group other than a page's packed one: encoded in the thread. */
export type ArchiveCall =
  | { k: 'x'; x: Omit<ExchangeInput, 'warcinfoId'> }
  | { k: 'r'; x: Omit<RevisitInput, 'warcinfoId'> }
  | { k: 'd'; x: Omit<DnsAnswerInput, 'warcinfoId'> }
  | { k: 'g'; g: EncodedGroup; index?: CdxSource };

export type ToArchive =
  | { t: 'open'; opts: ArchiveOptions }
  /**
   * `pack`: `groups` packed groups (Pack's layout); `calls` in order, call i made after the first
   * `callAt[i]` packed groups (the thread keeps the order of the calls as made)
   */
  | { t: 'write'; pack: Uint8Array | null; groups: number; calls: ArchiveCall[]; callAt: number[]; bytes: number; owned: ArrayBuffer[] }
  | { t: 'sync' | 'position' | 'close'; id: number };

export type FromArchive =
  | { t: 'opened'; encode: EncodeOptions; position: Position }
  | { t: 'written'; bytes: number }
  | { t: 'done'; id: number; position: Position }
  | { t: 'failed'; error: { message: string; code?: string } };

interface EncodeOptions { compression: WarcCompression; gzipLevel: number; zstdLevel: number; zstdDict?: SharedArrayBuffer }
interface Position { file: string; offset: number }

export class ArchiveThread {
  private readonly pack = new Pack();
  private calls: ArchiveCall[] = [];
  private callAt: number[] = [];
  private callBytes = 0;
  private timer: NodeJS.Timeout | null = null;
  private inflight = 0;
  private readonly roomWaiters: (() => void)[] = [];
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (p: Position) => void; reject: (e: Error) => void }>();
  private failure: Error | null = null;
  private closed = false;

  private constructor(
    private readonly worker: Worker,
    readonly encodeOptions: EncodeOptions,
    private lastPosition: Position,
  ) {
    worker.on('message', (m: FromArchive) => this.onMessage(m));
    worker.on('error', (e) => this.fail(e));
    worker.on('exit', (code) => {
      if (!this.closed) this.fail(new CrawlError('CRAWL_ARCHIVE_WORKER_EXIT', `the WARC writer's thread exited with code ${code}`));
    });
  }

  /** Start the thread and open the writer in it (its first file and warcinfo record). */
  static async open(opts: ArchiveOptions): Promise<ArchiveThread> {
    const worker = new Worker(workerFile(import.meta.url, 'archive-host'), { resourceLimits: ARCHIVE_LIMITS });
    try {
      const opened = await new Promise<Extract<FromArchive, { t: 'opened' }>>((resolve, reject) => {
        const onExit = (code: number): void => reject(new CrawlError('CRAWL_ARCHIVE_WORKER_EXIT', `the WARC writer's thread exited with code ${code} while opening`));
        worker.once('error', reject);
        worker.once('exit', onExit);
        worker.once('message', (m: FromArchive) => {
          worker.off('error', reject);
          worker.off('exit', onExit);
          if (m.t === 'opened') resolve(m);
          else if (m.t === 'failed') reject(new CrawlError(m.error.code ?? 'CRAWL_STORE_ERROR', m.error.message));
          else reject(new Error(`archive thread: unexpected ${m.t}`));
        });
        worker.postMessage({ t: 'open', opts } satisfies ToArchive);
      });
      return new ArchiveThread(worker, opened.encode, opened.position);
    } catch (e) {
      await worker.terminate();
      throw e;
    }
  }

  /** A page's pre-encoded group (parse or page worker) with its index line's source. */
  appendEncoded(g: EncodedGroup & { owned?: boolean }, index: CdxSource): Promise<void> {
    const refused = this.refused();
    if (refused !== null) return refused;
    // A group with its own index fields goes as a call of its own (it waits for room like the pack).
    if (index.mime !== undefined || index.payloadDigest !== undefined) return this.call({ k: 'g', g, index }, g.data.byteLength);
    this.pack.add(g, index);
    this.schedule();
    if (this.pack.length + this.pack.ownedBytes >= PACK_SEND_BYTES) this.send();
    return this.room();
  }

  /**
   * request + response (+ metadata) of one fetch, encoded in the thread. (Its byte fields are
   * copied to fit: a view is cloned with its whole ArrayBuffer.)
   */
  writeExchange(x: Omit<ExchangeInput, 'warcinfoId'>): Promise<void> {
    const c = { ...x, requestHead: x.requestHead.slice(), responseHead: x.responseHead.slice(), body: x.body.slice() };
    return this.call({ k: 'x', x: c }, c.body.byteLength + c.responseHead.byteLength);
  }

  /** revisit + request, encoded in the thread. */
  writeRevisit(x: Omit<RevisitInput, 'warcinfoId'>): Promise<void> {
    const c = { ...x, requestHead: x.requestHead.slice(), responseHead: x.responseHead.slice() };
    return this.call({ k: 'r', x: c }, c.responseHead.byteLength + 256);
  }

  /** A DNS answer as a `dns:` record, encoded in the thread. */
  writeDns(x: Omit<DnsAnswerInput, 'warcinfoId'>): Promise<void> {
    return this.call({ k: 'd', x }, 256);
  }

  /** Everything written before this call on disk and synced (WARC file and index). */
  async sync(): Promise<void> {
    this.lastPosition = await this.request('sync');
  }

  /**
   * sync(), and the position it made durable: the thread syncs and reads the position in one
   * message, so no record appended meanwhile is counted (a checkpoint records this one).
   */
  async syncedPosition(): Promise<Position> {
    this.lastPosition = await this.request('sync');
    return this.lastPosition;
  }

  /** The current file and its logical end after every call made before this one. */
  async position(): Promise<Position> {
    this.lastPosition = await this.request('position');
    return this.lastPosition;
  }

  /** Sync, close the writer (its index sorted) and end the thread. */
  async close(): Promise<void> {
    if (this.closed) return;
    try {
      if (this.failure === null) await this.request('close');
    } finally {
      this.closed = true;
      if (this.timer !== null) clearTimeout(this.timer);
      this.timer = null;
      await this.worker.terminate();
    }
  }

  /** A call after a failure or after close() is refused (CRAWL_STORE_CLOSED, as WarcWriter's). */
  private refused(): Promise<never> | null {
    if (this.failure !== null) return Promise.reject(this.failure);
    if (this.closed) return Promise.reject(new CrawlError('CRAWL_STORE_CLOSED', 'the WARC writer is closed'));
    return null;
  }

  private call(c: ArchiveCall, bytes: number): Promise<void> {
    const refused = this.refused();
    if (refused !== null) return refused;
    this.calls.push(c);
    this.callAt.push(this.pack.count);
    this.callBytes += bytes;
    this.schedule();
    return this.room();
  }

  private schedule(): void {
    if (this.timer !== null) return;
    this.timer = setTimeout(() => this.send(), SEND_EVERY_MS);
  }

  private send(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.failure !== null || (this.pack.count === 0 && this.calls.length === 0)) return;
    const groups = this.pack.count;
    const ownedBytes = this.pack.ownedBytes;
    const owned = this.pack.takeOwned();
    const pack = groups > 0 ? this.pack.take() : null;
    const bytes = (pack?.byteLength ?? 0) + ownedBytes + this.callBytes;
    const calls = this.calls;
    const callAt = this.callAt;
    this.calls = [];
    this.callAt = [];
    this.callBytes = 0;
    this.inflight += bytes;
    // The calls' own buffers are cloned (robots bodies, heads: small); the pack and the owned
    // groups' buffers are transferred.
    const transfer = pack === null ? owned : [pack.buffer as ArrayBuffer, ...owned];
    this.worker.postMessage({ t: 'write', pack, groups, calls, callAt, bytes, owned } satisfies ToArchive, transfer);
  }

  /** Resolves once the bytes sent and not yet written are under MAX_INFLIGHT_BYTES. */
  private room(): Promise<void> {
    if (this.inflight + this.pack.length + this.pack.ownedBytes + this.callBytes < MAX_INFLIGHT_BYTES) return Promise.resolve();
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  private request(t: 'sync' | 'position' | 'close'): Promise<Position> {
    if (this.failure !== null) return Promise.reject(this.failure);
    this.send(); // what was queued before this call goes first
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ t, id } satisfies ToArchive);
    });
  }

  private onMessage(m: FromArchive): void {
    switch (m.t) {
      case 'written':
        this.inflight -= m.bytes;
        while (this.roomWaiters.length > 0 && this.inflight < MAX_INFLIGHT_BYTES) this.roomWaiters.shift()!();
        break;
      case 'done': {
        const w = this.waiting.get(m.id);
        this.waiting.delete(m.id);
        w?.resolve(m.position);
        break;
      }
      case 'failed':
        this.fail(new CrawlError(m.error.code ?? 'CRAWL_STORE_ERROR', m.error.message));
        break;
      case 'opened':
        break;
    }
  }

  private fail(e: Error): void {
    this.failure ??= e;
    for (const w of this.waiting.values()) w.reject(this.failure);
    this.waiting.clear();
    // a caller waiting for room hears the failure at its next call
    for (const r of this.roomWaiters.splice(0)) r();
  }
}
