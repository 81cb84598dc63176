/**
 * Checkpoints of a running crawl (thesis Fig. 2 has none: IRLbot was stopped for maintenance; a
 * resumable crawl needs them): the manifest, pending.bin, done.log and the frontier's commit, as
 * checkpoint.ts describes. Each covers every page finished before it began (startedAt): their
 * bodies through ContentSeen, their links through URLseen, WARC and logs synced.
 *
 * Two kinds:
 *   - full (the start, a stop, the end): the merges are pushed through while the scheduler waits;
 *     a stop waits for them anyway.
 *   - periodic (every checkpointIntervalMs; a partition of a cluster crawl takes full ones): the same
 *     merges run beside the scheduler — the one under way of each kind, then one of ContentSeen
 *     and one of URLseen started for this checkpoint, then STAR's commit — and then the commit
 *     proper (the sync, the frontier's commit, pending.bin, done.log, the manifest) with no merge
 *     running (no merge result reaches the frontier while it snapshots). A URLseen
 *     merge costs seconds on a large crawl (its cost grows with URLseen, thesis V): pushed through
 *     while the scheduler waited, it stopped every fetch for 5–18 s a minute in bench:soak at
 *     10^6 hosts (issue #31). Pages finished after startedAt are simply not covered: they stay in
 *     pending.bin, as pages in flight do, and reach done.log when they are durable.
 *
 * A periodic checkpoint's commit proper holds the scheduler only for the instant of the frontier's
 * RAM snapshot: the pending set and done.log's mark are taken in that same turn of the event loop,
 * and the snapshot's writing (copy-on-free, src/frontier/politeness/ram-snapshot.ts), the sync,
 * pending.bin, the robots journal's fsync, the frontier's cursors and the manifest follow beside
 * the crawl (write). A full checkpoint holds it throughout. Holding it for the whole commit cost
 * 0.75–2.10 s a minute in bench:soak at 10^6 hosts; for the snapshot's encoding, 0.4–1.3 s a
 * checkpoint at the default --ram (444,000 URLs in RAM).
 */
import path from 'node:path';
import { writeManifest, writePending, MANIFEST_VERSION, type CheckpointManifest } from '../state/checkpoint.js';
import { MergeSchedule } from './merge-schedule.js';
import { finishCdxj } from '../store/index.js';
import { DNS_CACHE_FILE, encodeDnsFileSliced } from '../dns/index.js';
import { writeFileAtomic } from '../disk/index.js';

export abstract class CheckpointStage extends MergeSchedule {
  protected finished = false;
  protected lastCheckpoint = Date.now();
  protected checkpoints = 0;
  protected lastCheckpointAt: string | null = null;
  protected readonly cpuStart = process.cpuUsage();
  /**
   * A periodic checkpoint's merges, run beside the scheduler (see the top comment): null, 'merging'
   * while they run, 'ready' once they have ended and none may start; `periodicFrom` is when it
   * became due (its startedAt).
   */
  private periodic: 'merging' | 'ready' | null = null;
  private periodicFrom = new Date();
  private periodicMerging: Promise<void> | null = null;
  /**
   * WARC files of earlier runs (bare names) whose CDXJ index the resume's recovery repaired and
   * left unsorted (recovery.ts): sorted one after the other beside the crawl (finishCdxj) rather
   * than before its first request — a GiB file's index is ~64 MB, 3–6 s to sort and write at 10^6
   * hosts in bench:soak. Each manifest lists those not finished yet (`indexing`), so that a crash
   * before then leaves them to the next resume.
   */
  private readonly indexing = new Set<string>();
  private indexingDone: Promise<void> = Promise.resolve();
  /** The checkpoint being written, if any: one at a time (checkpoint() is also the crawler's API). */
  private writing: Promise<void> | null = null;

  /**
   * A periodic checkpoint when one is due (the scheduler calls this every turn), or when a cluster
   * crawl's schedule asks for one (cluster-port.ts checkpointDue): the turn that finds one due
   * starts its merges and returns; the first turn after they have ended commits it.
   */
  protected async periodicCheckpoint(): Promise<void> {
    if (this.periodic === 'ready') {
      this.periodic = null;
      // The scheduler goes on once the frontier's snapshot is taken (the top comment); the rest
      // of the commit runs beside it, and a failure there fails the crawl.
      let taken!: () => void;
      const snapshotTaken = new Promise<void>((r) => (taken = r));
      const commit = this.checkpointNow('periodic', false, this.periodicFrom, taken);
      commit.catch((e: unknown) => this.fail(e));
      await Promise.race([snapshotTaken, commit.catch(() => undefined)]);
      return;
    }
    if (this.periodic !== null || this.writing !== null) return;
    if (Date.now() - this.lastCheckpoint < this.cfg.checkpointIntervalMs && this.cluster?.checkpointDue() !== true) return;
    if (this.cluster !== null) {
      // A partition of a cluster crawl: a full one. Its checkpoint acknowledges the batches other
      // nodes sent and this one admitted before it began (cluster-port.ts checkpointStarting), so
      // those must be merged by it; and the votes its STAR routes must be in the stream first.
      await this.checkpointNow('periodic', true, new Date());
      return;
    }
    this.periodic = 'merging';
    this.periodicFrom = new Date();
    this.periodicMerging = this.periodicMerges().finally(() => {
      this.periodicMerging = null;
      if (this.periodic === 'merging') this.periodic = 'ready';
      this.wake.kick();
    });
  }

  /**
   * A stop's drain calls this each turn: a periodic checkpoint whose merges have ended is committed
   * now. Only its commit lets merges run again (holdContentMerges), and the pages the drain waits
   * for need a ContentSeen merge; left for the scheduler's loop, which a stop has already left, it
   * held the stop for ever (bench:soak: a SIGTERM 4 s into a periodic checkpoint, 15 minutes
   * "stopping", nothing in flight).
   */
  protected async settlePeriodic(): Promise<void> {
    if (this.periodic === 'ready') await this.periodicCheckpoint();
  }

  /**
   * ContentSeen then URLseen, each after the merge of its kind under way: the bodies of every page
   * finished so far, then their links. Started here rather than by startMerges (merge-schedule.ts),
   * which starts none of a kind while one runs; from the URLseen merge on, new merges wait for the
   * commit (ContentSeen's go on during the URLseen merge, so the bodies' bound is not reached). A
   * full checkpoint that comes meanwhile waits for all of it (write).
   */
  private async periodicMerges(): Promise<void> {
    while (this.contentMerging !== null) await this.contentMerging;
    this.contentMerging = this.trackMerge(this.mergeContent()).finally(() => {
      this.contentMerging = null;
    });
    await this.contentMerging;
    while (this.urlMerging !== null) await this.urlMerging;
    this.holdUrlMerges = true;
    this.urlMerging = this.trackMerge(this.mergeUrlSeen()).finally(() => {
      this.urlMerging = null;
    });
    await this.urlMerging;
    // STAR's PLD links and in-degrees (its DRUMs' flush sweeps their Z files: a cost that grows
    // with the PLD graph) for those pages and the URLs that merge admitted. Links of later pages
    // that reach STAR meanwhile are not covered: their pages are not either, and a vote is a key
    // (star.ts), so counting one again after a re-fetch changes nothing.
    await this.frontier.checkpoint();
    this.holdContentMerges = true;
    while (this.contentMerging !== null) await this.contentMerging;
  }

  /** Finish the CDXJ indexes of `names` (WARC files in the output directory), beside the crawl. */
  protected finishIndexes(names: readonly string[]): void {
    if (names.length === 0) return;
    for (const n of names) this.indexing.add(n);
    this.indexingDone = (async () => {
      for (const n of names) {
        await finishCdxj(path.join(this.cfg.outDir, n));
        this.indexing.delete(n);
      }
    })().catch((e: unknown) => this.fail(e));
  }

  /** The indexes being finished (awaited before the crawler closes). */
  protected indexed(): Promise<void> {
    return this.indexingDone;
  }

  /** A full checkpoint (after the one being written, if any). */
  async checkpoint(reason: string): Promise<void> {
    await this.checkpointNow(reason, true, new Date());
  }

  private async checkpointNow(reason: string, full: boolean, from: Date, snapshotTaken?: () => void): Promise<void> {
    while (this.writing !== null) await this.writing.catch(() => undefined);
    const p = this.write(reason, full, from, snapshotTaken);
    this.writing = p;
    try {
      await p;
    } finally {
      if (this.writing === p) this.writing = null;
    }
  }

  /**
   * The DNS cache's answers, for the resume to load (src/dns/dns-file.ts): a cache, not state, so
   * written after the manifest, and a failed write costs the next resume DNS queries, not the
   * crawl: counted (`dns-cache:unsaved`), not thrown. A partition of a cluster node shares its
   * node's cache: not saved.
   */
  private async saveDnsCache(): Promise<void> {
    if (this.opts.shared !== undefined) return;
    const file = path.join(this.cfg.stateDir, DNS_CACHE_FILE);
    // A copy first: hits reorder the cache while the slices are encoded.
    const text = await encodeDnsFileSliced([...this.dns.entries()]);
    await writeFileAtomic(file, text, undefined, 'dns-cache').catch(() => this.count('dns-cache:unsaved'));
  }

  /** Merges may start again; a full checkpoint took the place of a periodic one waiting for its merges. */
  private releaseHolds(): void {
    this.holdUrlMerges = false;
    this.holdContentMerges = false;
    this.periodic = null;
  }

  /**
   * A periodic checkpoint's frontier commit that lets the scheduler go once its RAM snapshot is
   * taken (`released`). The pending set, done.log's mark and the done.log entries to keep are taken
   * in the snapshot's own turn of the event loop: every URL not in a committed queue is then in the
   * snapshot (RAM, in flight) or in that pending set (parsing, awaiting a merge or the sync). What
   * the scheduler releases afterwards was in RAM, so in the snapshot; merges wait until the end
   * (holdUrlMerges), and refills wait for the frontier's commit (frontier-port.ts serial). The
   * outputs' sync and pending.bin need only be durable before the frontier's manifest names the
   * snapshot. Returns the done.log entries to keep: those of the resumed checkpoint not handed out
   * at the snapshot (one handed out, and skipped, after it is in the snapshot: its entry stays).
   */
  private async commitReleasing(released: () => void): Promise<{ keepDone: Uint8Array[]; outside: (id: number) => boolean }> {
    let atSnapshot: Uint8Array[] = [];
    let keepDone: Uint8Array[] = [];
    let outside = (_id: number): boolean => false;
    await this.frontier.commit({
      star: false, // (a periodic checkpoint's STAR commit ran with its merges)
      hooks: {
        snapshotTaken: () => {
          outside = this.outsideSnapshot();
          atSnapshot = [...this.pending].filter(([id]) => outside(id)).map(([, r]) => r);
          keepDone = [...this.again.doneRecords()];
          this.doneLog?.mark();
          released();
        },
        beforeSwitch: async () => {
          await this.syncOutputs();
          await writePending(this.cfg.stateDir, atSnapshot);
        },
      },
    });
    return { keepDone, outside };
  }

  /**
   * Taken in the turn of the frontier's RAM snapshot: does pending page `id` need pending.bin, i.e.
   * is its URL outside the snapshot? Pages the frontier held then (released, fetchDone not yet
   * called: heldIds) are in it, and so is every page released after it (from RAM: refills wait for
   * the commit). A page in flight at the snapshot whose fetch ended before the commit did was
   * written to pending.bin too, and a resumed crawl then held it twice: done.log skips one hand-out
   * per run, so the other was fetched again a run later (bench:soak; test/crawl/checkpoint-periodic).
   */
  private outsideSnapshot(): (id: number) => boolean {
    const held = new Set(this.heldIds);
    const last = this.nextId - 1;
    return (id) => id <= last && !held.has(id);
  }

  /**
   * `snapshotTaken` (a periodic checkpoint of a crawl on one node): called once the frontier's RAM
   * snapshot is taken — the scheduler waits only until then. Else the caller waits for all of it.
   */
  private async write(reason: string, full: boolean, from: Date, snapshotTaken?: () => void): Promise<void> {
    const T = (l: string): void => { if (process.env.DRUMCRAWL_DEBUG_TIMING) console.error(`ckpt ${l} ${(performance.now() - t0).toFixed(1)}`); };
    const t0 = performance.now();
    const startedAt = from.toISOString();
    // The received batches admitted so far: this checkpoint holds their effect (cluster-port.ts).
    const mark = this.cluster?.checkpointStarting() ?? 0;
    this.emit('checkpoint-start', { reason, full });
    this.holdUrlMerges = true;
    this.holdContentMerges = true;
    let committed = false;
    try {
      // A periodic checkpoint's merges this one takes the place of: its STAR commit must not run
      // beside this one's.
      while (this.periodicMerging !== null) await this.periodicMerging;
      // (URLseen's unique URLs are admitted, durably, before its merge commits: nothing waits here.)
      while (this.contentMerging !== null || this.urlMerging !== null) await (this.contentMerging ?? this.urlMerging);
      if (full) {
        // Push everything buffered through: ContentSeen → (WARC, links) → URLseen → frontier.
        await this.mergeContent();
        await this.mergeUrlSeen();
      }
      // pending.bin before the frontier moves its read cursors: every URL taken out of the frontier
      // and not yet durable (in flight, parsing, awaiting a merge) is either still in the frontier's
      // committed state or in this file. After the commit, the file is rewritten without the URLs
      // the frontier's RAM snapshot holds (outsideSnapshot: no double fetch after resume).
      let keepDone: Iterable<Uint8Array> | null = null;
      let outside = (_id: number): boolean => true;
      if (snapshotTaken === undefined) {
        await this.syncOutputs();
        T('merged+synced');
        await writePending(this.cfg.stateDir, this.pending.values());
        this.doneLog?.mark();
        await this.frontier.commit({ star: full, hooks: { snapshotTaken: () => (outside = this.outsideSnapshot()) } });
      } else {
        T('committing');
        ({ keepDone, outside } = await this.commitReleasing(() => {
          this.runMetrics.checkpointHolds.record(performance.now() - t0);
          T('snapshot-taken');
          snapshotTaken();
        }));
      }
      T('frontier.commit');
      // Votes STAR routed to other partitions while it committed are in the stream before the manifest.
      await this.cluster?.flush();
      // The frontier's state now covers every page finished before the mark; keep what it does not.
      this.doneLog?.rewrite(keepDone ?? this.again.doneRecords());
      await writePending(this.cfg.stateDir, [...this.pending].filter(([id]) => outside(id)).map(([, r]) => r));
      committed = true;
    } finally {
      if (!committed) this.releaseHolds();
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
      ...(this.indexing.size > 0 ? { indexing: [...this.indexing] } : {}),
    };
    this.counters.crawlMs += elapsed;
    // Merges wait until the manifest is written too: with the scheduler let go at the snapshot, one
    // started here would run within the checkpoint.
    try {
      await writeManifest(this.cfg.stateDir, m);
    } finally {
      this.releaseHolds();
    }
    this.cluster?.checkpointCommitted(mark);
    await this.saveDnsCache();
    this.checkpoints++;
    this.lastCheckpointAt = m.writtenAt;
    this.runMetrics.checkpoints.record(performance.now() - t0);
    if (snapshotTaken === undefined) this.runMetrics.checkpointHolds.record(performance.now() - t0);
    this.emit('checkpoint', m);
  }
}
