/**
 * Record-by-record scan of a (possibly torn) WARC file: plain, per-record gzip members, or zstd
 * frames as the IIPC warc-zstd proposal defines them (zstd-dict.ts): a dictionary frame at the
 * start is loaded and every frame decompressed with it; each frame must carry Frame_Content_Size,
 * Content_Checksum (checked as it ends) and, in a file with a dictionary, that dictionary's
 * Dictionary_ID (a frame without it, with another one, or naming one in a file without a
 * dictionary is an error); other skippable frames (extension frames) are passed over, except at
 * the start of the file. Used on resume to
 * cut a record that was half-written when the crawler died (truncateTornWarc), to read the tail
 * after a checkpoint's offset (`fromOffset`), and by tests.
 *
 * A prefix is valid when it is a sequence of complete compression units (gzip member with correct
 * CRC-32 and ISIZE / zstd frame that decompresses with its checksum) whose decompressed bytes
 * are a sequence of complete WARC records ("WARC/1.x" head, Content-Length block, CRLF CRLF). The
 * valid length is the end of the last unit after which no record is left unfinished. Foreign files
 * that put several records in one member (not per-record compressed) scan fine; the cut is then at
 * member granularity.
 *
 * The file is untrusted input (a torn write, a foreign file), so the scan is one linear pass:
 * - the decompressed bytes go through a byte-at-a-time record state machine (RecordStream, warc-record-stream.ts) that
 *   keeps only the record head being read (at most MAX_HEAD bytes) and counts the block's bytes
 *   off without holding them, so a head of spaces or a record declaring a huge Content-Length over
 *   many small members costs time proportional to the bytes, never a re-scan;
 * - head fields are found by splitting lines and comparing names (no backtracking pattern);
 * - a compression unit is decompressed into the state machine as it is read, CHUNK bytes of output
 *   at a time: gzip members through one reused raw-inflate context (inflateCtx), zstd frames
 *   through ZSTD_decompressStream; where node:zlib's handle is not reachable, a small member takes
 *   one inflateRawSync call (output ≤ SYNC_OUT_MAX) and a larger one a zlib stream.
 * Memory: the read window (WINDOW), one head (MAX_HEAD), one decompressed piece (CHUNK; SYNC_OUT_MAX
 * in the fallback) — independent of the file, record and unit sizes. Only `collect: true` grows
 * (one entry per record, by request).
 */
import { open } from 'node:fs/promises';
import { WINDOW, Window } from './scan-window.js';
import { RecordStream, type ParsedHead } from './warc-record-stream.js';

export { MAX_HEAD } from './warc-record-stream.js';
import { createInflateRaw, inflateRawSync, crc32, constants as zc } from 'node:zlib';
import zstdBinding from 'zstd-napi/binding.js';
import { DICT_FRAME_MAGIC, MAX_DICT_BYTES, ZSTD_MAGIC, dictionaryFromUserData, dictionaryId, isSkippableMagic, zstdFrameHeader } from './zstd-dict.js';

/** zstd's own streaming decompressor (ZSTD_decompressStream), synchronous, from zstd-napi's native binding. */
const { DCtx, ResetDirective } = zstdBinding;

export type WarcFormat = 'gzip' | 'zstd' | 'none';

export interface ScannedRecord {
  /** Offset of the compression unit (or plain record) where the record starts. */
  offset: number;
  /** Bytes from offset to the end of the unit where the record ends. */
  length: number;
  type: string | null;
  recordId: string | null;
  targetUri: string | null;
  contentLength: number;
}

export interface ScanResult {
  format: WarcFormat;
  fileLength: number;
  /** Length of the longest valid prefix (== fileLength for an intact file). */
  validLength: number;
  /** Records found (from `fromOffset` on). */
  records: number;
  /** Only when scanWarc(…, { collect: true }). */
  list?: ScannedRecord[];
  /** Why the scan stopped before the end, if it did. */
  error?: string;
}

export interface ScanOptions {
  /** Also return every record's offset, length and main fields. */
  collect?: boolean;
  /**
   * Start here instead of at 0: a record (plain) or compression-unit boundary, e.g. the offset a
   * checkpoint recorded. The bytes before it are taken as valid and not read (the format is still
   * detected from the file's first bytes). Past the end of the file: nothing is scanned and
   * `error` says so.
   */
  fromOffset?: number;
}

/** Streaming piece for units larger than the window. */
const CHUNK = 256 * 1024;
/** A gzip member is inflated in one call only while its output stays below this. */
const SYNC_OUT_MAX = 8 << 20;
/** Longest gzip member header (FEXTRA, FNAME, FCOMMENT) accepted. */
const MAX_GZIP_HEADER = 64 * 1024;

function detect(b: Buffer): WarcFormat {
  if (b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b) return 'gzip';
  if (b.length >= 4 && (b.readUInt32LE(0) === ZSTD_MAGIC || isSkippableMagic(b.readUInt32LE(0)))) return 'zstd';
  return 'none';
}

/** inflateRawSync's answer with `info: true`: the output and how many input bytes it used. */
interface InflateInfo { buffer: Buffer; engine: { bytesWritten: number } }

/** A compression unit's length, or why it is not a valid unit. */
type Unit = { len: number } | { error: string };

/** Length of the gzip member header at v[0..] (RFC 1952 §2.3), or an error. */
function gzipHeader(v: Buffer, atEof: boolean): number | string {
  if (v.length < 10) return atEof ? 'torn gzip member' : 'gzip header too long';
  if (v[0] !== 0x1f || v[1] !== 0x8b || v[2] !== 8) return 'not a gzip member';
  const flg = v[3]!;
  let p = 10;
  if (flg & 4) {
    if (v.length < 12) return atEof ? 'torn gzip header' : 'gzip header too long';
    p += 2 + v.readUInt16LE(10);
  }
  for (const bit of [8, 16]) {
    if (flg & bit) {
      const z = v.indexOf(0, p);
      if (z < 0) return atEof ? 'torn gzip header' : 'gzip header too long';
      p = z + 1;
    }
  }
  if (flg & 2) p += 2;
  if (p > v.length) return atEof ? 'torn gzip header' : 'gzip header too long';
  return p;
}

/**
 * A reusable raw-inflate context driven synchronously through node:zlib's native handle, the way
 * node:zlib's own processChunkSync does (`_handle.writeSync` + `_writeState`, as the gzip writer in
 * warc-record.ts does for deflate): `reset()` between members instead of a fresh zlib stream per
 * member (inflateRawSync: ~34 µs per call, most of a small member's cost), and output in
 * fixed CHUNK pieces. Internal API, checked at first use; where it is missing (another Node) the
 * scanner falls back to inflateRawSync + a zlib stream (gzipMemberPortable); DRUMCRAWL_GZIP_SYNC=1
 * forces the fallback, as it does for the writer.
 */
interface InflateCtx {
  z: { reset(): void; destroyed: boolean };
  handle: { writeSync(flush: number, input: Uint8Array, inOff: number, inLen: number, out: Uint8Array, outOff: number, outLen: number): void };
  state: Uint32Array;
  error: string | null;
}
let inflateCtxCache: InflateCtx | null | undefined;
const zoutGzip = Buffer.allocUnsafe(CHUNK);

function inflateCtx(): InflateCtx | null {
  if (inflateCtxCache !== undefined && (inflateCtxCache === null || !inflateCtxCache.z.destroyed)) return inflateCtxCache;
  // `any`: reaching node:zlib's internal handle (see above); its shape is checked right here.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- node:zlib's internal handle has no type (see above)
  const z = createInflateRaw() as any;
  inflateCtxCache = null;
  if (typeof z._handle?.writeSync === 'function' && z._writeState instanceof Uint32Array && typeof z._handle.onerror === 'function' && process.env.DRUMCRAWL_GZIP_SYNC !== '1') {
    const ctx: InflateCtx = { z, handle: z._handle, state: z._writeState, error: null };
    const onerror = z._handle.onerror as (message: string, errno: number) => void;
    z._handle.onerror = (message: string, errno: number) => {
      ctx.error = message;
      onerror.call(z._handle, message, errno); // destroys the stream: a new context next time
    };
    z.on('error', () => undefined); // already recorded in ctx.error
    inflateCtxCache = ctx;
  }
  return inflateCtxCache;
}

/**
 * One gzip member at `off`, its decompressed bytes fed to `sink` CHUNK at a time; CRC-32 and ISIZE
 * checked against the trailer.
 */
async function gzipMember(win: Window, off: number, sink: (d: Uint8Array) => boolean): Promise<Unit> {
  const head = win.peek(off, MAX_GZIP_HEADER) ?? (await win.view(off, MAX_GZIP_HEADER));
  const p = gzipHeader(head.subarray(0, MAX_GZIP_HEADER), off + head.length >= win.size);
  if (typeof p === 'string') return { error: p };
  const ctx = inflateCtx();
  if (ctx === null) return gzipMemberPortable(win, off, p, sink);
  ctx.z.reset();
  let crc = 0;
  let isize = 0;
  let pos = off + p;
  for (let ended = false; !ended; ) {
    if (pos >= win.size) return { error: 'torn gzip member' };
    const v = win.peek(pos, CHUNK) ?? (await win.view(pos, CHUNK));
    let inOff = 0;
    for (;;) {
      ctx.handle.writeSync(zc.Z_NO_FLUSH, v, inOff, v.length - inOff, zoutGzip, 0, zoutGzip.length);
      if (ctx.z.destroyed) return { error: `corrupt gzip member (${ctx.error ?? 'zlib error'})` };
      const outLeft = ctx.state[0]!;
      const inLeft = ctx.state[1]!;
      const produced = zoutGzip.length - outLeft;
      inOff = v.length - inLeft;
      if (produced > 0) {
        const d = zoutGzip.subarray(0, produced);
        crc = crc32(d, crc);
        isize = (isize + produced) >>> 0;
        if (!sink(d)) return { len: 0 }; // the caller reads the record stream's error
      }
      if (outLeft > 0 && inLeft > 0) { ended = true; break; } // zlib stopped with input left: end of the deflate stream
      if (outLeft > 0) break; // all input used: read on (the end may coincide with it; the next piece shows)
    }
    pos += inOff;
  }
  const end = pos + 8;
  if (end > win.size) return { error: 'torn gzip trailer' };
  const t = win.peek(pos, 8) ?? (await win.view(pos, 8));
  if (t.readUInt32LE(0) !== (crc >>> 0) || t.readUInt32LE(4) !== isize) return { error: 'gzip CRC/ISIZE mismatch' };
  return { len: end - off };
}

/**
 * gzipMember without node:zlib's internal handle: a member that fits the window and inflates to
 * at most SYNC_OUT_MAX bytes takes one inflateRawSync call; otherwise it is streamed.
 */
async function gzipMemberPortable(win: Window, off: number, p: number, sink: (d: Uint8Array) => boolean): Promise<Unit> {
  const size = win.size;
  let v = await win.view(off, MAX_GZIP_HEADER);
  for (let attempt = 0; attempt < 2; attempt++) {
    const atEof = off + v.length >= size;
    let out: InflateInfo | null = null;
    try {
      out = inflateRawSync(v.subarray(p), { info: true, maxOutputLength: SYNC_OUT_MAX }) as unknown as InflateInfo;
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code === 'Z_BUF_ERROR') {
        if (atEof) return { error: 'torn gzip member' };
      } else if (code !== 'ERR_BUFFER_TOO_LARGE') {
        return { error: `corrupt gzip member (${code ?? String(e)})` };
      }
    }
    if (out !== null) {
      const end = p + out.engine.bytesWritten + 8;
      if (end <= v.length) {
        const data = out.buffer;
        if (v.readUInt32LE(end - 8) !== crc32(data) || v.readUInt32LE(end - 4) !== (data.length >>> 0)) return { error: 'gzip CRC/ISIZE mismatch' };
        sink(data);
        return { len: end };
      }
      if (atEof) return { error: 'torn gzip trailer' };
    } else if (attempt === 0 && v.length < WINDOW && !atEof) {
      v = await win.view(off, WINDOW); // the window held only part of it: once more from `off`
      continue;
    }
    break;
  }
  return gzipStream(win, off, p, sink);
}

/** A member too large for one inflateRawSync call: inflated in CHUNK-sized pieces. */
async function gzipStream(win: Window, off: number, p: number, sink: (d: Uint8Array) => boolean): Promise<Unit> {
  const inf = createInflateRaw();
  let crc = 0;
  let isize = 0;
  let sinkOk = true;
  inf.on('data', (d: Buffer) => {
    crc = crc32(d, crc);
    isize = (isize + d.length) >>> 0;
    if (sinkOk && !sink(d)) sinkOk = false;
  });
  let zerr: Error | null = null;
  inf.on('error', (e) => { zerr = e; });
  try {
    let pos = off + p;
    let written = 0;
    for (;;) {
      if (pos >= win.size) return { error: 'torn gzip member' };
      const piece = Buffer.from((await win.view(pos, CHUNK)).subarray(0, CHUNK));
      await new Promise<void>((resolve) => inf.write(piece, () => resolve()));
      if (zerr !== null) return { error: `corrupt gzip member (${(zerr as { code?: string }).code ?? String(zerr)})` };
      if (!sinkOk) return { len: 0 }; // the caller reads the record stream's error
      written += piece.length;
      pos += piece.length;
      if (inf.bytesWritten < written) break; // the deflate stream ended inside this piece
    }
    const end = off + p + inf.bytesWritten + 8;
    if (end > win.size) return { error: 'torn gzip trailer' };
    const t = await win.view(end - 8, 8);
    if (t.readUInt32LE(0) !== (crc >>> 0) || t.readUInt32LE(4) !== isize) return { error: 'gzip CRC/ISIZE mismatch' };
    return { len: end - off };
  } finally {
    inf.destroy();
  }
}

let dctx: InstanceType<typeof DCtx> | null = null;
/** the decompression context of the last file with a dictionary, by Dictionary_ID */
let dictCtx: { id: number; dctx: InstanceType<typeof DCtx> } | null = null;
const zout = Buffer.allocUnsafe(CHUNK);

/** How a `.warc.zst` file's frames are read: its dictionary's ID (0: none) and context. */
interface ZstdFile { dictId: number; dctx: InstanceType<typeof DCtx>; dataStart: number }

/**
 * The file's dictionary frame, if it begins with one, loaded (the frame is read whatever offset
 * the scan starts at); an error when it is not a valid dictionary frame, or when the file begins
 * with another skippable frame (warc-zstd §3: the file must begin with a zstd or dictionary frame).
 */
async function zstdFile(win: Window): Promise<ZstdFile | { error: string }> {
  const v = win.peek(0, 8) ?? (await win.view(0, 8));
  const magic = v.length >= 4 ? v.readUInt32LE(0) : 0;
  if (magic !== DICT_FRAME_MAGIC) {
    if (isSkippableMagic(magic)) return { error: 'file begins with an extension (skippable) frame' };
    dctx ??= new DCtx();
    return { dictId: 0, dctx, dataStart: 0 };
  }
  const dict = await readDictionaryFrame(win);
  if (typeof dict === 'string') return { error: dict };
  const id = dictionaryId(dict.dict);
  if (dictCtx === null || dictCtx.id !== id) {
    const c = new DCtx();
    c.loadDictionary(dict.dict);
    dictCtx = { id, dctx: c };
  }
  return { dictId: id, dctx: dictCtx.dctx, dataStart: dict.end };
}

/** The dictionary in the dictionary frame at offset 0, and where the frame ends; or an error. */
async function readDictionaryFrame(win: Window): Promise<{ dict: Uint8Array; end: number } | string> {
  const v = await win.view(0, 8);
  if (v.length < 8) return 'torn dictionary frame';
  const len = v.readUInt32LE(4);
  if (len > MAX_DICT_BYTES) return `dictionary frame larger than ${MAX_DICT_BYTES} bytes`;
  if (8 + len > win.size) return 'torn dictionary frame';
  const user = Buffer.allocUnsafe(len);
  for (let got = 0; got < len; ) {
    const piece = await win.view(8 + got, Math.min(CHUNK, len - got));
    const n = Math.min(piece.length, len - got);
    piece.copy(user, got, 0, n);
    got += n;
  }
  const dict = dictionaryFromUserData(user);
  return typeof dict === 'string' ? dict : { dict, end: 8 + len };
}

/**
 * The dictionary of a `.warc.zst` file (null: it has no dictionary frame, or is not zstd); throws
 * when its dictionary frame is not a valid one. For readers of single records (CDXJ recovery).
 */
export async function readWarcDictionary(file: string): Promise<Uint8Array | null> {
  const fh = await open(file, 'r');
  try {
    const win = new Window(fh, (await fh.stat()).size);
    const v = await win.view(0, 8);
    if (v.length < 8 || v.readUInt32LE(0) !== DICT_FRAME_MAGIC) return null;
    const d = await readDictionaryFrame(win);
    if (typeof d === 'string') throw new Error(`${file}: ${d}`);
    return d.dict;
  } finally {
    await fh.close();
  }
}

/** One zstd frame (or skippable frame) at `off`, decompressed in pieces into `sink` (RFC 8878 §3.1). */
async function zstdFrame(win: Window, off: number, z: ZstdFile, sink: (d: Uint8Array) => boolean): Promise<Unit> {
  const v = win.peek(off, 18) ?? (await win.view(off, 18));
  if (v.length < 8) return { error: 'torn zstd frame' };
  const magic = v.readUInt32LE(0);
  if (isSkippableMagic(magic)) {
    if (magic === DICT_FRAME_MAGIC && off !== 0) return { error: 'dictionary frame after the start of the file' };
    const len = 8 + v.readUInt32LE(4);
    return off + len > win.size ? { error: 'torn zstd frame' } : { len };
  }
  if (magic !== ZSTD_MAGIC) return { error: 'not a zstd frame' };
  const h = zstdFrameHeader(v);
  if (h === null) return { error: 'torn zstd frame' };
  if (!h.contentSize) return { error: 'zstd frame without Frame_Content_Size' };
  if (!h.checksum) return { error: 'zstd frame without Content_Checksum' };
  if (h.dictId !== z.dictId) {
    return { error: z.dictId === 0 ? `zstd frame names dictionary ${h.dictId}, and the file has no dictionary frame` : `zstd frame with Dictionary_ID ${h.dictId} in a file whose dictionary is ${z.dictId}` };
  }
  const dc = z.dctx;
  dc.reset(ResetDirective.sessionOnly);
  let pos = off;
  for (;;) {
    if (pos >= win.size) return { error: 'torn zstd frame' };
    let src = (win.peek(pos, CHUNK) ?? (await win.view(pos, CHUNK))).subarray(0, CHUNK);
    for (;;) {
      let r: [number, number, number];
      try {
        r = dc.decompressStream(zout, src);
      } catch (e) {
        return { error: `corrupt zstd frame (${(e as Error).message})` };
      }
      const [ret, produced, consumed] = r;
      if (produced > 0 && !sink(zout.subarray(0, produced))) return { len: 0 };
      src = src.subarray(consumed);
      pos += consumed;
      if (ret === 0) return { len: pos - off };
      if (src.length === 0 && produced < zout.length) break;
    }
  }
}

/** Scan a WARC file; see the module comment for what "valid" means. */
export async function scanWarc(file: string, opts?: ScanOptions): Promise<ScanResult> {
  const from = opts?.fromOffset ?? 0;
  if (!Number.isSafeInteger(from) || from < 0) throw new RangeError(`scanWarc: fromOffset must be a non-negative integer (got ${String(from)})`);
  const fh = await open(file, 'r');
  try {
    const size = (await fh.stat()).size;
    const win = new Window(fh, size);
    const format = detect(await win.view(0, 4));
    const res: ScanResult = { format, fileLength: size, validLength: Math.min(from, size), records: 0 };
    if (opts?.collect === true) res.list = [];
    if (from > size) {
      res.error = `fromOffset ${from} is past the end of the file (${size} bytes)`;
      return res;
    }
    const push = (h: ParsedHead, offset: number, end: number) => {
      res.records++;
      res.list?.push({ offset, length: end - offset, type: h.type, recordId: h.recordId, targetUri: h.targetUri, contentLength: h.contentLength });
    };
    return format === 'none' ? await scanPlain(win, from, res, push) : await scanUnits(win, from, format, res, push);
  } finally {
    await fh.close();
  }
}

type Push = (h: ParsedHead, offset: number, end: number) => void;

/** Uncompressed: records at exact byte offsets; the valid length ends after the last one's trailer. */
async function scanPlain(win: Window, from: number, res: ScanResult, push: Push): Promise<ScanResult> {
  let base = from;
  let recStart = from;
  const rs = new RecordStream(
    (i) => { recStart = base + i; res.validLength = recStart; },
    (i, h) => { push(h, recStart, base + i); res.validLength = base + i; },
  );
  while (base < win.size) {
    const v = await win.view(base, 1);
    if (!rs.feed(v)) { res.error = rs.error!; return res; }
    base += v.length;
    if (rs.between) res.validLength = base; // CR/LF after the last record
  }
  if (!rs.between) res.error = 'torn record';
  return res;
}

/**
 * Compressed: unit by unit. A record is reported at the offset of the unit where it starts, with
 * its length running to the end of the unit where it ends; records ending in a unit are reported
 * once the whole unit has checked out.
 */
async function scanUnits(win: Window, from: number, format: 'gzip' | 'zstd', res: ScanResult, push: Push): Promise<ScanResult> {
  let off = from;
  let recStart = from;
  const done: { h: ParsedHead; start: number }[] = [];
  let doneCount = 0;
  const collect = res.list !== undefined;
  const rs = new RecordStream(
    () => { recStart = off; },
    (_i, h) => { if (collect) done.push({ h, start: recStart }); else doneCount++; },
  );
  const sink = (d: Uint8Array) => rs.feed(d);
  let z: ZstdFile | null = null;
  if (format === 'zstd') {
    const f = await zstdFile(win);
    if ('error' in f) { res.error = f.error; return res; }
    z = f;
    if (off < f.dataStart) {
      if (off !== 0) { res.error = `fromOffset ${off} is inside the dictionary frame`; return res; }
      off = f.dataStart;
      res.validLength = off;
    }
  }
  while (off < win.size) {
    const u = z === null ? await gzipMember(win, off, sink) : await zstdFrame(win, off, z, sink);
    if (rs.error !== null) { res.error = rs.error; return res; }
    if ('error' in u) { res.error = u.error; return res; }
    const end = off + u.len;
    for (const r of done) push(r.h, r.start, end);
    res.records += doneCount;
    done.length = 0;
    doneCount = 0;
    off = end;
    if (rs.between) res.validLength = off;
  }
  if (!rs.between) res.error = 'file ends inside a record';
  return res;
}

/**
 * Cut a torn tail on resume. With `validLength` (the offset a checkpoint recorded after sync()),
 * the file is cut there — records written after the checkpoint belong to fetches that will be
 * redone. If the file is shorter than that (should not happen after fsync), or without
 * `validLength`, the file is scanned and cut after its last complete record. Returns the new length.
 */
export async function truncateTornWarc(file: string, validLength?: number): Promise<number> {
  const fh = await open(file, 'r+');
  try {
    const size = (await fh.stat()).size;
    if (validLength !== undefined && validLength <= size) {
      if (validLength < size) {
        await fh.truncate(validLength);
        await fh.sync();
      }
      return validLength;
    }
  } finally {
    await fh.close();
  }
  const r = await scanWarc(file);
  if (r.validLength < r.fileLength) {
    const fh2 = await open(file, 'r+');
    try {
      await fh2.truncate(r.validLength);
      await fh2.sync();
    } finally {
      await fh2.close();
    }
  }
  return r.validLength;
}
