/**
 * The admit log: per URLseen bucket, the keys of its last merge whose unique URLs are durably in
 * BEAST — so that a resumed run does not admit them a second time.
 *
 * URLseen's DRUM delivers a bucket's unique URLs, waits for its beforeCommit (the frontier makes
 * them durable in BEAST), and only then commits the bucket (drum.ts, steps c–d). A SIGKILL between
 * the two leaves the URLs in BEAST and the bucket uncommitted, so the next run's first merge
 * reports them unique again (at-least-once). Admitted a second time they would sit in BEAST twice
 * and be fetched twice within that run — after each of several kills, once more (thesis V: URLseen
 * is what keeps a URL from being crawled twice).
 *
 * beforeCommit of bucket i (every unique key the merge delivered, also those dropped as
 * re-deliveries: they are in BEAST from before):
 *   1. writes `admits-<i>.next`: a sequence number s (one more than any before) and the keys
 *      (temp file + rename: a SIGKILL cannot tear it);
 *   2. commits BEAST with mark s (Frontier.commitAdmits): BEAST's manifest, written atomically,
 *      names s and every URL appended before — so after a crash, BEAST holds these URLs iff its
 *      mark (Frontier.admitMark) is ≥ s;
 *   3. renames `admits-<i>.next` to `admits-<i>.bin`.
 * A resume (open) promotes each `.next` whose number BEAST's mark reaches to `.bin` and deletes the
 * others (their URLs never reached BEAST: dropping their re-delivery would lose them); then every
 * `.bin` names URLs that are in BEAST, and until the run's first URLseen merge has ended (it
 * re-delivers every bucket a kill left uncommitted) a unique result whose key is in one of them is
 * not admitted again. One file per bucket, because the merge that commits one bucket must not
 * erase what another, still uncommitted, bucket delivered (a kill in the resumed run's first merge
 * after bucket 0 committed and before the re-delivered bucket 3 did would otherwise re-admit
 * bucket 3 in the run after). Entries of a merge that DRUM did commit are never reported unique
 * again, so stale entries cost nothing. A merge that delivered no unique key writes nothing: its
 * re-delivery admits nothing.
 *
 * Bound: on disk, k (URLseen's buckets) merges' unique keys, 8 bytes each; in RAM, the keys of the
 * merge being delivered, and after a resume those of the k files in a hash set (≈ 26 bytes a key)
 * until the first merge ends. Files are replaced without fsync: losing one to a power cut costs
 * only re-fetches, never a URL.
 *
 * Damage. Each file ends with a CRC-32 trailer (src/disk/sealed.ts). A file that fails it, or its
 * shape, is not trusted: a `.next` is deleted and a `.bin` passed over, which is what losing it
 * costs (its bucket's re-delivery is admitted again: re-fetches, never a lost URL). Without the
 * trailer a flipped bit in a `.next`'s sequence number could promote it although BEAST never got
 * its URLs, and their re-delivery would then be dropped: lost. Files written before the trailer
 * existed are read by their shape.
 */
import { closeSync, writeSync } from 'node:fs';
import { readFile, readdir, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { createOwnFileSync } from '../disk/safe-fs.js';
import { seal, unseal } from '../disk/sealed.js';
import { U64Map } from '../util/u64-map.js';

const MAGIC = 0x324d4441; // "ADM2"
const HEADER = 16; // magic u32, count u32, sequence number f64
const NAME = /^admits-(\d+)\.(bin|next|tmp)$/;

/** A set of 64-bit keys (hi, lo). */
export interface KeySet {
  readonly size: number;
  has(hi: number, lo: number): boolean;
}

export class AdmitLog {
  private keys = new Uint32Array(2048);
  private n = 0;

  private constructor(
    private readonly stateDir: string,
    /** the last sequence number used */
    private seq: number,
  ) {}

  /**
   * The log of a crawl whose BEAST manifest names `admitMark` (Frontier.admitMark, read before
   * anything commits BEAST in this run), and the keys whose re-delivery by URLseen must not be
   * admitted again (see the top comment).
   */
  static async open(stateDir: string, admitMark: number): Promise<{ log: AdmitLog; redelivered: KeySet }> {
    let names: string[];
    try {
      names = await readdir(stateDir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { log: new AdmitLog(stateDir, admitMark), redelivered: new U64Set(new U64Map(16)) };
      throw e;
    }
    const file = (n: string): string => path.join(stateDir, n);
    const files: { b: string; kind: string }[] = [];
    for (const n of names) {
      const m = NAME.exec(n);
      if (m !== null) files.push({ b: m[1]!, kind: m[2]! });
    }
    let seq = admitMark;
    for (const { b, kind } of files) {
      if (kind === 'tmp') await unlink(file(`admits-${b}.tmp`));
      if (kind !== 'next') continue;
      const next = file(`admits-${b}.next`);
      const rec = parse(await readFile(next));
      if (rec !== null && rec.seq <= admitMark) await rename(next, file(`admits-${b}.bin`));
      else await unlink(next);
    }
    const set = new U64Map(1024);
    for (const b of new Set(files.map((f) => f.b))) {
      let bytes: Buffer;
      try {
        bytes = await readFile(file(`admits-${b}.bin`));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue; // only a `.next`, deleted above, or a `.tmp`
        throw e;
      }
      const rec = parse(bytes);
      if (rec === null) continue; // not ours, damaged, or cut by a power loss: only re-fetches follow
      seq = Math.max(seq, rec.seq);
      const keys = rec.body;
      for (let i = 0; i < rec.count; i++) set.set(keys.readUInt32LE(HEADER + 8 * i), keys.readUInt32LE(HEADER + 8 * i + 4), 1);
    }
    return { log: new AdmitLog(stateDir, seq), redelivered: new U64Set(set) };
  }

  /** A unique key URLseen delivered (called per unique result, re-deliveries included). */
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
   * URLseen's beforeCommit for `bucket`: `commitBeast(mark)` makes what the bucket delivered
   * durable in BEAST (Frontier.commitAdmits), around it steps 1 and 3 of the top comment.
   */
  async beforeCommit(bucket: number, commitBeast: (mark?: number) => Promise<void>): Promise<void> {
    if (this.n === 0) {
      await commitBeast();
      return;
    }
    const bytes = new Uint8Array(HEADER + this.n * 8);
    const dv = new DataView(bytes.buffer);
    const seq = ++this.seq;
    dv.setUint32(0, MAGIC, true);
    dv.setUint32(4, this.n, true);
    dv.setFloat64(8, seq, true);
    bytes.set(new Uint8Array(this.keys.buffer, 0, this.n * 8), HEADER);
    const sealed = seal(bytes);
    this.n = 0;
    const tmp = path.join(this.stateDir, `admits-${bucket}.tmp`);
    const next = path.join(this.stateDir, `admits-${bucket}.next`);
    // Created afresh, never through a link planted at the temp name (src/disk/safe-fs.ts).
    const fd = createOwnFileSync(tmp);
    try {
      let off = 0;
      while (off < sealed.length) off += writeSync(fd, sealed, off, sealed.length - off);
    } finally {
      closeSync(fd);
    }
    await rename(tmp, next);
    await commitBeast(seq);
    await rename(next, path.join(this.stateDir, `admits-${bucket}.bin`));
  }
}

/**
 * A file's sequence number, key count and bytes (header and keys, without the trailer), or null
 * when it is not a whole, undamaged admit-log file.
 */
function parse(file: Buffer): { seq: number; count: number; body: Buffer } | null {
  const { body: u, bad } = unseal(file);
  if (bad) return null;
  const b = Buffer.from(u.buffer, u.byteOffset, u.byteLength);
  if (b.byteLength < HEADER || b.readUInt32LE(0) !== MAGIC) return null;
  const count = b.readUInt32LE(4);
  if (b.byteLength !== HEADER + 8 * count) return null;
  const seq = b.readDoubleLE(8);
  if (!Number.isSafeInteger(seq) || seq < 1) return null;
  return { seq, count, body: b };
}

class U64Set implements KeySet {
  constructor(private readonly map: U64Map) {}

  get size(): number {
    return this.map.size;
  }

  has(hi: number, lo: number): boolean {
    return this.map.get(hi, lo) >= 0;
  }
}
