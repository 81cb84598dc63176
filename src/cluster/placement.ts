/**
 * Which partitions a node runs (docs/cluster.md, "Partitions and placement", "Moves"): every
 * TICK the node computes the rendezvous placement over the members (view.ts placedMembers: the
 * active and the stopped ones, not those leaving), then
 *
 *   - takes the lease of each partition placed on it that is free to it (new, its own, or released
 *     to it or to anyone) and opens the partition — restoring its state from the object store
 *     first when the lease was released with a snapshot (snapshot.ts);
 *   - hands off each partition it runs that is now placed on another live node: the partition's
 *     crawler stops (its fetches drain, a checkpoint commits, the batches it held are acknowledged),
 *     its directory goes to the object store, the lease is released to that node naming the
 *     object, and the local directory is removed.
 *
 * The first placement waits until `expect` members have joined and the member list has not
 * changed for SETTLE_MS (nodes of a new crawl start within seconds of each other). A partition
 * directory a node finds at start whose lease is no longer its own (it was handed off before a
 * kill removed the directory) is removed before anything opens.
 */
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { CrawlError } from '../errors.js';
import type { CrawlConfig, CrawlConfigInput } from '../config/config.js';
import type { CrawlSummary } from '../crawl/pipeline.js';
import type { CheckpointManifest } from '../state/checkpoint.js';
import type { SharedParts } from '../crawl/ports/cluster-port.js';
import { placement } from './partition.js';
import { PartitionHost, partitionDir, type PartitionNode } from './partition-host.js';
import { releaseLease, restored, takeLease, type ClusterView, type CrawlMeta } from './engine/view.js';
import { deleteSnapshot, downloadPartition, uploadPartition } from './engine/snapshot.js';
import { isTransient } from './engine/engine.js';

/** Members must have stayed the same this long before the first placement (ms). */
const SETTLE_MS = 2_000;
/**
 * The least RAM a partition sizes its structures by: ContentSeen's DRUM (1/32 of it) needs more
 * than its 4 buckets' double buffers (2 MiB), STAR's and the robots DRUMs have floors of their own
 * (8 and 4 MiB). A node's --ram should cover this for each partition it hosts (docs/cluster.md).
 */
export const PARTITION_RAM_MIN = 96 << 20;

/** What placement needs of its node (node.ts). */
export interface PlacementNode extends PartitionNode {
  readonly id: string;
  readonly meta: CrawlMeta;
  readonly cfg: CrawlConfig;
  readonly view: ClusterView;
  readonly parts: Omit<SharedParts, 'ramBytes'>;
  /** new partitions start paused (the node is paused, or cut off) */
  readonly holding: boolean;
  readonly stopping: boolean;
  checkpointed(m: CheckpointManifest): void;
  partitionEnded(p: number, s: CrawlSummary | null): void;
  log(line: string): void;
}

export class Placement {
  readonly hosts = new Map<number, PartitionHost>();
  readonly opening = new Set<number>();
  readonly moving = new Set<number>();
  private readonly leaseRev = new Map<number, number>();
  /** partitions closed for a hand-off whose upload or release failed (the server away): p → to */
  private readonly unshipped = new Map<number, string>();
  private membersKey = '';
  private membersSince = Date.now();
  private placedOnce = false;
  /** partitions handed off by this node, and moved in */
  movedOut = 0;
  movedIn = 0;

  constructor(private readonly node: PlacementNode) {}

  /** Nothing opening or moving. */
  get steady(): boolean {
    return this.opening.size === 0 && this.moving.size === 0 && this.unshipped.size === 0;
  }

  /** Removes partition directories whose lease is not this node's (handed off before a kill). */
  async cleanup(): Promise<void> {
    const root = path.join(this.node.cfg.stateDir, 'p');
    const names = await readdir(root).catch(() => [] as string[]);
    for (const name of names) {
      const p = Number(name);
      if (!/^\d{4}$/.test(name.replace(/\.incoming$/, ''))) continue;
      const l = this.node.view.leases.get(p)?.value;
      // Not this node's, or a restore cut short (the lease still names its snapshot): gone.
      if (name.endsWith('.incoming') || l === undefined || l.node !== this.node.id || l.state !== 'held' || l.snapshot !== undefined) {
        await rm(path.join(root, name), { recursive: true, force: true });
      }
    }
  }

  async place(leaving: boolean): Promise<void> {
    const n = this.node;
    const members = n.view.placedMembers();
    const key = members.join(',');
    if (key !== this.membersKey) {
      this.membersKey = key;
      this.membersSince = Date.now();
    }
    if (!this.placedOnce) {
      if (leaving) {
        this.placedOnce = true;
      } else {
        if (members.length < n.meta.expect || !members.includes(n.id) || Date.now() - this.membersSince < SETTLE_MS) return;
        this.placedOnce = true;
      }
    }
    const owners = placement(n.meta.partitions, members);
    const mine = owners.filter((o) => o === n.id).length;
    for (const [p, to] of this.unshipped) if (!this.moving.has(p)) void this.ship(p, to);
    for (let p = 0; p < owners.length; p++) {
      const owner = owners[p];
      if (this.hosts.has(p)) {
        // Placed elsewhere, on a node that runs: hand it off.
        if (owner !== n.id && owner !== null && owner !== undefined && n.view.isLive(owner) && !this.moving.has(p)) void this.handoff(p, owner);
        continue;
      }
      if (owner !== n.id || leaving || this.opening.has(p) || this.moving.has(p) || this.unshipped.has(p)) continue;
      const l = n.view.leases.get(p)?.value;
      if (l !== undefined && l.node !== n.id && (l.state === 'held' || (l.to !== undefined && l.to !== n.id))) continue;
      this.opening.add(p);
      // The server away: the next placement tries again (a restore cut short is done again).
      void this.acquire(p, mine).catch((e) => { if (!isTransient(e)) n.fail(e); }).finally(() => this.opening.delete(p));
    }
  }

  private async acquire(p: number, count: number): Promise<void> {
    const n = this.node;
    const got = await takeLease(n.engine, p, n.id);
    if (got === null) return;
    this.leaseRev.set(p, got.revision);
    const dir = partitionDir(n.cfg.stateDir, p);
    if (got.restore !== undefined) {
      n.log(`partition ${p}: restoring ${got.restore}`);
      await downloadPartition(n.engine, got.restore, dir);
      this.movedIn++;
    }
    const cfg: CrawlConfig = { ...n.cfg, stateDir: dir, outDir: partitionDir(n.cfg.outDir, p), statusPort: null, progress: 'none', maxPages: null, maxTimeMs: null, paused: false };
    const host = new PartitionHost(p, n, cfg, { ...n.parts, ramBytes: this.partitionRam(count) });
    await host.open(this.resumeOverrides());
    host.crawler!.on('checkpoint', (m: CheckpointManifest) => n.checkpointed(m));
    if (n.holding) host.crawler!.pause();
    if (n.stopping) {
      await host.close('stop');
      return;
    }
    this.hosts.set(p, host);
    if (got.restore !== undefined) {
      const rev = await restored(n.engine, p, n.id, got.revision);
      if (rev !== null) this.leaseRev.set(p, rev);
      await deleteSnapshot(n.engine, got.restore);
    }
    void host.ended().then((s) => {
      if (this.hosts.get(p) === host) n.partitionEnded(p, s);
    });
  }

  /**
   * Hands partition p to `to`: stop and checkpoint it, then ship it (below). A failure to ship
   * while the server is away leaves the partition closed and its lease this node's: the next
   * placement ships it again.
   */
  private async handoff(p: number, to: string): Promise<void> {
    const n = this.node;
    const host = this.hosts.get(p);
    if (host === undefined) return;
    this.moving.add(p);
    this.hosts.delete(p);
    n.ranks.forget(p);
    try {
      n.log(`partition ${p}: handing off to ${to}`);
      await host.close('handoff');
    } catch (e) {
      this.moving.delete(p);
      n.fail(e);
      return;
    }
    this.moving.delete(p);
    await this.ship(p, to);
  }

  /** Uploads closed partition p's directory, releases the lease to `to` naming it, removes the directory. */
  private async ship(p: number, to: string): Promise<void> {
    const n = this.node;
    const dir = partitionDir(n.cfg.stateDir, p);
    this.moving.add(p);
    this.unshipped.delete(p);
    try {
      const name = `p${String(p).padStart(4, '0')}.${n.id}.${Date.now()}`;
      await uploadPartition(n.engine, name, dir);
      const rev = this.leaseRev.get(p);
      if (rev === undefined || !(await releaseLease(n.engine, p, n.id, rev, name, to))) {
        throw new CrawlError('CRAWL_CLUSTER_LEASE', `partition ${p}: the lease changed under its holder ${n.id}`);
      }
      this.leaseRev.delete(p);
      await rm(dir, { recursive: true, force: true });
      this.movedOut++;
    } catch (e) {
      if (isTransient(e)) this.unshipped.set(p, to);
      else n.fail(e);
    } finally {
      this.moving.delete(p);
    }
  }

  /** What a partition's resume may set from this node's current settings (resume.ts RESUMABLE). */
  private resumeOverrides(): CrawlConfigInput {
    const c = this.node.cfg;
    return {
      ramBytes: c.ramBytes, workers: c.workers, fetchConcurrency: c.fetchConcurrency, checkpointIntervalMs: c.checkpointIntervalMs,
      hostDelayMs: c.hostDelayMs, ipDelayMs: c.ipDelayMs, minHostDelayMs: c.minHostDelayMs, minIpDelayMs: c.minIpDelayMs,
      dnsServers: c.dnsServers, allowNetworks: c.allowNetworks,
    };
  }

  /**
   * A partition's share of the node's RAM: half of --ram (the rest is the shared parts': parse
   * workers, threads, router) over the partitions this node is to host, at least PARTITION_RAM_MIN.
   */
  private partitionRam(count: number): number {
    const members = Math.max(1, this.node.view.placedMembers().length);
    const k = Math.max(1, count, this.hosts.size + this.opening.size, Math.ceil(this.node.meta.partitions / members));
    return Math.max(PARTITION_RAM_MIN, Math.floor(this.node.cfg.ramBytes / 2 / k));
  }
}
