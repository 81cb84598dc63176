/**
 * A node's view of the cluster's shared state: one watch over the crawl's KV bucket (engine.ts)
 * keeps the crawl's meta, the members, the lease table, the partitions' STAR histograms, the IP
 * registrations and the done flag in RAM, each with the revision it was read at, and tells
 * listeners when something changed. RAM: one entry per member, partition and registered IP (the
 * IPs this crawl's nodes share: ip-slots.ts bounds them).
 *
 * Leases (docs/cluster.md, "Ownership"): `lease.<p>` names the node that holds partition p. A
 * node takes a lease only by compare-and-set on the revision it read — a new key (create) or a
 * released one (update) — so two nodes can never both believe they took it. A held lease stays
 * with its node while that node is away (its partition's state is on its disk); it moves only when
 * its holder releases it (a hand-off: the state goes with it, snapshot.ts) or an operator forgets
 * the node (`drumcrawl cluster forget`).
 */
import type { KvEntry } from 'nats';
import { fromJson, isCasConflict, jsonBytes, type Engine } from './engine.js';

/** What the crawl is, fixed when it is created (KV key `meta`). */
export interface CrawlMeta {
  version: 1;
  crawl: string;
  partitions: number;
  /** the crawl-wide settings every partition crawls with (config.ts keys; node-local ones left out) */
  config: Record<string, unknown>;
  /** nodes that must have joined before partitions are first placed */
  expect: number;
  /** the per-IP slot rule (ip-slots.ts): slot length, the per-IP floor it spaces, clock-skew allowance, ms */
  slotMs: number;
  floorMs: number;
  skewMs: number;
  createdAt: string;
}

export interface Lease {
  node: string;
  /** held: the node crawls it (or will again); free: released, its state in `snapshot` */
  state: 'held' | 'free';
  /**
   * object name of the partition's state (snapshot.ts): when free, where it is; when held, not yet
   * restored by the holder (a restore cut short is done again)
   */
  snapshot?: string;
  /** the node it was released to (the placement's owner then); any node may take it when absent */
  to?: string;
  at: string;
}

/** A node's record (KV `node.<id>`), rewritten every heartbeat. */
export interface MemberStatus {
  id: string;
  /**
   * active: placed partitions; stopped: away (keeps its leases and its share of the placement);
   * leaving: out of the placement, hands its partitions off, then stops; left: gone for good
   */
  state: 'active' | 'leaving' | 'stopped' | 'left';
  /** sender's clock, ms */
  at: number;
  /** partitions it runs, and those of them settled (idle, checkpointed, nothing held or unsent) */
  hosted: number[];
  settled: number[];
  /** every hosted partition settled and nothing routed waits: the node has nothing to do */
  quiet: boolean;
  /** batches acknowledged since the node's state was created (written before each acknowledgement) */
  acked: number;
  /** published batches and bytes, pages fetched, CPU seconds: the node's figures (cluster status) */
  published: number;
  publishedBytes: number;
  pages: number;
  pagesPerSec: number;
  cpuSeconds: number;
  statusUrl: string | null;
}

interface Versioned<T> {
  value: T;
  revision: number;
  /** local time (ms) this revision was first seen: liveness is judged on the observer's clock */
  seenAt: number;
}

/** A member is live while its record changed within this long (observer's clock). */
export const LIVE_MS = 10_000;

export class ClusterView {
  meta: Versioned<CrawlMeta> | null = null;
  done = false;
  readonly members = new Map<string, Versioned<MemberStatus>>();
  readonly leases = new Map<number, Versioned<Lease>>();
  readonly hists = new Map<number, Uint8Array>();
  /** nodes an operator asked to leave (KV leave.<id>: `drumcrawl cluster leave`) */
  readonly leaveRequested = new Set<string>();
  /** IP registrations (ip-slots.ts), by KV key */
  readonly ips = new Map<string, Versioned<unknown>>();
  private readonly listeners = new Set<(key: string) => void>();
  private stopped = false;
  private iter: AsyncIterable<KvEntry> & { stop(): void } | null = null;
  private loop: Promise<void> | null = null;
  /** the watch has delivered every value present when it started */
  private initial: Promise<void>;
  private markInitial!: () => void;

  constructor(private readonly engine: Engine) {
    this.initial = new Promise((r) => { this.markInitial = r; });
  }

  onChange(l: (key: string) => void): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  /**
   * Starts the watch; resolves once the bucket's current values are in. A watch that ends (the
   * server restarted and the watch could not resume) is started again, its values read afresh.
   */
  async start(): Promise<void> {
    await this.watchOnce();
    this.loop = (async () => {
      while (!this.stopped) {
        try {
          for await (const e of this.iter!) {
            if (this.stopped) break;
            this.apply(e);
          }
        } catch {
          // ended by an error: started again below
        }
        if (this.stopped) break;
        await new Promise((r) => setTimeout(r, 500));
        await this.watchOnce().catch(() => undefined);
      }
    })();
    await this.initial;
  }

  private async watchOnce(): Promise<void> {
    const w = await this.engine.kv.watch({ initializedFn: () => this.markInitial() });
    this.iter = w as unknown as AsyncIterable<KvEntry> & { stop(): void };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.iter?.stop();
    await this.loop;
  }

  private apply(e: KvEntry): void {
    const k = e.key;
    const del = e.operation !== 'PUT';
    const now = Date.now();
    try {
      if (k === 'meta') this.meta = del ? null : { value: e.json<CrawlMeta>(), revision: e.revision, seenAt: now };
      else if (k === 'done') this.done = !del;
      else if (k.startsWith('node.')) {
        const id = k.slice(5);
        if (del) this.members.delete(id);
        else this.members.set(id, { value: e.json<MemberStatus>(), revision: e.revision, seenAt: now });
      } else if (k.startsWith('lease.')) {
        const p = Number(k.slice(6));
        if (del) this.leases.delete(p);
        else this.leases.set(p, { value: e.json<Lease>(), revision: e.revision, seenAt: now });
      } else if (k.startsWith('hist.')) {
        const p = Number(k.slice(5));
        if (del) this.hists.delete(p);
        else this.hists.set(p, e.value.slice());
      } else if (k.startsWith('leave.')) {
        if (del) this.leaveRequested.delete(k.slice(6));
        else this.leaveRequested.add(k.slice(6));
      } else if (k.startsWith('ip.')) {
        if (del) this.ips.delete(k);
        else this.ips.set(k, { value: e.json<unknown>(), revision: e.revision, seenAt: now });
      }
    } catch {
      return; // a value this version cannot read: ignored
    }
    for (const l of this.listeners) l(k);
  }

  /** Members that are running (not stopped or left) and whose record changed within LIVE_MS. */
  liveMembers(now = Date.now()): string[] {
    const out: string[] = [];
    for (const id of this.members.keys()) if (this.isLive(id, now)) out.push(id);
    return out.sort();
  }

  /** Members partitions are placed on: active ones, live or not (a node away keeps its share). */
  placedMembers(): string[] {
    const out: string[] = [];
    for (const [id, m] of this.members) if ((m.value.state === 'active' || m.value.state === 'stopped') && !this.leaveRequested.has(id)) out.push(id);
    return out.sort();
  }

  isLive(id: string, now = Date.now()): boolean {
    const m = this.members.get(id);
    return m !== undefined && (m.value.state === 'active' || m.value.state === 'leaving') && now - m.seenAt <= LIVE_MS;
  }
}

/** Reads the crawl's meta, or creates it with `make()` when the crawl is new (first node). */
export async function metaOrCreate(engine: Engine, make: () => CrawlMeta): Promise<{ meta: CrawlMeta; created: boolean }> {
  const cur = await engine.kv.get('meta');
  if (cur !== null && cur.operation === 'PUT') return { meta: fromJson<CrawlMeta>(cur.value), created: false };
  const meta = make();
  try {
    await engine.kv.create('meta', jsonBytes(meta));
    return { meta, created: true };
  } catch (e) {
    if (!isCasConflict(e)) throw e;
    const again = await engine.kv.get('meta');
    return { meta: fromJson<CrawlMeta>(again!.value), created: false };
  }
}

/**
 * Takes lease p for `node` by compare-and-set: creates it when absent, updates it when it is this
 * node's already or released (to this node, or to anyone). Returns the lease it holds now (with
 * the snapshot to restore when it was released with one), or null when another node holds it (or
 * won the race).
 */
export async function takeLease(engine: Engine, p: number, node: string): Promise<{ lease: Lease; revision: number; restore?: string } | null> {
  const key = `lease.${p}`;
  const cur = await engine.kv.get(key);
  const mine: Lease = { node, state: 'held', at: new Date().toISOString() };
  try {
    if (cur === null || cur.operation !== 'PUT') {
      const revision = cur === null ? await engine.kv.create(key, jsonBytes(mine)) : await engine.kv.update(key, jsonBytes(mine), cur.revision);
      return { lease: mine, revision };
    }
    const l = fromJson<Lease>(cur.value);
    if (l.node === node && l.state === 'held') return { lease: l, revision: cur.revision, ...(l.snapshot !== undefined ? { restore: l.snapshot } : {}) };
    if (l.node !== node && l.state === 'held') return null;
    if (l.state === 'free' && l.to !== undefined && l.to !== node) return null;
    // Released with its state in the object store: the taker restores it from there (the lease
    // keeps naming it until the restore is done: restored()).
    const next: Lease = { ...mine, ...(l.snapshot !== undefined ? { snapshot: l.snapshot } : {}) };
    const revision = await engine.kv.update(key, jsonBytes(next), cur.revision);
    return { lease: next, revision, ...(l.snapshot !== undefined ? { restore: l.snapshot } : {}) };
  } catch (e) {
    if (isCasConflict(e)) return null;
    throw e;
  }
}

/** Lease p (held by `node` at `revision`) no longer names a snapshot to restore; returns the new revision, or null. */
export async function restored(engine: Engine, p: number, node: string, revision: number): Promise<number | null> {
  const l: Lease = { node, state: 'held', at: new Date().toISOString() };
  try {
    return await engine.kv.update(`lease.${p}`, jsonBytes(l), revision);
  } catch (e) {
    if (isCasConflict(e)) return null;
    throw e;
  }
}

/** Releases lease p (held by `node` at `revision`) with its state in `snapshot`, to `to`. */
export async function releaseLease(engine: Engine, p: number, node: string, revision: number, snapshot: string, to: string | undefined): Promise<boolean> {
  const l: Lease = { node, state: 'free', snapshot, ...(to !== undefined ? { to } : {}), at: new Date().toISOString() };
  try {
    await engine.kv.update(`lease.${p}`, jsonBytes(l), revision);
    return true;
  } catch (e) {
    if (isCasConflict(e)) return false;
    throw e;
  }
}
