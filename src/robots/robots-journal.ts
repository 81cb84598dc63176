/**
 * The robots answer journal: every robots.txt answer the crawler receives is appended to
 * `<stateDir>/robots-answers.jnl` before the frontier uses it, and kept until a RobotsCache merge
 * that holds it has committed (robots-stage.ts). A run killed between an answer and that merge
 * leaves the answer here; the next open replays it into RobotsCache, so the host is not asked
 * again (thesis VII.1: robots.txt once per host per expiry period, across a SIGKILL too).
 *
 * Durability. Each record is one `fs.writeSync` on an O_APPEND descriptor: when the call returns
 * the bytes are in the kernel's page cache, and a killed process (SIGKILL, an abort, an OOM kill)
 * does not take the page cache with it — the next open reads them. No fsync per record: that guards
 * against the death of the process, not of the machine. A checkpoint fsyncs the journal
 * (`checkpoint()`) instead of merging RobotsCache, so after a power loss the answers up to the last
 * checkpoint come back from the journal or RobotsCache, and at most those since are asked again, as
 * the checkpoint's design allows for the rest of the crawl (docs/drum.md, "Crash safety").
 *
 * Framing: [u32 LE length][u32 LE crc32(payload)][payload], payload = u32 LE hostHi · u32 LE hostLo
 * · a RobotsCache value (robots-entry.ts); the key (hostHi, hostLo) is RobotsCache's, the hash of
 * an authority (src/util/authority.ts). Reading stops at the first record cut short, of a length no
 * payload has, or failing its checksum: a torn tail is ignored, and nothing after it is trusted.
 *
 * Truncation by rotation. A merge ships the answers appended before it starts, not those appended
 * while it runs, so the file cannot simply be emptied when the merge ends. Instead `seal()` (called
 * just before a merge) renames the current file to `robots-answers.jnl.<n>` and opens a new empty
 * one; once that merge has committed, `release(n)` deletes every sealed file up to n. The files
 * hold the answers of at most the merges in progress (a few rounds of robots-stage.ts).
 */
import { closeSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { fsyncDir } from '../disk/index.js';

export const JOURNAL_FILE = 'robots-answers.jnl';

/** header (length, crc32) + hostHi + hostLo */
const HEAD = 8;
const KEY = 8;
/** A payload is a host key and a RobotsCache value (≥ 9 bytes: version, expiresAt): a shorter length is no record. */
const MIN_PAYLOAD = KEY + 9;
/** Larger than any RobotsCache value (rules of a robots.txt under the body cap, ≤ 16 sitemaps). */
const MAX_PAYLOAD = 64 << 20;

export interface JournalRecord {
  hostHi: number;
  hostLo: number;
  /** the RobotsCache value (encodeRobotsEntry's bytes) */
  entry: Uint8Array;
}

/** One framed record. */
export function encodeJournalRecord(hostHi: number, hostLo: number, entry: Uint8Array): Uint8Array {
  const out = new Uint8Array(HEAD + KEY + entry.byteLength);
  const dv = new DataView(out.buffer);
  dv.setUint32(HEAD, hostHi >>> 0, true);
  dv.setUint32(HEAD + 4, hostLo >>> 0, true);
  out.set(entry, HEAD + KEY);
  dv.setUint32(0, KEY + entry.byteLength, true);
  dv.setUint32(4, crc32(out.subarray(HEAD)) >>> 0, true);
  return out;
}

/** The complete records at the head of `buf` (see the top comment), and how many bytes they span. */
export function decodeJournal(buf: Uint8Array): { records: JournalRecord[]; validBytes: number } {
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const records: JournalRecord[] = [];
  let p = 0;
  while (p + HEAD <= buf.byteLength) {
    const len = dv.getUint32(p, true);
    if (len < MIN_PAYLOAD || len > MAX_PAYLOAD || p + HEAD + len > buf.byteLength) break;
    const payload = buf.subarray(p + HEAD, p + HEAD + len);
    if ((crc32(payload) >>> 0) !== dv.getUint32(p + 4, true)) break;
    records.push({ hostHi: dv.getUint32(p + HEAD, true), hostLo: dv.getUint32(p + HEAD + 4, true), entry: payload.slice(KEY) });
    p += HEAD + len;
  }
  return { records, validBytes: p };
}

/** Sealed files `robots-answers.jnl.<n>` in `dir`, oldest first. */
function sealedFiles(dir: string): number[] {
  const gens: number[] = [];
  for (const name of readdirSync(dir)) {
    const m = /^robots-answers\.jnl\.(\d+)$/.exec(name);
    if (m !== null) gens.push(Number(m[1]));
  }
  return gens.sort((a, b) => a - b);
}

function readIfPresent(file: string): Uint8Array {
  try {
    return readFileSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return new Uint8Array(0);
    throw e;
  }
}

export class RobotsJournal {
  private fd: number;
  /** bytes appended to the current file */
  private bytes = 0;
  private nextGen: number;
  /** sealed files not yet released, oldest first */
  private readonly sealed: number[];
  private closed = false;

  private constructor(private readonly dir: string, sealed: number[]) {
    this.sealed = sealed;
    this.nextGen = (sealed.at(-1) ?? 0) + 1;
    this.fd = openSync(this.file, 'a');
  }

  private get file(): string {
    return path.join(this.dir, JOURNAL_FILE);
  }

  private sealedFile(gen: number): string {
    return `${this.file}.${gen}`;
  }

  /**
   * Opens the journal in `dir`. What a killed run left (sealed files and the current file, in the
   * order they were written) comes back as `recovered`, and is sealed: the caller updates RobotsCache
   * with it, merges, then calls `release(upTo)` (null when nothing was left).
   */
  static open(dir: string): { journal: RobotsJournal; recovered: JournalRecord[]; upTo: number | null } {
    const gens = sealedFiles(dir);
    let next = (gens.at(-1) ?? 0) + 1;
    const cur = path.join(dir, JOURNAL_FILE);
    const left = readIfPresent(cur);
    if (left.byteLength > 0) {
      renameSync(cur, `${cur}.${next}`);
      gens.push(next++);
    }
    const recovered: JournalRecord[] = [];
    // Record by record: a spread of a large generation's records would overflow the stack.
    for (const g of gens) for (const r of decodeJournal(readIfPresent(`${cur}.${g}`)).records) recovered.push(r);
    const journal = new RobotsJournal(dir, gens);
    return { journal, recovered, upTo: gens.at(-1) ?? null };
  }

  /** Appends one answer; when this returns, a kill of the process no longer loses it. */
  append(hostHi: number, hostLo: number, entry: Uint8Array): void {
    const rec = encodeJournalRecord(hostHi, hostLo, entry);
    let off = 0;
    while (off < rec.byteLength) off += writeSync(this.fd, rec, off);
    this.bytes += rec.byteLength;
  }

  /**
   * Before a RobotsCache merge: the answers appended so far move to a sealed file, which
   * `release(n)` deletes once the merge has committed. Null when nothing was appended since the
   * last seal (the earlier sealed files, if any, are released by the merges they belong to).
   */
  seal(): number | null {
    if (this.bytes === 0 || this.closed) return null;
    const gen = this.nextGen++;
    closeSync(this.fd);
    renameSync(this.file, this.sealedFile(gen));
    this.fd = openSync(this.file, 'a');
    this.bytes = 0;
    this.sealed.push(gen);
    return gen;
  }

  /**
   * Checkpoint (robots-stage.ts commit): every answer appended so far on disk, against a power loss
   * too, without a RobotsCache merge (whose cost grows with the authorities it holds). The current
   * file is sealed, then every sealed file not yet released is fdatasync'ed on the libuv pool —
   * each through a descriptor of its own, so a round's seal() meanwhile touches none of them — and
   * the directory with it. The next merge releases what this sealed (newestSealed).
   */
  async checkpoint(): Promise<void> {
    if (this.closed) return;
    this.seal();
    for (const g of [...this.sealed]) {
      let h: FileHandle;
      try {
        h = await open(this.sealedFile(g), 'r');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue; // released meanwhile
        throw e;
      }
      try {
        await h.datasync();
      } finally {
        await h.close();
      }
    }
    fsyncDir(this.dir);
  }

  /** The newest sealed file not yet released (a merge's seal() found nothing new: checkpoint() sealed it), or null. */
  newestSealed(): number | null {
    return this.sealed.at(-1) ?? null;
  }

  /** A merge that began after `seal()` returned `upTo` has committed: delete the files it covers. */
  release(upTo: number): void {
    while (this.sealed.length > 0 && this.sealed[0]! <= upTo) {
      const g = this.sealed.shift()!;
      try {
        unlinkSync(this.sealedFile(g));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      }
    }
  }

  /** Sealed files and bytes in the current file (tests, diagnostics). */
  state(): { sealed: number[]; bytes: number } {
    return { sealed: [...this.sealed], bytes: this.bytes };
  }

  /**
   * Closes the descriptor. With `durable` (RobotsCache has been flushed and closed: every answer
   * appended is in a committed merge) every journal file is deleted; without it they stay for the
   * next open to replay.
   */
  close(durable: boolean): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
    if (!durable) return;
    this.release(Number.MAX_SAFE_INTEGER);
    try {
      unlinkSync(this.file);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }
}
