/**
 * The zstd dictionary options of the crawl's WARC writer (`--warc-zstd-dictionary`, IIPC
 * warc-zstd: src/store/zstd-dict.ts):
 * - `train`: the writer trains a dictionary from the crawl's first 1 MiB of records (about 50–100
 *   pages) and every file after that begins with it; a resumed crawl takes the dictionary of the
 *   file its checkpoint names, when it has one (no new training, no dictionary-less file);
 * - a file path: that dictionary (RFC 8878 §5, with a Dictionary_ID: `zstd --train` writes one)
 *   from the first file on; a file that is not one is refused (CRAWL_CONFIG_INVALID, exit 2);
 * - `off`: no dictionary.
 * The slot is shared with the parse or page workers through the writer's encode options.
 * RAM: the slot (the dictionary, ≤ 8 MiB for a given file, 65 KiB trained) and, while training,
 * the samples (1 MiB) in the archive thread.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { CrawlError } from '../../errors.js';
import { dictionaryFromUserData, newDictSlot, readWarcDictionary, type WarcWriterOptions } from '../../store/index.js';
import { CRAWL_CONFIG_INVALID } from '../../config/config-values.js';

/** Trained dictionary content bytes, and the records sampled before training. */
export const TRAIN_DICT_BYTES = 65536;
export const TRAIN_SAMPLE_BYTES = 1 << 20;

/** The writer's zstd options for this crawl (empty unless the compression is zstd). */
export async function zstdArchiveOptions(
  cfg: { warcCompression: string; warcZstdLevel: number; warcZstdDictionary: string; outDir: string },
  resumeFrom: { file: string } | null,
): Promise<Pick<WarcWriterOptions, 'zstdLevel' | 'zstdDict' | 'zstdTrain'>> {
  if (cfg.warcCompression !== 'zstd') return {};
  const mode = cfg.warcZstdDictionary;
  if (mode === 'off') return { zstdLevel: cfg.warcZstdLevel };
  if (mode === 'train') {
    const last = resumeFrom !== null && resumeFrom.file.endsWith('.warc.zst')
      ? await readWarcDictionary(path.join(cfg.outDir, resumeFrom.file)).catch(() => null)
      : null;
    if (last !== null) return { zstdLevel: cfg.warcZstdLevel, zstdDict: newDictSlot(last.length, last) };
    return { zstdLevel: cfg.warcZstdLevel, zstdDict: newDictSlot(TRAIN_DICT_BYTES + 1024), zstdTrain: { sampleBytes: TRAIN_SAMPLE_BYTES, dictBytes: TRAIN_DICT_BYTES } };
  }
  let bytes: Uint8Array;
  try {
    bytes = await readFile(mode);
  } catch (e) {
    throw new CrawlError(CRAWL_CONFIG_INVALID, `warcZstdDictionary: cannot read ${mode}: ${(e as Error).message}`, { details: { key: 'warcZstdDictionary', value: mode } });
  }
  const dict = dictionaryFromUserData(bytes);
  if (typeof dict === 'string') {
    throw new CrawlError(CRAWL_CONFIG_INVALID, `warcZstdDictionary: ${mode} is not a zstd dictionary with a Dictionary_ID (RFC 8878 §5; \`zstd --train\` writes one)${typeof dict === 'string' ? `: ${dict}` : ''}`, { details: { key: 'warcZstdDictionary', value: mode } });
  }
  return { zstdLevel: cfg.warcZstdLevel, zstdDict: newDictSlot(dict.length, dict) };
}
