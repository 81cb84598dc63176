/**
 * I/O accounting. Every read and write done by src/disk and src/drum goes through one of these
 * counters, per file kind ('queue', 'bucket-kv', 'bucket-aux', 'cache', 'manifest' …), because the
 * thesis cost model (Theorem 2) predicts exactly these bytes: alpha = (bytes read + written) / (b·n).
 */
export interface IoKindCounters {
  bytesRead: number;
  bytesWritten: number;
  reads: number;
  writes: number;
  syncs: number;
}

export class IoCounters {
  /** Per file kind. Bounded: a handful of kinds per structure. */
  readonly kinds: Record<string, IoKindCounters> = {};

  private kind(k: string): IoKindCounters {
    let c = this.kinds[k];
    if (c === undefined) {
      c = { bytesRead: 0, bytesWritten: 0, reads: 0, writes: 0, syncs: 0 };
      this.kinds[k] = c;
    }
    return c;
  }

  read(kind: string, bytes: number): void {
    const c = this.kind(kind);
    c.bytesRead += bytes;
    c.reads++;
  }

  wrote(kind: string, bytes: number): void {
    const c = this.kind(kind);
    c.bytesWritten += bytes;
    c.writes++;
  }

  synced(kind: string): void {
    this.kind(kind).syncs++;
  }

  /** Sum over all kinds. */
  total(): IoKindCounters {
    const t: IoKindCounters = { bytesRead: 0, bytesWritten: 0, reads: 0, writes: 0, syncs: 0 };
    for (const c of Object.values(this.kinds)) {
      t.bytesRead += c.bytesRead;
      t.bytesWritten += c.bytesWritten;
      t.reads += c.reads;
      t.writes += c.writes;
      t.syncs += c.syncs;
    }
    return t;
  }

  /** A plain-object copy (for JSON / stats). */
  snapshot(): { total: IoKindCounters; kinds: Record<string, IoKindCounters> } {
    const kinds: Record<string, IoKindCounters> = {};
    for (const [k, c] of Object.entries(this.kinds)) kinds[k] = { ...c };
    return { total: this.total(), kinds };
  }
}
