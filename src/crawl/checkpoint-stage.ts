/**
 * Checkpoints of a running crawl (thesis Fig. 2 has none: IRLbot was stopped for maintenance; a
 * resumable crawl needs them): the manifest, pending.bin, done.log and the frontier's commit, as
 * checkpoint.ts describes. Two kinds:
 *
 *   - full (start, resume, the final one of a stop): every merge is pushed through first;
 *   - periodic (every checkpointIntervalMs): started beside the scheduler, which keeps dispatching.
 *     It does not wait for new merges — only for a URLseen merge already running, whose admissions
 *     become durable at its own commit — and no URLseen merge starts until it is done (a merge's
 *     admissions made durable by the frontier's commit before admits.bin names them would come back
 *     twice after a kill: admit-log.ts). What it leaves unmerged is in pending.bin, as at any other
 *     moment.
 *
 * Why periodic checkpoints do not stop the crawl: a URLseen merge runs for seconds on a large crawl
 * (its cost grows with URLseen, thesis V), and a checkpoint that waited for it and for a new one
 * held every fetch meanwhile: on a web of 10^6 hosts, 8 of 96 five-second windows fetched no page.
 * Dispatching while the frontier commits is safe: a URL released after pending.bin was written is in
 * the frontier's RAM snapshot (in flight counts), and the second pending.bin leaves out only URLs in
 * flight at that moment, which the snapshot holds.
 */
import path from 'node:path';
import { writeManifest, writePending, MANIFEST_VERSION, type CheckpointManifest } from './checkpoint.js';
import { FetchStage } from './fetch-stage.js';

export abstract class CheckpointStage extends FetchStage {
  protected finished = false;
  protected lastCheckpoint = Date.now();
  protected checkpoints = 0;
  protected lastCheckpointAt: string | null = null;
  protected readonly cpuStart = process.cpuUsage();
  /** A periodic checkpoint running beside the scheduler, or null. */
  private periodic: Promise<void> | null = null;

  /**
   * Starts a periodic checkpoint when one is due (the scheduler calls this every turn): beside the
   * scheduler, not waited for — except on a partition of a cluster crawl, whose checkpoint acks the
   * batches admitted before it started (cluster-port.ts checkpointStarting): there it is a full
   * one, awaited, as the cluster's own schedule (checkpointDue) asks for it too.
   */
  protected async periodicCheckpoint(): Promise<void> {
    const due = Date.now() - this.lastCheckpoint >= this.cfg.checkpointIntervalMs;
    if (this.cluster !== null) {
      if (due || this.cluster.checkpointDue()) await this.checkpoint('periodic');
      return;
    }
    if (this.periodic !== null || !due) return;
    this.periodic = this.checkpointNow('periodic', false)
      .catch((e: unknown) => this.fail(e))
      .finally(() => {
        this.periodic = null;
        this.wake.kick();
      });
  }

  /** A full checkpoint (after a periodic one still running). */
  async checkpoint(reason: string): Promise<void> {
    while (this.periodic !== null) await this.periodic;
    await this.checkpointNow(reason, true);
  }

  private async checkpointNow(reason: string, full: boolean): Promise<void> {
    const T = (l: string): void => { if (process.env.DRUMCRAWL_DEBUG_TIMING) console.error(`ckpt ${l} ${(performance.now() - t0).toFixed(1)}`); };
    const t0 = performance.now();
    const startedAt = new Date().toISOString();
    // The received batches admitted so far: this checkpoint holds their effect (cluster-port.ts).
    const mark = this.cluster?.checkpointStarting() ?? 0;
    this.emit('checkpoint-start', { reason, full });
    this.holdUrlMerges = true;
    try {
      // (URLseen's unique URLs are admitted, durably, before its merge commits: nothing waits here.)
      if (full && this.contentMerging) await this.contentMerging;
      if (this.urlMerging) await this.urlMerging;
      if (full) {
        // Push everything buffered through: ContentSeen → (WARC, links) → URLseen → frontier.
        await this.mergeContent();
        await this.mergeUrlSeen();
      }
      await this.syncOutputs();
      T('merged+synced');
      await this.frontier.checkpoint();
      T('star');
      // pending.bin before the frontier moves its read cursors: every URL taken out of the frontier
      // and not yet durable (in flight, parsing, awaiting a merge) is either still in the frontier's
      // committed state or in this file. After the commit, in-flight URLs are in the frontier's RAM
      // snapshot, so the file is rewritten without them (no double fetch after resume).
      await writePending(this.cfg.stateDir, this.pending.values());
      this.doneLog?.mark();
      await this.frontier.commit();
      T('frontier.commit');
      // Votes STAR routed to other partitions while it committed are in the stream before the manifest.
      await this.cluster?.flush();
      // The frontier's state now covers every page finished before the mark; keep what it does not.
      this.doneLog?.rewrite(this.again.doneRecords());
      const inFlightIds = new Set(this.inFlightIds);
      await writePending(this.cfg.stateDir, [...this.pending].filter(([id]) => !inFlightIds.has(id)).map(([, r]) => r));
    } finally {
      this.holdUrlMerges = false;
    }
    const elapsed = Date.now() - this.lastCheckpoint;
    this.lastCheckpoint = Date.now();
    this.epoch++;
    const cpu = process.cpuUsage(this.cpuStart);
    const pos = await this.warc.position();
    const m: CheckpointManifest = {
      version: MANIFEST_VERSION,
      epoch: this.epoch,
      startedAt,
      writtenAt: new Date().toISOString(),
      reason,
      finished: this.finished,
      config: this.cfg,
      counters: { ...this.counters, crawlMs: this.counters.crawlMs + elapsed, cpuMicros: cpu.user + cpu.system },
      warc: { file: path.basename(pos.file), offset: pos.offset },
      seedsInjected: this.seedsInjected,
      scopeHosts: this.scopeHosts,
      scopePlds: this.scopePlds,
      pending: this.pending.size,
    };
    this.counters.crawlMs += elapsed;
    await writeManifest(this.cfg.stateDir, m);
    this.cluster?.checkpointCommitted(mark);
    this.checkpoints++;
    this.lastCheckpointAt = m.writtenAt;
    this.runMetrics.checkpoints.record(performance.now() - t0);
    this.emit('checkpoint', m);
  }
}
