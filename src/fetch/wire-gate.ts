/**
 * The wire gate: politeness where the server sees it (thesis VII.1: the IP is the politeness key,
 * and a host's requests are spaced τh, its IP's τs). The scheduler decides WHEN a request may
 * start, but a request handed to undici while the IP's connection is busy waits in undici's queue
 * and is written the moment the previous exchange ends — so a server could see two requests closer
 * than τs0 although they were dispatched τs0 apart (measured: 12–25 ms gaps at τs0 = 70 ms on
 * simweb's hostile web, behind trickling hosts). The Fetcher (fetcher.ts) therefore keeps its own
 * FIFO per IP here and hands an exchange to undici only when (a) fewer than `connectionsPerPool`
 * exchanges to that IP are on the wire and (b) `minIpIntervalMs` has passed since the previous
 * request to the IP was written, and `minHostIntervalMs` since the previous one to the host
 * (robots.txt requests are spaced per IP only, RFC 9309 / thesis VII.1). "Written" is the time
 * undici called onConnect for it, right before its socket write. undici itself never writes a
 * request twice: a GET whose connection is reset after it was written fails (CRAWL_FETCH_RESET);
 * only requests not yet written move to a new connection (test/fetch/wire.test.ts checks this
 * against the server log). With a WireShare (wire-share.ts) the floors and slots are judged over
 * every thread's requests.
 *
 * RAM: one IpGate per IP with an exchange waiting or running, or written to within its floor, and
 * one stamp per host written to within its floor (both pruned every 10 s).
 */
import type { Dispatcher, Pool } from 'undici';
import type { Exchange, IpGate } from './exchange.js';
import type { WireShare } from './wire-share.js';

/** How often a gate waiting for another thread's exchange to the same IP looks again (ms). */
const SHARE_POLL_MS = 2;

export class WireGate {
  private readonly gates = new Map<string, IpGate>();
  /**
   * performance.now() of the last request written per host, and the gap that request was held to
   * (pruned once both it and the host floor have passed: RAM bounded by the hosts written to within
   * their delays).
   */
  private readonly hostLastStart = new Map<string, { t: number; gap: number }>();
  private lastPrune = 0;

  constructor(
    /** exchanges on the wire per IP (FetcherOptions.connectionsPerPool) */
    private readonly connections: number,
    /** the floors (FetcherOptions.minIpIntervalMs / minHostIntervalMs; Fetcher.setIntervals changes them) */
    public ipGap: number,
    public hostGap: number,
    private readonly share: WireShare | null,
  ) {}

  /**
   * The floors changed while fetches run (Fetcher.setIntervals): the timers of waiting gates are
   * re-armed from them.
   */
  rearm(): void {
    for (const gate of this.gates.values()) {
      if (gate.timer !== null) {
        clearTimeout(gate.timer);
        gate.timer = null;
      }
      this.pump(gate);
    }
  }

  /** Queue `ex` at its IP's gate (made on first use) and hand over what is due. */
  enqueue(ip: string, ex: Exchange, pool: Pool, opts: Dispatcher.DispatchOptions): void {
    let gate = this.gates.get(ip);
    if (gate === undefined) {
      gate = { ip, running: 0, queue: [], lastStart: -Infinity, lastGap: 0, timer: null, pumping: false, again: false };
      this.gates.set(ip, gate);
    }
    ex.gate = gate;
    gate.queue.push({ ex, pool, opts });
    this.pump(gate);
  }

  /**
   * Hand the gate's waiting exchanges to undici while a connection slot is free and the IP (and the
   * head's host) is due; otherwise wake up when it will be. Strict FIFO per IP: the scheduler spaced
   * these requests already, so the head is normally due and nothing waits behind it for long.
   */
  pump(gate: IpGate): void {
    if (gate.pumping) { gate.again = true; return; }
    gate.pumping = true;
    try {
      do {
        gate.again = false;
        while (gate.running < this.connections && gate.queue.length > 0) {
          const head = gate.queue[0]!;
          if (head.ex.settled) { gate.queue.shift(); continue; } // timed out or closed while waiting
          const now = performance.now();
          const ex = head.ex;
          let due = gate.lastStart + Math.max(this.ipGap, ex.ipGap);
          const hostGap = Math.max(this.hostGap, ex.hostGap);
          if (!ex.robots && hostGap > 0) due = Math.max(due, (this.hostLastStart.get(ex.hostKey!)?.t ?? -Infinity) + hostGap);
          const share = this.share;
          // Other threads' writes (on the shared clock, converted to this thread's performance.now()).
          if (share !== null) due = Math.max(due, share.due(ex.robots ? null : ex.hostKey, gate.ip, ex.hostGap, ex.ipGap) - performance.timeOrigin);
          if (due > now) {
            if (gate.timer === null) {
              gate.timer = setTimeout(() => { gate.timer = null; this.pump(gate); }, Math.ceil(due - now));
            }
            break;
          }
          if (share !== null && !share.tryAcquire(gate.ip, this.connections)) {
            // The IP's connection is in use by another thread, which cannot wake this gate: look
            // again shortly (only while two threads have requests for one IP, e.g. robots.txt
            // beside a page).
            if (gate.timer === null) {
              gate.timer = setTimeout(() => { gate.timer = null; this.pump(gate); }, SHARE_POLL_MS);
            }
            break;
          }
          gate.queue.shift();
          gate.running++;
          head.ex.dispatched = true;
          // Provisional start (the write follows at once on a free connection); onConnect moves it.
          this.markStart(head.ex, now);
          head.pool.dispatch(head.opts, head.ex);
        }
      } while (gate.again);
    } finally {
      gate.pumping = false;
    }
  }

  /** `ex` was (or is about to be) written at `now`: the start its IP's and host's next requests wait after. */
  markStart(ex: Exchange, now: number): void {
    const gate = ex.gate!;
    if (now >= gate.lastStart) {
      gate.lastStart = now;
      gate.lastGap = ex.ipGap;
    }
    // robots.txt too: it is a request to the host, which the host's next page waits after.
    const h = this.hostLastStart.get(ex.hostKey!);
    if (h === undefined) this.hostLastStart.set(ex.hostKey!, { t: now, gap: ex.hostGap });
    else if (now >= h.t) {
      h.t = now;
      h.gap = ex.hostGap;
    }
    this.share?.started(ex.hostKey, gate.ip, performance.timeOrigin + now);
  }

  /**
   * `ex` settled (`clean`: its response arrived whole): its slot is free; the gate's next exchange
   * goes unless `pumpNext` is false (the fetcher is closed).
   */
  ended(ex: Exchange, clean: boolean, pumpNext: boolean): void {
    const gate = ex.gate;
    if (gate === null) return;
    if (ex.dispatched) {
      ex.dispatched = false;
      gate.running--;
      if (this.share !== null) {
        // A cut exchange's socket is closed by undici in this turn of the event loop (its close
        // phase), which may come after other threads have looked at the shared slot: it is given
        // back on the next turn, so no other thread writes to the IP while the server is still
        // sending on the old connection.
        const share = this.share;
        const ip = gate.ip;
        if (clean) share.release(ip);
        else setTimeout(() => share.release(ip), 0);
      }
    }
    if (pumpNext) this.pump(gate);
    this.prune();
  }

  /** Drop idle gates and host stamps older than the spacing (bounded RAM, see IpGate). */
  private prune(): void {
    const now = performance.now();
    if (now - this.lastPrune < 10_000) return;
    this.lastPrune = now;
    for (const [ip, g] of this.gates) {
      if (g.running === 0 && g.queue.length === 0 && g.timer === null && g.lastStart + Math.max(this.ipGap, g.lastGap) < now) this.gates.delete(ip);
    }
    // A host's next request may ask for a longer gap than its last one did (a backoff grew): the
    // frontier counts it from the actual send (FrontierUrl.hostGapMs, FetchOutcome.lateMs).
    for (const [h, s] of this.hostLastStart) if (s.t + Math.max(this.hostGap, s.gap) < now) this.hostLastStart.delete(h);
  }

  /** Exchanges waiting at a gate (not settled) and the gates kept. */
  stats(): { gated: number; gates: number } {
    let gated = 0;
    for (const g of this.gates.values()) for (const q of g.queue) if (!q.ex.settled) gated++;
    return { gated, gates: this.gates.size };
  }

  /** Stop every gate's timer (the fetcher is closing). */
  stopTimers(): void {
    for (const g of this.gates.values()) if (g.timer !== null) { clearTimeout(g.timer); g.timer = null; }
  }
}
