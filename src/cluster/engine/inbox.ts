/**
 * One partition's inbox (docs/cluster.md, "Hand-off"): its durable pull consumer, read by the node
 * that holds the partition's lease. Each batch is admitted into the partition's crawler as a local
 * batch (Crawler.admitBatch: URLseen, STAR, BEAST) and then held, unacknowledged, until a
 * checkpoint that started after its admission has committed — only then is it acknowledged, so a
 * node killed at any moment loses nothing: the stream delivers again what was not acknowledged,
 * and URLseen drops what it has seen (STAR's PLDedges counts an edge once).
 *
 * A held batch keeps only its reply subject (the acknowledgement's address), not its bytes; the
 * server bounds how many are held (MAX_ACK_PENDING). Batches held longer than a third of
 * ACK_WAIT_MS are kept alive with in-progress acknowledgements (+WPI), and the partition asks
 * for a checkpoint (ClusterPort.checkpointDue) well before that matters.
 */
import type { Consumer } from 'nats';
import { ACK_WAIT_MS, MAX_ACK_PENDING, isTransient, type Engine } from './engine.js';
import { decodeBatch, type Batch } from './batch-codec.js';

const ACK = new TextEncoder().encode('+ACK');
const WPI = new TextEncoder().encode('+WPI');
const NAK = new TextEncoder().encode('-NAK');
/** Batches pulled per request, and how long a pull waits for them (ms). */
const PULL_MAX = 64;
const PULL_WAIT_MS = 1_000;

interface Held {
  reply: string;
  /** when it was admitted (ms) */
  at: number;
  /** when an in-progress acknowledgement last went (ms) */
  alive: number;
}

export interface InboxStats {
  admitted: number;
  acked: number;
  malformed: number;
  held: number;
}

export class Inbox {
  private readonly held: Held[] = [];
  /** batches admitted so far (a checkpoint's mark counts them) */
  private admittedCount = 0;
  /** of those, acknowledged (they are the held list's head) */
  private ackedCount = 0;
  private stopped = false;
  private loop: Promise<void> | null = null;
  private keepAlive: NodeJS.Timeout | null = null;
  private acking: Promise<void> = Promise.resolve();
  readonly stats: InboxStats = { admitted: 0, acked: 0, malformed: 0, held: 0 };

  constructor(
    private readonly engine: Engine,
    private readonly p: number,
    /** admits one batch into the partition's crawler */
    private readonly admit: (b: Batch) => Promise<void>,
    /** called before acknowledgements go, with how many (the node records them first: termination) */
    private readonly beforeAck: (n: number) => Promise<void>,
    private readonly onError: (e: unknown) => void,
  ) {}

  start(): void {
    this.loop = this.run().catch((e) => this.onError(e));
    this.keepAlive = setInterval(() => this.sendAlive(), Math.floor(ACK_WAIT_MS / 3));
    this.keepAlive.unref();
  }

  private async run(): Promise<void> {
    let consumer: Consumer | null = null;
    while (!this.stopped) {
      try {
        consumer ??= await this.engine.js.consumers.get(this.engine.names.stream, this.engine.names.consumer(this.p));
        const msgs = await consumer.fetch({ max_messages: PULL_MAX, expires: PULL_WAIT_MS });
        for await (const m of msgs) {
          const reply = (m as unknown as { reply: string }).reply;
          if (this.stopped) {
            // Not admitted: back to the stream at once, for whoever holds the partition next.
            this.engine.nc.publish(reply, NAK);
            continue;
          }
          let batch: Batch;
          try {
            batch = decodeBatch(m.data);
          } catch {
            this.stats.malformed++;
            m.term('malformed drumcrawl batch');
            continue;
          }
          await this.admit(batch);
          const now = Date.now();
          this.held.push({ reply, at: now, alive: now });
          this.admittedCount++;
          this.stats.admitted++;
          this.stats.held = this.held.length;
        }
      } catch (e) {
        if (this.stopped) break;
        // The server is away (restarting) or the consumer is being made: try again shortly.
        consumer = null;
        void e;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  /** Batches admitted so far: a checkpoint's mark. */
  mark(): number {
    return this.admittedCount;
  }

  /** Batches admitted and not yet acknowledged. */
  get heldCount(): number {
    return this.held.length;
  }

  /** Admitted the longest ago of those held (ms since), 0 when none is held. */
  oldestHeldMs(now = Date.now()): number {
    return this.held.length === 0 ? 0 : now - this.held[0]!.at;
  }

  /** Held batches reach half of what the server lets the consumer hold. */
  get crowded(): boolean {
    return this.held.length >= MAX_ACK_PENDING / 2;
  }

  /**
   * A checkpoint begun at `mark` committed: the batches admitted before it are acknowledged (each
   * with a confirmed acknowledgement; one that fails is delivered again, which is harmless).
   */
  ackUpTo(mark: number): Promise<void> {
    this.acking = this.acking.then(async () => {
      const n = Math.min(mark - this.ackedCount, this.held.length);
      if (n <= 0) return;
      try {
        await this.beforeAck(n);
      } catch (e) {
        // The server away: they stay held, and the next checkpoint's mark covers them too.
        if (isTransient(e)) return;
        throw e;
      }
      const batch = this.held.splice(0, n);
      this.ackedCount += n;
      this.stats.held = this.held.length;
      await Promise.all(batch.map((h) => this.engine.nc.request(h.reply, ACK, { timeout: 5_000 }).then(() => { this.stats.acked++; }, () => undefined)));
    }).catch((e) => this.onError(e));
    return this.acking;
  }

  private sendAlive(): void {
    const now = Date.now();
    for (const h of this.held) {
      if (now - h.alive < ACK_WAIT_MS / 3) continue;
      h.alive = now;
      try {
        this.engine.nc.publish(h.reply, WPI);
      } catch {
        // disconnected: the batch is delivered again later, harmlessly
      }
    }
  }

  /** Stops pulling (batches pulled and not admitted go back at once); held ones stay for ackUpTo. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.keepAlive !== null) clearInterval(this.keepAlive);
    await this.loop;
    await this.acking;
  }
}
