/**
 * DRUM's on-disk layout and the state every part of a repository shares (thesis IV.3, Fig. 1).
 *
 * A repository directory holds the manifest (drum.json: format version, k, value size, and per
 * bucket the generation of its bucket files and of its Z file), per bucket i the bucket files
 * b<i>-<gen>.kv / .aux (FIFO tuples, written in paired blocks) and the sorted disk cache slice
 * z<i>-<gen>.z. Invariant: only the generations the manifest names (and bucket files of later
 * generations, pending) are live; everything else is a spare or garbage (generations.ts).
 * Cost: a bucket entry is 9 bytes (op, key) + its value on disk; the aux file holds a varint
 * length + the aux bytes per tuple (the b of the cost model, model.ts).
 */
import * as fs from 'node:fs';
import { crc32 } from 'node:zlib';
import { CrawlError } from '../errors.js';
import type { BlockWriter } from '../disk/index.js';
import { DrumErrorCode } from './errors.js';
import type { DrumOp } from './types.js';

/** Op codes of a key/value record's first byte (low two bits); HAS_VALUE marks a record with a value. */
export const OP_CHECK = 0;
export const OP_UPDATE = 1;
export const OP_CU = 2;
export const HAS_VALUE = 0x40;
export const OP_NAMES: readonly DrumOp[] = ['check', 'update', 'checkUpdate'];
export const EMPTY = new Uint8Array(0);
export const MANIFEST = 'drum.json';
/** Read size of the merge's sequential streams; Z block size. */
export const READ_AHEAD = 4 << 20;
export const Z_BLOCK = 1 << 20;

export interface BucketGen {
  gen: number;
  kvFd: number;
  auxFd: number;
  kv: BlockWriter;
  aux: BlockWriter;
  tuples: number;
  /** Lower bound of the generations whose (stale) blocks the two files may hold: the gen itself
   *  for fresh or cut files, the recycled spare's bound otherwise (see newGen). */
  oldest: number;
  /** Every block of both files is tagged: the pair may be recycled after its merge (an untagged
   *  file of an older drumcrawl could not be told from stale data once overwritten). */
  recyclable: boolean;
}

export interface BucketState {
  /** Pending generations, oldest first; the last one takes new tuples. */
  gens: BucketGen[];
  kvBuf: Uint8Array;
  kvLen: number;
  auxBuf: Uint8Array;
  auxLen: number;
  bufCount: number;
  /** Pending tuples and key/value bytes (on disk + buffered) over all pending generations. */
  tuples: number;
  kvBytes: number;
  zgen: number;
  zKeys: number;
  zBytes: number;
  /** Keys of Z_i that shadow the same key in the deep part (a changed deep value: deep.ts); 0 after a settling. */
  zShadows: number;
  /** The deep part's generation, keys, bytes and index entries (deep.ts; dgen 0: none). */
  deep: DeepState;
}

/** Where a bucket's deep part stands (deep.ts; the manifest's fields of it). dgen 0: none. */
export interface DeepState {
  dgen: number;
  dKeys: number;
  dBytes: number;
  dBlocks: number;
}

export const NO_DEEP: DeepState = Object.freeze({ dgen: 0, dKeys: 0, dBytes: 0, dBlocks: 0 });

export interface ManifestBucket {
  bgen: number;
  zgen: number;
  zKeys: number;
  zBytes: number;
  /** Keys of Z that shadow a deep key (BucketState.zShadows), when any. */
  zShadows?: number;
  /** Repositories with a deep part (DrumOptions.settleKeys): its state, when it has one. */
  dgen?: number;
  dKeys?: number;
  dBytes?: number;
  dBlocks?: number;
}

/**
 * Manifest version = on-disk format. 1: Z records of 8-byte keys (+ value) for every repository.
 * 2: key-only repositories (valueBytes 0) hold Z as delta-coded key runs
 * (src/disk/key-run.ts); repositories with values keep version 1's Z records. A version-1
 * repository is refused with CRAWL_DRUM_FORMAT rather than misread.
 */
export const FORMAT_VERSION = 2;

export interface Manifest {
  version: typeof FORMAT_VERSION;
  k: number;
  valueBytes: number | 'variable';
  buckets: ManifestBucket[];
}

/**
 * drum.json as written: the manifest with a `checksum` field, CRC-32 (hex) of the compact JSON of
 * the rest (the crawl manifest's seal, src/state/checkpoint.ts). A flipped digit in a bucket's
 * generation or key count is then refused (CRAWL_DRUM_MANIFEST naming the file) instead of
 * retiring the Z file in force or deleting pending bucket files as garbage. Manifests written
 * before the field existed have none and are read as they are.
 */
export function encodeManifest(m: Manifest): string {
  const { checksum: _drop, ...body } = m as Manifest & { checksum?: string };
  void _drop;
  return JSON.stringify({ ...body, checksum: crc32(JSON.stringify(body)).toString(16).padStart(8, '0') });
}

/** The manifest in `text` (read from `file`), its seal checked; throws CRAWL_DRUM_MANIFEST naming the file. */
export function decodeManifest(text: string, file: string): Manifest {
  const damaged = (why: string, cause?: unknown): CrawlError => new CrawlError(DrumErrorCode.MANIFEST,
    `DRUM manifest ${file} is damaged (${why}): the repository cannot be opened, nothing was resumed (restore the state directory from a copy)`,
    { cause, details: { file } });
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (cause) {
    throw damaged(`not JSON: ${(cause as Error).message}`, cause);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw damaged('not a JSON object');
  const { checksum, ...body } = v as Record<string, unknown>;
  // (a manifest of another on-disk format is the caller's CRAWL_DRUM_FORMAT, whatever its seal)
  if (body.version !== undefined && body.version !== FORMAT_VERSION) return body as unknown as Manifest;
  if (checksum !== undefined && checksum !== crc32(JSON.stringify(body)).toString(16).padStart(8, '0')) throw damaged('its checksum does not match its content');
  const m = body as unknown as Manifest;
  if (Array.isArray(m.buckets)) {
    for (const b of m.buckets as unknown[]) {
      const x = b as Record<string, unknown> | null;
      if (x === null || typeof x !== 'object' || !['bgen', 'zgen', 'zKeys', 'zBytes'].every((k) => Number.isSafeInteger(x[k]) && (x[k] as number) >= 0)) throw damaged('a bucket entry is not four counts');
      if (!['dgen', 'dKeys', 'dBytes', 'dBlocks', 'zShadows'].every((k) => x[k] === undefined || (Number.isSafeInteger(x[k]) && (x[k] as number) >= 0))) throw damaged('a bucket\'s deep part or shadow count is not counts');
    }
  }
  return m;
}

export const pad = (i: number): string => String(i).padStart(4, '0');

/** Truncates the file to `len` bytes when it is longer (a recycled file's stale tail); true if it was. */
export function cutTo(fd: number, len: number): boolean {
  if (fs.fstatSync(fd).size <= len) return false;
  fs.ftruncateSync(fd, len);
  return true;
}

export function isPow2(x: number): boolean {
  return x >= 1 && (x & (x - 1)) === 0;
}

export function roundPow2(x: number): number {
  if (x <= 1) return 1;
  const lo = 2 ** Math.floor(Math.log2(x));
  return x / lo < 1.5 ? lo : lo * 2;
}

export function bucketMismatch(i: number, g: number, msg: string): CrawlError {
  return new CrawlError(DrumErrorCode.BUCKET_MISMATCH, `bucket ${i} generation ${g}: ${msg}`, { details: { bucket: i, gen: g } });
}

/**
 * One read buffer for the merge's three sequential streams (bucket kv, Z, bucket aux) and the
 * Z writer's buffer, both kept from merge to merge: a fresh 4 MiB buffer per stream and bucket
 * left ~12 MiB of garbage ArrayBuffers per bucket merge until V8 collected them (RSS above R).
 * Recovery, the merge and the delivery share it (never at the same time).
 */
export class IoBuffers {
  ioBuf: Buffer | null = null;
  zwBuf: Uint8Array | null = null;

  ioBuffer(): Buffer {
    return (this.ioBuf ??= Buffer.allocUnsafeSlow(READ_AHEAD));
  }
}
