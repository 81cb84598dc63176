/**
 * BEAST's queues in RAM (MemoryBeastStore), I/O counted as if framed on disk: the store the models
 * and unit tests run BEAST on; the file store is log-queue.ts.
 */
import type { IoCount } from '../queue.js';
import type { BeastQueue, BeastStore, QueueState } from './queue-store.js';

/** Per-record framing overhead counted by the memory store (as if a 4-byte length prefix). */
const FRAME = 4;

/** In RAM, I/O counted as if framed on disk; like the files, survives releaseAll + reopen. */
export class MemoryBeastQueue implements BeastQueue {
  /** Records; index i holds record number base + i. */
  items: Uint8Array[] = [];
  private base = 0;
  private pushedN = 0;
  private shifted = 0;
  /** Records below this (absolute) are never read again, even after a reopen: safe to drop. */
  private keepFrom = 0;

  constructor(private readonly counter: IoCount) {}

  /** Back to a manifest state: records past `pushed` are cut, reading resumes at `shifted`. */
  reset(state: QueueState | null): void {
    const s = state ?? { end: 0, pushed: 0, off: 0, idx: 0, shifted: 0 };
    if (s.pushed - this.base < this.items.length) this.items.length = Math.max(0, s.pushed - this.base);
    this.pushedN = s.pushed;
    this.shifted = s.shifted;
    this.keepFrom = s.shifted;
  }

  get length(): number {
    return this.pushedN - this.shifted;
  }

  get pushed(): number {
    return this.pushedN;
  }

  get end(): number {
    return this.pushedN;
  }

  push(record: Uint8Array): void {
    this.items.push(record.slice()); // the caller may reuse its bytes (BeastQueue.push)
    this.pushedN++;
    this.counter.bytesWritten += record.length + FRAME;
  }

  shiftSync(max: number): Uint8Array[] {
    const out: Uint8Array[] = [];
    while (out.length < max && this.shifted < this.pushedN) {
      const r = this.items[this.shifted - this.base]!;
      this.counter.bytesRead += r.length + FRAME;
      out.push(r);
      this.shifted++;
    }
    return out;
  }

  flush(): void {}

  async sync(): Promise<void> {}

  cursor(): { off: number; idx: number; shifted: number } {
    // A checkpoint: nothing before this is read again, so it can be dropped from RAM.
    this.keepFrom = this.shifted;
    const drop = this.keepFrom - this.base;
    if (drop > 4096 && drop * 2 > this.items.length) {
      this.items = this.items.slice(drop);
      this.base = this.keepFrom;
    }
    return { off: this.shifted, idx: 0, shifted: this.shifted };
  }

  release(): void {}
}

/** BEAST in RAM (simulations, benches): nothing touches the disk; the manifest is kept as text. */
export class MemoryBeastStore implements BeastStore {
  private readonly queues = new Map<string, MemoryBeastQueue>();
  private meta: string | null = null;
  private readonly counter: IoCount = { bytesRead: 0, bytesWritten: 0 };

  open(name: string, state: QueueState | null): BeastQueue {
    let q = this.queues.get(name);
    if (!q) {
      q = new MemoryBeastQueue(this.counter);
      this.queues.set(name, q);
    }
    q.reset(state);
    return q;
  }

  async remove(name: string): Promise<void> {
    this.queues.delete(name);
  }

  async list(): Promise<string[]> {
    return [...this.queues.keys()];
  }

  async readManifest(): Promise<string | null> {
    return this.meta;
  }

  async writeManifest(text: string): Promise<void> {
    this.meta = text;
  }

  takeCreated(): boolean {
    return false;
  }

  async syncDir(): Promise<void> {}

  io(): IoCount {
    return { ...this.counter };
  }

  releaseAll(): void {}
}
