/**
 * Record-by-record scan of a (possibly torn) WARC file: plain, per-record gzip members, or zstd
 * frames (with skippable frames, e.g. a zstd-WARC dictionary frame, passed over). Used on resume to
 * cut a record that was half-written when the crawler died (truncateTornWarc), and by tests.
 *
 * A prefix is valid when it is a sequence of complete compression units (gzip member with correct
 * CRC-32 and ISIZE / zstd frame that decompresses with its checksum) whose decompressed bytes
 * are a sequence of complete WARC records ("WARC/1.x" head, Content-Length block, CRLF CRLF). The
 * valid length is the end of the last unit after which no record is left unfinished. Foreign files
 * that put several records in one member (not per-record compressed) scan fine; the cut is then at
 * member granularity.
 *
 * Memory: one compression unit (≈ one record) at a time; the read window doubles until the unit
 * fits, so it is bounded by the largest record (the fetcher's maxBodyBytes) — not by the file size.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { inflateRawSync, crc32 } from 'node:zlib';
import { decompress as zstdDecompress } from 'zstd-napi';

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
  records: number;
  /** Only when scanWarc(…, { collect: true }). */
  list?: ScannedRecord[];
  /** Why the scan stopped before the end, if it did. */
  error?: string;
}

const INITIAL_WINDOW = 1 << 20;
const MAX_WINDOW = 1 << 30;

class Reader {
  constructor(readonly fh: FileHandle, readonly size: number) {}
  async at(off: number, len: number): Promise<Buffer> {
    const n = Math.max(0, Math.min(len, this.size - off));
    const b = Buffer.allocUnsafe(n);
    let got = 0;
    while (got < n) {
      const { bytesRead } = await this.fh.read(b, got, n - got, off + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return b.subarray(0, got);
  }
}

interface ParsedHead {
  headLen: number;
  contentLength: number;
  type: string | null;
  recordId: string | null;
  targetUri: string | null;
}

const CRLFCRLF = Buffer.from('\r\n\r\n');

/** Parse a WARC record head at b[0..]. 'need-more' if incomplete, string = error. */
function parseHead(b: Buffer): ParsedHead | 'need-more' | string {
  if (b.length < 8) return b.length === 0 || Buffer.from('WARC/1.').subarray(0, b.length).equals(b.subarray(0, Math.min(7, b.length))) ? 'need-more' : 'not a WARC record';
  if (b.toString('latin1', 0, 7) !== 'WARC/1.') return 'not a WARC record';
  const end = b.indexOf(CRLFCRLF);
  if (end < 0) return b.length > 1 << 20 ? 'WARC head too long' : 'need-more';
  const head = b.toString('latin1', 0, end);
  const cl = /^content-length:[ \t]*(\d+)[ \t]*$/im.exec(head);
  if (cl === null) return 'no Content-Length';
  const field = (name: string) => new RegExp(`^${name}:[ \\t]*(.*?)[ \\t]*$`, 'im').exec(head)?.[1] ?? null;
  return { headLen: end + 4, contentLength: Number(cl[1]), type: field('WARC-Type'), recordId: field('WARC-Record-ID'), targetUri: field('WARC-Target-URI') };
}

/**
 * Consume complete records from `buf`. Returns the bytes consumed (at record boundaries), the
 * records, and an error if the bytes are not WARC. Leading CR/LF between records is tolerated.
 */
function consumeRecords(buf: Buffer): { used: number; recs: ParsedHead[]; error?: string } {
  let p = 0;
  const recs: ParsedHead[] = [];
  for (;;) {
    let q = p;
    while (q < buf.length && (buf[q] === 0x0d || buf[q] === 0x0a)) q++;
    if (q >= buf.length) return { used: buf.length, recs };
    const h = parseHead(buf.subarray(q));
    if (h === 'need-more') return { used: p, recs };
    if (typeof h === 'string') return { used: p, recs, error: h };
    const end = q + h.headLen + h.contentLength + 4;
    if (end > buf.length) return { used: p, recs };
    if (!buf.subarray(end - 4, end).equals(CRLFCRLF)) return { used: p, recs, error: 'record not followed by CRLF CRLF (wrong Content-Length?)' };
    recs.push(h);
    p = end;
  }
}

function detect(b: Buffer): WarcFormat {
  if (b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b) return 'gzip';
  if (b.length >= 4 && (b.readUInt32LE(0) === 0xfd2fb528 || (b.readUInt32LE(0) & 0xfffffff0) === 0x184d2a50)) return 'zstd';
  return 'none';
}

/** One gzip member at b[0..]: its length and content, 'need-more', or an error string. */
function gzipMember(b: Buffer, atEof: boolean): { len: number; data: Buffer } | 'need-more' | string {
  if (b.length < 18) return atEof ? 'torn gzip member' : 'need-more';
  if (b[0] !== 0x1f || b[1] !== 0x8b || b[2] !== 8) return 'not a gzip member';
  const flg = b[3]!;
  let p = 10;
  if (flg & 4) p += 2 + b.readUInt16LE(10);
  if (flg & 8) { const z = b.indexOf(0, p); if (z < 0) return atEof ? 'torn gzip header' : 'need-more'; p = z + 1; }
  if (flg & 16) { const z = b.indexOf(0, p); if (z < 0) return atEof ? 'torn gzip header' : 'need-more'; p = z + 1; }
  if (flg & 2) p += 2;
  let out: { buffer: Buffer; engine: { bytesWritten: number } };
  try {
    out = inflateRawSync(b.subarray(p), { info: true }) as unknown as typeof out;
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'Z_BUF_ERROR') return atEof ? 'torn gzip member' : 'need-more';
    return `corrupt gzip member (${code ?? String(e)})`;
  }
  const end = p + out.engine.bytesWritten + 8;
  if (end > b.length) return atEof ? 'torn gzip trailer' : 'need-more';
  const data = out.buffer;
  if (b.readUInt32LE(end - 8) !== crc32(data) || b.readUInt32LE(end - 4) !== (data.length >>> 0)) return 'gzip CRC/ISIZE mismatch';
  return { len: end, data };
}

/** One zstd frame (or skippable frame) at b[0..]: walks the frame/block headers (RFC 8878 §3.1). */
function zstdFrame(b: Buffer, atEof: boolean): { len: number; data: Buffer | null } | 'need-more' | string {
  const more = atEof ? 'torn zstd frame' : 'need-more';
  if (b.length < 8) return more;
  const magic = b.readUInt32LE(0);
  if ((magic & 0xfffffff0) === 0x184d2a50) {
    const len = 8 + b.readUInt32LE(4);
    return len > b.length ? more : { len, data: null };
  }
  if (magic !== 0xfd2fb528) return 'not a zstd frame';
  const fhd = b[4]!;
  const fcsFlag = fhd >> 6;
  const single = (fhd >> 5) & 1;
  const checksum = (fhd >> 2) & 1;
  const dictFlag = fhd & 3;
  let p = 5 + (single ? 0 : 1) + [0, 1, 2, 4][dictFlag]! + (fcsFlag === 0 ? single : [0, 2, 4, 8][fcsFlag]!);
  for (;;) {
    if (p + 3 > b.length) return more;
    const bh = b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16);
    const last = bh & 1;
    const type = (bh >> 1) & 3;
    const size = bh >>> 3;
    if (type === 3) return 'corrupt zstd block';
    p += 3 + (type === 1 ? 1 : size);
    if (last) break;
  }
  if (checksum) p += 4;
  if (p > b.length) return more;
  try {
    return { len: p, data: zstdDecompress(b.subarray(0, p)) };
  } catch (e) {
    return `corrupt zstd frame (${(e as Error).message})`;
  }
}

/** Scan a WARC file; see the module comment for what "valid" means. */
/**
 * `from`: start at this offset (a record boundary the caller knows, e.g. a checkpoint's durable
 * WARC offset): the bytes before it are neither read nor judged, and validLength counts from it.
 */
export async function scanWarc(file: string, opts?: { collect?: boolean; from?: number }): Promise<ScanResult> {
  const fh = await open(file, 'r');
  try {
    const size = (await fh.stat()).size;
    const rd = new Reader(fh, size);
    const first = await rd.at(0, 4);
    const format = detect(first);
    const res: ScanResult = { format, fileLength: size, validLength: 0, records: 0 };
    if (opts?.collect === true) res.list = [];
    const push = (h: ParsedHead, offset: number, end: number) => {
      res.records++;
      res.list?.push({ offset, length: end - offset, type: h.type, recordId: h.recordId, targetUri: h.targetUri, contentLength: h.contentLength });
    };
    let off = Math.min(opts?.from ?? 0, size);
    res.validLength = off;
    let window = INITIAL_WINDOW;
    if (format === 'none') {
      while (off < size) {
        const b = await rd.at(off, window);
        const atEof = off + b.length >= size;
        const { used, recs, error } = consumeRecords(b);
        if (recs.length === 0) {
          if (error !== undefined) { res.error = error; break; }
          if (used === b.length) { off += used; res.validLength = off; break; } // only trailing CR/LF
          if (atEof || window >= MAX_WINDOW) { res.error = 'torn record'; break; }
          window *= 2;
          continue;
        }
        let p = off;
        for (const h of recs) {
          while (p < size && (b[p - off] === 0x0d || b[p - off] === 0x0a)) p++;
          const end = p + h.headLen + h.contentLength + 4;
          push(h, p, end);
          p = end;
        }
        off += used;
        res.validLength = off;
        window = INITIAL_WINDOW;
        if (error !== undefined) { res.error = error; break; }
      }
      return res;
    }
    // Compressed: units one at a time; `pending` holds decompressed bytes of an unfinished record.
    let pending: Buffer = Buffer.alloc(0);
    let pendingStart = 0;
    while (off < size) {
      const b = await rd.at(off, window);
      const atEof = off + b.length >= size;
      const u = format === 'gzip' ? gzipMember(b, atEof) : zstdFrame(b, atEof);
      if (u === 'need-more') {
        if (window >= MAX_WINDOW) { res.error = 'compression unit too large'; break; }
        window *= 2;
        continue;
      }
      if (typeof u === 'string') { res.error = u; break; }
      window = INITIAL_WINDOW;
      const end = off + u.len;
      if (u.data !== null && u.data.length > 0) {
        if (pending.length === 0) pendingStart = off;
        pending = pending.length === 0 ? u.data : Buffer.concat([pending, u.data]);
        const { used, recs, error } = consumeRecords(pending);
        for (const h of recs) push(h, pendingStart, end);
        if (error !== undefined) { res.error = error; break; }
        pending = pending.subarray(used);
        if (pending.length > 0 && used > 0) pendingStart = off;
      }
      off = end;
      if (pending.length === 0) res.validLength = off;
    }
    if (res.error === undefined && pending.length > 0) res.error = 'file ends inside a record';
    return res;
  } finally {
    await fh.close();
  }
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
