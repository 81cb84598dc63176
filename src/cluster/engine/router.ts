/**
 * The hand-off after parsing (docs/cluster.md, "Hand-off"): URLs and STAR votes of other
 * partitions, batched per destination partition and published to its subject. One router per
 * node, shared by the partitions it hosts.
 *
 *   - A batch is published when it reaches flushBytes, when it is FLUSH_MS old, or when a
 *     partition's pipeline asks (flush(): before the pages whose links it holds count as durable,
 *     and before a checkpoint's manifest).
 *   - Every publish carries a Nats-Msg-Id (`<node>.<incarnation>.<seq>`) and is retried with the
 *     same id until JetStream acknowledges it, so a retry after a lost acknowledgement (a timeout,
 *     nats-server restarting) is stored once; the incarnation (random per process) keeps the ids
 *     of a restarted node from colliding with its predecessor's inside the duplicate window.
 *   - Bound: buffered plus unacknowledged bytes ≤ budgetBytes; at the bound `saturated` holds new
 *     fetches back (ClusterPort.saturated), so parsing stalls instead of RAM growing. The pages
 *     already fetched or parsing add at most what the pipeline's own bounds let through.
 */
import { randomBytes } from 'node:crypto';
import { BatchBuilder } from './batch-codec.js';
import type { Engine } from './engine.js';

/** A batch waits at most this long (ms) before it is published. */
export const FLUSH_MS = 250;
/** Retry pause after a failed publish (ms), doubling up to RETRY_MAX_MS. */
const RETRY_MS = 100;
const RETRY_MAX_MS = 5_000;

export interface RouterStats {
  /** batches and their bytes acknowledged by JetStream (a retried publish counts once) */
  published: number;
  publishedBytes: number;
  urls: number;
  votes: number;
  /** publishes retried after an error or timeout */
  retries: number;
  /** bytes buffered or awaiting acknowledgement now */
  pendingBytes: number;
}

export class Router {
  private readonly builders: BatchBuilder[];
  private readonly since: number[];
  private readonly outstanding = new Set<Promise<void>>();
  private outstandingBytes = 0;
  private bufferedBytes = 0;
  private seq = 0;
  private readonly incarnation = randomBytes(6).toString('hex');
  private timer: NodeJS.Timeout | null = null;
  private failure: Error | null = null;
  private closed = false;
  readonly stats: RouterStats = { published: 0, publishedBytes: 0, urls: 0, votes: 0, retries: 0, pendingBytes: 0 };
  /** a batch is published once it holds this many bytes */
  readonly flushBytes: number;

  constructor(
    private readonly engine: Engine,
    private readonly node: string,
    P: number,
    /** buffered + unacknowledged bytes at which new fetches wait */
    private readonly budgetBytes: number,
  ) {
    this.builders = Array.from({ length: P }, () => new BatchBuilder());
    this.since = new Array<number>(P).fill(0);
    this.flushBytes = Math.max(16 << 10, Math.min(256 << 10, Math.floor(budgetBytes / (2 * P))));
    this.timer = setInterval(() => this.publishDue(false), FLUSH_MS);
    this.timer.unref();
  }

  /** Buffered and unacknowledged bytes have reached the budget. */
  get saturated(): boolean {
    return this.bufferedBytes + this.outstandingBytes >= this.budgetBytes;
  }

  /** Nothing buffered and nothing awaiting acknowledgement. */
  get idle(): boolean {
    return this.bufferedBytes === 0 && this.outstanding.size === 0;
  }

  route(dest: number, url: Uint8Array, hops: number, suffix: Uint8Array): void {
    const b = this.builders[dest]!;
    const before = b.empty ? 0 : b.bytes;
    if (b.empty) this.since[dest] = Date.now();
    if (!b.addUrl(url, hops, suffix)) return; // longer than the format holds: src/url never makes one
    this.stats.urls++;
    this.added(dest, b, before);
  }

  vote(dest: number, e: Uint32Array, o: number): void {
    const b = this.builders[dest]!;
    const before = b.empty ? 0 : b.bytes;
    if (b.empty) this.since[dest] = Date.now();
    b.addVote(e, o);
    this.stats.votes++;
    this.added(dest, b, before);
  }

  /** `before`: what the builder counted in bufferedBytes before the addition (0 when it was empty). */
  private added(dest: number, b: BatchBuilder, before: number): void {
    this.bufferedBytes += b.bytes - before;
    if (b.bytes >= this.flushBytes) this.publish(dest);
  }

  /** Publishes every batch (all: `force`, else those FLUSH_MS old). */
  private publishDue(force: boolean): void {
    const now = Date.now();
    for (let d = 0; d < this.builders.length; d++) {
      const b = this.builders[d]!;
      if (!b.empty && (force || now - this.since[d]! >= FLUSH_MS)) this.publish(d);
    }
  }

  private publish(dest: number): void {
    const b = this.builders[dest]!;
    const size = b.bytes;
    const data = b.take();
    this.bufferedBytes -= size;
    this.outstandingBytes += data.byteLength;
    const id = `${this.node}.${this.incarnation}.${++this.seq}`;
    const p = this.send(this.engine.names.subject(dest), data, id).finally(() => {
      this.outstanding.delete(p);
      this.outstandingBytes -= data.byteLength;
    });
    this.outstanding.add(p);
  }

  /** One publish, retried with the same Nats-Msg-Id until stored (or the router closes). */
  private async send(subject: string, data: Uint8Array, msgID: string): Promise<void> {
    let pause = RETRY_MS;
    for (;;) {
      try {
        await this.engine.js.publish(subject, data, { msgID, timeout: 10_000 });
        this.stats.published++;
        this.stats.publishedBytes += data.byteLength;
        return;
      } catch (e) {
        if (this.closed) {
          this.failure ??= e as Error;
          return;
        }
        this.stats.retries++;
        await new Promise((r) => setTimeout(r, pause));
        pause = Math.min(RETRY_MAX_MS, pause * 2);
      }
    }
  }

  /** Resolves once everything routed before the call is stored in the stream. */
  async flush(): Promise<void> {
    this.publishDue(true);
    // The publishes under way now hold everything routed before this call (later ones are not waited for).
    await Promise.all([...this.outstanding]);
    this.stats.pendingBytes = this.bufferedBytes + this.outstandingBytes;
    if (this.failure !== null) throw this.failure;
  }

  /** Publishes what is buffered, waits for it (at most `ms`), stops the timer. */
  async close(ms = 30_000): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    const flushed = this.flush().catch(() => undefined);
    await Promise.race([flushed, new Promise((r) => setTimeout(r, ms).unref())]);
    this.closed = true;
  }

  pendingBytes(): number {
    return this.bufferedBytes + this.outstandingBytes;
  }
}
