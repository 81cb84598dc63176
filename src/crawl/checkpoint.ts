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
 * The manifest is JSON (human-inspectable, `drumcrawl stats <state>` prints it); it is tiny and
 * bounded: counters, positions, the config, an epoch.
 */
import { readFile, mkdir } from 'node:fs/promises';
import { writeFileAtomic } from '../disk/index.js';
import path from 'node:path';
import { CrawlError } from '../errors.js';
import type { CrawlConfig } from './config.js';

export const MANIFEST_FILE = 'manifest.json';
export const PENDING_FILE = 'pending.bin';
export const MANIFEST_VERSION = 1;

export interface CrawlCounters {
  pages: number;
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
    pages: 0, pagesOk: 0, bytes: 0, urlsSeen: 0, urlsDiscovered: 0, duplicates: 0,
    robotsFetches: 0, workersReplaced: 0, outcomes: {}, crawlMs: 0, cpuMicros: 0,
  };
}

export interface CheckpointManifest {
  version: number;
  /** increases by one per checkpoint */
  epoch: number;
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
}

// Atomic durable replacement (temp + fsync + rename + fsync dir) is src/disk's helper.
export { writeFileAtomic } from '../disk/index.js';

export async function writeManifest(stateDir: string, m: CheckpointManifest): Promise<void> {
  await mkdir(stateDir, { recursive: true });
  await writeFileAtomic(path.join(stateDir, MANIFEST_FILE), JSON.stringify(m, null, 2) + '\n');
}

/** The manifest, or null when the state dir holds no checkpoint yet. */
export async function readManifest(stateDir: string): Promise<CheckpointManifest | null> {
  let text: string;
  try {
    text = await readFile(path.join(stateDir, MANIFEST_FILE), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  let m: CheckpointManifest;
  try {
    m = JSON.parse(text) as CheckpointManifest;
  } catch (e) {
    throw new CrawlError('CRAWL_CHECKPOINT_CORRUPT', `${path.join(stateDir, MANIFEST_FILE)} is not valid JSON`, { cause: e });
  }
  if (m.version !== MANIFEST_VERSION) {
    throw new CrawlError('CRAWL_CHECKPOINT_VERSION', `checkpoint version ${m.version} is not supported (expected ${MANIFEST_VERSION})`);
  }
  return m;
}

/**
 * pending.bin: [u32 count] then per record [u32 length][bytes], CRC-free because it is only ever
 * renamed into place complete (atomic write); records are opaque (FrontierUrl codec bytes).
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
  return out;
}

export function decodePending(buf: Uint8Array): Uint8Array[] {
  if (buf.byteLength < 4) return [];
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const n = dv.getUint32(0, true);
  const out: Uint8Array[] = [];
  let p = 4;
  for (let i = 0; i < n; i++) {
    if (p + 4 > buf.byteLength) throw new CrawlError('CRAWL_CHECKPOINT_CORRUPT', 'pending.bin is truncated');
    const len = dv.getUint32(p, true);
    if (p + 4 + len > buf.byteLength) throw new CrawlError('CRAWL_CHECKPOINT_CORRUPT', 'pending.bin is truncated');
    out.push(buf.slice(p + 4, p + 4 + len));
    p += 4 + len;
  }
  return out;
}

export async function writePending(stateDir: string, records: Iterable<Uint8Array>): Promise<void> {
  await writeFileAtomic(path.join(stateDir, PENDING_FILE), encodePending(records));
}

export async function readPending(stateDir: string): Promise<Uint8Array[]> {
  try {
    return decodePending(new Uint8Array(await readFile(path.join(stateDir, PENDING_FILE))));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
}
