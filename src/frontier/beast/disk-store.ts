/**
 * The frontier's queues on src/disk's DiskQueue: append-only segment files of checksummed
 * (optionally zstd-compressed) blocks, FIFO, durable read cursor, at-least-once (src/disk/disk-queue.ts).
 *
 * RAM bound per open queue: one write buffer (blockBytes) + one decoded read block, so BEAST's
 * j + 3 open queues (Q1..Qj, QF, QR, the snapshot) cost about 2·(j + 3)·blockBytes.
 */
import { DiskQueue, IoCounters } from '../../disk/index.js';
import { FsQueueStore } from '../queue.js';

export interface DiskStoreOptions {
  /** Block size of each queue. @default 65536 (64 KiB: j may reach hundreds of queues) */
  blockBytes?: number;
  /** @default 'zstd' */
  compression?: 'zstd' | 'none';
  /** @default 67108864 */
  segmentBytes?: number;
}

export function openDiskQueueStore(dir: string, opts: DiskStoreOptions = {}): FsQueueStore & { counters: IoCounters } {
  const io = new IoCounters();
  const qopts = {
    blockBytes: opts.blockBytes ?? 65536,
    compression: opts.compression ?? 'zstd',
    segmentBytes: opts.segmentBytes ?? 64 * 1024 * 1024,
    io,
    // QR and the RAM snapshots: after a crash, what was pushed since the last commit is cut (QR's
    // re-pushes and the URLs it took from BEAST come back from the committed cursors).
    uncommittedTail: 'cut' as const,
  };
  const store = new FsQueueStore(
    dir,
    (d) => DiskQueue.open(d, qopts),
    () => {
      const t = io.total();
      return { bytesRead: t.bytesRead, bytesWritten: t.bytesWritten };
    },
    // (Releasing a queue commits nothing: its owner records what is durable.)
    (q) => void (q as DiskQueue).close({ commit: false }),
  ) as FsQueueStore & { counters: IoCounters };
  store.counters = io;
  return store;
}
