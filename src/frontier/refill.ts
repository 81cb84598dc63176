/**
 * The frontier's refill (thesis VII.1–VII.2): URLs move from disk into RAM — QR once robots answers
 * have come in (the QR rescan), then BEAST's current queue — through the robots gate, only as fast
 * as they are crawled (the pacing low-water mark, wanted(): VII.2's "read Q_i as fast as it is
 * crawled"), with the breadth step when the work in RAM sits on too few IPs, and the waits after a
 * fruitless wrap of BEAST's ring. frontier.ts (Frontier) builds on it: admissions, the robots side
 * loop, release, durability.
 */
import type { Beast, BeastStore } from './beast/index.js';
import { AddResult, Politeness, pldSlot, type PolitenessOptions } from './politeness/index.js';
import type { QueueStore, UrlQueue } from './queue.js';
import { decodeFrontierUrl, peekFrontierUrl } from './record.js';
import { CrawlError } from '../errors.js';
import type { Clock, FrontierOptions } from './options.js';

/** Cap of the completions a fruitless ring round waits for (≈ 1 s of crawl at 1,000 pages/s). */
const WRAP_WAIT_MAX = 1024;
/** …or this long (ms): admissions that came meanwhile (e.g. new hosts) wait no longer. */
const WRAP_WAIT_MS = 500;
/** Longest wait (ms) of a robots answer for its URLs in QR while other answers are outstanding. */
const QR_RESCAN_MS = 250;
/**
 * A QR rescan reads all of QR, so its cost grows with QR while the work it serves — the robots
 * answers since the last one — does not: over 10^7 hosts QR held 500,000 URLs of hosts still
 * waiting, and a pass every 256 answers (~1 s) took most of the main thread. A pass therefore
 * starts only once the answers since the last one, at QR_READS_PER_ANSWER records each, plus the
 * time since it, at QR_READS_PER_SECOND, pay for reading QR whole: rescans read at most that many
 * records per answer and per second (amortized), whatever QR's length, while the crawl has other
 * work. In IRLbot's terms (thesis IV.3, Fig. 2) QR is a delay queue each URL goes through about
 * once; here a URL waits in QR at most |QR| / QR_READS_PER_SECOND s past its answer (≈ 2 min at
 * 500,000 URLs), and the crawl fetches BEAST's URLs of known hosts meanwhile. A crawl with too
 * little other work (starving(): it waits on QR) and no answer outstanding rescans as often as half
 * its time allows (rescanPaid).
 */
const QR_READS_PER_ANSWER = 64;
const QR_READS_PER_SECOND = 4096;
/** Least time (ms) between QR passes while the last changed nothing and nothing has changed since (rescanPaid). */
const FRUITLESS_RESCAN_MS = 10_000;

export abstract class FrontierRefill {
  protected readonly pol: Politeness;
  protected readonly opts: PolitenessOptions;
  protected qr!: UrlQueue;
  protected beast!: Beast;
  protected refilling: Promise<number> | null = null;
  /** A commit waits for the refill under way: its QR rescan stops at the next batch (wantCommit). */
  protected commitWanted = false;
  protected answersSinceRescan = 0;
  protected lastRescanAt = -Infinity;
  /** Time (ms, the frontier's clock) the last QR rescan took. */
  protected lastRescanMs = 0;
  protected qrRescans = 0;
  /** Records read by all QR rescans (the cost QR_READS_PER_ANSWER / _PER_SECOND bound). */
  protected qrRescanReads = 0;
  protected readonly refillBatch: number;
  protected readonly maxQr: number;
  protected readonly qrRescanAnswers: number;
  protected readonly qrIdleRescanMs: number;
  protected readonly horizonMs: number;
  protected readonly minReady: number;
  protected readonly minBusyIps: number;
  protected readonly busyIpShare: number;
  /** Page release rate (per s, EWMA over windows of max(1 s, W/5) of the frontier's clock). */
  protected rate = 0;
  protected rateAt = -1;
  protected rateReleased = 0;
  protected closed = false;
  protected readonly peek = new Float64Array(7);

  protected constructor(
    protected readonly store: QueueStore,
    protected readonly beastStore: BeastStore,
    opts: PolitenessOptions,
    protected readonly clock: Clock,
    protected readonly extra: FrontierOptions,
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
    // QR's rotation, for the host table's hold on answered hosts (host-table.ts answeredNow).
    this.pol.qrMark = () => this.qrRescanReads + this.qr.length;
  }

  get options(): Readonly<PolitenessOptions> {
    return this.opts;
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
  protected wanted(): number {
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
    const lowWater = this.lowWater();
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
  protected breadthStep = false;
  /** No breadth step before this time (clock): the last one brought no breadth. */
  protected breadthQuietUntil = -Infinity;

  /**
   * After a breadth step: did it bring at least one IP's worth of work for the horizon (in fetches,
   * W / fetch time; URLs parked in QR count one fetch each)? If not — e.g. the next queue held only
   * a spam farm's B URLs, one per host, crawled at once — breadth steps pause for W/5, so that they
   * cannot turn into reading the ring as fast as a farm's hosts take their URLs (farm share,
   * test/frontier/pacing.test.ts).
   */
  protected breadthFruit(before: number): void {
    const gained = this.pol.dispatchable(this.clock()) + this.qr.length - before;
    const perIp = this.horizonMs / Math.max(1, this.pol.meanFetchMs);
    if (gained < perIp) this.breadthQuietUntil = this.clock() + this.horizonMs / 5;
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

  protected async refillRun(): Promise<number> {
    let added = 0;
    const pol = this.pol;
    const now = this.clock();
    const starving = this.qr.length > 0 && pol.ramFree > 0 && !this.commitWanted && this.starving(now);
    const outstanding = pol.pendingRobots + this.takenOutstanding;
    if (this.passLeft > 0 && this.qr.length > 0 && pol.ramFree > 0 && !this.commitWanted) {
      // The pass a full RAM stopped goes on where it stopped, on the answers that paid for it.
      added += await this.rescanQr(true);
    } else if (this.qr.length > 0 && pol.ramFree > 0 && !this.commitWanted && this.rescanPaid(now, starving, outstanding)) {
      // Re-read QR after enough robots answers, once all outstanding ones are in, or — when BEAST
      // has nothing left and nobody is asked — periodically (hosts that found the table full).
      if (
        this.answersSinceRescan >= this.qrRescanAnswers ||
        (outstanding === 0 && this.answersSinceRescan > 0) ||
        // …or once an answer has waited QR_RESCAN_MS: a farm's hosts, paced to one robots.txt
        // fetch per τh, keep answers outstanding and slow to reach qrRescanAnswers, and the real
        // web's URLs would wait in QR meanwhile.
        (this.answersSinceRescan > 0 && now - this.lastRescanAt >= QR_RESCAN_MS) ||
        // …and, with no answer outstanding to trigger one, while BEAST is empty or the crawl waits
        // on QR (starving): a rescan is then what lets idle hosts leave the host table and QR's
        // hosts in (and asks for their robots). BEAST is not read while QR holds more than maxQr
        // URLs, so without it a crawl whose table holds only idle hosts would wait for ever.
        (outstanding === 0 && (this.beast.length === 0 || starving) && now - this.lastRescanAt >= this.qrIdleRescanMs)
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

  /** The last whole QR pass changed nothing (rescanQrPass). */
  protected fruitless = false;
  /** Hosts handed out by takeRobotsRequests and not answered yet. */
  protected takenOutstanding = 0;
  protected deferredByGate = 0;
  /** A refill read QF (re-spread); the next one waits for a fetch to finish (see refillRun). */
  protected respreadWait = false;
  protected doneSinceStarved = 0;
  /** Completions the wait lasts (1, or a quarter of RAM after a fruitless round). */
  protected waitDone = 1;
  protected starvedAt = 0;
  /** URLs the gate put into RAM or QR (progress), and its value / the records read at the last wrap. */
  protected fruit = 0;
  protected fruitAtWrap = 0;
  protected readAtWrap = 0;

  /**
   * The robots gate on encoded records: a URL whose host is already full in RAM goes back to BEAST
   * (QH) and one parked for robots goes to QR as the same bytes, without a decode/encode round
   * trip (that churn was 1.76 s of main-thread CPU in the e2e profile, docs/performance.md).
   */
  protected gate(recs: Uint8Array[]): number {
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
      // Its host waits for its answer, or is unknown and the table has no room: QR, undecoded.
      if (pol.hostWaiting(pk[0]!, pk[1]!) || !pol.hostRoom(pk[0]!, pk[1]!, now)) {
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
  protected lowSlot(pk: Float64Array): number {
    if (pk[4]! > this.opts.b0 || !this.pol.ranksPlds) return -1;
    const slot = pldSlot(pk[2]!, pk[3]!);
    return this.pol.isRankedPld(slot, pk[2]!, pk[3]!) ? -1 : slot;
  }

  /**
   * May a QR rescan start now? Only when the answers and the time since the last one pay for
   * reading QR whole (QR_READS_PER_ANSWER, QR_READS_PER_SECOND), and at most 1/9 of the time is
   * spent rescanning (the last pass's duration, lastRescanMs); a starving crawl (below) is not held to the
   * ninth, and one with no answer outstanding may spend half its time rescanning.
   */
  protected rescanPaid(now: number, starving: boolean, outstanding: number): boolean {
    const since = now - this.lastRescanAt;
    // After a fruitless pass (nothing left QR, no host asked, no room in the table), while no answer
    // has come and the table still has no room, the next pass waits FRUITLESS_RESCAN_MS (and 8× the
    // last pass): passes every second over 577,000 URLs of hosts that could not enter the table
    // took 85–93 % of the main thread for 200 s, which held a URLseen merge (whose answers the main
    // thread admits) and so the dispatch (bench/results/soak-512m-1e7-30min-1eb5b68.json). Not
    // longer: a pass is also what lets go of answered hosts held for their URLs in QR (answeredNow).
    if (this.fruitless && this.answersSinceRescan === 0 && !this.pol.tableRoom(now)) {
      return since >= Math.max(FRUITLESS_RESCAN_MS, 8 * this.lastRescanMs);
    }
    // The crawl waits on QR (starving) with no answer outstanding: nothing but a rescan can move it
    // on, so it may take half the time. Starving with answers outstanding, it is not held to the
    // ninth (that would only make it wait longer) but still paid for by answers and time: rescans
    // as often as half the time allows kept the main thread 60–77 % busy after a resume over 10^7
    // hosts without feeding the crawl faster (bench:soak, bench/results/soak-512m-1e7-30min-bce20b4.json).
    if (starving && outstanding === 0) return since >= this.lastRescanMs;
    if (!starving && since < 8 * this.lastRescanMs) return false;
    return this.answersSinceRescan * QR_READS_PER_ANSWER + (since / 1000) * QR_READS_PER_SECOND >= this.qr.length;
  }

  /**
   * The work RAM can hand out within the horizon is below the low-water mark (wanted()'s) and BEAST
   * cannot make it up: it is empty, or QR holds more than maxQr URLs (BEAST is then not read).
   */
  protected starving(now: number): boolean {
    if (this.beast.length > 0 && this.qr.length < this.maxQr) return false;
    return this.pol.dispatchable(now) < this.lowWater();
  }

  /** Half the recent page release rate × the horizon, at least minReadyUrls (wanted()'s mark). */
  protected lowWater(): number {
    return Math.max(this.minReady, (this.rate * this.horizonMs) / 2000);
  }

  /**
   * A commit is about to wait for the refill under way: a QR rescan stops at its next batch (the
   * URLs it has not read stay in QR, in order), so that the commit — which holds the crawler's
   * scheduler until its snapshot — does not wait for a pass over all of QR (2.5 s seen at 577,000
   * URLs). Cleared when the commit has taken its snapshot.
   */
  wantCommit(): void {
    this.commitWanted = true;
  }

  /** One pass over QR (its length at the start), stopping early when RAM is full or a commit waits. */
  protected async rescanQr(cont = false): Promise<number> {
    // On the frontier's clock, as the time since the last pass is: a simulation's passes take no
    // simulated time, so its rescans do not depend on the speed of the machine running it. The
    // pauses between its batches are not the pass's time: the crawler's other work runs in them
    // (FrontierOptions.pause). Counted, a pass over 577,000 URLs took ~25 s of the clock under load,
    // the next waited 8 × that, and the hosts answered meanwhile, held for their URLs in QR, filled
    // the host table (bench:soak at 10^7 hosts, --ram 512M).
    const t0 = this.clock();
    this.pausedMs = 0;
    try {
      return await this.rescanQrPass(cont);
    } finally {
      this.lastRescanMs = (cont ? this.lastRescanMs : 0) + this.clock() - t0 - this.pausedMs;
    }
  }

  /** Time the pass under way has spent in the caller's pauses (rescanQr). */
  private pausedMs = 0;

  /**
   * Records of the pass under way still to read: a full RAM stopped it. It goes on as RAM frees
   * (refillRun), not at the next paid pass: stopped, it had spent the answers that paid for it, and
   * the answered hosts held for their URLs beyond the stop (answeredNow) kept the host table full
   * until time paid for a whole new pass — 25,000 of 26,800 hosts held, no host asked and RAM
   * draining, after a resume over 10^7 hosts (docs/performance.md, the partial run on caf3410).
   */
  protected passLeft = 0;

  protected async rescanQrPass(cont: boolean): Promise<number> {
    const answers = cont ? 0 : this.answersSinceRescan;
    if (!cont) {
      this.answersSinceRescan = 0;
      this.qrRescans++;
      this.lastRescanAt = this.clock();
    }
    let left = cont ? Math.min(this.passLeft, this.qr.length) : this.qr.length;
    this.passLeft = 0;
    const read0 = this.qrRescanReads;
    const asks0 = this.pol.asks;
    let added = 0;
    let back = 0;
    const now = this.clock();
    while (left > 0 && this.pol.ramFree > 0 && !this.commitWanted) {
      const recs = await this.qr.shift(Math.min(left, this.refillBatch));
      if (recs.length === 0) break;
      left -= recs.length;
      this.qrRescanReads += recs.length;
      const pk = this.peek;
      for (const r of recs) {
        peekFrontierUrl(r, pk);
        // Out of QR: a low PLD's URL leaves its count in hand, and is counted again where it goes.
        const slot = this.lowSlot(pk);
        if (slot >= 0) this.pol.leftLow(slot);
        // Its host waits for its answer, or is unknown with no room in the table: back, undecoded
        // (a decode per record of QR made a pass over 577,000 of them cost ~1 s).
        if (this.pol.hostWaiting(pk[0]!, pk[1]!) || !this.pol.hostRoom(pk[0]!, pk[1]!, now)) {
          this.qr.push(r);
          if (slot >= 0) this.pol.tookLow(slot);
          back++;
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
            back++;
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
      // Only now: a host answered with URLs in this batch stays until they have been offered.
      this.pol.qrVisited = this.qrRescanReads;
      if (this.extra.pause !== undefined) {
        const p0 = this.clock();
        await this.extra.pause();
        this.pausedMs += this.clock() - p0;
      }
    }
    // Cut short by a commit: the answers it was started for still wait for a pass over the rest.
    if (left > 0 && this.commitWanted) this.answersSinceRescan += answers;
    else if (left > 0 && this.pol.ramFree <= 0) this.passLeft = left;
    // A whole pass that moved no URL out of QR, asked for no host and left the table without room
    // changed nothing another pass could use (rescanPaid).
    this.fruitless = !cont && left === 0 && back === this.qrRescanReads - read0 && this.pol.asks === asks0 && !this.pol.tableRoom(now);
    return added;
  }

  protected check(): void {
    if (this.closed) throw new CrawlError('CRAWL_FRONTIER_CLOSED', 'frontier is closed');
  }
}
