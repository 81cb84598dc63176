/**
 * Per-IP politeness across the partitions of a node and across nodes (docs/cluster.md,
 * "Politeness across nodes"). Hosts of different PLDs share server IPs, so partitions on several
 * nodes may crawl one IP; KSpider's answer was phase swapping on synchronised clocks (only one
 * node contacts a server at a time), and this is that rule made per IP and only where needed:
 *
 *   registration  a node registers in KV `ip.<ip>` before it first contacts an IP, by
 *                 compare-and-set: the first node is effective at once, a later one from a slot
 *                 boundary at least JOIN_MS ahead (so every node has learnt of it through its KV
 *                 watch before it starts); a node that has not used the IP for IDLE_MS leaves
 *                 the same way, effective a boundary JOIN_MS ahead.
 *   slots         time is cut into slots of L ms (the crawl's, fixed at creation). Where k nodes
 *                 are registered, the node of rank r (ids sorted) starts requests to the IP only in
 *                 slots s ≡ r (mod k), and only within the first L − τ − ε ms of its slot, τ the
 *                 crawl's per-IP floor as the heaps apply it (τs0 + margin) and ε the clock-skew
 *                 allowance. A node alone on an IP is not slotted at all.
 *   connections   each of the k nodes holds at most max(1, ⌊c/k⌋) connections to the IP (c the
 *                 frontier's maxConnectionsPerIp), counted over all its partitions.
 *
 * Guarantee: two requests to one IP from different nodes fall in different slots, so the later
 * one starts at least τ + ε after the earlier one on the earlier node's clock, i.e. at least τ
 * after it on any clock if the nodes' clocks differ by at most ε; within a node, the partitions'
 * shared floor guard keeps τs0 between any two starts, and each partition's heap its τs(B). Limits:
 * it assumes every node learns of a KV change within JOIN_MS (a node that cannot even write its
 * record pauses after 5 s, node.ts); the adaptive τs above the floor is kept per partition, not
 * across them; requests still running when another node's slot begins overlap with its requests
 * (k nodes hold at most max(k, c) connections together).
 *
 * The gate is consulted by every partition's IP heap (src/frontier IpGate: an IP held waits in the
 * heap) and by the node's last-step floor guard (a request released late is held to its window).
 * RAM: one entry per IP the node used within IDLE_MS.
 */
import type { IpGate } from '../../frontier/index.js';
import { fromJson, isCasConflict, isTransient, jsonBytes, type Engine } from './engine.js';

/** A joining (or leaving) node's registration takes effect this long after it is written (ms), at least. */
export const JOIN_MS = 3_000;
/** A node leaves an IP it has not started a request to for this long (ms). */
export const IDLE_MS = 60_000;
/** How often an IP held for its slot or its connections is looked at again (ms). */
const POLL_MS = 20;

export interface SlotRule {
  /** slot length L, ms */
  slotMs: number;
  /** the per-IP floor τ as the heaps apply it, ms */
  floorMs: number;
  /** clock-skew allowance ε, ms */
  skewMs: number;
}

/** The slot length a new crawl gets: eight floors of requests per window, plus the allowances. */
export function defaultSlotMs(floorMs: number, skewMs: number): number {
  return Math.max(100, 8 * floorMs + floorMs + skewMs);
}

/**
 * The earliest time ≥ t at which the node of rank r among k may start a request to a shared IP
 * (the slot rule above; k ≤ 1: at once). The window of each slot is [sL, sL + L − τ − ε).
 */
export function slotStart(t: number, r: number, k: number, rule: SlotRule): number {
  if (k <= 1) return t;
  const L = rule.slotMs;
  const open = L - rule.floorMs - rule.skewMs;
  if (!(open > 0)) throw new RangeError(`slot ${L} ms leaves no window after a floor of ${rule.floorMs} ms and a skew allowance of ${rule.skewMs} ms`);
  const s0 = Math.floor(t / L);
  let s = s0 + ((((r - s0) % k) + k) % k);
  if (s === s0 && t >= s0 * L + open) s += k;
  return Math.max(t, s * L);
}

/** One node's registration for an IP: effective from `f` until `u` (ms, the registering node's clock). */
interface Member {
  n: string;
  f: number;
  u?: number;
}

interface IpRegistration {
  m: Member[];
}

interface IpState {
  /** the registration as last read or written, and its revision */
  reg: IpRegistration | null;
  rev: number;
  /** a compare-and-set of this node's is under way */
  writing: boolean;
  inFlight: number;
  lastUse: number;
}

/** KV key of an IP: dots and colons are not key tokens. */
export function ipKey(ip: string): string {
  return `ip.${ip.replace(/\./g, '_').replace(/:/g, '-')}`;
}

export class NodeIpGate implements IpGate {
  private readonly ips = new Map<string, IpState>();
  private sweeper: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly engine: Engine,
    private readonly node: string,
    private readonly rule: SlotRule,
    /** connections per IP one node may hold (the frontier's maxConnectionsPerIp) */
    private readonly maxConnections: number,
    /** the KV watch's latest value of a registration (view.ts), or undefined */
    private readonly watched: (key: string) => { value: unknown; revision: number } | undefined,
    private readonly onError: (e: unknown) => void,
  ) {
    this.sweeper = setInterval(() => void this.sweep(), 10_000);
    this.sweeper.unref();
  }

  close(): void {
    this.closed = true;
    if (this.sweeper !== null) clearInterval(this.sweeper);
  }

  private state(ip: string): IpState {
    let s = this.ips.get(ip);
    if (s === undefined) {
      s = { reg: null, rev: 0, writing: false, inFlight: 0, lastUse: Date.now() };
      this.ips.set(ip, s);
    }
    // The watch may know a newer registration (another node joined or left).
    const w = this.watched(ipKey(ip));
    if (w !== undefined && w.revision > s.rev) {
      s.reg = w.value as IpRegistration;
      s.rev = w.revision;
    }
    return s;
  }

  /** The members effective at t, sorted by id. */
  private static members(reg: IpRegistration, t: number): string[] {
    return reg.m.filter((x) => x.f <= t && (x.u === undefined || t < x.u)).map((x) => x.n).sort();
  }

  /** The next time after t at which the registration's members change, or Infinity. */
  private static nextChange(reg: IpRegistration, t: number): number {
    let c = Infinity;
    for (const x of reg.m) {
      if (x.f > t) c = Math.min(c, x.f);
      if (x.u !== undefined && x.u > t) c = Math.min(c, x.u);
    }
    return c;
  }

  /** Earliest start this node's slot rule allows at or after t, for an IP it is registered for. */
  window(ip: string, t: number): number {
    const s = this.state(ip);
    if (s.reg === null || !s.reg.m.some((x) => x.n === this.node && x.u === undefined)) {
      // Not registered (a robots.txt redirect to another IP reaches the guard first): register, hold.
      if (!s.writing) this.register(ip, s);
      return t + POLL_MS;
    }
    let at = t;
    for (let i = 0; i < 16; i++) {
      const ms = NodeIpGate.members(s.reg, at);
      const r = ms.indexOf(this.node);
      const change = NodeIpGate.nextChange(s.reg, at);
      if (r < 0) {
        // Not effective (yet, or any more): wait for the change that makes it so, if any.
        if (!Number.isFinite(change)) return at + POLL_MS;
        at = change;
        continue;
      }
      const e = slotStart(at, r, ms.length, this.rule);
      // The members change before that start, or less than τ + ε after it: the rule from then on
      // decides. (A node alone on the IP is not slotted, and a joiner may start at the boundary
      // where it becomes effective: a start of the first node right before that boundary would be
      // closer than τ to it. Slotted starts already end τ + ε before every slot boundary.)
      if (e >= change - this.rule.floorMs - this.rule.skewMs) {
        at = change;
        continue;
      }
      return e;
    }
    return at;
  }

  earliest(ip: string, now: number): number {
    const s = this.state(ip);
    const k = s.reg === null ? 1 : NodeIpGate.members(s.reg, now).length;
    if (s.inFlight >= Math.max(1, Math.floor(this.maxConnections / Math.max(1, k)))) return now + POLL_MS;
    return this.window(ip, now);
  }

  released(ip: string, now: number): void {
    const s = this.state(ip);
    s.inFlight++;
    s.lastUse = now;
  }

  finished(ip: string): void {
    const s = this.ips.get(ip);
    if (s !== undefined && s.inFlight > 0) s.inFlight--;
  }

  /** Registers this node for the IP (compare-and-set; retried on a conflict). */
  private register(ip: string, s: IpState): void {
    s.writing = true;
    void (async () => {
      const key = ipKey(ip);
      for (let tries = 0; tries < 32 && !this.closed; tries++) {
        const cur = await this.engine.kv.get(key);
        const now = Date.now();
        const reg: IpRegistration = cur !== null && cur.operation === 'PUT' ? fromJson<IpRegistration>(cur.value) : { m: [] };
        // Entries that have left for good are dropped; this node's old (leaving) entry too.
        const kept = reg.m.filter((x) => (x.u === undefined || x.u > now) && x.n !== this.node);
        const live = kept.filter((x) => x.u === undefined || x.u > now);
        // Alone: at once. Joining others: from a slot boundary JOIN_MS ahead (or when this node's
        // own leaving entry ends, if later: it must not be two members at once).
        const mine = reg.m.find((x) => x.n === this.node);
        const after = Math.max(now + JOIN_MS, mine?.u ?? 0);
        const f = live.length === 0 && (mine?.u === undefined || mine.u <= now) ? now : Math.ceil(after / this.rule.slotMs) * this.rule.slotMs;
        const next: IpRegistration = { m: [...kept, { n: this.node, f }] };
        try {
          const rev = cur === null ? await this.engine.kv.create(key, jsonBytes(next)) : await this.engine.kv.update(key, jsonBytes(next), cur.revision);
          if (rev > s.rev) {
            s.reg = next;
            s.rev = rev;
          }
          break;
        } catch (e) {
          if (!isCasConflict(e)) throw e;
        }
      }
    })().catch((e) => { if (!this.closed && !isTransient(e)) this.onError(e); }).finally(() => { s.writing = false; });
  }

  /** Leaves the IPs this node has not used for IDLE_MS (and forgets their state once left). */
  private async sweep(): Promise<void> {
    const now = Date.now();
    for (const [ip, s] of this.ips) {
      if (this.closed || s.writing || s.inFlight > 0 || now - s.lastUse < IDLE_MS) continue;
      const mine = s.reg?.m.find((x) => x.n === this.node);
      if (mine === undefined) {
        this.ips.delete(ip);
        continue;
      }
      if (mine.u !== undefined) {
        if (mine.u <= now) this.ips.delete(ip); // left: forgotten until it is used again
        continue;
      }
      s.writing = true;
      try {
        const key = ipKey(ip);
        const cur = await this.engine.kv.get(key);
        if (cur === null || cur.operation !== 'PUT') continue;
        const reg = fromJson<IpRegistration>(cur.value);
        const u = Math.ceil((now + JOIN_MS) / this.rule.slotMs) * this.rule.slotMs;
        const next: IpRegistration = { m: reg.m.filter((x) => x.u === undefined || x.u > now).map((x) => (x.n === this.node ? { ...x, u } : x)) };
        const rev = await this.engine.kv.update(key, jsonBytes(next), cur.revision).catch((e: unknown) => {
          if (isCasConflict(e)) return -1;
          throw e;
        });
        if (rev > 0) {
          s.reg = next;
          s.rev = rev;
        }
      } catch (e) {
        if (!this.closed && !isTransient(e)) this.onError(e);
      } finally {
        s.writing = false;
      }
    }
  }
}
