/**
 * Checkpoints of a running crawl (thesis Fig. 2 has none: IRLbot was stopped for maintenance; a
 * resumable crawl needs them): the manifest, pending.bin, done.log and the frontier's commit, as
 * checkpoint.ts describes. Every checkpoint the crawler takes is full (every merge is pushed through
 * first) and holds the scheduler while it runs, the periodic ones (every checkpointIntervalMs)
 * included: on a large crawl a URLseen merge runs for seconds (its cost grows with URLseen,
 * thesis V), and those seconds fetch nothing (issue #31; the soak's pauses chart shows them).
 *
 * checkpointNow(reason, false) is the periodic kind that would run beside the scheduler: it waits
 * only for a URLseen merge already running and holds new ones until it is done (admit-log.ts).
 * Dispatching while the frontier commits should be safe — a URL released after pending.bin was
 * written is in the frontier's RAM snapshot — but with it test/e2e/stop-resume.test.ts saw a page
 * in done.log at a kill requested again after the resume, so it is not used.
 */
import path from 'node:path';
import { writeManifest, writePending, MANIFEST_VERSION, type CheckpointManifest } from '../state/checkpoint.js';
import { MergeSchedule } from './merge-schedule.js';

export abstract class CheckpointStage extends MergeSchedule {
  protected finished = false;
  protected lastCheckpoint = Date.now();
  protected checkpoints = 0;
  protected lastCheckpointAt: string | null = null;
  protected readonly cpuStart = process.cpuUsage();
  /** A periodic checkpoint running beside the scheduler, or null. */
  private periodic: Promise<void> | null = null;

  /**
   * A periodic checkpoint when one is due (the scheduler calls this every turn), or when a cluster
   * crawl's schedule asks for one (cluster-port.ts checkpointDue): a full one, awaited. (One started
   * beside the scheduler — checkpointNow(reason, false) — let a page finished during the frontier's
   * commit be fetched again after a kill in test/e2e/stop-resume.test.ts; it is not used until that
   * is understood.)
   */
  protected async periodicCheckpoint(): Promise<void> {
    if (Date.now() - this.lastCheckpoint >= this.cfg.checkpointIntervalMs || this.cluster?.checkpointDue() === true) await this.checkpoint('periodic');
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
    // Synced even when no page waited for it (a new file's warcinfo): the recorded offset is on disk.
    const pos = await this.warc.syncedPosition();
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
