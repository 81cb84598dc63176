/**
 * Delays and refill pacing of the politeness layer: τh and τs per host and IP (thesis VII.1, with
 * Crawl-delay, error backoff and the floors), and the dispatch potential — how many fetches the
 * URLs in RAM can keep the fetchers busy with over a horizon W — that the frontier compares with the
 * dispatch rate to decide when to read BEAST (thesis VII.2). Every change of a host's queue, delay
 * or IP updates the potential in O(1); an operator change of the delays recomputes every due time.
 */
import { hostDelayFor, ipDelayFor } from '../star/index.js';
import { HostTable, H_FREE, W_HEAP } from './host-table.js';

export abstract class Pacing extends HostTable {
  // ---------------------------------------------------------------- dispatch potential

  /**
   * What the URLs in RAM can keep the fetchers busy with over the next `horizonMs` (W), in
   * fetches: Σ over IPs of min(Σ over its hosts of min(queued URLs, W/τh), W·conns/τs), plus the
   * hosts with no IP yet. The frontier reads BEAST only while this is below the recent dispatch
   * rate × W (thesis VII.2: the current queue is read as fast as it is crawled, so that a PLD's
   * URLs in Q_k really wait k passes; filling RAM to its cap instead let spam farms with many
   * hosts win by host count, docs/frontier.md). Maintained incrementally (O(1) per change).
   */
  potential = 0;
  /**
   * IPs with URLs queued in RAM (the refill's breadth term: with one or two connections per IP,
   * only that many IPs' worth of fetches can be in flight, whatever the potential says).
   */
  ipsWithWork = 0;
  /**
   * Of those, IPs whose queued work exceeds what their connections can do within W: the crawl is
   * bound by connections there, not by politeness delays (delays ≈ 0, deep hosts).
   */
  ipsSaturated = 0;
  /**
   * Hosts with URLs queued in RAM (hCount > 0: waiting for their host or IP, not in flight), and of
   * those, the hosts with a queued URL whose own budget is > B0: what Politeness.readyRanked
   * reports. Kept by queuedChanged, O(1) per change of a host's queue.
   */
  hostsQueued = 0;
  hostsQueuedHigh = 0;
  private horizonMs = 5000;
  /**
   * Mean fetch duration (release → fetchDone, EWMA): with one request per host and `conns` per
   * IP in flight, a host can do at most W / max(τh, fetch) fetches in W and an IP W·conns /
   * max(τs, fetch) — without it, zero delays would make every queued URL count as due at once.
   */
  protected fetchMs = 0;

  /** Mean fetch duration so far (ms, 0 before the first fetch). */
  get meanFetchMs(): number {
    return this.fetchMs;
  }

  setHorizon(ms: number): void {
    this.horizonMs = ms;
    this.delaysChanged();
  }

  protected rateOf(delayMs: number): number {
    return delayMs > 0 ? this.horizonMs / delayMs : Infinity;
  }

  /** Host h's queue (hCount, hHigh) or rate changed: every change of hCount calls it. */
  protected touch(h: number): void {
    this.queuedChanged(h);
    const c = this.hCount[h]!;
    const r = this.hRate[h]!;
    this.setPot(h, c < r ? c : r);
  }

  /**
   * Moves host h in or out of hostsQueued / hostsQueuedHigh as its queue (hCount, hHigh) becomes
   * non-empty or empty (touch: enqueue, the release in takeDuePage, a retry's return, dropQueued).
   * A host entry is freed only with an empty queue (isIdle), so its hQ is 0 when it is reused.
   */
  private queuedChanged(h: number): void {
    const q = (this.hCount[h]! > 0 ? 1 : 0) | (this.hHigh[h]! > 0 ? 2 : 0);
    const was = this.hQ[h]!;
    if (q === was) return;
    this.hQ[h] = q;
    this.hostsQueued += (q & 1) - (was & 1);
    this.hostsQueuedHigh += (q >> 1) - (was >> 1);
  }

  protected setPot(h: number, v: number): void {
    const old = this.hPot[h]!;
    if (old === v) return;
    this.hPot[h] = v;
    const i = this.hIp[h]!;
    if (i < 0) {
      this.potential += v - old;
      return;
    }
    // hPot > 0 exactly when the host has URLs queued (its rate is > 0): count the IP's such hosts.
    if (old > 0 !== v > 0) {
      if (v > 0) {
        if (this.iWork[i]!++ === 0) this.ipsWithWork++;
      } else if (--this.iWork[i]! === 0) this.ipsWithWork--;
    }
    const r = this.iRate[i]!;
    const before = Math.min(this.iPot[i]!, r);
    this.iPot[i] = Math.max(0, this.iPot[i]! + v - old);
    this.potential += Math.min(this.iPot[i]!, r) - before;
    if (this.potential < 1e-9) this.potential = 0;
    this.satCheck(i);
  }

  private satCheck(i: number): void {
    const s = this.iWork[i]! > 0 && this.iPot[i]! >= this.iRate[i]! ? 1 : 0;
    if (s !== this.iSat[i]) {
      this.iSat[i] = s;
      this.ipsSaturated += s === 1 ? 1 : -1;
    }
  }

  protected ipRateChanged(i: number): void {
    const before = Math.min(this.iPot[i]!, this.iRate[i]!);
    this.iRate[i] = this.rateOf(Math.max(this.ipDelay(i), this.fetchMs)) * this.o.maxConnectionsPerIp;
    this.potential += Math.min(this.iPot[i]!, this.iRate[i]!) - before;
    if (this.potential < 1e-9) this.potential = 0;
    this.satCheck(i);
  }

  /**
   * τh for host h, before Retry-After: budget scaling, Crawl-delay (+ crawlDelayMarginMs), error
   * backoff, floor. A released URL carries it (FrontierUrl.hostGapMs) to the last-step guard, which
   * holds it against the actual send of the host's previous request.
   */
  protected hostDelay(h: number): number {
    const o = this.o;
    let d = hostDelayFor(this.hBudget[h]!, o);
    const cd = Math.min(this.hCrawlDelay[h]!, o.maxCrawlDelayMs);
    if (cd > 0 && cd + (o.crawlDelayMarginMs ?? 0) > d) d = cd + (o.crawlDelayMarginMs ?? 0);
    const e = this.hErrors[h]!;
    if (e > 0) d = Math.max(d, Math.min(o.maxBackoffMs, d * 2 ** Math.min(e, 30)));
    return Math.max(d, o.minHostDelayMs);
  }

  protected ipDelay(i: number): number {
    const n = this.iHosts[i]!;
    const avg = n > 0 ? this.iSumB[i]! / n : this.o.b0;
    return Math.max(ipDelayFor(avg, this.o), this.o.minIpDelayMs);
  }
  /**
   * The delay options changed (Frontier.setDelays): hosts and IPs already waiting get their due
   * time recomputed from their last start with the new delays (Retry-After deadlines and the
   * floors still hold), so a shorter delay takes effect at once and a longer one holds back hosts
   * that were not due yet. O(hosts + IPs); an operator action, not a hot path.
   */
  delaysChanged(): void {
    for (let h = 0; h < this.hCap; h++) {
      if (this.hState[h] === H_FREE) continue;
      const last = this.hLastStart[h]!;
      if (last === -Infinity) continue;
      const due = Math.max(last + this.hostDelay(h), this.hRetryUntil[h]!);
      this.hNextDue[h] = due;
      if (this.hWhere[h] === W_HEAP) this.hostHeap.set(h, due);
    }
    for (let i = 0; i < this.iCap; i++) if (this.iLive[i] === 1) this.ipRateChanged(i);
    for (let h = 0; h < this.hCap; h++) {
      if (this.hState[h] === H_FREE) continue;
      this.hRate[h] = this.rateOf(this.hostDelay(h));
      this.touch(h);
    }
    for (let i = 0; i < this.iCap; i++) {
      if (this.iLive[i] !== 1) continue;
      const last = this.iLastStart[i]!;
      if (last !== -Infinity) {
        this.iNextDue[i] = last + this.ipDelay(i);
        if (this.ipHeap.has(i)) this.ipHeap.set(i, this.iNextDue[i]!);
      }
      this.wakeIp(i); // maxConnectionsPerIp may have grown
    }
  }

}
