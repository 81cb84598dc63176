/**
 * STAR's final state read back from a crawl's state (test helper): each PLD's in-degree from the
 * PLDindegree DRUM of the partition (or single crawl) that owns it, the in-degree histograms the
 * budgets rank against, and the budget each PLD gets from them.
 */
import path from 'node:path';
import { readFile } from 'node:fs/promises';
import { DrumPldStore, IndegreeHistogram, budgetPreset, TRUST_THRESHOLD } from '../../src/frontier/index.js';
import { fingerprintInto } from '../../src/url/index.js';

export function pldKeys(plds: readonly string[]): Uint32Array {
  const k = new Uint32Array(plds.length * 2);
  for (let i = 0; i < plds.length; i++) fingerprintInto(plds[i]!, k, 2 * i);
  return k;
}

/** In-degrees of `keys` (packed [hi, lo]*) in the STAR store of a crawl state directory. */
export async function indegrees(stateDir: string, keys: Uint32Array): Promise<number[]> {
  const store = await DrumPldStore.open(path.join(stateDir, 'star'), { ramBytes: 8 << 20, drum: { buckets: 1 } });
  try {
    const out = new Float64Array(keys.length / 2);
    await store.indegrees(keys, keys.length / 2, out);
    return [...out];
  } finally {
    await store.close();
  }
}

/** The rank histogram of a crawl state (STAR's histogram.bin), or of several summed. */
export async function histogram(stateDirs: readonly string[]): Promise<IndegreeHistogram> {
  const size = new IndegreeHistogram().toBytes().byteLength / 8;
  const sum = new Float64Array(size);
  for (const d of stateDirs) {
    const b = new Uint8Array(await readFile(path.join(d, 'star', 'histogram.bin')));
    const a = new Float64Array(b.buffer, b.byteOffset, b.byteLength / 8);
    for (let i = 0; i < size; i++) sum[i] = sum[i]! + a[i]!;
  }
  const h = new IndegreeHistogram();
  h.fromBytes(new Uint8Array(sum.buffer));
  return h;
}

/** The budget STAR gives in-degree d against histogram h (the crawl's defaults: crawl preset, B0 10, trusted). */
export function budgetOf(d: number, h: IndegreeHistogram): number {
  return budgetPreset('crawl', 10, TRUST_THRESHOLD).budget(d, h);
}
