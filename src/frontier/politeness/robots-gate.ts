/**
 * The robots gate of the politeness layer (thesis IV.3, Fig. 2: Q_D, Q_R; VII.1): a URL enters RAM
 * only when its host's robots.txt and DNS answer are known and not expired. A host moves through
 *
 *   PENDING  robots/DNS asked for, in the request list (QD) until takeRobotsRequests hands it out
 *   TAKEN    handed out; the pipeline resolves the host and answers robotsKnown / robotsFailed, or
 *            schedules the robots.txt fetch with scheduleRobotsFetch
 *   ROBOTS   the robots.txt fetch waits on its IP's robots lane (τs only) or is in flight
 *   READY    rules known until expiresAt: URLs are admitted (or dropped as 'robots')
 *   FAILED   DNS failure, robots unavailable or too many host errors: URLs are dropped until the
 *            entry expires (failedHostTtlMs)
 *
 * The states are the host's (its politeness, its place in QD); the answers are per authority
 * (RFC 9309 §2.3: scheme, host and port; authorities.ts): a host entry asks its authorities one at a
 * time, `hOrigin` naming the one asked, and is READY when every authority its URLs came with has an
 * answer. A URL of an authority without one makes a READY host PENDING again, as an expired answer
 * does. URLs of a host not READY are answered NeedRobots and wait in QR (frontier.ts); an expired
 * entry goes back to PENDING. Admission (`add`) also enforces the RAM cap and maxUrlsPerHost.
 */
import { FrontierUrl, URL_RAM_BYTES_TYPICAL, UrlKind, hostNameOf, pathAndQueryOf } from '../record.js';
import { robotsAuthorityOf } from '../../util/authority.js';
import { HostAuthorities } from './authorities.js';
import { H_FAILED, H_PENDING, H_READY, H_ROBOTS, H_TAKEN, W_FLIGHT, W_HEAP, W_NONE, type RobotsRulesLike } from './host-table.js';
import { Pacing } from './pacing.js';
import { pldSlot } from './pld-pace.js';

export interface RobotsInfo {
  /** Rules for our user agent; null = allow everything. */
  rules: RobotsRulesLike | null;
  /** Server address the host resolved to. */
  ip: string;
  /** Crawl-delay for our agent, ms (lengthens τh, capped at maxCrawlDelayMs). */
  crawlDelayMs?: number | undefined;
  /** When this entry must be refreshed (ms, same clock as the frontier). */
  expiresAt: number;
  /**
   * The authority answered (robotsAuthorityOf: scheme://host[:port]); the one the host asked
   * (RobotsRequest.origin) when absent.
   */
  origin?: string | undefined;
}

export enum AddResult {
  Added = 0,
  /** Robots/DNS unknown (or expired): park the URL in QR. */
  NeedRobots = 1,
  /** Disallowed by robots.txt: dropped ('robots'). */
  Disallowed = 2,
  /** Host failed (DNS / robots unavailable / too many errors): dropped. */
  HostFailed = 3,
  /** The host already has maxUrlsPerHost URLs in RAM: put the URL back on disk. */
  HostFull = 4,
  /** RAM cap reached. */
  RamFull = 5,
}

export interface RobotsRequest {
  hostHi: number;
  hostLo: number;
  /** Host name, lower case. */
  host: string;
  /**
   * The authority asked for (robotsAuthorityOf: scheme://host[:port], RFC 9309 §2.3): its
   * robots.txt is `<origin>/robots.txt`, and its answer goes back with it (RobotsInfo.origin).
   */
  origin: string;
}

export abstract class RobotsGate extends Pacing {
  /** Hosts put in QD so far (askNext): a QR rescan that asked none is fruitless (refill.ts). */
  asks = 0;

  // ---------------------------------------------------------------- admission

  get ramCount(): number {
    return this.sUsed;
  }

  /**
   * URLs RAM can still take: the slab's free slots, and under maxUrlBytes the bytes left at
   * URL_RAM_BYTES_TYPICAL each (add() itself stops at the byte bound).
   */
  get ramFree(): number {
    const slots = this.o.ramUrls - this.sUsed;
    if (this.maxUrlBytes === Infinity) return slots;
    return Math.min(slots, Math.max(0, Math.floor((this.maxUrlBytes - this.urlBytes) / URL_RAM_BYTES_TYPICAL)));
  }

  /**
   * Offers one URL (from BEAST or QR) to RAM. See AddResult; Disallowed / HostFailed have already
   * been reported through onDrop.
   */
  add(u: FrontierUrl, now: number): AddResult {
    if ((this.sFree < 0 && !this.growSlab()) || this.urlBytes >= this.maxUrlBytes) return AddResult.RamFull;
    const h = this.hostFor(u.hostHi, u.hostLo, now, true);
    if (h < 0) return AddResult.NeedRobots; // host table full: wait in QR, asked for later
    // The host's PLD slot (once per host entry) and class (the latest URL's budget) for the
    // low-PLD pace (pld-pace.ts). A URL taken into RAM or parked for robots makes its PLD active
    // there; one dropped (disallowed, host failed) or sent back does not: it is no work.
    if (this.hPldSlot[h]! < 0) {
      this.hPldSlot[h] = pldSlot(u.pldHi, u.pldLo);
      this.hPldHi[h] = u.pldHi;
      this.hPldLo[h] = u.pldLo;
    }
    // Untrusted: STAR gave the URL a trusted in-degree below the threshold (pld-pace.ts).
    const T = this.trustThreshold;
    const p = this.hPldSlot[h]!;
    if (u.budget > this.o.b0) {
      this.hLow[h] = 0;
      this.pace.saw(p, u.pldHi, u.pldLo, true, T > 0 && u.indegree >= T);
    } else {
      // (Nothing is known ranked before the first ranked URL.)
      this.hLow[h] = this.pace.ranked && this.pace.isRanked(p, u.pldHi, u.pldLo) ? 0 : 1;
      if (T > 0 && u.indegree >= T) this.pace.saw(p, u.pldHi, u.pldLo, false, true);
    }
    this.hUntrusted[h] = T > 0 && u.indegree >= 0 && u.indegree < T ? 1 : 0;
    const auth = (this.hAuth[h] ??= new HostAuthorities());
    let st = this.hState[h]!;
    if ((st === H_READY || st === H_FAILED) && this.hExpires[h]! <= now) {
      // Entry expired: its expired answers (a failed host's all) are asked again as their URLs come;
      // URLs already in RAM wait (the host leaves the heap lazily).
      if (st === H_FAILED) auth.clear();
      else auth.forgetExpired(now);
      this.hState[h] = st = H_READY;
      this.hExpires[h] = auth.expiresAt;
      this.hCrawlDelay[h] = auth.crawlDelayMs;
      this.chargeHost(h);
    }
    if (st === H_FAILED) {
      this.drop(u, this.hFailReason[h] || 'host-failed');
      return AddResult.HostFailed;
    }
    let a = auth.findUrl(u.url);
    if (a === undefined) {
      const origin = robotsAuthorityOf(u.url) ?? u.url;
      a = auth.find(origin);
      if (a === undefined) {
        // An authority without an answer: asked after the one being asked (if any), or now.
        if (auth.want(origin)) {
          this.chargeHost(h);
          if (st === H_READY || (st === H_PENDING && this.hOrigin[h] === '')) this.askNext(h);
        }
        this.pace.active(this.hPldSlot[h]!, now);
        return AddResult.NeedRobots;
      }
    }
    if (st !== H_READY || !a.known) {
      this.pace.active(this.hPldSlot[h]!, now);
      return AddResult.NeedRobots;
    }
    // H_READY, the URL's authority answered
    const rules = a.rules;
    if (rules !== null && !rules.isAllowed(pathAndQueryOf(u.url))) {
      this.drop(u, 'robots');
      return AddResult.Disallowed;
    }
    if (this.hCount[h]! >= this.o.maxUrlsPerHost) return AddResult.HostFull;
    if (u.budget !== this.hBudget[h]) {
      const i = this.hIp[h]!;
      if (i >= 0) this.iSumB[i] = this.iSumB[i]! + u.budget - this.hBudget[h]!;
      this.hBudget[h] = u.budget;
      this.hRate[h] = this.rateOf(this.hostDelay(h));
      if (i >= 0) this.ipRateChanged(i);
    }
    this.enqueue(h, u);
    if (this.hWhere[h] === W_NONE) this.hostHeap.set(h, this.hNextDue[h]!), (this.hWhere[h] = W_HEAP);
    this.pace.active(this.hPldSlot[h]!, now);
    return AddResult.Added;
  }

  // ---------------------------------------------------------------- robots gate

  /**
   * True when the host holds its full share of URLs in RAM (robots known, entry not expired): a URL
   * of it read from disk goes straight back to BEAST without being decoded (refill fast path).
   */
  hostFull(hi: number, lo: number, now: number): boolean {
    const h = this.hostIndex.get(hi, lo);
    return h >= 0 && this.hState[h] === H_READY && this.hCount[h]! >= this.o.maxUrlsPerHost && this.hExpires[h]! > now;
  }
  /** True when the host is known and still waiting for its robots/DNS answer (QR re-scan fast path). */
  hostWaiting(hi: number, lo: number): boolean {
    const h = this.hostIndex.get(hi, lo);
    if (h < 0) return false;
    const st = this.hState[h]!;
    return (st === H_PENDING && this.hOrigin[h] !== '') || st === H_TAKEN || st === H_ROBOTS;
  }

  /** Hosts whose robots.txt / DNS the pipeline must provide (QD), each handed out once. */
  takeRobotsRequests(max: number): RobotsRequest[] {
    const out: RobotsRequest[] = [];
    while (out.length < max && this.requestsHead < this.requests.length) {
      const h = this.requests[this.requestsHead++]!;
      if (this.hState[h] !== H_PENDING) continue;
      this.hState[h] = H_TAKEN;
      const origin = this.hOrigin[h]!;
      out.push({ hostHi: this.hHi[h]!, hostLo: this.hLo[h]!, host: hostNameOf(origin), origin });
    }
    if (this.requestsHead > 4096 && this.requestsHead * 2 > this.requests.length) {
      this.requests = this.requests.slice(this.requestsHead);
      this.requestsHead = 0;
    }
    return out;
  }

  get pendingRobots(): number {
    return this.requests.length - this.requestsHead;
  }

  /**
   * Schedules the robots.txt fetch of a host (after its DNS answer) on its IP: it is released by
   * nextReady as a UrlKind.Robots item, obeying τs (not τh: the host has nothing in RAM).
   */
  scheduleRobotsFetch(hi: number, lo: number, ip: string, now: number): boolean {
    const h = this.hostFor(hi, lo, now, true);
    if (h < 0) return false;
    if (this.hOrigin[h] === '') return false; // we never asked for this host
    this.attachIp(h, ip, now);
    this.hState[h] = H_ROBOTS;
    const item = new FrontierUrl({ url: `${this.hOrigin[h]}/robots.txt`, hostHi: hi, hostLo: lo, pldHi: 0, pldLo: 0, budget: 0, admitted: 0 });
    item.kind = UrlKind.Robots;
    item.host = hostNameOf(this.hOrigin[h]!);
    item._host = h;
    this.hRobotsItem[h] = item;
    if (this.hWhere[h] !== W_FLIGHT) this.pushRobotsItem(h);
    return true;
  }

  protected pushRobotsItem(h: number): void {
    const i = this.hIp[h]!;
    const item = this.hRobotsItem[h]!;
    this.iRobots[i]!.push(item);
    this.wakeIp(i);
  }

  /**
   * Puts the host in QD for its next authority without an answer (hOrigin names it); false when
   * every authority of the host has its answer.
   */
  private askNext(h: number): boolean {
    const next = this.hAuth[h]?.nextWanted();
    if (next === undefined) return false;
    this.hState[h] = H_PENDING;
    this.hOrigin[h] = next.origin;
    this.chargeHost(h);
    this.requests.push(h);
    this.asks++;
    return true;
  }

  /**
   * The robots/DNS answer for one authority of a host (info.origin, else the one asked): its URLs
   * may enter RAM once every authority asked for has its answer (QR is re-checked).
   */
  robotsKnown(hi: number, lo: number, info: RobotsInfo, now: number): void {
    const h = this.hostFor(hi, lo, now, true);
    if (h < 0) return;
    const auth = (this.hAuth[h] ??= new HostAuthorities());
    const origin = info.origin ?? this.hOrigin[h]!;
    if (origin !== '') auth.answer(origin, info.rules, info.expiresAt, info.crawlDelayMs ?? 0);
    // An answer for another authority than the one being asked (the gate asks one at a time, so
    // this is defensive): kept, and the ask under way goes on untouched.
    const st = this.hState[h]!;
    if (origin !== this.hOrigin[h] && (st === H_TAKEN || st === H_ROBOTS || (st === H_PENDING && this.hOrigin[h] !== ''))) {
      this.chargeHost(h);
      return;
    }
    this.hRobotsItem[h] = null; // a scheduled robots fetch, if any, is no longer needed
    this.hExpires[h] = Math.min(auth.expiresAt, info.expiresAt);
    this.hCrawlDelay[h] = auth.crawlDelayMs;
    this.hFailReason[h] = '';
    this.hRate[h] = this.rateOf(this.hostDelay(h));
    this.attachIp(h, info.ip, now);
    this.touch(h);
    // Another authority of the host waits for its answer: asked now, the host's URLs wait for it.
    if (this.askNext(h)) return;
    this.hState[h] = H_READY;
    this.answeredNow(h);
    this.chargeHost(h);
    if (this.hCount[h]! > 0 && this.hWhere[h] === W_NONE) {
      this.hostHeap.set(h, this.hNextDue[h]!);
      this.hWhere[h] = W_HEAP;
    } else if (this.hCount[h] === 0 && this.hWhere[h] === W_NONE) this.markIdle(h);
    // Oldest idle hosts first (the idle ring is FIFO): this one, idle just now, goes last.
    this.trimHostBytes(now);
  }

  /** The host cannot be crawled until `now + failedHostTtlMs` (DNS failure, robots unavailable). */
  robotsFailed(hi: number, lo: number, reason: string, now: number): void {
    const h = this.hostFor(hi, lo, now, true);
    if (h < 0) return;
    this.failHost(h, reason, now);
  }

  protected failHost(h: number, reason: string, now: number): void {
    this.hState[h] = H_FAILED;
    this.answeredNow(h);
    this.hFailReason[h] = reason;
    this.hExpires[h] = now + this.o.failedHostTtlMs;
    this.hRobotsItem[h] = null;
    if (this.hWhere[h] === W_HEAP) {
      this.hostHeap.remove(h);
      this.hWhere[h] = W_NONE;
    }
    // URLs waiting in RAM are dropped now; one in flight is dropped at its fetchDone.
    this.dropQueued(h, reason);
    if (this.hWhere[h] === W_NONE) this.markIdle(h);
  }

  private dropQueued(h: number, reason: string): void {
    let s = this.hHead[h]!;
    while (s >= 0) {
      const next = this.sNext[s]!;
      const u = this.sUrl[s]!;
      this.freeSlot(s);
      u._slot = -1;
      u._host = -1;
      this.drop(u, reason);
      s = next;
    }
    this.hHead[h] = -1;
    this.hTail[h] = -1;
    this.hCount[h] = 0;
    this.hHigh[h] = 0;
    this.touch(h);
  }
}
