/**
 * The frontier: BEAST's disk queues → robots gate (QR) → politeness (host heap × IP heap) → fetchers.
 *
 *   admit(urls)      unique URLs carrying STAR's (B, P) → BEAST queue ceil(P/B) ahead, or QF
 *                    (admitRecord: one already encoded, from URLseen's result bytes)
 *   refill()         re-reads QR once robots answers have come in, then reads BEAST's current
 *                    queue up to the free RAM (RAM never holds more than ramUrls: the thesis' "no
 *                    memory backlog", VII.1). BEAST moves on to its next queue only when the work
 *                    in RAM + QR falls below the pacing low-water mark (half the recent release
 *                    rate × refillHorizonMs) or too few IPs have work (minBusyIps) — VII.2's
 *                    "read Q_i as fast as it is crawled". Each URL passes the robots gate: robots
 *                    known → RAM, unknown → QR on disk and the host into QD (once), disallowed →
 *                    dropped('robots'), host full in RAM (or RAM full) → BEAST's QH, which is
 *                    spread over the ring again at its next wrap (beast.ts)
 *   takeRobotsRequests / scheduleRobotsFetch / robotsKnown / robotsFailed   the QD side loop;
 *                    QR is re-read once answers have arrived
 *   nextReady(now)   URLs (and robots.txt fetches) whose host and IP are both due
 *   fetchDone(u, o)  frees the slots, sets the next due times (start to start), backs off errors
 *   commit()         checkpoint: snapshot of the URLs in RAM, then queue cursors (at-least-once)
 *
 * Durability: every URL is, at any moment, in a committed queue, or in RAM and in the last snapshot
 * or in a queue whose read cursor has not been committed since it was read. So a SIGKILL at any
 * point loses no URL admitted before the last `admit` (durable) returned; URLs read since the last
 * checkpoint come back once more (at-least-once), through QR.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Beast } from './beast/index.js';
import { openDiskQueueStore } from './beast/index.js';
import type { FetchOutcome, PolitenessOptions, RobotsInfo, RobotsRequest } from './politeness/index.js';
import { MemoryQueueStore, type QueueStore } from './queue.js';
import { FileBeastStore, MemoryBeastStore, type BeastStore } from './beast/index.js';
import { existsSync } from 'node:fs';
import { encodeFrontierUrlView, type FrontierUrl } from './record.js';
import { CrawlError } from '../errors.js';
import { FRONTIER_META, parseFrontierManifest, type FrontierManifest } from './frontier-manifest.js';
import path from 'node:path';
import { resolveFrontierOptions, validate, type Clock, type FrontierOptions } from './options.js';
import type { FrontierStats } from './frontier-stats.js';
import { FrontierRefill } from './refill.js';

export type { FrontierStats } from './frontier-stats.js';

/**
 * Points inside Frontier.commit a caller may act at. `snapshotTaken` runs synchronously at the
 * instant of the RAM snapshot — in the turn that starts it, so no URL is released, ended or read
 * into RAM between the two (the snapshot holds RAM as it was then, though it is written over the
 * following turns: ram-snapshot.ts); `beforeSwitch` is awaited after the snapshot is durable and before
 * the manifest names it (what must be durable before the old snapshot is dropped).
 */
export interface CommitHooks {
  snapshotTaken?: () => void;
  beforeSwitch?: () => Promise<void>;
}

export { FRONTIER_PRESETS, type Clock, type FrontierOptions, type FrontierPreset } from './options.js';

const META = FRONTIER_META;

/**
 * Slots of the RAM snapshot written per turn of the event loop (~1–2 µs each on this box: a few ms
 * a turn, so fetches and their ends go on between slices).
 */
const SNAPSHOT_SLICE = 4096;

/** The frontier; its refill (QR rescans, BEAST reads under the pacing, wrap waits) is refill.ts. */
export class Frontier extends FrontierRefill {
  private snapshotName: string | null = null;
  private seq = 0;

  /**
   * Opens (or resumes) the frontier in `dir` (null = in RAM, for simulations). `clock` gives "now"
   * for everything except nextReady, which takes the time as an argument.
   */
  static async open(dir: string | null, options: FrontierOptions = {}, clock: Clock = Date.now): Promise<Frontier> {
    const o = resolveFrontierOptions(options);
    const memory = dir === null || options.storage === 'memory';
    let store: QueueStore;
    let beastStore: BeastStore;
    if (memory) {
      store = new MemoryQueueStore();
      beastStore = new MemoryBeastStore();
    } else {
      if (existsSync(path.join(dir!, 'beast', 'beast.json'))) {
        throw new CrawlError(
          'CRAWL_FRONTIER_MANIFEST',
          `${dir}: BEAST state in the old per-queue format (beast/beast.json); this version keeps one combined manifest and cannot resume it`,
        );
      }
      store = openDiskQueueStore(dir!, options.disk);
      beastStore = new FileBeastStore(path.join(dir!, 'beast'), { blockBytes: options.disk?.blockBytes, compression: options.disk?.compression });
    }
    const f = new Frontier(store, beastStore, o, clock, options);
    await f.load();
    return f;
  }

  private async load(): Promise<void> {
    this.beast = await Beast.open(this.beastStore, {
      hostFull: (hi, lo) => this.pol.hostFull(hi, lo, this.clock()),
      now: this.clock,
      ...(this.extra.pause !== undefined ? { pause: this.extra.pause } : {}),
      ...this.extra.beast,
    });
    this.qr = await this.store.open('qr');
    const text = await this.store.readMeta(META);
    if (text !== null) {
      const m = parseFrontierManifest(text);
      this.seq = m.seq;
      this.snapshotName = m.snapshot;
    }
    // URLs that were in RAM at the last checkpoint go back through the robots gate via QR, ahead
    // of QR's own: their hosts had robots answers (RobotsCache hits, their addresses in the DNS
    // cache's saved copy, src/dns/dns-file.ts), while QR's mostly wait for robots.txt fetches. Read
    // first, the first QR pass asks for the quick answers first. Behind QR's URLs, those hosts
    // waited for QR's ~40,000 slow ones and for their DNS lookups (which also pushed the saved
    // answers out of the cache): RAM stayed empty ~10 s after a kill over 10^7 hosts (bench:soak).
    if (this.snapshotName !== null) {
      const snap = await this.store.open(this.snapshotName);
      const queued = this.qr.length;
      for (;;) {
        const recs = await snap.shift(4096);
        if (recs.length === 0) break;
        for (const r of recs) this.qr.push(r);
      }
      // QR's own URLs move behind them: shifted from the head and pushed again (one commit).
      for (let left = queued; left > 0; ) {
        const recs = await this.qr.shift(Math.min(left, 4096));
        if (recs.length === 0) break;
        left -= recs.length;
        for (const r of recs) this.qr.push(r);
      }
      await this.qr.commit();
      const old = this.snapshotName;
      this.snapshotName = null;
      await this.writeManifest();
      await this.store.remove(old);
    }
    const keep = new Set(['qr']);
    for (const n of await this.store.list()) if (!keep.has(n)) await this.store.remove(n);
    // QR's URLs wait for robots answers that this process has not asked for (its robots gate starts
    // empty): the first refill rescans QR, which asks for them. Without it a resumed frontier whose
    // current BEAST queue is drained and whose QR exceeds the low-water mark hands out nothing.
    if (this.qr.length > 0) this.answersSinceRescan = this.qrRescanAnswers;
  }

  private async writeManifest(): Promise<void> {
    const m: FrontierManifest = { version: 1, snapshot: this.snapshotName, seq: this.seq };
    await this.store.writeMeta(META, JSON.stringify(m));
  }

  /**
   * Changes delays / connection limits of a running crawl. Hosts and IPs already waiting get their
   * due times recomputed from their last request start (Retry-After deadlines and the floors still
   * hold), so the change takes effect at once, in both directions. RAM caps are fixed at open.
   */
  setDelays(d: Partial<Pick<PolitenessOptions, 'hostDelayMs' | 'minHostDelayMs' | 'ipDelayMs' | 'minIpDelayMs' | 'maxConnectionsPerIp' | 'maxCrawlDelayMs' | 'crawlDelayMarginMs' | 'maxBackoffMs'>>): void {
    const next = { ...this.opts, ...Object.fromEntries(Object.entries(d).filter(([, v]) => v !== undefined)) };
    validate(next);
    Object.assign(this.opts, next); // Politeness holds the same object
    this.pol.delaysChanged();
  }

  /** URLs in RAM now (queued per host + in flight); never above options.ramUrls. */
  get ramCount(): number {
    return this.pol.ramCount;
  }


  // ------------------------------------------------------------------ admission

  /**
   * Unique URLs leaving URLseen + STAR (each carries budget B and admitted count P). With
   * `durable` (default) the returned promise resolves once they are on disk, which is what a DRUM
   * `onResults` consumer must wait for.
   */
  async admit(urls: readonly FrontierUrl[], opts: { durable?: boolean } = {}): Promise<void> {
    this.check();
    for (const u of urls) this.beast.place(u);
    if (opts.durable !== false) await this.beast.commitAppends();
  }

  /** admit() of one encoded record with its STAR (B, P), not yet durable (commitAdmits). */
  admitRecord(rec: Uint8Array, budget: number, admitted: number): void {
    this.check();
    this.beast.placeRecord(rec, budget, admitted);
  }

  /**
   * Makes every URL admitted so far (also `{ durable: false }`) durable: an fdatasync per touched BEAST
   * queue file and one for its manifest, on the libuv pool; once per URLseen merge, before DRUM commits
   * it; safe at any time (chained). A `mark`: after a crash, admitMark ≥ mark iff this commit landed.
   */
  commitAdmits(mark?: number): Promise<void> {
    this.check();
    return this.beast.commitAppends(mark);
  }

  get admitMark(): number { return this.beast.committedMark; } // see commitAdmits

  /** URLs that had left the frontier (e.g. in flight at a crash): back through the robots gate. */
  async readmit(urls: readonly FrontierUrl[]): Promise<void> {
    this.check();
    for (const u of urls) this.qr.push(encodeFrontierUrlView(u));
  }

  // ------------------------------------------------------------------ robots gate (QD)

  /** Hosts whose DNS + robots.txt the pipeline must provide; each host is handed out once. */
  takeRobotsRequests(max: number): RobotsRequest[] {
    const r = this.pol.takeRobotsRequests(max);
    this.takenOutstanding += r.length;
    return r;
  }

  /**
   * After DNS: the robots.txt fetch of `host` at `ip` is released by nextReady as a
   * UrlKind.Robots item (obeying the IP heap only). Answer with robotsKnown/robotsFailed, and
   * fetchDone(item) to free the IP slot.
   */
  scheduleRobotsFetch(hostHi: number, hostLo: number, ip: string): boolean {
    return this.pol.scheduleRobotsFetch(hostHi, hostLo, ip, this.clock());
  }

  /** The host's robots rules + IP (from a robots.txt fetch): its URLs may enter RAM. */
  robotsKnown(hostHi: number, hostLo: number, info: RobotsInfo): void {
    this.pol.robotsKnown(hostHi, hostLo, info, this.clock());
    this.answered();
  }

  /** DNS failure or robots unavailable: the host's URLs are dropped with `reason` until the TTL. */
  robotsFailed(hostHi: number, hostLo: number, reason: string): void {
    this.pol.robotsFailed(hostHi, hostLo, reason, this.clock());
    this.answered();
  }

  private answered(): void {
    this.answersSinceRescan++;
    if (this.takenOutstanding > 0) this.takenOutstanding--;
  }

  // ------------------------------------------------------------------ release

  /**
   * Up to `max` items whose host and IP are both due at `now`: pages (kind 0) and robots.txt
   * fetches (kind 1), each with `ip` set. Synchronous and allocation-free when `out` is given.
   */
  nextReady(now: number, max: number, out?: FrontierUrl[]): FrontierUrl[] {
    const arr = out ?? [];
    const n = this.pol.nextReady(now, max, arr);
    arr.length = n;
    return arr;
  }

  /** Same as nextReady but fills `out` from index 0 and returns the count (hot path). */
  nextReadyInto(now: number, max: number, out: FrontierUrl[]): number {
    return this.pol.nextReady(now, max, out);
  }

  /** A released item's fetch finished (see FetchOutcome). */
  fetchDone(u: FrontierUrl, outcome?: FetchOutcome): void {
    this.doneSinceStarved++;
    this.pol.fetchDone(u, outcome, this.clock());
  }

  /** PLDs STAR promoted through links (Star.takePromoted): their URLs in the frontier count as trusted. */
  trustPromoted(keys: Uint32Array): void {
    this.pol.trustPromoted(keys);
  }

  /** Hosts with URLs waiting in RAM, of PLDs with B > B0 once any is seen: the fetch slots RAM can fill (Politeness.readyRanked). */
  readyRanked(): number {
    return this.pol.readyRanked();
  }

  /** When the next item may become due (null = nothing waits in RAM; call refill). */
  nextWakeup(): number | null {
    return this.pol.nextWakeup();
  }

  /** Nothing anywhere: BEAST, QR, RAM, robots requests. */
  isEmpty(): boolean {
    const s = this.pol.stats();
    return this.beast.length === 0 && this.qr.length === 0 && s.ramUrls === 0 && s.inFlightRobots === 0 && s.pendingRobots === 0;
  }

  // ------------------------------------------------------------------ durability

  /**
   * Checkpoint: (1) the URLs in RAM (queued or in flight) go to a new snapshot queue, committed,
   * named by the manifest; (2) QR, then BEAST commit their read cursors (BEAST swaps drained
   * queues for fresh files); (3) the previous snapshot is deleted. A crash at any point leaves every URL in a committed queue or the named snapshot.
   * Nothing may be read into RAM between the snapshot and (2) (the crawler's frontier port runs its
   * refills one at a time with this commit); releases and fetch ends may go on from snapshotTaken.
   */
  async commit(hooks: CommitHooks = {}): Promise<void> {
    this.check();
    this.commitWanted = true;
    if (this.refilling) await this.refilling;
    this.commitWanted = false;
    const name = `snap-${String(++this.seq).padStart(8, '0')}`;
    const snap = await this.store.open(name);
    // The URLs in RAM at this instant, written copy-on-free over the next turns while releases and
    // fetch ends go on (ram-snapshot.ts); nothing is read into RAM until the commit ends. A view per
    // URL (push copies it): no ArrayBuffer per URL in RAM (90 k at bench:e2e's end).
    const taking = this.pol.beginSnapshot((u) => snap.push(encodeFrontierUrlView(u)));
    try {
      hooks.snapshotTaken?.();
      while (!taking.step(SNAPSHOT_SLICE)) await nextTurn();
    } finally {
      this.pol.endSnapshot();
    }
    await snap.commit();
    await hooks.beforeSwitch?.();
    const old = this.snapshotName;
    this.snapshotName = name;
    await this.writeManifest();
    this.store.release(name);
    // Deferrals (BEAST's QN/QV) before QR: URLs moved from QR to BEAST must be durable there
    // before QR's cursor moves (beast.ts, commitDeferred).
    await this.beast.commitDeferred();
    // QR before BEAST: URLs moved from a BEAST queue to QR must be durable in QR before that
    // queue's cursor moves (or the queue is deleted).
    await this.qr.commit();
    await this.beast.checkpoint();
    if (old !== null) await this.store.remove(old);
  }

  async close(opts: { commit?: boolean } = {}): Promise<void> {
    if (this.closed) return;
    if (opts.commit !== false) await this.commit();
    this.closed = true;
    await this.beast.close();
    await this.qr.close();
  }


  /** Bytes read/written by BEAST's queues, and by QR + snapshots. */
  io(): { beast: { bytesRead: number; bytesWritten: number }; other: { bytesRead: number; bytesWritten: number } } {
    return { beast: this.beastStore.io(), other: this.store.io() };
  }

  stats(): FrontierStats {
    const b = this.beast.stats();
    const p = this.pol.stats();
    return {
      j: b.j,
      current: b.current,
      switches: b.switches,
      doublings: b.doublings,
      beastQueued: b.queued,
      qf: b.qf + b.qh,
      qh: b.qh,
      qr: this.qr.length,
      ramUrls: p.ramUrls,
      ramCap: this.opts.ramUrls,
      ramUrlBytes: this.pol.urlBytes,
      ramUrlBytesCap: this.opts.maxUrlBytes ?? Infinity,
      hostBytes: this.pol.hostBytes,
      hostBytesCap: this.opts.maxHostBytes ?? Infinity,
      hostCap: this.opts.maxHosts,
      inFlight: p.inFlight,
      hosts: p.hosts,
      ips: p.ips,
      ipsWithWork: this.pol.ipsWithWork,
      hostHeap: p.hostHeap,
      ipHeap: p.ipHeap,
      pendingRobots: p.pendingRobots,
      admitted: b.admitted,
      released: p.released,
      robotsReleased: p.robotsReleased,
      deferred: b.deferred,
      dropped: Object.fromEntries(this.pol.drops),
      qrRescans: this.qrRescans,
      qrRescanReads: this.qrRescanReads,
      qrFruitless: this.fruitless,
      qrPassMs: Math.round(this.lastRescanMs),
      robotsOutstanding: this.takenOutstanding,
      hostStates: this.pol.hostStates(this.clock()),
    };
  }
}
