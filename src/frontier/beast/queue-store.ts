/**
 * What BEAST keeps its queues in (thesis VII.2: Q1..Qj and QF on disk): one queue's interface
 * (BeastQueue), the store of all of them with the combined manifest (BeastStore), and what that
 * manifest remembers of one queue (QueueState). log-queue.ts keeps them in files, memory-store.ts
 * in RAM for the models and tests.
 */
import type { IoCount } from '../queue.js';

/** What the combined manifest remembers of one queue. */
export interface QueueState {
  /** Committed end of the file (bytes) and records pushed up to it. */
  end: number;
  pushed: number;
  /** Checkpointed read cursor: block offset, records consumed in that block, records shifted. */
  off: number;
  idx: number;
  shifted: number;
}

/** A FIFO of records as BEAST uses it (reads are synchronous: page-cache reads of whole blocks). */
export interface BeastQueue {
  /** Appends a copy of `record` (the caller may reuse its bytes: BEAST encodes into one scratch buffer). */
  push(record: Uint8Array): void;
  /** Next up to `max` records; [] when empty. Views: valid until the queue is closed. */
  shiftSync(max: number): Uint8Array[];
  /** Records pushed and not yet shifted. */
  readonly length: number;
  /** Records pushed so far (buffered ones included). */
  readonly pushed: number;
  /** Bytes written to the file so far (after flush(): everything pushed). */
  readonly end: number;
  /** Writes the buffered records to the file (page cache; no fsync). */
  flush(): void;
  /** fdatasync of everything written so far, on the thread pool. */
  sync(): Promise<void>;
  /** The live read cursor, normalised (a fully consumed block → the start of the next one). */
  cursor(): { off: number; idx: number; shifted: number };
  /**
   * Closes the queue: drops the handle without writing anything (the file stays; closing an
   * in-flight sync's descriptor waits for it). A queue never commits on its own — what is durable
   * is the state BEAST's manifest records (BEAST.checkpoint) — so this is its only close.
   */
  release(): void;
}

/** The directory of BEAST's queues plus its double-slot manifest. */
export interface BeastStore {
  /** Opens (or creates lazily) the queue `name` at a manifest state (null = new and empty). */
  open(name: string, state: QueueState | null): BeastQueue;
  /** Deletes a queue (its handle is dropped first). */
  remove(name: string): Promise<void>;
  list(): Promise<string[]>;
  readManifest(): Promise<string | null>;
  /** Durable when resolved. Calls must not overlap (BEAST chains them). */
  writeManifest(text: string): Promise<void>;
  /** True when a queue file was created since the last call (its directory entry needs an fsync). */
  takeCreated(): boolean;
  syncDir(): Promise<void>;
  io(): IoCount;
  /**
   * Releases every queue and closes the manifest: nothing is written (see BeastQueue.release;
   * the last manifest checkpoint is the durable state). BEAST's close.
   */
  releaseAll(): void;
}
