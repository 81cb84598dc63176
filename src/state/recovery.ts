/**
 * What a resume does to the files of the crawl before it continues: where the state and output
 * now are, and the WARC bytes written after the last checkpoint.
 *
 * Paths. The manifest records the config with absolute paths, but a state directory may have been
 * moved, renamed or copied since. A resume works on the directory it is given: the state is that
 * directory; the output directory keeps its place relative to the state (e.g. `state/warc` or a
 * sibling `../out` moved together with it) when that place exists, else stays where it was
 * recorded; an explicit `--out` wins. When it is at neither place the resume is refused
 * (CRAWL_OUT_MISSING): the archive moved away under another name, or was deleted, and continuing
 * into a new empty directory there would split the crawl's output without the user knowing (and
 * leave the torn tail of the moved WARC uncut); `--out` says where it is, or where to go on.
 *
 * Both places come from the manifest, which whoever hands over a state directory can write (and
 * re-seal: its CRC-32 guards against damage, not against an edit). So a directory found at either
 * place is the crawl's output only if it holds the crawl's own mark: the WARC file the checkpoint
 * names, a regular file (not a link) at least as long as the recorded durable offset — every
 * checkpoint is written after the writer's first file and its warcinfo record exist, and the bytes
 * up to that offset were synced before the manifest was. A directory without it (`/etc`, another
 * crawl's output, a directory emptied since) is refused with CRAWL_OUT_UNVERIFIED and nothing in it
 * is opened; `--out` names the output directory explicitly (the operator's word, not the file's).
 *
 * WARC. Everything up to the checkpoint's recorded `(file, offset)` was synced before the manifest
 * was renamed into place, so it is never read again (recovery cost does not grow with the archive).
 * After that offset the writer may have appended more records (pages done.log vouches for, which
 * the resume will skip) and, after a SIGKILL, a torn last record. Recovery scans only those bytes —
 * the recorded file from its offset and the later files of the same writer (same `<prefix>-<stamp>-`,
 * higher serial) — keeps every complete record and cuts the torn tail. When the last WARC sync's
 * mark (warc-synced.ts) names one of those files past that point, the reading starts there instead
 * (about a second of output rather than a checkpoint interval's: 135 MB of gzip WARC at 10^6 hosts
 * in bench:soak). No other file in the output directory is opened: files of other writers or other
 * programs are left as they are. Each of those files' CDXJ index is repaired to list exactly the
 * records left, and left unsorted (`.cdxj.open`) for the resumed crawl to finish beside its work
 * (src/crawl/checkpoint-stage.ts).
 */
import { lstat, readdir, stat, rm } from 'node:fs/promises';
import path from 'node:path';
import { CrawlError } from '../errors.js';
import { scanWarc, truncateTornWarc, repairOpenCdxj, removeCdxj } from '../store/index.js';
import type { SyncedPosition } from './warc-synced.js';

/** `<prefix>-<stamp>-<serial>.warc[.gz|.zst]` → its writer part and serial. */
const WARC_NAME = /^(.+-\d{17})-(\d{5})(\.warc(?:\.gz|\.zst)?)$/;

export interface RecoveredFile {
  file: string;
  /** where the scan started (the checkpoint's offset in the recorded file, 0 in later ones) */
  from: number;
  /** bytes cut off its end (a torn last record) */
  cut: number;
  /** bytes read by the scan */
  scanned: number;
  /**
   * its CDXJ index is left open (`<name>.cdxj.open`, repaired to match the file, unsorted): to be
   * finished (cdxj-recover.ts finishCdxj) — a resumed crawl does it while it crawls
   */
  indexOpen: boolean;
}

/**
 * The state and output directories of a resumed crawl (see the top comment). `recordedState`,
 * `recordedOut` and `warc` come from the manifest; `given` is the state directory named on the
 * command line.
 */
export async function relocate(
  given: string, recordedState: string, recordedOut: string, outOverride: string | undefined, warc: { file: string; offset: number } | null,
): Promise<{ stateDir: string; outDir: string }> {
  const stateDir = path.resolve(given);
  if (outOverride !== undefined) return { stateDir, outDir: path.resolve(outOverride) };
  const recorded = path.resolve(recordedOut);
  const moved = path.resolve(stateDir, path.relative(recordedState, recordedOut));
  const places = moved === recorded ? [recorded] : [moved, recorded];
  const found: string[] = [];
  for (const outDir of places) {
    if (!(await isDir(outDir))) continue;
    if (warc !== null && (await holdsWarc(outDir, warc))) return { stateDir, outDir };
    found.push(outDir);
  }
  if (found.length > 0) {
    const mark = warc === null ? 'the checkpoint names no WARC file to recognise it by' : `it does not hold this crawl's WARC file ${warc.file} (a regular file of at least ${warc.offset} bytes, as the checkpoint recorded)`;
    throw new CrawlError('CRAWL_OUT_UNVERIFIED', `${found.join(' and ')} ${found.length > 1 ? 'are' : 'is'} not known to be the crawl's output directory: ${mark}; nothing was opened there. The output was moved or emptied, or the manifest names a directory that is not the crawl's: give resume --out <dir> with where the output is now, or with a new directory to go on in`);
  }
  const where = moved === recorded ? recorded : `${moved} (beside the state) nor at ${recorded} (where it was recorded)`;
  throw new CrawlError('CRAWL_OUT_MISSING', `the crawl's output directory is not at ${where}: give resume --out <dir> with where it is now, or with a new directory to go on in`);
}

/**
 * The writer's files to read back (`own`: the checkpoint's file from its offset, the later ones
 * from 0) cut down by the last sync's mark (warc-synced.ts) when it names one of them: the files
 * before it are complete and indexed, and its own bytes before the mark are whole records. Each
 * file the mark moves keeps the offset it would have had (`checkpointFrom`), read from when no
 * record starts at the mark.
 */
function fromSyncedPosition(
  own: { name: string; from: number }[], writer: RegExpExecArray, synced: SyncedPosition | null,
): { name: string; from: number; checkpointFrom?: number }[] {
  if (synced === null) return own;
  const k = WARC_NAME.exec(synced.file);
  if (k === null || k[1] !== writer[1] || k[3] !== writer[3]) return own; // another writer's (an older run's) mark
  const at = own.findIndex((o) => o.name === synced.file);
  if (at < 0 || synced.offset <= own[at]!.from) return own;
  return [{ name: synced.file, from: synced.offset, checkpointFrom: own[at]!.from }, ...own.slice(at + 1)];
}

/** `dir` holds the WARC file `warc.file` as a regular file (never a link) of at least `warc.offset` bytes. */
async function holdsWarc(dir: string, warc: { file: string; offset: number }): Promise<boolean> {
  if (path.basename(warc.file) !== warc.file) return false;
  const file = path.join(dir, warc.file);
  const st = await lstat(file).catch(() => null);
  if (st === null) return false;
  // A link at the crawl's own WARC file is refused as every link where the crawler keeps its files
  // is (safe-fs.ts), not passed over for the other place: the resume would go on elsewhere.
  if (st.isSymbolicLink() || (st.isFile() && st.nlink > 1)) throw new CrawlError('CRAWL_STATE_LINK', `${file} is a link (the crawl's WARC file must be its own regular file): remove it or restore the output directory from a copy`);
  return st.isFile() && st.size >= warc.offset;
}

async function isDir(p: string): Promise<boolean> {
  try {
    return (await stat(p)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Cut the torn tail of the WARC files written since the checkpoint recorded `warc` (see the top
 * comment). Returns what was scanned, per file (for tests and the resume benchmark).
 */
export async function recoverWarc(outDir: string, warc: { file: string; offset: number } | null, synced: SyncedPosition | null = null): Promise<RecoveredFile[]> {
  if (warc === null) return [];
  const m = WARC_NAME.exec(warc.file);
  let own: { name: string; from: number; checkpointFrom?: number }[] = [{ name: warc.file, from: warc.offset }];
  if (m !== null) {
    let names: string[];
    try {
      names = await readdir(outDir);
    } catch {
      return [];
    }
    for (const n of names) {
      const k = WARC_NAME.exec(n);
      if (k !== null && k[1] === m[1] && k[3] === m[3] && Number(k[2]) > Number(m[2])) own.push({ name: n, from: 0 });
    }
    own.sort((a, b) => (a.name < b.name ? -1 : 1));
    own = fromSyncedPosition(own, m, synced);
  }
  const out: RecoveredFile[] = [];
  for (const { name, from, checkpointFrom } of own) {
    const file = path.join(outDir, name);
    let size: number;
    try {
      size = (await stat(file)).size;
    } catch {
      continue; // not there (moved away with an old output directory): nothing to repair
    }
    if (size === 0) {
      // A file created by a rotation that died before its warcinfo reached the disk.
      await rm(file);
      await removeCdxj(file);
      out.push({ file, from, cut: 0, scanned: 0, indexOpen: false });
      continue;
    }
    // A file shorter than its synced offset was not written by this state (the recorded bytes are
    // durable): scan it whole rather than trust the offset.
    let start = from <= size ? from : 0;
    let r = await scanWarc(file, { fromOffset: start });
    if (checkpointFrom !== undefined && r.validLength === start && r.fileLength > start) {
      // No record starts at the synced mark: not trusted; from the checkpoint's offset, as without one.
      start = checkpointFrom <= size ? checkpointFrom : 0;
      r = await scanWarc(file, { fromOffset: start });
    }
    if (r.validLength < r.fileLength) await truncateTornWarc(file, r.validLength);
    // its CDXJ index, made to list exactly the records left (src/store/cdxj-recover.ts), left
    // unsorted for the caller to finish
    const index = await repairOpenCdxj(file, r.validLength);
    out.push({ file, from: start, cut: r.fileLength - r.validLength, scanned: r.fileLength - start, indexOpen: index.open });
  }
  return out;
}
