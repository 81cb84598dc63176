/**
 * Bulk load: a repository whose disk cache Z is written directly from a known, sorted key set
 * (thesis IV.3's Z, without the bucket files and merges that would normally build it).
 *
 * Invariant: bucket i's Z holds exactly the keys whose top log2(k) bits are i, strictly
 * increasing (the writers reject anything else); the manifest is written last, so a crash leaves
 * no repository. Cost: one sequential write of Z (≈ 5–8 bytes per key for key-only repositories,
 * 8 + value bytes otherwise).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CrawlError } from '../errors.js';
import { IoCounters, fsyncDir, writeFileAtomicSync, type Compression } from '../disk/index.js';
import { SortedRunWriter } from '../disk/sorted-file.js';
import { KeyRunWriter, gapBytesFor } from '../disk/key-run.js';
import { DrumErrorCode } from './errors.js';
import { EMPTY, FORMAT_VERSION, MANIFEST, encodeManifest, isPow2, pad, type Manifest, type ManifestBucket } from './format.js';

export interface BulkLoadOptions {
  buckets: number;
  valueBytes?: number | 'variable';
  compression?: Compression;
  io?: IoCounters;
  /** About how many keys `fill` emits in all (key-only repositories: sets Z's gap width,
   *  see src/disk/key-run.ts; without it keys are stored whole, 8 bytes each). */
  expectedKeys?: number;
}

/** Drum.bulkLoad (see there). */
export async function bulkLoad(
  dir: string,
  opts: BulkLoadOptions,
  fill: (bucket: number, append: (hi: number, lo: number, value?: Uint8Array | null) => void) => void,
): Promise<void> {
  const k = opts.buckets;
  if (!isPow2(k) || k > 4096) throw new CrawlError(DrumErrorCode.OPTIONS, 'options.buckets must be a power of two ≤ 4096');
  const valueBytes = opts.valueBytes ?? 0;
  fs.mkdirSync(dir, { recursive: true });
  const mfile = path.join(dir, MANIFEST);
  if (fs.existsSync(mfile)) throw new CrawlError(DrumErrorCode.OPTIONS, `bulkLoad needs an empty directory, ${dir} holds a repository`);
  const io = opts.io ?? new IoCounters();
  const shift = 32 - Math.log2(k);
  const buckets: ManifestBucket[] = [];
  for (let i = 0; i < k; i++) {
    const file = path.join(dir, `z${pad(i)}-1.z`);
    const fd = fs.openSync(file, 'w');
    try {
      const w =
        valueBytes === 0
          ? new KeyRunWriter(fd, file, opts.expectedKeys === undefined ? 8 : gapBytesFor(64 - Math.log2(k), opts.expectedKeys / k), io, 'cache', opts.compression ?? 'none')
          : new SortedRunWriter(fd, file, valueBytes, io, 'cache', opts.compression ?? 'none');
      const zero = valueBytes === 'variable' ? EMPTY : new Uint8Array(valueBytes);
      fill(i, (hi, lo, value) => {
        if ((k === 1 ? 0 : hi >>> shift) !== i) throw new CrawlError(DrumErrorCode.OPTIONS, `bulkLoad: key ${hi}:${lo} does not belong to bucket ${i}`);
        w.append(hi >>> 0, lo >>> 0, value ?? zero);
      });
      const zBytes = w.finish();
      buckets.push({ bgen: 1, zgen: 1, zKeys: w.records, zBytes });
    } finally {
      fs.closeSync(fd);
    }
  }
  fsyncDir(dir);
  const m: Manifest = { version: FORMAT_VERSION, k, valueBytes, buckets };
  writeFileAtomicSync(mfile, encodeManifest(m), io);
}

