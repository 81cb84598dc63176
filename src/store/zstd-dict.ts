/**
 * zstd dictionaries for `.warc.zst` files as the IIPC proposal defines them
 * (iipc/warc-specifications, specifications/warc-zstd, "Zstandard Compression for WARC Files" 1.0):
 *
 * - a file with a dictionary begins with a *dictionary frame*: a skippable frame (RFC 8878 §3.1.2)
 *   with Magic_Number 0x184D2A5D whose User_Data is one dictionary in the RFC 8878 §5 format
 *   (starting 0x37 0xA4 0x30 0xEC), either as is or as one zstd frame compressed without a
 *   dictionary, with Frame_Content_Size and Content_Checksum;
 * - every zstd frame of the file carries that dictionary's Dictionary_ID, Frame_Content_Size and
 *   Content_Checksum (the writer's encoder sets the three flags: warc-record.ts);
 * - decoders need support only dictionaries and frames up to 8 MiB (MAX_DICT_BYTES).
 *
 * The dictionary format (RFC 8878 §5): Magic_Number, Dictionary_ID (4 bytes each, little-endian),
 * Entropy_Tables (the Huffman tree description of literals, then the FSE table descriptions of
 * offset codes, match lengths and literal lengths, each as in a compressed block), three
 * Recent_Offsets, then the content (byte strings the frames refer back into). libzstd's trainer
 * (ZDICT) is not in zstd-napi's build, so `buildDictionary` writes the format here around a content
 * that zstd-train.ts chooses. Its entropy tables are there because the format requires them, and
 * are made so that libzstd never reuses them (the gain is the content's):
 * - the literals' Huffman table has two symbols, 0x00 and 0x01 (HUFFMAN_UNUSABLE);
 * - the three FSE tables are RFC 8878's predefined distributions (§3.1.1.3.2.2) cut short of the
 *   last codes (`incomplete`): libzstd takes a dictionary table that covers every code as valid
 *   for reuse and, at levels 1–5, reuses it for any block of fewer than 1,000 sequences instead of
 *   building a table fitted to the block — on the bench web's records that cost 6 % of the
 *   compressed size against a raw-content dictionary; an incomplete table is only "checked", so
 *   each block gets the table it would get without a dictionary;
 * - Recent_Offsets 1, 4, 8 (a frame's initial values without a dictionary).
 *
 * The shared slot: encoders in several threads (parse or page workers, the archive thread) must
 * switch to a dictionary trained mid-crawl. The slot is a SharedArrayBuffer passed to every thread
 * at start; the trainer writes the dictionary once and then bumps its version (Atomics), and each
 * encoder reads the version once per record group (one Atomics.load) and loads the dictionary when
 * it changed. A slot is written at most once (no reader can see a half-written dictionary).
 */
import { randomInt } from 'node:crypto';
import { compress as zstdCompressOnce, Decompressor } from 'zstd-napi';
import zstdBinding from 'zstd-napi/binding.js';

export const ZSTD_MAGIC = 0xfd2fb528;
/** The IIPC warc-zstd dictionary frame's magic (a skippable frame's). */
export const DICT_FRAME_MAGIC = 0x184d2a5d;
/** RFC 8878 §5 dictionary magic (bytes 0x37 0xA4 0x30 0xEC). */
export const DICT_MAGIC = 0xec30a437;
/** Largest dictionary (and dictionary frame User_Data) a decoder must support (warc-zstd §5). */
export const MAX_DICT_BYTES = 8 << 20;
/** Random dictionary IDs in the range the proposal suggests (warc-zstd §4.2). */
export const DICT_ID_MIN = 32768;
export const DICT_ID_MAX = 2147483647;

/** true when (m & ~0xF) is the skippable-frame magic 0x184D2A5?. */
export function isSkippableMagic(m: number): boolean {
  return ((m & 0xfffffff0) >>> 0) === 0x184d2a50;
}

/** A random Dictionary_ID in [DICT_ID_MIN, DICT_ID_MAX]. */
export function randomDictId(): number {
  return randomInt(DICT_ID_MIN, DICT_ID_MAX + 1);
}

/** The Dictionary_ID of an RFC 8878 §5 dictionary, or 0 when `d` is not one (raw content). */
export function dictionaryId(d: Uint8Array): number {
  if (d.length < 8) return 0;
  const v = new DataView(d.buffer, d.byteOffset, d.byteLength);
  return v.getUint32(0, true) === DICT_MAGIC ? v.getUint32(4, true) : 0;
}

// ---- FSE table descriptions (RFC 8878 §4.1.1) ---------------------------------------------------

/** RFC 8878 §3.1.1.3.2.2 predefined distributions: literal lengths, match lengths, offset codes. */
const LL_DEFAULT = { log: 6, norm: [4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1, -1, -1, -1, -1] };
const ML_DEFAULT = {
  log: 6,
  norm: [1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1],
};
const OF_DEFAULT = { log: 5, norm: [1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1] };

/**
 * An FSE table description: Accuracy_Log − 5 in 4 bits, then each symbol's probability + 1 in a
 * variable number of bits (fewer when the value is small against what is left to distribute),
 * a run of zero probabilities as 2-bit repeat flags; little-endian bit order (RFC 8878 §4.1.1).
 * `norm`: normalized counts summing to 2^log, −1 for "less than 1".
 */
export function fseTableDescription(norm: readonly number[], log: number): Uint8Array {
  const out: number[] = [];
  let bits = 0;
  let nbits = 0;
  const put = (v: number, n: number): void => {
    bits += v * 2 ** nbits;
    nbits += n;
    while (nbits >= 8) {
      out.push(bits % 256);
      bits = Math.floor(bits / 256);
      nbits -= 8;
    }
  };
  put(log - 5, 4);
  let remaining = (1 << log) + 1;
  let threshold = 1 << log;
  let width = log + 1;
  let s = 0;
  let prevZero = false;
  while (s < norm.length && remaining > 1) {
    if (prevZero) {
      let start = s;
      while (s < norm.length && norm[s] === 0) s++;
      if (s === norm.length) throw new RangeError('fseTableDescription: the distribution ends with zeros');
      while (s >= start + 3) { put(3, 2); start += 3; }
      put(s - start, 2);
    }
    let count = norm[s++]!;
    const max = 2 * threshold - 1 - remaining;
    remaining -= Math.abs(count);
    count++;
    if (count >= threshold) count += max;
    // values below `max` take width - 1 bits
    put(count, count < max ? width - 1 : width);
    prevZero = count === 1;
    if (remaining < 1) throw new RangeError('fseTableDescription: counts exceed 2^log');
    while (remaining < threshold) { width--; threshold >>= 1; }
  }
  if (remaining !== 1) throw new RangeError('fseTableDescription: counts do not sum to 2^log');
  if (nbits > 0) out.push(bits % 256);
  return Uint8Array.from(out);
}

/**
 * `norm` cut to its first `n` codes, the slots of the codes cut given to the most probable one
 * (sum 2^log kept). Offset codes are cut to 0..15: libzstd checks a dictionary's offset table only
 * up to the code of (content size + 128 KiB), at least 17.
 */
function incomplete(norm: readonly number[], n: number, log: number): number[] {
  const out = norm.slice(0, n);
  let used = 0;
  for (const c of out) used += Math.abs(c);
  let top = 0;
  for (let s = 1; s < n; s++) if (out[s]! > out[top]!) top = s;
  out[top]! += (1 << log) - used;
  return out;
}

// ---- the literals' Huffman table (RFC 8878 §4.2.1) ----------------------------------------------

/**
 * A Huffman tree description in the direct representation (header byte 128: one weight given,
 * the second implied) for bytes 0x00 and 0x01 alone, one bit each. No block of text can reuse it
 * (libzstd checks a dictionary's literal table against each block's literals before reusing it),
 * so every block gets the literal table it would get without a dictionary. Measured on the bench
 * web's records (bench/store/warc-zstd.ts): a table fitted to the samples' byte histogram (129
 * symbols) came out 2.5 % larger at level 1, since libzstd prefers a reusable dictionary table for
 * literal sections up to 1 KiB even where a fitted one is smaller.
 */
const HUFFMAN_UNUSABLE = Uint8Array.of(128, 0x10);

// ---- the dictionary ------------------------------------------------------------------------------

/**
 * An RFC 8878 §5 dictionary: `content` (at least 9 bytes: Recent_Offsets 1, 4, 8 must lie within
 * it), the entropy tables described in the module comment, and `id`.
 */
export function buildDictionary(content: Uint8Array, id: number): Uint8Array {
  if (!Number.isInteger(id) || id < 1 || id > 0xffffffff) throw new RangeError(`buildDictionary: id must be in [1, 2^32) (got ${id})`);
  if (content.length < 9) throw new RangeError('buildDictionary: content must have at least 9 bytes');
  const parts = [
    HUFFMAN_UNUSABLE,
    fseTableDescription(incomplete(OF_DEFAULT.norm, 16, OF_DEFAULT.log), OF_DEFAULT.log),
    fseTableDescription(incomplete(ML_DEFAULT.norm, ML_DEFAULT.norm.length - 1, ML_DEFAULT.log), ML_DEFAULT.log),
    fseTableDescription(incomplete(LL_DEFAULT.norm, LL_DEFAULT.norm.length - 1, LL_DEFAULT.log), LL_DEFAULT.log),
  ];
  let tables = 0;
  for (const p of parts) tables += p.length;
  const out = new Uint8Array(8 + tables + 12 + content.length);
  const v = new DataView(out.buffer);
  v.setUint32(0, DICT_MAGIC, true);
  v.setUint32(4, id, true);
  let o = 8;
  for (const p of parts) { out.set(p, o); o += p.length; }
  v.setUint32(o, 1, true);
  v.setUint32(o + 4, 4, true);
  v.setUint32(o + 8, 8, true);
  out.set(content, o + 12);
  return out;
}

// ---- the dictionary frame ---------------------------------------------------------------------------

/**
 * The dictionary frame for `dict`: a skippable frame 0x184D2A5D holding the dictionary, compressed
 * (one zstd frame at level 19, no dictionary, with content size and checksum) unless `compressed`
 * is false.
 */
export function dictionaryFrame(dict: Uint8Array, compressed = true): Uint8Array {
  if (dictionaryId(dict) === 0) throw new RangeError('dictionaryFrame: not an RFC 8878 §5 dictionary (no magic or Dictionary_ID 0)');
  let user = dict;
  if (compressed) {
    const c = new zstdBinding.CCtx();
    c.setParameter(zstdBinding.CParameter.compressionLevel, 19);
    c.setParameter(zstdBinding.CParameter.checksumFlag, 1);
    c.setParameter(zstdBinding.CParameter.contentSizeFlag, 1);
    const dst = new Uint8Array(zstdBinding.compressBound(dict.length));
    user = dst.subarray(0, c.compress2(dst, dict));
  }
  const out = new Uint8Array(8 + user.length);
  const v = new DataView(out.buffer);
  v.setUint32(0, DICT_FRAME_MAGIC, true);
  v.setUint32(4, user.length, true);
  out.set(user, 8);
  return out;
}

/**
 * The dictionary in a dictionary frame's User_Data (as is, or decompressed), or why it is not
 * one. Sizes above MAX_DICT_BYTES are refused (the proposal's decoder limit).
 */
export function dictionaryFromUserData(user: Uint8Array): Uint8Array | string {
  if (user.length < 8) return 'dictionary frame too short';
  if (user.length > MAX_DICT_BYTES) return `dictionary frame larger than ${MAX_DICT_BYTES} bytes`;
  const v = new DataView(user.buffer, user.byteOffset, user.byteLength);
  const magic = v.getUint32(0, true);
  let dict: Uint8Array;
  if (magic === DICT_MAGIC) dict = user;
  else if (magic === ZSTD_MAGIC) {
    const size = zstdBinding.getFrameContentSize(user);
    if (size === null) return 'compressed dictionary without Frame_Content_Size';
    if (size > MAX_DICT_BYTES) return `dictionary larger than ${MAX_DICT_BYTES} bytes`;
    const fhd = user[4]!;
    if ((fhd & 0x04) === 0) return 'compressed dictionary without Content_Checksum';
    if ((fhd & 0x03) !== 0) return 'compressed dictionary frame names a dictionary';
    try {
      if (zstdBinding.findFrameCompressedSize(user) !== user.length) return 'dictionary frame holds more than one zstd frame';
      const out = new Uint8Array(size);
      const n = new zstdBinding.DCtx().decompress(out, user);
      if (n !== size) return 'compressed dictionary shorter than its Frame_Content_Size';
      dict = out;
    } catch (e) {
      return `corrupt compressed dictionary (${(e as Error).message})`;
    }
  } else return 'dictionary frame holds neither a dictionary nor a zstd frame';
  if (dictionaryId(dict) === 0) return 'dictionary without Dictionary_ID';
  return dict;
}

/**
 * Decompress a whole `.warc.zst` file held in memory (tests, small tools): its dictionary frame,
 * if it begins with one, loaded, then every frame decompressed and concatenated.
 */
export function decompressWarcZst(file: Uint8Array): Uint8Array {
  const d = new Decompressor();
  let body = file;
  if (file.length >= 8) {
    const v = new DataView(file.buffer, file.byteOffset, file.byteLength);
    if (v.getUint32(0, true) === DICT_FRAME_MAGIC) {
      const len = v.getUint32(4, true);
      const dict = dictionaryFromUserData(file.subarray(8, 8 + len));
      if (typeof dict === 'string') throw new Error(`decompressWarcZst: ${dict}`);
      d.loadDictionary(dict);
      body = file.subarray(8 + len);
    }
  }
  return body.length === 0 ? new Uint8Array(0) : d.decompress(body);
}

/** One-shot compression without a dictionary (the frame of a compressed dictionary, tests). */
export function zstdFrameOf(b: Uint8Array, level = 3): Uint8Array {
  return zstdCompressOnce(b, { compressionLevel: level, checksumFlag: true, contentSizeFlag: true });
}

// ---- the shared slot -------------------------------------------------------------------------------

/** Slot layout: Int32 [version, length], then the dictionary's bytes. */
const SLOT_HEAD = 8;

/** A slot for a dictionary of up to maxBytes bytes, empty (or holding `dict`). */
export function newDictSlot(maxBytes: number, dict?: Uint8Array): SharedArrayBuffer {
  const slot = new SharedArrayBuffer(SLOT_HEAD + maxBytes);
  if (dict !== undefined) publishDictionary(slot, dict);
  return slot;
}

/** Write `dict` into an empty slot and make it visible to every thread (once per slot). */
export function publishDictionary(slot: SharedArrayBuffer, dict: Uint8Array): void {
  const head = new Int32Array(slot, 0, 2);
  if (Atomics.load(head, 0) !== 0) throw new Error('publishDictionary: the slot already holds a dictionary');
  if (dict.length > slot.byteLength - SLOT_HEAD) throw new RangeError(`publishDictionary: ${dict.length} bytes do not fit the slot (${slot.byteLength - SLOT_HEAD})`);
  new Uint8Array(slot, SLOT_HEAD, dict.length).set(dict);
  Atomics.store(head, 1, dict.length);
  Atomics.store(head, 0, 1);
}

/** The slot's version: 0 while empty, 1 once a dictionary is published. */
export function slotVersion(slot: SharedArrayBuffer): number {
  return Atomics.load(new Int32Array(slot, 0, 1), 0);
}

/** A copy of the slot's dictionary (null while empty). */
export function slotDictionary(slot: SharedArrayBuffer): Uint8Array | null {
  const head = new Int32Array(slot, 0, 2);
  if (Atomics.load(head, 0) === 0) return null;
  return new Uint8Array(slot, SLOT_HEAD, Atomics.load(head, 1)).slice();
}

// ---- frame headers ------------------------------------------------------------------------------------

/** What the warc-zstd proposal asks of a frame header (RFC 8878 §3.1.1.1). */
export interface FrameHeader {
  /** Dictionary_ID (0: the field is absent, or 0) */
  dictId: number;
  /** Frame_Content_Size present (FCS_Field_Size flag, or Single_Segment_flag) */
  contentSize: boolean;
  /** Content_Checksum_flag */
  checksum: boolean;
}

/**
 * The header fields of the zstd frame at b[off..] (magic not checked), or null when b ends
 * before its Dictionary_ID field.
 */
export function zstdFrameHeader(b: Uint8Array, off = 0): FrameHeader | null {
  if (b.length < off + 5) return null;
  const fhd = b[off + 4]!;
  const single = (fhd & 0x20) !== 0;
  const didBytes = [0, 1, 2, 4][fhd & 3]!;
  const p = off + 5 + (single ? 0 : 1);
  if (b.length < p + didBytes) return null;
  let dictId = 0;
  for (let i = 0; i < didBytes; i++) dictId += b[p + i]! * 2 ** (8 * i);
  return { dictId, contentSize: fhd >> 6 !== 0 || single, checksum: (fhd & 0x04) !== 0 };
}
