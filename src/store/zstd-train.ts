/**
 * Dictionary training for `.warc.zst` files, in TypeScript: libzstd's trainer (ZDICT) is not in
 * zstd-napi's build. The algorithm is FastCOVER's (Liu, Cyan et al., zstd's `dictBuilder/fastcover.c`,
 * after the COVER paper: Liao, Petri, Moffat, Wirth, "Effective construction of Relative
 * Lempel-Ziv dictionaries", WWW 2016), which is what `zstd --train` runs by default:
 *
 * - every d-byte string (d-mer) of the samples is hashed into 2^F counters (its frequency);
 * - the samples are cut into epochs; in each epoch the k-byte segment whose *distinct* d-mers have
 *   the largest total frequency is chosen, copied into the dictionary, and the frequencies of its
 *   d-mers are zeroed (a string is worth having once);
 * - epochs are visited in turn until the dictionary is full; segments are placed from the end of
 *   the dictionary backwards, so the first (best) ones sit nearest the data, at the smallest
 *   offsets.
 *
 * Then buildDictionary (zstd-dict.ts) adds the entropy tables and the ID. Cost: linear in the
 * sample bytes (one pass for the counts, one sliding window per epoch); memory: 2^F Uint32
 * counters twice (4 MiB each at F = 20) plus the samples the caller holds.
 */
import { buildDictionary, randomDictId } from './zstd-dict.js';

export interface TrainOptions {
  /** Dictionary content bytes (the dictionary adds ~200 bytes of tables). @default 65536 */
  dictBytes?: number;
  /** Segment length k. @default 1024 */
  segment?: number;
  /** d-mer length. @default 8 */
  d?: number;
  /** log2 of the frequency table. @default 20 */
  f?: number;
  /** Dictionary_ID; a random one in the proposal's range by default. */
  id?: number;
}

/** FNV-like hash of the d bytes at s[i..] into f bits (d = 6 or 8). */
function dmerHash(s: Uint8Array, i: number, d: number, f: number): number {
  const a = s[i]! | (s[i + 1]! << 8) | (s[i + 2]! << 16) | (s[i + 3]! << 24);
  const b = d === 8 ? s[i + 4]! | (s[i + 5]! << 8) | (s[i + 6]! << 16) | (s[i + 7]! << 24) : s[i + 4]! | (s[i + 5]! << 8);
  return (Math.imul(a, 0x9e3779b1) ^ Math.imul(b ^ (a >>> 15), 0x85ebca77)) >>> (32 - f);
}

/**
 * The content of a dictionary trained on `samples` (concatenated; the samples' own boundaries do
 * not matter to the choice): at most dictBytes bytes, fewer when the samples are smaller.
 */
export function trainContent(samples: Uint8Array, opts: TrainOptions = {}): Uint8Array {
  const dictBytes = opts.dictBytes ?? 65536;
  const k = opts.segment ?? 1024;
  const d = opts.d ?? 8;
  const f = opts.f ?? 20;
  if (d !== 6 && d !== 8) throw new RangeError('trainContent: d must be 6 or 8');
  if (samples.length <= dictBytes) return samples.slice();
  const nDmers = samples.length - d + 1;
  const hashes = new Uint32Array(nDmers);
  const freq = new Uint32Array(1 << f);
  for (let i = 0; i < nDmers; i++) {
    const h = dmerHash(samples, i, d, f);
    hashes[i] = h;
    freq[h]!++;
  }
  // Epochs: about 4 passes' worth of segments over the samples (fastcover.c: ZDICT_computeEpochs).
  const epochs = Math.max(1, Math.min(Math.floor(dictBytes / k / 4), Math.floor(nDmers / (10 * k))));
  const epochSize = Math.floor(nDmers / epochs);
  const inSeg = new Uint16Array(1 << f); // d-mers of the window being scored, by hash
  const dict = new Uint8Array(dictBytes);
  let tail = dictBytes;
  let zeroRuns = 0;
  for (let e = 0; tail > 0 && zeroRuns < epochs; e = (e + 1) % epochs) {
    const begin = e * epochSize;
    const end = Math.min(begin + epochSize, nDmers);
    const win = Math.min(k - d + 1, end - begin); // d-mers in a segment
    let best = 0;
    let bestAt = begin;
    let score = 0;
    let lo = begin;
    for (let hi = begin; hi < end; hi++) {
      const h = hashes[hi]!;
      if (inSeg[h]++ === 0) score += freq[h]!;
      if (hi - lo + 1 > win) {
        const g = hashes[lo++]!;
        if (--inSeg[g] === 0) score -= freq[g]!;
      }
      if (hi - lo + 1 === win && score > best) { best = score; bestAt = lo; }
    }
    for (let i = lo; i < end; i++) inSeg[hashes[i]!] = 0;
    if (best === 0) { zeroRuns++; continue; }
    zeroRuns = 0;
    // trim d-mers no longer worth anything off both ends of the chosen segment
    let s = bestAt;
    let t = bestAt + win - 1;
    while (s < t && freq[hashes[s]!] === 0) s++;
    while (t > s && freq[hashes[t]!] === 0) t--;
    for (let i = s; i <= t; i++) freq[hashes[i]!] = 0;
    const len = Math.min(t + d - s, tail);
    tail -= len;
    dict.set(samples.subarray(s, s + len), tail);
  }
  return dict.subarray(tail).slice();
}

/** A complete RFC 8878 §5 dictionary trained on `samples` (see the module comment). */
export function trainDictionary(samples: Uint8Array, opts: TrainOptions = {}): Uint8Array {
  const content = trainContent(samples, opts);
  const padded = content.length >= 9 ? content : Uint8Array.from([...content, ...new Uint8Array(9 - content.length)]);
  return buildDictionary(padded, opts.id ?? randomDictId());
}
