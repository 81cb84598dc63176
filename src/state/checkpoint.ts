/**
 * Checkpoints: the small manifest that says where a crawl stands, written atomically (write a temp
 * file, fsync it, rename over the old one, fsync the directory — so after a power loss the manifest
 * is either the old one or the new one, never a mix), and the pending set (URLs dispatched but not
 * yet durably finished), written the same way.
 *
 * Durability model (see pipeline.ts for the order of operations):
 *   - every disk structure (DRUMs, BEAST queues, WARC files) is made durable before the manifest
 *     that points at it is renamed into place;
 *   - `pending.bin` lists every URL taken out of the frontier whose fetch + links are not yet
 *     durable; it is rewritten before the frontier's read cursors are committed, so after a crash
 *     `resume` re-admits exactly the URLs of the in-flight window: none lost, a few fetched twice.
 *
 * The frontier commits its read cursors only at checkpoints (a commit snapshots every URL in RAM:
 * far too costly per page). Without more, a SIGKILL therefore re-fetches everything the frontier
 * handed out since the last checkpoint, not just the in-flight window. `done.log` closes that gap:
 *   - whenever pages leave the pending set durably (WARC + crawl log synced, links merged and
 *     admitted), their FrontierUrl records are appended to `done.log` (one write per sync, no fsync:
 *     an entry is written only AFTER the data it vouches for is durable, so losing the tail to a
 *     power cut costs only re-fetches, never data; a SIGKILL loses nothing, the page cache survives);
 *   - `resume` reads it into a skip set; the frontier re-delivers those URLs (from its snapshot or
 *     its committed read cursors) and the scheduler drops them without a request;
 *   - a checkpoint (after the frontier's commit) rewrites it atomically with what must still be
 *     skipped: skip entries not yet re-delivered, plus pages that became durable while the
 *     checkpoint ran (they were in flight at the frontier's commit, so its snapshot holds them).
 * Bound: the pages completed within one checkpoint interval (plus skip entries carried from a
 * resume, which only shrink), on disk and — after a resume — as a Set in RAM.
 *
 * The manifest is JSON (human-inspectable, `drumcrawl stats <state>` prints it); it is tiny and
 * bounded: counters, positions, the config, an epoch.
 */
import { readFile, mkdir } from 'node:fs/promises';
import fs from 'node:fs';
import { crc32 } from 'node:zlib';
import { writeFileAtomic, writeFileAtomicSync, openOwnFileSync, seal, unseal, damagedFile } from '../disk/index.js';
import path from 'node:path';
import { CrawlError } from '../errors.js';
import { type CrawlConfig, type CrawlConfigInput, resolveCrawlConfig } from '../config/config.js';

export const MANIFEST_FILE = 'manifest.json';
export const PENDING_FILE = 'pending.bin';
export const DONE_FILE = 'done.log';
export const MANIFEST_VERSION = 1;

export interface CrawlCounters {
  /** fetches of URLs (pages and page requisites) */
  pages: number;
  /** of those, page requisites (requisites.ts): --max-pages counts pages − requisites */
  requisites: number;
  pagesOk: number;
  bytes: number;
  urlsSeen: number;
  urlsDiscovered: number;
  duplicates: number;
  robotsFetches: number;
  workersReplaced: number;
  outcomes: Record<string, number>;
  /** crawl time accumulated over all runs (ms) */
  crawlMs: number;
  /** process CPU time accumulated over all runs (µs) */
  cpuMicros: number;
}

export function emptyCounters(): CrawlCounters {
  return {
    pages: 0, requisites: 0, pagesOk: 0, bytes: 0, urlsSeen: 0, urlsDiscovered: 0, duplicates: 0,
    robotsFetches: 0, workersReplaced: 0, outcomes: {}, crawlMs: 0, cpuMicros: 0,
  };
}

export interface CheckpointManifest {
  version: number;
  /** increases by one per checkpoint */
  epoch: number;
  /** when the checkpoint began (ISO): pages dispatched before it and finished are covered by it */
  startedAt?: string;
  writtenAt: string;
  /** why this checkpoint was written: 'periodic' | 'stop:<reason>' | 'done' | 'start' */
  reason: string;
  /** true once the frontier ran dry (nothing left to fetch) */
  finished: boolean;
  config: CrawlConfig;
  counters: CrawlCounters;
  /** WARC file currently appended to and its durable length (a torn tail past it is cut on resume) */
  warc: { file: string; offset: number } | null;
  /** seeds already injected (so resume does not re-inject them) */
  seedsInjected: boolean;
  /** scope anchors (hosts / PLDs of the seeds) for --scope host|pld */
  scopeHosts: string[];
  scopePlds: string[];
  /** number of URLs in pending.bin at this checkpoint */
  pending: number;
  /**
   * WARC files (bare names) of earlier runs whose CDXJ index a resume repaired and left to be
   * sorted while it crawled, not sorted yet (checkpoint-stage.ts): the next resume finishes them
   */
  indexing?: string[];
  /**
   * CRC-32 (hex) of the manifest's compact JSON without this field (manifestChecksum): damage or a
   * hand edit is refused on resume. Absent in manifests written before it existed (they are
   * checked field by field all the same).
   */
  checksum?: string;
}

// Atomic durable replacement (temp + fsync + rename + fsync dir) is src/disk's helper.
export { writeFileAtomic } from '../disk/index.js';

/** The manifest's checksum: CRC-32 (hex) of its compact JSON without the `checksum` field. */
export function manifestChecksum(m: Omit<CheckpointManifest, 'checksum'> & { checksum?: string }): string {
  const { checksum: _omit, ...body } = m;
  void _omit;
  return crc32(JSON.stringify(body)).toString(16).padStart(8, '0');
}

export async function writeManifest(stateDir: string, m: CheckpointManifest): Promise<void> {
  await mkdir(stateDir, { recursive: true });
  const { checksum: _old, ...body } = m;
  void _old;
  const sealed = { ...body, checksum: manifestChecksum(body) };
  await writeFileAtomic(path.join(stateDir, MANIFEST_FILE), JSON.stringify(sealed, null, 2) + '\n');
}

const MANIFEST_KEYS = new Set(['version', 'epoch', 'startedAt', 'writtenAt', 'reason', 'finished', 'config', 'counters', 'warc', 'seedsInjected',
  'scopeHosts', 'scopePlds', 'pending', 'indexing', 'checksum']);
/** A WARC file name as the writer makes them (`<prefix>-<stamp>-<serial>.warc[.gz|.zst]`): a bare name, never a path. */
const WARC_FILE_NAME = /^[A-Za-z0-9._-]+\.warc(?:\.gz|\.zst)?$/;

/**
 * The manifest's fields have the types and ranges its writer gives them; anything else is damage
 * or an edit (CRAWL_CHECKPOINT_CORRUPT naming the field). The recorded configuration is checked by
 * the configuration's own validator when a resume uses it (resolveRecordedConfig).
 */
function checkManifestShape(m: Record<string, unknown>, file: string): void {
  const bad = (field: string, why: string): CrawlError =>
    new CrawlError('CRAWL_CHECKPOINT_CORRUPT', `${file}: ${field} ${why}; the manifest is damaged or was edited, nothing was resumed (the crawl's other files are untouched: restore manifest.json from a copy of the state directory)`);
  const count = (v: unknown): boolean => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
  for (const k of Object.keys(m)) if (!MANIFEST_KEYS.has(k)) throw bad(k, 'is not a field of a checkpoint manifest');
  if (!count(m.epoch)) throw bad('epoch', 'must be a non-negative integer');
  if (!count(m.pending)) throw bad('pending', 'must be a non-negative integer');
  for (const k of ['writtenAt', 'reason'] as const) if (typeof m[k] !== 'string') throw bad(k, 'must be a string');
  if (m.startedAt !== undefined && typeof m.startedAt !== 'string') throw bad('startedAt', 'must be a string');
  for (const k of ['finished', 'seedsInjected'] as const) if (typeof m[k] !== 'boolean') throw bad(k, 'must be true or false');
  for (const k of ['scopeHosts', 'scopePlds'] as const) {
    const v = m[k];
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string' || x.length > 253)) throw bad(k, 'must be a list of host names');
  }
  const c = m.counters as Record<string, unknown> | null;
  if (c === null || typeof c !== 'object' || Array.isArray(c)) throw bad('counters', 'must be an object');
  for (const k of Object.keys(emptyCounters()) as (keyof CrawlCounters)[]) {
    if (k === 'outcomes') {
      const o = c.outcomes as Record<string, unknown> | null;
      if (o === null || typeof o !== 'object' || Array.isArray(o) || Object.values(o).some((x) => !count(x))) throw bad('counters.outcomes', 'must map codes to counts');
    } else if (k === 'requisites' && c[k] === undefined) {
      continue; // a manifest of a crawl without page requisites may lack the counter: none fetched
    } else if (!count(c[k])) throw bad(`counters.${k}`, 'must be a non-negative integer');
  }
  const w = m.warc as Record<string, unknown> | null;
  if (w !== null) {
    if (typeof w !== 'object' || Array.isArray(w)) throw bad('warc', 'must be null or { file, offset }');
    if (typeof w.file !== 'string' || !WARC_FILE_NAME.test(w.file)) throw bad('warc.file', `must be the bare name of a WARC file (got ${JSON.stringify(w.file)})`);
    if (!count(w.offset)) throw bad('warc.offset', 'must be a non-negative integer');
  }
  if (m.indexing !== undefined && (!Array.isArray(m.indexing) || m.indexing.some((x) => typeof x !== 'string' || !WARC_FILE_NAME.test(x)))) {
    throw bad('indexing', 'must be a list of bare WARC file names');
  }
  if (m.config === null || typeof m.config !== 'object' || Array.isArray(m.config)) throw bad('config', 'must be an object');
  // The two paths a resume relocates from (recovery.ts relocate) before the validator sees the rest.
  for (const k of ['stateDir', 'outDir'] as const) {
    const v = (m.config as Record<string, unknown>)[k];
    if (typeof v !== 'string' || v === '') throw bad(`config.${k}`, 'must be a path');
  }
  if (m.checksum !== undefined) {
    if (typeof m.checksum !== 'string') throw bad('checksum', 'must be a string');
    const want = manifestChecksum(m as unknown as CheckpointManifest);
    if (m.checksum !== want) throw bad('checksum', `does not match its content (${m.checksum}, content gives ${want})`);
  }
}

/** The manifest, or null when the state dir holds no checkpoint yet. */
export async function readManifest(stateDir: string): Promise<CheckpointManifest | null> {
  const file = path.join(stateDir, MANIFEST_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new CrawlError('CRAWL_CHECKPOINT_CORRUPT', `${file} could not be read: ${(e as Error).message}`, { cause: e });
  }
  let m: CheckpointManifest;
  try {
    m = JSON.parse(text) as CheckpointManifest;
  } catch (e) {
    throw new CrawlError('CRAWL_CHECKPOINT_CORRUPT', `${file} is not valid JSON (${(e as Error).message}): the manifest is damaged, nothing was resumed (the crawl's other files are untouched: restore manifest.json from a copy of the state directory)`, { cause: e });
  }
  if (m === null || typeof m !== 'object' || Array.isArray(m)) throw new CrawlError('CRAWL_CHECKPOINT_CORRUPT', `${file} does not hold a JSON object: the manifest is damaged, nothing was resumed`);
  if (m.version !== MANIFEST_VERSION) {
    throw new CrawlError('CRAWL_CHECKPOINT_VERSION', `${file}: checkpoint version ${JSON.stringify(m.version)} is not supported (expected ${MANIFEST_VERSION})`);
  }
  checkManifestShape(m as unknown as Record<string, unknown>, file);
  return m;
}

/**
 * The configuration a resume runs with: the manifest's recorded one, checked by the same validator
 * as the command line's (config-rules.ts), then the resume's own flags over it. A recorded value
 * the validator refuses (a manifest edited to `statusHost: 0.0.0.0` or `allowNetworks: ["0/0"]`) is
 * CRAWL_MANIFEST_INVALID naming the file and the value: nothing is opened. The limits (maxPages,
 * maxTimeMs) belong to the command that names them and are not taken from the manifest.
 */
export function resolveRecordedConfig(stateDir: string, manifest: CheckpointManifest, where: CrawlConfigInput, overrides: CrawlConfigInput = {}): CrawlConfig {
  const stored: CrawlConfigInput = { ...(manifest.config as CrawlConfigInput), maxPages: null, maxTimeMs: null };
  try {
    resolveCrawlConfig({ ...stored, ...where });
  } catch (e) {
    if ((e as { code?: string }).code !== 'CRAWL_CONFIG_INVALID') throw e;
    throw new CrawlError('CRAWL_MANIFEST_INVALID', `${path.join(stateDir, MANIFEST_FILE)} records a configuration the crawler refuses: ${(e as Error).message}; the manifest was edited or damaged, nothing was resumed`, { cause: e });
  }
  return resolveCrawlConfig({ ...stored, ...overrides, ...where });
}

/**
 * pending.bin: [u32 count] then per record [u32 length][bytes], then the CRC-32 trailer of
 * src/disk/sealed.ts. It is only ever renamed into place complete (atomic write), so a crash never
 * tears it; the trailer finds damage on disk or an edit (a flipped bit in a record would otherwise
 * resume a different URL, and lose the one it was). Records are opaque (FrontierUrl codec bytes).
 * A file written before the trailer existed is read when its records use it up exactly.
 */
export function encodePending(records: Iterable<Uint8Array>): Uint8Array {
  const list = [...records];
  let total = 4;
  for (const r of list) total += 4 + r.byteLength;
  const out = new Uint8Array(total);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, list.length, true);
  let p = 4;
  for (const r of list) {
    dv.setUint32(p, r.byteLength, true);
    out.set(r, p + 4);
    p += 4 + r.byteLength;
  }
  return seal(out);
}

const PENDING_RECOVER = 'It lists the URLs that were in flight at the last checkpoint (the manifest\'s `pending` counts them): restore it from a copy of the state directory; removing it resumes without them (they would not be fetched).';

export function decodePending(buf: Uint8Array, file = PENDING_FILE): Uint8Array[] {
  const { body, bad } = unseal(buf);
  if (bad) throw damagedFile(file, 'its CRC-32 does not match its content', PENDING_RECOVER);
  if (body.byteLength < 4) throw damagedFile(file, `${body.byteLength} bytes, shorter than its count`, PENDING_RECOVER);
  const dv = new DataView(body.buffer, body.byteOffset, body.byteLength);
  const n = dv.getUint32(0, true);
  const out: Uint8Array[] = [];
  let p = 4;
  for (let i = 0; i < n; i++) {
    if (p + 4 > body.byteLength) throw damagedFile(file, `cut short after ${i} of ${n} records`, PENDING_RECOVER);
    const len = dv.getUint32(p, true);
    if (p + 4 + len > body.byteLength) throw damagedFile(file, `cut short after ${i} of ${n} records`, PENDING_RECOVER);
    out.push(body.slice(p + 4, p + 4 + len));
    p += 4 + len;
  }
  if (p !== body.byteLength) throw damagedFile(file, `${body.byteLength - p} bytes after its ${n} records`, PENDING_RECOVER);
  return out;
}

export async function writePending(stateDir: string, records: Iterable<Uint8Array>): Promise<void> {
  await writeFileAtomic(path.join(stateDir, PENDING_FILE), encodePending(records));
}

export async function readPending(stateDir: string): Promise<Uint8Array[]> {
  const file = path.join(stateDir, PENDING_FILE);
  let buf: Uint8Array;
  try {
    buf = new Uint8Array(await readFile(file));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  return decodePending(buf, file);
}

// -------------------------------------------------------------------------------------------------
// done.log: URLs durably finished since the frontier's last commit (see the top comment)

/** Records framed as [u32 length][u32 crc32(bytes)][bytes], little-endian. */
export function encodeDoneRecords(records: Iterable<Uint8Array>): Uint8Array {
  const list = [...records];
  let total = 0;
  for (const r of list) total += 8 + r.byteLength;
  const out = new Uint8Array(total);
  const dv = new DataView(out.buffer);
  let p = 0;
  for (const r of list) {
    dv.setUint32(p, r.byteLength, true);
    dv.setUint32(p + 4, crc32(r), true);
    out.set(r, p + 8);
    p += 8 + r.byteLength;
  }
  return out;
}

/**
 * The valid prefix of a done.log: parsing stops at the first record that is cut short or fails
 * its checksum (a torn append; what follows it cannot be trusted either).
 */
export function decodeDoneRecords(buf: Uint8Array): Uint8Array[] {
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const out: Uint8Array[] = [];
  let p = 0;
  while (p + 8 <= buf.byteLength) {
    const len = dv.getUint32(p, true);
    if (p + 8 + len > buf.byteLength) break;
    const rec = buf.subarray(p + 8, p + 8 + len);
    if (crc32(rec) !== dv.getUint32(p + 4, true)) break;
    out.push(buf.slice(p + 8, p + 8 + len));
    p += 8 + len;
  }
  return out;
}

export async function readDoneLog(stateDir: string): Promise<Uint8Array[]> {
  try {
    return decodeDoneRecords(new Uint8Array(await readFile(path.join(stateDir, DONE_FILE))));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
}

/**
 * The append side of done.log. Appends are synchronous writes of one buffer per batch (a few KB
 * per WARC sync, into the page cache): they keep their order relative to `mark`/`rewrite` without
 * any queueing, and cost microseconds.
 */
export class DoneLog {
  private fd: number;
  /** records appended since mark() (kept through the next rewrite), or null when not marking */
  private sinceMark: Uint8Array[] | null = null;
  private constructor(private readonly file: string, fd: number) {
    this.fd = fd;
  }

  /**
   * Open for appending (a torn tail is cut first, so new records follow the valid prefix).
   * `records`: what readDoneLog returned for this file, when the caller has just read it (a resume
   * reads it once, not twice).
   */
  static async open(stateDir: string, records?: readonly Uint8Array[]): Promise<DoneLog> {
    await mkdir(stateDir, { recursive: true });
    const file = path.join(stateDir, DONE_FILE);
    const valid = encodeDoneRecords(records ?? await readDoneLog(stateDir));
    let size = -1;
    try {
      size = fs.statSync(file).size;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    if (size !== valid.byteLength) writeFileAtomicSync(file, valid);
    return new DoneLog(file, openOwnFileSync(file, 'a'));
  }

  append(records: readonly Uint8Array[]): void {
    if (records.length === 0) return;
    const b = encodeDoneRecords(records);
    let off = 0;
    while (off < b.byteLength) off += fs.writeSync(this.fd, b, off, b.byteLength - off);
    if (this.sinceMark !== null) for (const r of records) this.sinceMark.push(r);
  }

  /** Start remembering appends: call right before the frontier commits. */
  mark(): void {
    this.sinceMark = [];
  }

  /**
   * Replace the file atomically with `keep` plus everything appended since mark() (call after the
   * frontier's commit: what was appended before the mark is covered by it).
   */
  rewrite(keep: Iterable<Uint8Array>): void {
    const recs = [...keep, ...(this.sinceMark ?? [])];
    this.sinceMark = null;
    fs.closeSync(this.fd);
    this.fd = -1;
    writeFileAtomicSync(this.file, encodeDoneRecords(recs));
    this.fd = openOwnFileSync(this.file, 'a');
  }

  close(): void {
    if (this.fd >= 0) fs.closeSync(this.fd);
    this.fd = -1;
  }
}
