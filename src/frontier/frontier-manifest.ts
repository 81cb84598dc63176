/**
 * The frontier's own checkpoint file, `frontier/frontier.json`: the sequence number of the last
 * checkpoint and the name of the snapshot of the URLs that were in RAM then (§6.1: everything
 * else the frontier holds is in BEAST's and QR's disk queues, which commit themselves).
 */
import { CrawlError } from '../errors.js';

export const FRONTIER_META = 'frontier.json';

export interface FrontierManifest {
  version: 1;
  snapshot: string | null;
  seq: number;
}

/**
 * The manifest in `text`. Damage (truncation, flipped bits) is a checkpoint fault naming the
 * file, never a bare JSON.parse error: nothing is resumed from it (docs/operations.md, "A damaged
 * state").
 */
export function parseFrontierManifest(text: string): FrontierManifest {
  let m: FrontierManifest;
  try {
    m = JSON.parse(text) as FrontierManifest;
  } catch (cause) {
    throw new CrawlError('CRAWL_CHECKPOINT_CORRUPT', `frontier/${FRONTIER_META} is not valid JSON (${(cause as Error).message}): the frontier's checkpoint is damaged, nothing was resumed (restore the state directory from a copy)`, { cause });
  }
  const snapshotOk = m?.snapshot === null || (typeof m?.snapshot === 'string' && /^[A-Za-z0-9._-]+$/.test(m.snapshot));
  if (m === null || typeof m !== 'object' || !Number.isSafeInteger(m.seq) || m.seq < 0 || !snapshotOk) {
    throw new CrawlError('CRAWL_CHECKPOINT_CORRUPT', `frontier/${FRONTIER_META} does not hold the frontier's checkpoint (seq, snapshot): it is damaged, nothing was resumed (restore the state directory from a copy)`);
  }
  return m;
}
