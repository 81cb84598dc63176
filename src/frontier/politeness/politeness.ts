/**
 * Politeness (thesis VII.1): the URLs the frontier holds in RAM, a host heap enforcing τh and an
 * IP heap enforcing τs. A URL is released only when both its host and its server are due.
 *
 *   host heap  hosts with URLs in RAM, robots known, nothing in flight; key = next time the host may
 *              be contacted = start of its previous request + τh (start to start).
 *   due list   per IP, a FIFO of hosts whose time has come (moved there from the host heap).
 *   IP heap    IPs with a due host or a robots fetch waiting and a free connection slot;
 *              key = start of the IP's previous request + τs.
 *
 * τh = τh_default · B0/B clamped to [τh0, τh_default] (low-ranked PLDs get the full delay); τs the
 * same with the average budget of the hosts known on that IP. Crawl-delay (capped at
 * maxCrawlDelayMs) and Retry-After can only lengthen a wait; consecutive host errors multiply the
 * delay (2^errors, capped at maxBackoffMs) and after maxHostErrors the host's URLs are dropped. The
 * floors τh0 and τs0 are applied last, so nothing can undercut them. Robots.txt fetches go through
 * the IP heap only (the host has no URL in RAM while its robots is unknown).
 *
 * Invariants: a host is in at most one of {host heap, an IP's due list, in flight}; ≤ 1 request in
 * flight per host and ≤ maxConnectionsPerIp per IP; a host is contacted at start times ≥ previous
 * start + τh0, an IP at ≥ previous start + τs0 (asserted by test/frontier simulations).
 *
 * The layer is one object built in four files, each adding one concept to the one below:
 *   host-table.ts   the host, IP and URL-slab tables and the two heaps (RAM bounds stated there)
 *   pacing.ts       τh / τs per host and IP, and the dispatch potential that paces the refill
 *   robots-gate.ts  admission and the robots/DNS state machine (QD, QR)
 *   politeness.ts   release (nextReady) and the end of a fetch (fetchDone)
 * and, held by the host table, the low-PLD pace (pld-pace.ts: a PLD with B ≤ B0 released as one
 * host while another PLD crawls, an untrusted one slower while trusted PLDs crawl), which release
 * consults and the refill's work measure obeys.
 */
import { pldSlot } from './pld-pace.js';
import { UrlKind, type FrontierUrl } from '../record.js';
import { H_FAILED, H_FREE, H_PENDING, H_READY, H_ROBOTS, H_TAKEN, W_DUE, W_FLIGHT, W_HEAP, W_NONE } from './host-table.js';
import { RobotsGate } from './robots-gate.js';
import { RamSnapshot } from './ram-snapshot.js';

export type { PolitenessOptions, DropReason, RobotsRulesLike } from './host-table.js';
export { HOST_ENTRY_BYTES, stringRamBytes } from './host-table.js';
export { AddResult, type RobotsInfo, type RobotsRequest } from './robots-gate.js';

/** What `fetchDone` needs to know about a fetch (all optional: {} = a normal success). */
export interface FetchOutcome {
  /** The host misbehaved (timeout, reset, 5xx, 429): back it off; a success resets the count. */
  hostError?: boolean;
  /** Fetch this URL again later (it goes back to its host's queue, attempts + 1). */
  retry?: boolean;
  /** Retry-After (429/503), ms: the host is not contacted again before now + this. */
  retryAfterMs?: number;
  /** Crawl-delay learned now, ms. */
  crawlDelayMs?: number;
  /**
   * How much later than its release the request actually went out (ms, ≥ 0: the last-step guard or
   * the wire gate held it, or the event loop was late): the host's start moves by it, so its next
   * due time counts from the actual send and no gap on the wire is shorter than the host's delay.
   */
  lateMs?: number;
  /** Drop the URL with this reason code instead (e.g. a permanent error); counted in stats. */
  drop?: string;
}

/**
 * A gate on IPs that other crawls also contact (the partitions of a cluster node, and other nodes:
 * src/cluster): when a request to an IP due here may start, and which of them are in flight. The
 * heaps consult it each time an IP comes due, so an IP the gate holds waits in the IP heap (no
 * request is released early and held elsewhere). Absent, the heaps alone decide.
 */
export interface IpGate {
  /** The earliest time ≥ now (ms, the frontier's clock) a request to `ip` may start; ≤ now: at once. */
  earliest(ip: string, now: number): number;
  /** A request to `ip` was released at `now`. */
  released(ip: string, now: number): void;
  /** A request released to `ip` ended. */
  finished(ip: string): void;
}

export class Politeness extends RobotsGate {
  /** The gate shared with other crawls (see IpGate), or null. */
  ipGate: IpGate | null = null;

  /**
   * `potential` without the part of PLDs the low-PLD pace holds (pld-pace.ts): the refill's measure
   * of the work on hand (frontier.ts, wanted()).
   */
  dispatchable(now: number): number {
    return this.pace.dispatchable(this.potential, now);
  }

  /**
   * The bound on a paced low PLD's URLs in RAM + QR (pld-pace.ts): whether one more of the PLD in
   * `slot` may come in now (tookLow when it did; freeSlot and the QR rescan count them out).
   */
  mayTakeLow(slot: number, now: number): boolean {
    return this.pace.mayTake(slot, now);
  }

  /** Whether the crawl ranks PLDs (a URL with B > B0 was taken in): before, nothing is paced per PLD. */
  get ranksPlds(): boolean {
    return this.pace.ranked;
  }

  /** Whether the PLD (hi, lo) in pace slot `slot` has had a URL with B > B0 taken in (pld-pace.ts). */
  isRankedPld(slot: number, hi: number, lo: number): boolean {
    return this.pace.isRanked(slot, hi, lo);
  }

  /** PLDs STAR promoted through links (packed [hi, lo]*): their URLs already in the frontier count as trusted. */
  trustPromoted(keys: Uint32Array): void {
    for (let i = 0; i + 1 < keys.length; i += 2) this.pace.promoted(pldSlot(keys[i]!, keys[i + 1]!), keys[i]!, keys[i + 1]!);
  }

  tookLow(slot: number): void {
    this.pace.took(slot);
  }

  leftLow(slot: number): void {
    this.pace.left(slot);
  }

  /** Releases the low-PLD pace held back (stats). */
  get pldPaced(): number {
    return this.pace.held;
  }

  protected override setPot(h: number, v: number): void {
    // Counted once the crawl ranks PLDs (before, nothing is paced and nothing was flagged).
    if (!this.pace.ranked && this.hPotLow[h] === 0) return super.setPot(h, v);
    const old = this.hPot[h]!;
    super.setPot(h, v);
    // The host's potential counts as low while it was counted so (hPotLow), whatever hLow says now.
    const had = this.hPotLow[h]! === 1;
    const want = v > 0 && this.hLow[h] === 1;
    if (!had && !want) return;
    this.pace.potChanged(had ? old : 0, want ? v : 0);
    this.hPotLow[h] = want ? 1 : 0;
  }

  override delaysChanged(): void {
    this.pace.setHorizonFetches(this.rateOf(Math.max(this.o.hostDelayMs, this.o.minHostDelayMs)));
    super.delaysChanged();
  }

  /** 0: host h may go now; else the time its low PLD may release next (pld-pace.ts). */
  private pldHold(h: number, now: number, page: boolean): number {
    const p = this.hPldSlot[h]!;
    if (p < 0 || !this.pace.ranked) return 0;
    // A PLD ranked or trusted since the URL that set the host's class came in (URLs STAR budgeted
    // before carry B0 and the in-degree of then): its class from now on.
    const hi = this.hPldHi[h]!;
    const lo = this.hPldLo[h]!;
    if (this.hLow[h] === 1 && this.pace.isRanked(p, hi, lo)) this.hLow[h] = 0;
    if (this.hLow[h] === 0) return 0;
    if (this.hUntrusted[h] === 1 && this.pace.isTrusted(p, hi, lo)) this.hUntrusted[h] = 0;
    return this.pace.hold(p, now, this.hUntrusted[h] === 1, page);
  }

  private pldReleased(h: number, now: number, page: boolean): void {
    const p = this.hPldSlot[h]!;
    if (p < 0 || !this.pace.ranked) return;
    const untrusted = this.hLow[h] === 1 && this.hUntrusted[h] === 1;
    // Invariant (2)'s bookkeeping, only in a crawl that ranks by trust (per page released).
    if (page && this.trustThreshold > 0) this.pace.pageReleased(p, this.hPldHi[h]!, this.hPldLo[h]!, now, !untrusted);
    if (this.hLow[h] === 0) this.pace.active(p, now);
    else this.pace.released(p, now, page, untrusted);
  }

  /**
   * Fills `out` with up to `max` URLs whose host and IP are both due at `now`; returns the count.
   * Each released URL has `ip` set; its host and IP slots stay taken until fetchDone.
   */
  nextReady(now: number, max: number, out: FrontierUrl[]): number {
    const hostHeap = this.hostHeap;
    const ipHeap = this.ipHeap;
    // Hosts whose τh has passed join their IP's due list.
    while (hostHeap.size > 0 && hostHeap.minKey() <= now) {
      const h = hostHeap.pop();
      if (this.hState[h] !== H_READY || this.hCount[h] === 0) {
        this.hWhere[h] = W_NONE;
        continue;
      }
      const i = this.hIp[h]!;
      this.hWhere[h] = W_DUE;
      this.hDueNext[h] = -1;
      if (this.iDueTail[i]! < 0) this.iDueHead[i] = h;
      else this.hDueNext[this.iDueTail[i]!] = h;
      this.iDueTail[i] = h;
      this.iDueCount[i]!++;
      this.wakeIp(i);
    }
    let n = 0;
    while (n < max && ipHeap.size > 0 && ipHeap.minKey() <= now) {
      const i = ipHeap.pop();
      const gate = this.ipGate;
      if (gate !== null) {
        const at = gate.earliest(this.iName[i]!, now);
        if (at > now) {
          ipHeap.set(i, at);
          continue;
        }
      }
      this.iRobotsWait[i] = 0;
      // The IP's two lanes alternate while both have work: its robots.txt lane (hosts waiting for
      // their rules have nothing else) and its due hosts. An item the low-PLD pace holds does not
      // hold the IP's other work. Robots first always let a resumed crawl's robots.txt fetches
      // (~16,000 hosts asked again after a SIGKILL, ~800/s) take every connection of every IP
      // while 13,000 hosts had pages due: seconds with no page fetched (bench:soak, 10^7 hosts).
      let item = this.iLastRobots[i] === 1 && this.iDueCount[i]! > 0 ? this.takeDuePage(i, now) : null;
      if (item === null) item = this.takeRobots(i, now);
      const robotsHold = item === null ? this.robotsHold : 0;
      if (item === null) item = this.takeDuePage(i, now);
      if (item === null) {
        // Nothing released: the IP comes back when its held robots.txt may go, or as it has work.
        if (robotsHold > 0 && this.iDueCount[i] === 0) {
          this.ipHeap.set(i, Math.max(robotsHold, this.iNextDue[i]!));
          this.iRobotsWait[i] = 1;
        } else this.wakeIp(i);
        continue;
      }
      this.iLastRobots[i] = item.kind === UrlKind.Robots ? 1 : 0;
      item.ip = this.hAddr[item._host] || this.iName[i]!;
      gate?.released(this.iName[i]!, now);
      this.iInFlight[i]!++;
      this.iLastStart[i] = now;
      item.ipGapMs = this.ipDelay(i);
      this.iNextDue[i] = now + item.ipGapMs;
      this.wakeIp(i);
      out[n++] = item;
    }
    return n;
  }

  /** Earliest time a robots.txt item that takeRobots held may go (0: none held). */
  private robotsHold = 0;

  /**
   * The first robots.txt item of IP i's lane that may go now (released), or null; items the
   * low-PLD pace holds go to the back of the lane (robotsHold: the earliest they may go), items of
   * hosts whose robots fetch is no longer needed are dropped.
   */
  private takeRobots(i: number, now: number): FrontierUrl | null {
    const lane = this.iRobots[i]!;
    this.robotsHold = 0;
    for (let k = lane.length; k > 0; k--) {
      const item = lane.shift()!;
      const h = item._host;
      if (this.hRobotsItem[h] !== item) continue; // superseded / host failed meanwhile
      const hold = this.pldHold(h, now, false);
      if (hold > 0) {
        lane.push(item);
        this.robotsHold = this.robotsHold === 0 ? hold : Math.min(this.robotsHold, hold);
        continue;
      }
      this.pldReleased(h, now, false);
      this.hRobotsItem[h] = null;
      // A host whose robots entry expired with URLs queued may wait in the host heap (it leaves it
      // here) or in an IP's due list (takeDuePage passes that entry over): one place at a time.
      if (this.hWhere[h] === W_HEAP) this.hostHeap.remove(h);
      this.hWhere[h] = W_FLIGHT;
      this.hLastStart[h] = now;
      item.hostGapMs = this.hostDelay(h);
      this.hNextDue[h] = now + item.hostGapMs;
      this.inFlightRobots++;
      this.robotsReleased++;
      return item;
    }
    return null;
  }

  /**
   * The next URL of IP i's due hosts that may go now (released), or null; a host the low-PLD pace
   * holds waits in the host heap, one that left the IP goes back to the heap.
   */
  private takeDuePage(i: number, now: number): FrontierUrl | null {
    while (this.iDueCount[i]! > 0) {
      const h = this.iDueHead[i]!;
      this.iDueHead[i] = this.hDueNext[h]!;
      if (this.iDueHead[i]! < 0) this.iDueTail[i] = -1;
      this.iDueCount[i]!--;
      if (this.hWhere[h] !== W_DUE) continue; // left the list for a robots.txt fetch (takeRobots)
      if (this.hState[h] !== H_READY || this.hCount[h] === 0 || this.hIp[h] !== i) {
        this.hWhere[h] = W_NONE;
        if (this.hState[h] === H_READY && this.hCount[h]! > 0) {
          this.hostHeap.set(h, this.hNextDue[h]!); // moved to another IP
          this.hWhere[h] = W_HEAP;
        }
        continue;
      }
      const hold = this.pldHold(h, now, true);
      if (hold > 0) {
        // Its low PLD released within τh: the host waits in the host heap until then.
        this.hostHeap.set(h, hold);
        this.hWhere[h] = W_HEAP;
        continue;
      }
      this.pldReleased(h, now, true);
      const s = this.hHead[h]!;
      const u = this.sUrl[s]!;
      this.hHead[h] = this.sNext[s]!;
      if (this.hHead[h]! < 0) this.hTail[h] = -1;
      this.hCount[h]!--;
      if (u.budget > this.o.b0) this.hHigh[h]!--;
      this.touch(h);
      this.hWhere[h] = W_FLIGHT;
      this.hLastStart[h] = now;
      u.hostGapMs = this.hostDelay(h);
      this.hNextDue[h] = now + u.hostGapMs; // start to start
      this.inFlightPages++;
      this.released++;
      return u;
    }
    return null;
  }

  /** A released item's fetch finished: frees its host/IP slots and sets the next due times. */
  fetchDone(u: FrontierUrl, outcome: FetchOutcome | undefined, now: number): void {
    const h = u._host;
    if (h < 0 || this.hWhere[h] !== W_FLIGHT) return; // unknown or already done
    const i = this.hIp[h]!;
    this.hWhere[h] = W_NONE;
    if (i >= 0) {
      this.iInFlight[i]!--;
      this.ipGate?.finished(this.iName[i]!);
    }
    const late = outcome?.lateMs ?? 0;
    if (late > 0) {
      // Start to start from the actual send (see FetchOutcome.lateMs).
      this.hLastStart[h] = this.hLastStart[h]! + late;
      this.hNextDue[h] = Math.max(this.hNextDue[h]!, this.hLastStart[h]! + this.hostDelay(h));
      // The IP's next start too, by the gap it was released with: a robots.txt written 3.3 ms
      // after its release let the IP's next page out 96.7 ms after it on the wire, against
      // τs = 100 ms (test/dns/ipv6.test.ts). Only ever later, so another request's start on the IP
      // is not undone.
      if (i >= 0) {
        const due = this.hLastStart[h]! + u.ipGapMs;
        if (due > this.iNextDue[i]!) {
          this.iNextDue[i] = due;
          if (this.ipHeap.has(i) && this.ipHeap.keyOf(i) < due) this.ipHeap.set(i, due);
        }
      }
    }
    if (u.kind === UrlKind.Robots) {
      this.inFlightRobots--;
      u._host = -1;
    } else {
      this.inFlightPages--;
      const s = u._slot;
      if (outcome !== undefined) {
        if (outcome.crawlDelayMs !== undefined) this.hCrawlDelay[h] = outcome.crawlDelayMs;
        if (outcome.hostError) this.hErrors[h]!++;
        else this.hErrors[h] = 0;
        // Start to start with the delay as it stands now (errors / Crawl-delay only lengthen it).
        this.hNextDue[h] = Math.max(this.hNextDue[h]!, this.hLastStart[h]! + this.hostDelay(h));
        if (outcome.retryAfterMs !== undefined && outcome.retryAfterMs > 0) {
          this.hRetryUntil[h] = Math.max(this.hRetryUntil[h]!, now + Math.min(outcome.retryAfterMs, this.o.maxBackoffMs));
          this.hNextDue[h] = Math.max(this.hNextDue[h]!, this.hRetryUntil[h]!);
        }
      } else this.hErrors[h] = 0;
      const failed = this.hState[h] === H_FAILED;
      if (outcome?.drop !== undefined || failed) {
        this.releaseSlot(u, s);
        this.drop(u, outcome?.drop ?? (this.hFailReason[h] || 'host-failed'));
      } else if (outcome?.retry) {
        u.attempts++;
        if (u.attempts >= this.o.maxAttempts) {
          this.releaseSlot(u, s);
          this.drop(u, 'max-attempts');
        } else {
          // Back into the host's FIFO, same slot: the RAM count does not change.
          this.sNext[s] = -1;
          if (this.hTail[h]! < 0) this.hHead[h] = s;
          else this.sNext[this.hTail[h]!] = s;
          this.hTail[h] = s;
          this.hCount[h]!++;
          if (u.budget > this.o.b0) this.hHigh[h]!++;
          this.touch(h);
        }
      } else this.releaseSlot(u, s);
      if (this.hErrors[h]! >= this.o.maxHostErrors && this.hState[h] !== H_FAILED) this.failHost(h, 'host-errors', now);
      const took = now - this.hLastStart[h]!;
      if (took >= 0 && took < 600_000) this.fetchMs = this.fetchMs === 0 ? took : this.fetchMs + 0.05 * (took - this.fetchMs);
      // Delay as it stands now, Retry-After included: what this host can do within the horizon.
      const r = this.rateOf(Math.max(this.hNextDue[h]! - now, this.fetchMs, this.o.minHostDelayMs));
      if (r !== this.hRate[h]) {
        this.hRate[h] = r;
        this.touch(h);
      }
      // The IP's bound moves only with fetchMs (slowly): refresh it now and then, not per fetch.
      if (i >= 0 && (this.released & 15) === 0) this.ipRateChanged(i);
    }
    if (this.hState[h] === H_ROBOTS && this.hRobotsItem[h] !== null) this.pushRobotsItem(h);
    else if (this.hState[h] === H_READY && this.hCount[h]! > 0) {
      this.hostHeap.set(h, this.hNextDue[h]!);
      this.hWhere[h] = W_HEAP;
    } else if (this.hCount[h] === 0) this.markIdle(h);
    if (i >= 0) this.wakeIp(i);
  }

  /**
   * The work RAM can hand out soon, in fetch slots it can fill: the hosts with URLs queued in RAM
   * (waiting for their host or IP; a host in flight counts when more of its URLs wait), of PLDs
   * with B > B0 only once any such URL has been taken in (before that, every host). The pipeline
   * merges URLseen and refills from BEAST at its short cadence whenever this falls below the fetch
   * concurrency (src/crawl/merge-schedule.ts startMerges, pipeline.ts).
   *
   * Bound: politeness lets a host have at most one request in flight and one start per τh (thesis
   * VII.1), so the URLs in RAM can keep at most this many fetch slots busy at once, however many
   * URLs each host holds. Counting URLs instead let one host with a large queue (a page of 490,000
   * links to its own host) count as plenty of work while it took one slot per τh: the other slots
   * sat idle and every other host's next page waited for the 5 s merge (bench:hostile's links:
   * 29 pages in 30 s against 274 beside the floods). Many hosts each with a URL or two still count
   * as enough work, and the merges keep their long period.
   *
   * A farm's URLs (B0) are unbounded in number and their hosts too, and always due, so counting
   * them as work on hand would batch the real web's discoveries into 5 s merges, and a deep site
   * then moves one link level per merge (bench:adversary's adv-clique: 41 good pages in the first
   * 8 s against 290 alone). O(1): hostsQueued / hostsQueuedHigh are kept as queues change (pacing.ts).
   */
  readyRanked(): number {
    return this.pace.ranked ? this.hostsQueuedHigh : this.hostsQueued;
  }

  /** Earliest time something may become releasable (null when nothing waits in RAM). */
  nextWakeup(): number | null {
    const t = Math.min(this.hostHeap.minKey(), this.ipHeap.minKey());
    return t === Infinity ? null : t;
  }

  /**
   * Starts a snapshot of the URLs in RAM now (queued or in flight), emitted through `emit` as
   * RamSnapshot.step walks the slots and as slots are freed (ram-snapshot.ts); endSnapshot stops it.
   */
  beginSnapshot(emit: (u: FrontierUrl) => void): RamSnapshot {
    if (this.ramSnap !== null) throw new Error('beginSnapshot: a snapshot is under way');
    this.ramSnap = new RamSnapshot(this.sUrl, this.sUrl.length, emit);
    return this.ramSnap;
  }

  endSnapshot(): void {
    this.ramSnap = null;
  }

  /** IPs in the table (hosts known on them, or their τs window not yet passed). */
  get ipsKnown(): number {
    return this.ipIndex.size;
  }

  stats(): {
    ramUrls: number;
    inFlight: number;
    inFlightRobots: number;
    hosts: number;
    ips: number;
    hostHeap: number;
    ipHeap: number;
    pendingRobots: number;
    released: number;
    robotsReleased: number;
    pldPaced: number;
  } {
    return {
      ramUrls: this.sUsed,
      inFlight: this.inFlightPages,
      inFlightRobots: this.inFlightRobots,
      hosts: this.hUsed,
      ips: this.ipIndex.size,
      hostHeap: this.hostHeap.size,
      ipHeap: this.ipHeap.size,
      pendingRobots: this.pendingRobots,
      released: this.released,
      robotsReleased: this.robotsReleased,
      pldPaced: this.pldPaced,
    };
  }

  /**
   * The host table by what keeps each entry (a scan of the table, for /status): robots or DNS asked
   * (PENDING, TAKEN, ROBOTS), URLs in RAM or in flight, answered and held for their URLs in QR
   * (answeredNow), evictable now, and the rest (a politeness window still running).
   */
  hostStates(now: number): { asking: number; withUrls: number; held: number; evictable: number; other: number } {
    const out = { asking: 0, withUrls: 0, held: 0, evictable: 0, other: 0 };
    for (let h = 0; h < this.hCap; h++) {
      const st = this.hState[h]!;
      if (st === H_FREE) continue;
      if (st === H_PENDING || st === H_TAKEN || st === H_ROBOTS) out.asking++;
      else if (this.hCount[h]! > 0 || this.hWhere[h] !== W_NONE) out.withUrls++;
      else if (this.hQrMark[h]! > this.qrVisited) out.held++;
      else if (this.isIdle(h, now)) out.evictable++;
      else out.other++;
    }
    return out;
  }
}
