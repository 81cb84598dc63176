/**
 * The counters behind the status page's chart, sampled over time in two fixed rings (bounded
 * memory however long the crawl runs): a fine ring (one sample every `fineMs`, the last
 * `fineSize`) and a coarse ring (one every `coarseMs`, the last `coarseSize`). With the defaults,
 * 2 s × 900 = the last 30 minutes and 60 s × 1440 = the last 24 hours, about 2,300 small objects.
 *
 * Samples hold counters only; the page computes rates from consecutive samples, as Prometheus'
 * rate() does from the same counters.
 */
import type { StatusSnapshot } from './stats.js';

export interface HistorySample {
  /** Unix time in ms. */
  t: number;
  pages: number;
  bytes: number;
  urlsSeen: number;
  urlsQueued: number;
  /** Page fetches that ended without an HTTP response (a CRAWL_* outcome). */
  failures: number;
}

export interface HistoryOptions {
  fineMs?: number;
  fineSize?: number;
  coarseMs?: number;
  coarseSize?: number;
}

/** A fixed-size ring of samples, oldest first on read. */
class Ring {
  private readonly buf: HistorySample[] = [];
  private next = 0;
  constructor(private readonly size: number) {}
  push(s: HistorySample): void {
    if (this.buf.length < this.size) this.buf.push(s);
    else this.buf[this.next] = s;
    this.next = (this.next + 1) % this.size;
  }
  last(): HistorySample | undefined {
    return this.buf.length === 0 ? undefined : this.buf[(this.next - 1 + this.size) % this.size];
  }
  /** Samples with t > since, oldest first. */
  since(since: number): HistorySample[] {
    const ordered = this.buf.length < this.size ? this.buf : [...this.buf.slice(this.next), ...this.buf.slice(0, this.next)];
    return ordered.filter((s) => s.t > since);
  }
}

/** The sample of a snapshot taken at `t`. */
export function sampleOf(s: StatusSnapshot, t: number): HistorySample {
  const failures = Object.entries(s.outcomes).reduce((n, [k, v]) => (k.startsWith('CRAWL_') ? n + v : n), 0);
  return { t, pages: s.pages, bytes: s.bytes, urlsSeen: s.urlsSeen, urlsQueued: s.urlsQueued, failures };
}

export class StatusHistory {
  private readonly fine: Ring;
  private readonly coarse: Ring;
  private readonly fineMs: number;
  private readonly coarseMs: number;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly snapshot: () => StatusSnapshot, opts: HistoryOptions = {}) {
    this.fineMs = opts.fineMs ?? 2000;
    this.coarseMs = opts.coarseMs ?? 60_000;
    this.fine = new Ring(opts.fineSize ?? 900);
    this.coarse = new Ring(opts.coarseSize ?? 1440);
  }

  /** Take one sample now (also into the coarse ring when its period has passed). */
  sample(now = Date.now()): void {
    const s = sampleOf(this.snapshot(), now);
    this.fine.push(s);
    const lastCoarse = this.coarse.last();
    if (lastCoarse === undefined || now - lastCoarse.t >= this.coarseMs) this.coarse.push(s);
  }

  /** Sample now and then every fineMs until stop() (the timer does not keep the process alive). */
  start(): void {
    if (this.timer !== null) return;
    this.sample();
    this.timer = setInterval(() => this.sample(), this.fineMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** What GET /history returns: both rings' samples newer than `since` (ms), and the periods. */
  read(since = 0): { fineMs: number; coarseMs: number; fine: HistorySample[]; coarse: HistorySample[] } {
    return { fineMs: this.fineMs, coarseMs: this.coarseMs, fine: this.fine.since(since), coarse: this.coarse.since(since) };
  }
}
