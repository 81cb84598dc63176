/**
 * The robots DRUMs' counters over every run of a crawl (RobotsCache, RobotsRequested and the answer
 * journal): the crawl's robots stage keeps them, sealed like the manifest; the monitor shows them.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { damagedFile } from '../disk/index.js';

/**
 * The stage's counters over every run of the crawl, kept in `<stateDir>/robots-stage.json` at each
 * commit (what `drumcrawl stats` prints); a SIGKILL loses the counts since the last commit.
 */
export interface RobotsTotals {
  checks: number;
  hits: number;
  expired: number;
  asks: number;
  /** asks of hosts an earlier run had asked without its answer reaching RobotsCache */
  lostAsks: number;
  cacheKeys: number;
  cacheMerges: number;
  cacheBytes: number;
  requestedKeys: number;
  requestedMerges: number;
  requestedBytes: number;
  /** robots answers recovered from the journal at an open (received by a killed run, not yet merged) */
  journalReplayed: number;
}

export const ROBOTS_TOTALS_FILE = 'robots-stage.json';

export function emptyRobotsTotals(): RobotsTotals {
  return { checks: 0, hits: 0, expired: 0, asks: 0, lostAsks: 0, cacheKeys: 0, cacheMerges: 0, cacheBytes: 0, requestedKeys: 0, requestedMerges: 0, requestedBytes: 0, journalReplayed: 0 };
}

const TOTALS_RECOVER = 'It holds only the robots stage\'s counters (status page, stats); remove it to resume: those counters restart from zero, no crawl work depends on them.';

/**
 * The totals of the last commit, or zeros when there is no file yet. The file is sealed like the
 * manifest (a `checksum` field: CRC-32 of the compact JSON without it; files written before it
 * existed have none): damage is CRAWL_CHECKPOINT_CORRUPT naming the file, never counters read from
 * a damaged file or silently zeroed.
 */
export function readRobotsTotals(stateDir: string): RobotsTotals {
  const file = path.join(stateDir, ROBOTS_TOTALS_FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return emptyRobotsTotals();
    throw e;
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw damagedFile(file, `not JSON: ${(e as Error).message}`, TOTALS_RECOVER, e);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw damagedFile(file, 'not a JSON object', TOTALS_RECOVER);
  const { checksum, ...body } = v as Record<string, unknown>;
  if (checksum !== undefined && checksum !== jsonChecksum(body)) throw damagedFile(file, 'its checksum does not match its content', TOTALS_RECOVER);
  const out = emptyRobotsTotals();
  for (const [k, x] of Object.entries(body)) {
    if (!(k in out) || typeof x !== 'number' || !Number.isSafeInteger(x) || x < 0) throw damagedFile(file, `${k}: ${JSON.stringify(x)} is not a counter of the robots stage`, TOTALS_RECOVER);
    out[k as keyof RobotsTotals] = x;
  }
  return out;
}

/** CRC-32 (hex) of the compact JSON of `body` (the manifest's seal, checkpoint.ts). */
function jsonChecksum(body: object): string {
  return crc32(JSON.stringify(body)).toString(16).padStart(8, '0');
}

export function sealedTotals(t: RobotsTotals): string {
  return JSON.stringify({ ...t, checksum: jsonChecksum(t) });
}
