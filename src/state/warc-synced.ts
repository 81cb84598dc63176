/**
 * The WARC position last made durable (`warc-synced.bin`): where a resume after a crash starts
 * reading the WARC, instead of at the last checkpoint's offset.
 *
 * Why: a resume after a SIGKILL reads back — decompresses and checks — every WARC byte after the
 * position it trusts, to keep the complete records and cut a torn tail (recovery.ts). From the
 * checkpoint's offset that is up to a checkpoint interval of the crawl's output: 135 MB of gzip WARC
 * (1.4–3 s) at 10^6 hosts in bench:soak, on a resume whose first request must follow within 2 s
 * (issue #31). The crawl syncs its WARC about once a second (durable-stage.ts), so the position of
 * the last sync leaves about a second's output to read.
 *
 * What it claims: every byte of `file` before `offset` is on disk and ends a whole record, and the
 * files of the same writer before `file` are complete, synced and indexed (a rotation syncs the file
 * it leaves, and a sync waits for the rotated file's index: warc-writer.ts). It is written after the
 * sync it reports, by rename (never torn), without an fsync of its own: after a power cut it may be
 * older than the truth, or missing — the resume then reads more, from the checkpoint's offset, as
 * before; it is never newer than what the disk holds. A CRC-32 trailer (sealed.ts) finds damage; a
 * damaged or foreign file is not trusted (recovery reads from the checkpoint's offset). recovery.ts
 * trusts it only for the writer the checkpoint names, and reads from the checkpoint's offset again
 * when no record starts at the mark.
 */
import { closeSync, writeSync } from 'node:fs';
import { readFile, rename } from 'node:fs/promises';
import path from 'node:path';
import { createOwnFileSync, seal, unseal } from '../disk/index.js';

export const WARC_SYNCED_FILE = 'warc-synced.bin';

export interface SyncedPosition {
  /** the WARC file's name (no directory) */
  file: string;
  offset: number;
}

/** The position a crawl's last WARC sync made durable, or null (none written, damaged, not one). */
export async function readSyncedPosition(stateDir: string): Promise<SyncedPosition | null> {
  let buf: Buffer;
  try {
    buf = await readFile(path.join(stateDir, WARC_SYNCED_FILE));
  } catch {
    return null;
  }
  const { body, sealed, bad } = unseal(buf);
  if (!sealed || bad) return null;
  try {
    const j = JSON.parse(Buffer.from(body).toString('utf8')) as unknown;
    if (typeof j !== 'object' || j === null) return null;
    const { file, offset } = j as { file?: unknown; offset?: unknown };
    if (typeof file !== 'string' || path.basename(file) !== file || file === '' || !Number.isSafeInteger(offset) || (offset as number) < 0) return null;
    return { file, offset: offset as number };
  } catch {
    return null;
  }
}

/**
 * Records each synced position, in order: a write waits for the one before, and a position not
 * past the last one written (an earlier sync that finished later) is dropped.
 */
export class SyncedPositionLog {
  private chain: Promise<void> = Promise.resolve();
  private last: SyncedPosition | null = null;

  constructor(private readonly stateDir: string) {}

  record(pos: { file: string; offset: number }): Promise<void> {
    const p = { file: path.basename(pos.file), offset: pos.offset };
    const l = this.last;
    if (l !== null && (p.file < l.file || (p.file === l.file && p.offset <= l.offset))) return this.chain;
    this.last = p;
    const final = path.join(this.stateDir, WARC_SYNCED_FILE);
    const tmp = `${final}.tmp`;
    this.chain = this.chain.then(async () => {
      // (a few dozen bytes: one synchronous write; never through a link planted at the name)
      const bytes = seal(Buffer.from(JSON.stringify(p), 'utf8'));
      const fd = createOwnFileSync(tmp);
      try {
        let off = 0;
        while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
      } finally {
        closeSync(fd);
      }
      await rename(tmp, final);
    }).catch(() => undefined); // a mark not written is an older one: the resume reads more, loses nothing
    return this.chain;
  }
}
