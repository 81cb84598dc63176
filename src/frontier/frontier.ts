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
import { Beast } from './beast/index.js';
import { openDiskQueueStore } from './beast/index.js';
import { AddResult, Politeness, type FetchOutcome, type PolitenessOptions, type RobotsInfo, type RobotsRequest } from './politeness/index.js';
import { MemoryQueueStore, type QueueStore, type UrlQueue } from './queue.js';
import { pldSlot } from './politeness/index.js';
import { FileBeastStore, MemoryBeastStore, type BeastStore } from './beast/index.js';
import { existsSync } from 'node:fs';
import { decodeFrontierUrl, encodeFrontierUrlView, peekFrontierUrl, type FrontierUrl } from './record.js';
import { CrawlError } from '../errors.js';
import { FRONTIER_META, parseFrontierManifest, type FrontierManifest } from './frontier-manifest.js';
import path from 'node:path';
import { resolveFrontierOptions, validate, type Clock, type FrontierOptions } from './options.js';
import type { FrontierStats } from './frontier-stats.js';

export type { FrontierStats } from './frontier-stats.js';

export { FRONTIER_PRESETS, type Clock, type FrontierOptions, type FrontierPreset } from './options.js';

const META = FRONTIER_META;
/** Cap of the completions a fruitless ring round waits for (≈ 1 s of crawl at 1,000 pages/s). */
const WRAP_WAIT_MAX = 1024;
/** …or this long (ms): admissions that came meanwhile (e.g. new hosts) wait no longer. */
const WRAP_WAIT_MS = 500;
/** Longest wait (ms) of a robots answer for its URLs in QR while other answers are outstanding. */
const QR_RESCAN_MS = 250;

export class Frontier {
  private readonly pol: Politeness;
  private readonly opts: PolitenessOptions;
  private qr!: UrlQueue;
  private beast!: Beast;
  private snapshotName: string | null = null;
  private seq = 0;
  private refilling: Promise<number> | null = null;
  private answersSinceRescan = 0;
  private lastRescanAt = -Infinity;
  /** Wall time (ms) the last QR rescan took. */
  private lastRescanMs = 0;
  private qrRescans = 0;
  private readonly refillBatch: number;
  private readonly maxQr: number;
  private readonly qrRescanAnswers: number;
  private readonly qrIdleRescanMs: number;
  private readonly horizonMs: number;
  private readonly minReady: number;
  private readonly minBusyIps: number;
  private readonly busyIpShare: number;
  /** Page release rate (per s, EWMA over windows of max(1 s, W/5) of the frontier's clock). */
  private rate = 0;
  private rateAt = -1;
  private rateReleased = 0;
  private closed = false;
  private readonly peek = new Float64Array(7);

  private constructor(
    private readonly store: QueueStore,
    private readonly beastStore: BeastStore,
    opts: PolitenessOptions,
    private readonly clock: Clock,
    private readonly extra: FrontierOptions,
  ) {
    this.opts = opts;
    this.pol = new Politeness(opts, extra.onDrop ?? (() => {}));
    this.pol.ipGate = extra.ipGate ?? null;
    this.refillBatch = extra.refillBatch ?? 4096;
    this.maxQr = extra.maxQr ?? 4 * opts.ramUrls;
    this.qrRescanAnswers = extra.qrRescanAnswers ?? 256;
    this.qrIdleRescanMs = extra.qrIdleRescanMs ?? Math.max(1000, opts.minHostDelayMs);
    this.horizonMs = extra.refillHorizonMs ?? 5000;
    this.minReady = extra.minReadyUrls ?? 256;
    this.minBusyIps = extra.minBusyIps ?? 64;
    this.busyIpShare = extra.busyIpShare ?? 0.5;
    if (!(this.minBusyIps >= 0) || !(this.busyIpShare >= 0 && this.busyIpShare <= 1)) {
      throw new CrawlError('CRAWL_FRONTIER_OPTIONS', 'options.minBusyIps must be ≥ 0 and options.busyIpShare in [0, 1]');
    }
    if (this.horizonMs > 0) this.pol.setHorizon(this.horizonMs);
  }

  /**
   * How far below the low-water mark the dispatchable work is: half the recent page release rate
   * × horizon (at least minReadyUrls) minus what RAM and QR hold for that horizon
   * (Politeness.potential counts each host at most W/τh and each IP at most W·conns/τs;
   * Politeness.dispatchable leaves out the PLDs the low-PLD pace holds, whose URLs in hand are
   * bounded instead). > 0 means BEAST may move on to its next queue. Infinity without pacing.
   *
   * Why not "fill RAM": with RAM ≫ backlog every queue of the ring sits in RAM at once, and the
   * heaps (one request per host per τh) then serve PLDs by host count: a farm of thousands of
   * hosts takes most fetches although STAR gave it B URLs per queue (bench:star measured 44 % of
   * pages). Reading the next queue only when the current one is mostly crawled keeps each PLD at
   * ≤ B URLs per crawl period, as in VII.2 (a queue takes T0 = E[B]V/S to crawl). The low-water
   * mark counts only work the heaps can hand out within W, so τh-bound hosts holding many URLs do
   * not stall the crawl, and it is half of rate × W so that work instantly dispatched (many fresh
   * hosts) does not inflate it into a read-everything loop.
   */
  private wanted(): number {
    if (this.horizonMs <= 0) return Infinity;
    const now = this.clock();
    const st = this.pol;
    if (this.rateAt < 0) {
      this.rateAt = now;
      this.rateReleased = st.released;
    } else if (now - this.rateAt >= Math.max(1000, this.horizonMs / 5)) {
      const rel = st.released;
      const inst = ((rel - this.rateReleased) * 1000) / (now - this.rateAt);
      this.rate = this.rate === 0 ? inst : 0.7 * this.rate + 0.3 * inst;
      this.rateAt = now;
      this.rateReleased = rel;
    }
    const lowWater = Math.max(this.minReady, (this.rate * this.horizonMs) / 2000);
    // QR's URLs wait for robots answers, which a paced PLD's hosts get one per τh (pld-pace.ts):
    // QR counts up to half the mark, so that a farm's hosts parked there cannot hold BEAST on its
    // current queue while the real web's URLs wait in the next ones.
    const want = lowWater - st.dispatchable(now) - Math.min(this.qr.length, lowWater / 2);
    this.breadthStep = false;
    if (want > 0 || this.minBusyIps === 0 || now < this.breadthQuietUntil) return want;
    // Breadth: the work in RAM sits on too few IPs, most of them with more work than their
    // connections can do within W (delays ≈ 0, deep hosts). The rate-based mark cannot see it:
    // the rate it measures is the one those few IPs allow.
    const target = Math.min(this.minBusyIps, Math.ceil(this.busyIpShare * st.ipsKnown));
    if (st.ipsWithWork + st.pendingRobots + this.takenOutstanding >= target) return want;
    if (st.ipsSaturated === 0 || 2 * st.ipsSaturated < st.ipsWithWork) return want;
    this.breadthStep = true;
    return 1;
  }

  /** The last wanted() allowed a step only for breadth (see breadthFruit). */
  private breadthStep = false;
  /** No breadth step before this time (clock): the last one brought no breadth. */
  private breadthQuietUntil = -Infinity;

  /**
   * After a breadth step: did it bring at least one IP's worth of work for the horizon (in fetches,
   * W / fetch time; URLs parked in QR count one fetch each)? If not — e.g. the next queue held only
   * a spam farm's B URLs, one per host, crawled at once — breadth steps pause for W/5, so that they
   * cannot turn into reading the ring as fast as a farm's hosts take their URLs (farm share,
   * test/frontier/pacing.test.ts).
   */
  private breadthFruit(before: number): void {
    const gained = this.pol.dispatchable(this.clock()) + this.qr.length - before;
    const perIp = this.horizonMs / Math.max(1, this.pol.meanFetchMs);
    if (gained < perIp) this.breadthQuietUntil = this.clock() + this.horizonMs / 5;
  }

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
    // URLs that were in RAM at the last checkpoint go back through the robots gate via QR.
    if (this.snapshotName !== null) {
      const snap = await this.store.open(this.snapshotName);
      for (;;) {
        const recs = await snap.shift(4096);
        if (recs.length === 0) break;
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

  get options(): Readonly<PolitenessOptions> {
    return this.opts;
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

  /**
   * Moves URLs from disk (QR once robots answers came, then BEAST's current queue) into RAM until
   * RAM is full, QR is too long, the pacing holds BEAST at its current queue (wanted()), or nothing
   * is left; at most 8 reads per call. Returns the number of URLs that entered RAM.
   * Concurrent calls share one run.
   */
  refill(): Promise<number> {
    this.check();
    if (this.refilling) return this.refilling;
    const run = this.refillRun().finally(() => {
      this.refilling = null;
    });
    this.refilling = run;
    return run;
  }

  private async refillRun(): Promise<number> {
    let added = 0;
    const pol = this.pol;
    if (this.qr.length > 0 && pol.ramFree > 0) {
      const outstanding = pol.pendingRobots + this.takenOutstanding;
      const now = this.clock();
      // Re-read QR after enough robots answers, once all outstanding ones are in, or — when BEAST
      // has nothing left and nobody is asked — periodically (hosts that found the table full).
      if (
        this.answersSinceRescan >= this.qrRescanAnswers ||
        (outstanding === 0 && this.answersSinceRescan > 0) ||
        // …or once an answer has waited QR_RESCAN_MS, and at most 1/9 of the time rescanning: a
        // farm's hosts, paced to one robots.txt fetch per τh, keep answers outstanding and slow
        // to reach qrRescanAnswers, and the real web's URLs would wait in QR meanwhile.
        (this.answersSinceRescan > 0 && now - this.lastRescanAt >= Math.max(QR_RESCAN_MS, 8 * this.lastRescanMs)) ||
        (outstanding === 0 && this.beast.length === 0 && now - this.lastRescanAt >= this.qrIdleRescanMs)
      ) {
        added += await this.rescanQr();
      }
    }
    let reads = 0;
    // Bounded work per call: at most a few batches, so that callers stay responsive. After a QF/QH
    // re-spread (VII.2) that moved nothing into the ring — at the end of a crawl QH holds URLs of
    // hosts still full in RAM, which stay there — wait for a fetch to finish before reading
    // again: another pass would only re-read QF/QH. Only while something is in RAM, so that a
    // completion is sure to come. (A batch whose hosts are all full does not stop the refill:
    // those URLs wait in QH, and the rest of the ring is still worth reading — stopping there
    // starves the crawl: one slow host in RAM and 40 k URLs queued, in a bench:e2e trace.)
    //
    // Likewise after a whole round of the ring that put (almost) nothing into RAM or QR: what it
    // held were URLs of hosts full in RAM (QH, re-spread at each wrap), and at delays 0 a fetch
    // finishes every few ms, so "one fetch" would let the same records cycle through the ring at
    // the crawl's pace (20 k records re-read per completion in a simulation with 10 deep hosts).
    // Wait until a quarter of RAM (at most WRAP_WAIT_MAX URLs) has been crawled — their hosts then
    // have room again, and RAM still holds three quarters of its work, so the wait cannot starve —
    // or WRAP_WAIT_MS have passed (new admissions wait in the ring meanwhile).
    if (this.respreadWait && this.doneSinceStarved < this.waitDone && this.clock() - this.starvedAt < WRAP_WAIT_MS && pol.ramFree < this.options.ramUrls) return added;
    this.respreadWait = false;
    while (pol.ramFree > 0 && this.qr.length < this.maxQr && reads < 8) {
      const want = this.wanted();
      const respreads = this.beast.respreadCount;
      // The current queue freely; the next one only below the low-water mark (see wanted()).
      const recs = await this.beast.nextRecords(Math.min(this.refillBatch, pol.ramFree), want === Infinity ? Infinity : want > 0 ? 1 : 0);
      reads++;
      if (recs.length === 0) {
        // Nothing came out although BEAST holds URLs: a fruitless re-spread (see above).
        if (this.beast.respreadCount !== respreads && this.beast.length > 0) {
          this.respreadWait = true;
          this.doneSinceStarved = 0;
          this.waitDone = 1;
          this.starvedAt = this.clock();
        }
        break;
      }
      const fruit0 = this.fruit;
      const breadth = this.breadthStep;
      const before = breadth ? this.pol.dispatchable(this.clock()) + this.qr.length : 0;
      const n = this.gate(recs);
      if (breadth) this.breadthFruit(before);
      added += n;
      if (this.extra.pause !== undefined) await this.extra.pause();
      if (this.beast.respreadCount !== respreads) {
        // A wrap: was the round of the ring since the previous one fruitless?
        const fruitless = fruit0 - this.fruitAtWrap <= (this.readAtWrap >> 6);
        this.fruitAtWrap = fruit0;
        this.readAtWrap = recs.length;
        if (this.beast.lastRespreadMoved === 0 || fruitless) {
          this.respreadWait = true;
          this.doneSinceStarved = 0;
          this.waitDone = Math.max(1, Math.min(WRAP_WAIT_MAX, pol.ramCount >> 2));
          this.starvedAt = this.clock();
          break;
        }
      } else this.readAtWrap += recs.length;
    }
    return added;
  }

  /** Hosts handed out by takeRobotsRequests and not answered yet. */
  private takenOutstanding = 0;
  private deferredByGate = 0;
  /** A refill read QF (re-spread); the next one waits for a fetch to finish (see refillRun). */
  private respreadWait = false;
  private doneSinceStarved = 0;
  /** Completions the wait lasts (1, or a quarter of RAM after a fruitless round). */
  private waitDone = 1;
  private starvedAt = 0;
  /** URLs the gate put into RAM or QR (progress), and its value / the records read at the last wrap. */
  private fruit = 0;
  private fruitAtWrap = 0;
  private readAtWrap = 0;

  /**
   * The robots gate on encoded records: a URL whose host is already full in RAM goes back to BEAST
   * (QH) and one parked for robots goes to QR as the same bytes, without a decode/encode round
   * trip (that churn was 1.76 s of main-thread CPU in the e2e profile, docs/performance.md).
   */
  private gate(recs: Uint8Array[]): number {
    const now = this.clock();
    const pk = this.peek;
    const pol = this.pol;
    let added = 0;
    for (const rec of recs) {
      peekFrontierUrl(rec, pk);
      // A B ≤ B0 URL obeys the low-PLD pace's bound on its PLD's URLs in hand.
      const slot = this.lowSlot(pk);
      if (pol.hostFull(pk[0]!, pk[1]!, now) || (slot >= 0 && !pol.mayTakeLow(slot, now))) {
        this.beast.deferRecord(rec);
        this.deferredByGate++;
        continue;
      }
      if (pol.hostWaiting(pk[0]!, pk[1]!)) {
        this.qr.push(rec);
        if (slot >= 0) pol.tookLow(slot);
        this.fruit++;
        continue;
      }
      const u = decodeFrontierUrl(rec);
      switch (pol.add(u, now)) {
        case AddResult.Added:
          added++;
          if (slot >= 0) pol.tookLow(slot);
          break;
        case AddResult.NeedRobots:
          this.qr.push(rec);
          if (slot >= 0) pol.tookLow(slot);
          this.fruit++;
          break;
        case AddResult.HostFull:
        case AddResult.RamFull:
          this.beast.deferRecord(rec);
          this.deferredByGate++;
          break;
        default:
          break; // dropped (reported through onDrop)
      }
    }
    this.fruit += added;
    return added;
  }

  /** The low-PLD pace's slot of a peeked record with B ≤ B0 whose PLD is not ranked since, in a crawl that ranks PLDs (pld-pace.ts), else -1. */
  private lowSlot(pk: Float64Array): number {
    if (pk[4]! > this.opts.b0 || !this.pol.ranksPlds) return -1;
    const slot = pldSlot(pk[2]!, pk[3]!);
    return this.pol.isRankedPld(slot, pk[2]!, pk[3]!) ? -1 : slot;
  }

  /** One pass over QR (its length at the start), stopping early when RAM is full. */
  private async rescanQr(): Promise<number> {
    const t0 = performance.now();
    try {
      return await this.rescanQrPass();
    } finally {
      this.lastRescanMs = performance.now() - t0;
    }
  }

  private async rescanQrPass(): Promise<number> {
    this.answersSinceRescan = 0;
    this.qrRescans++;
    this.lastRescanAt = this.clock();
    let left = this.qr.length;
    let added = 0;
    const now = this.clock();
    while (left > 0 && this.pol.ramFree > 0) {
      const recs = await this.qr.shift(Math.min(left, this.refillBatch));
      if (recs.length === 0) break;
      left -= recs.length;
      const pk = this.peek;
      for (const r of recs) {
        peekFrontierUrl(r, pk);
        // Out of QR: a low PLD's URL leaves its count in hand, and is counted again where it goes.
        const slot = this.lowSlot(pk);
        if (slot >= 0) this.pol.leftLow(slot);
        if (this.pol.hostWaiting(pk[0]!, pk[1]!)) {
          this.qr.push(r);
          if (slot >= 0) this.pol.tookLow(slot);
          continue;
        }
        const u = decodeFrontierUrl(r);
        switch (this.pol.add(u, now)) {
          case AddResult.Added:
            added++;
            if (slot >= 0) this.pol.tookLow(slot);
            break;
          case AddResult.NeedRobots:
            this.qr.push(r);
            if (slot >= 0) this.pol.tookLow(slot);
            break;
          // Robots known but no room for the host in RAM: QR is only for robots waits, so the URL
          // goes back to BEAST's QH, spread over the ring again at its next wrap.
          case AddResult.HostFull:
          case AddResult.RamFull:
            this.beast.deferRecord(r);
            break;
          default:
            break; // dropped (reported through onDrop)
        }
      }
      if (this.extra.pause !== undefined) await this.extra.pause();
    }
    return added;
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

  /** URLs waiting in RAM of PLDs with B > B0 (Politeness.readyRanked). */
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
   */
  async commit(): Promise<void> {
    this.check();
    if (this.refilling) await this.refilling;
    const name = `snap-${String(++this.seq).padStart(8, '0')}`;
    const snap = await this.store.open(name);
    // A view per URL (push copies it): no ArrayBuffer per URL in RAM (90 k at bench:e2e's end).
    this.pol.forEachInRam((u) => snap.push(encodeFrontierUrlView(u)));
    await snap.commit();
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

  private check(): void {
    if (this.closed) throw new CrawlError('CRAWL_FRONTIER_CLOSED', 'frontier is closed');
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
    };
  }
}
