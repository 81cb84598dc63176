/**
 * admits.bin: the URLseen keys of the last bucket merge whose unique URLs are durably in BEAST.
 *
 * URLseen's DRUM delivers a bucket's unique URLs, waits for its beforeCommit (the frontier makes
 * them durable in BEAST), and only then commits the bucket (drum.ts, steps c–d). A SIGKILL between
 * the two leaves the URLs in BEAST and the bucket uncommitted, so the next run's first merge
 * reports them unique again (at-least-once). Admitted a second time they would sit in BEAST twice
 * and be fetched twice within that run — after each of several kills, once more (thesis V: URLseen
 * is what keeps a URL from being crawled twice).
 *
 * So after BEAST's commit, beforeCommit replaces this file with the keys the bucket delivered
 * (every unique key, also those dropped as re-deliveries: they are in BEAST from before). A resume
 * loads it, and until its first URLseen merge has ended (that merge re-delivers the uncommitted
 * bucket, if any), unique results whose key is in it are not admitted again. Entries of a bucket
 * that did commit are never reported unique again, so a stale file costs nothing.
 *
 * Bound: one bucket merge's unique URLs, 8 bytes each, on disk and (after a resume) in RAM. The
 * file is replaced by rename without fsync: a SIGKILL cannot tear it, and losing it to a power cut
 * costs only re-fetches, never a URL.
 */
import { closeSync, writeSync } from 'node:fs';
import { readFile, rename } from 'node:fs/promises';
import { createOwnFileSync } from '../disk/safe-fs.js';
import path from 'node:path';

export const ADMITS_FILE = 'admits.bin';

/** A set of 64-bit keys (hi, lo). */
export interface KeySet {
  readonly size: number;
  has(hi: number, lo: number): boolean;
}

export class AdmitLog {
  private keys = new Uint32Array(2048);
  private n = 0;

  private constructor(private readonly stateDir: string) {}

  /**
   * The log of a crawl whose BEAST manifest names `admitMark` (Frontier.admitMark), and the keys
   * whose re-delivery by URLseen must not be admitted again (see the top comment).
   */
  static async open(stateDir: string, admitMark: number): Promise<{ log: AdmitLog; redelivered: KeySet }> {
    void admitMark;
    const keys = await AdmitLog.load(stateDir);
    return { log: new AdmitLog(stateDir), redelivered: { size: keys.size, has: (hi, lo) => keys.has(admitKey(hi, lo)) } };
  }

  /** A unique key URLseen delivered (called per unique result). */
  add(hi: number, lo: number): void {
    if (2 * this.n + 2 > this.keys.length) {
      const k = new Uint32Array(this.keys.length * 2);
      k.set(this.keys);
      this.keys = k;
    }
    this.keys[2 * this.n] = hi;
    this.keys[2 * this.n + 1] = lo;
    this.n++;
  }

  /**
   * URLseen's beforeCommit for `bucket`: `commitBeast` makes what the bucket delivered durable in
   * BEAST (Frontier.commitAdmits), and this log records the bucket's keys.
   */
  async beforeCommit(bucket: number, commitBeast: (mark?: number) => Promise<void>): Promise<void> {
    void bucket;
    await commitBeast();
    await this.commit();
  }

  /** Call once BEAST holds the delivered URLs durably: the file becomes this bucket's keys. */
  private async commit(): Promise<void> {
    const file = path.join(this.stateDir, ADMITS_FILE);
    const tmp = `${file}.tmp`;
    const bytes = new Uint8Array(this.keys.buffer, 0, this.n * 8).slice();
    this.n = 0;
    // Created afresh, never through a link planted at the temp name (src/disk/safe-fs.ts).
    const fd = createOwnFileSync(tmp);
    try {
      let off = 0;
      while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
    } finally {
      closeSync(fd);
    }
    await rename(tmp, file);
  }

  /** The keys of the last committed bucket (see the top comment), as `hi:lo` strings. */
  private static async load(stateDir: string): Promise<Set<string>> {
    let b: Buffer;
    try {
      b = await readFile(path.join(stateDir, ADMITS_FILE));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return new Set();
      throw e;
    }
    const out = new Set<string>();
    for (let p = 0; p + 8 <= b.byteLength; p += 8) out.add(admitKey(b.readUInt32LE(p), b.readUInt32LE(p + 4)));
    return out;
  }
}

const admitKey = (hi: number, lo: number): string => `${hi}:${lo}`;
