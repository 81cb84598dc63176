/**
 * The queue abstraction BEAST, QR and the RAM snapshot are written against, and its two homes:
 * `MemoryQueueStore` (simulations: I/O is counted, nothing touches the disk) and `FsQueueStore`
 * (one directory per queue, each opened by a given factory — normally src/disk's DiskQueue, whose
 * at-least-once contract is what the frontier's crash safety builds on).
 */
import { mkdir, open as openFile, readFile, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';

/** A FIFO of encoded records (the subset of src/disk's DiskQueue the frontier uses). */
export interface UrlQueue {
  push(record: Uint8Array): void;
  /** Next up to `max` records in FIFO order; [] when empty. */
  shift(max: number): Promise<Uint8Array[]>;
  /** Records pushed and not yet shifted. */
  readonly length: number;
  /** Makes appended records durable and persists the read cursor. */
  commit(): Promise<void>;
  close(): Promise<void>;
}

export interface IoCount {
  bytesRead: number;
  bytesWritten: number;
}

/** Named queues plus small atomic metadata files (manifests). */
export interface QueueStore {
  open(name: string): Promise<UrlQueue>;
  remove(name: string): Promise<void>;
  /** Drops an open queue's handle and buffers WITHOUT committing (its files stay). */
  release(name: string): void;
  list(): Promise<string[]>;
  readMeta(name: string): Promise<string | null>;
  /** Atomic replace (temp file, fsync, rename). */
  writeMeta(name: string, text: string): Promise<void>;
  /** Bytes read and written by all queues so far (for bench/beast). */
  io(): IoCount;
}

/** Per-record framing overhead counted by MemoryQueueStore (a 4-byte length prefix). */
const FRAME = 4;

export class MemoryUrlQueue implements UrlQueue {
  private items: Uint8Array[] = [];
  private head = 0;

  constructor(private readonly counter: IoCount) {}

  get length(): number {
    return this.items.length - this.head;
  }

  push(record: Uint8Array): void {
    this.items.push(record.slice()); // callers may reuse the bytes (as with DiskQueue, which copies)
    this.counter.bytesWritten += record.length + FRAME;
  }

  async shift(max: number): Promise<Uint8Array[]> {
    const end = Math.min(this.items.length, this.head + Math.max(0, max));
    const out = this.items.slice(this.head, end);
    for (const r of out) this.counter.bytesRead += r.length + FRAME;
    this.head = end;
    if (this.head > 4096 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return out;
  }

  async commit(): Promise<void> {}
  async close(): Promise<void> {}
}

/** All queues in RAM; I/O counted as if each record were framed on disk. For simulations only. */
export class MemoryQueueStore implements QueueStore {
  private readonly queues = new Map<string, MemoryUrlQueue>();
  private readonly meta = new Map<string, string>();
  private readonly counter: IoCount = { bytesRead: 0, bytesWritten: 0 };

  async open(name: string): Promise<UrlQueue> {
    let q = this.queues.get(name);
    if (!q) {
      q = new MemoryUrlQueue(this.counter);
      this.queues.set(name, q);
    }
    return q;
  }

  async remove(name: string): Promise<void> {
    this.queues.delete(name);
  }

  release(_name: string): void {
    // Nothing to free: the records must stay readable for an in-process reopen.
  }

  async list(): Promise<string[]> {
    return [...this.queues.keys()];
  }

  async readMeta(name: string): Promise<string | null> {
    return this.meta.get(name) ?? null;
  }

  async writeMeta(name: string, text: string): Promise<void> {
    this.meta.set(name, text);
  }

  io(): IoCount {
    return { ...this.counter };
  }
}

/**
 * Queues as directories under `dir/queues/`, each opened by `openQueue` (see `openDiskQueueStore`
 * for the DiskQueue-backed one); `io` reports the bytes all of them read and wrote.
 */
export class FsQueueStore implements QueueStore {
  private readonly open_ = new Map<string, UrlQueue>();

  constructor(
    readonly dir: string,
    private readonly openQueue: (dir: string) => Promise<UrlQueue>,
    private readonly ioFn: () => IoCount = () => ({ bytesRead: 0, bytesWritten: 0 }),
    /** Drops a queue's handles without committing (what a crash leaves); optional. */
    private readonly abandonQueue?: (q: UrlQueue) => void,
  ) {}

  private qdir(name: string): string {
    return path.join(this.dir, 'queues', name);
  }

  async open(name: string): Promise<UrlQueue> {
    const have = this.open_.get(name);
    if (have) return have;
    await mkdir(this.qdir(name), { recursive: true });
    const q = await this.openQueue(this.qdir(name));
    this.open_.set(name, q);
    return q;
  }

  async remove(name: string): Promise<void> {
    const q = this.open_.get(name);
    if (q) {
      await q.close();
      this.open_.delete(name);
    }
    await rm(this.qdir(name), { recursive: true, force: true });
  }

  release(name: string): void {
    const q = this.open_.get(name);
    if (!q) return;
    this.open_.delete(name);
    if (this.abandonQueue) this.abandonQueue(q);
  }

  async list(): Promise<string[]> {
    try {
      return await readdir(path.join(this.dir, 'queues'));
    } catch {
      return [];
    }
  }

  async readMeta(name: string): Promise<string | null> {
    try {
      return await readFile(path.join(this.dir, name), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
  }

  async writeMeta(name: string, text: string): Promise<void> {
    await writeAtomic(path.join(this.dir, name), text);
  }

  io(): IoCount {
    return this.ioFn();
  }

  async closeAll(): Promise<void> {
    for (const q of this.open_.values()) await q.close();
    this.open_.clear();
  }
}

/** Write a small file atomically: temp file, fsync, rename, fsync the directory. */
export async function writeAtomic(file: string, data: string | Uint8Array): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp`;
  const fh = await openFile(tmp, 'w');
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, file);
  try {
    const d = await openFile(path.dirname(file), 'r');
    try {
      await d.sync();
    } finally {
      await d.close();
    }
  } catch {
    // Directory fsync is not supported everywhere; the rename itself is atomic.
  }
}
