/**
 * The counters behind the status page's charts, sampled over time in two fixed rings (bounded
 * memory however long the crawl runs): a fine ring (one sample every `fineMs`, the last
 * `fineSize`) and a coarse ring (one every `coarseMs`, the last `coarseSize`). With the defaults,
 * 2 s × 900 = the last 30 minutes and 60 s × 1440 = the last 24 hours, about 2,300 objects of a
 * dozen numbers each (~0.4 MB).
 *
 * Samples hold counters and gauges; the page computes rates from consecutive samples, as
 * Prometheus' rate() does from the same counters. Pauses (the longest URLseen merge, checkpoint
 * and event-loop delay) are maxima over the sample's period: a coarse sample carries the maxima of
 * the whole minute, not of the fine sample it was taken with. These are the series bench:soak
 * charts (docs/performance.md): pages/s, CPU per page, RSS against --ram, pauses, and pages/s
 * against URLseen's size.
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
  /** Process CPU ms of this run (user + system). */
  cpuMs: number;
  rssBytes: number;
  /** The main thread's V8 heap in use, and the RAM budget (--ram). */
  heapBytes: number;
  ramBytes: number;
  /** Longest URLseen merge, checkpoint and event-loop delay (ms) that ended in the sample's period. */
  mergeMs: number;
  checkpointMs: number;
  loopMs: number;
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

/** The longest entry of a /status recent list that ended after `since`. */
function maxAfter(list: { at: number; ms: number }[] | undefined, since: number): number {
  let m = 0;
  for (const e of list ?? []) if (e.at > since && e.ms > m) m = e.ms;
  return m;
}

/** The sample of a snapshot taken at `t`; pauses are those that ended after `since`. */
export function sampleOf(s: StatusSnapshot, t: number, since = 0): HistorySample {
  const failures = Object.entries(s.outcomes).reduce((n, [k, v]) => (k.startsWith('CRAWL_') ? n + v : n), 0);
  const r = s.run;
  return {
    t, pages: s.pages, bytes: s.bytes, urlsSeen: s.urlsSeen, urlsQueued: s.urlsQueued, failures,
    cpuMs: Math.round(s.cpuSeconds * 1000), rssBytes: s.rssBytes, heapBytes: r?.heap.usedBytes ?? 0, ramBytes: r?.ramBytes ?? 0,
    mergeMs: maxAfter(r?.merges.urlSeen.recent, since), checkpointMs: maxAfter(r?.checkpoints.recent, since), loopMs: r?.loopDelay.lastSecMaxMs ?? 0,
  };
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

  /** Pause maxima over the fine samples since the last coarse one. */
  private pending = { mergeMs: 0, checkpointMs: 0, loopMs: 0 };

  /** Take one sample now (also into the coarse ring when its period has passed). */
  sample(now = Date.now()): void {
    const s = sampleOf(this.snapshot(), now, this.fine.last()?.t ?? 0);
    this.fine.push(s);
    const p = this.pending;
    p.mergeMs = Math.max(p.mergeMs, s.mergeMs);
    p.checkpointMs = Math.max(p.checkpointMs, s.checkpointMs);
    p.loopMs = Math.max(p.loopMs, s.loopMs);
    const lastCoarse = this.coarse.last();
    if (lastCoarse === undefined || now - lastCoarse.t >= this.coarseMs) {
      this.coarse.push({ ...s, ...p });
      this.pending = { mergeMs: 0, checkpointMs: 0, loopMs: 0 };
    }
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
