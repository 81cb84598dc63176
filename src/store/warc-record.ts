/**
 * WARC/1.1 record encoding (ISO 28500:2017) — pure functions, no I/O, safe to run in a piscina
 * worker. The file-appending side is warc-writer.ts.
 *
 * A record is  "WARC/1.1" CRLF *(named-field CRLF) CRLF block CRLF CRLF,  Content-Length = block
 * length. Each record is compressed on its own (one gzip member or one zstd frame per record), so a
 * record can be read from its (offset, length) alone — what CDX indexes and replay tools rely on.
 */
import { randomUUID } from 'node:crypto';
import { createDeflateRaw, crc32, gzipSync, constants as zc } from 'node:zlib';
import { Compressor } from 'zstd-napi';
import { slotDictionary, slotVersion } from './zstd-dict.js';
import { sha1Base32 } from '../util/digest.js';

export type WarcCompression = 'gzip' | 'zstd' | 'none';

export interface EncodeOptions {
  compression?: WarcCompression; // default 'gzip'
  /**
   * Default 1: measured (bench/results/html-extract.json, warcEncodePagesPerSecondPerCore) gzip-1
   * encodes ~1.7× the pages per CPU-second of gzip-6 for ~10 % bigger output; at the crawler's
   * 2,500 pages/s target, gzip-6 alone would need about 3 cores.
   */
  gzipLevel?: number;
  zstdLevel?: number; // default 3
  /**
   * zstd: the shared dictionary slot (zstd-dict.ts newDictSlot). While it is empty, frames are
   * compressed without a dictionary; once a dictionary is published in it, with that dictionary
   * (its Dictionary_ID in every frame header). Read once per record group.
   */
  zstdDict?: SharedArrayBuffer;
}

export const SOFTWARE = 'drumcrawl/0.1.0';
export const REVISIT_PROFILE = 'http://netpreserve.org/warc/1.1/revisit/identical-payload-digest';

const CRLF = '\r\n';
const enc = new TextEncoder();
const TRAILER = enc.encode('\r\n\r\n');

/** `<urn:uuid:…>` (RFC 4122 v4). */
export function newRecordId(): string {
  return `<urn:uuid:${randomUUID()}>`;
}

/** WARC-Date: W3C-ISO8601 UTC with second precision (WARC/1.1 allows finer; 1.0 readers do not). */
export function warcDate(d: Date): string {
  // The records of one fetch share their date: one formatting for the three.
  const ms = d.getTime();
  if (ms !== lastDateMs) {
    lastDate = d.toISOString().replace(/\.\d{3}Z$/, 'Z');
    lastDateMs = ms;
  }
  return lastDate;
}
let lastDateMs = NaN;
let lastDate = '';

/** `sha1:BASE32` of the concatenation of chunks. */
export function sha1Digest(...chunks: Uint8Array[]): string {
  return 'sha1:' + sha1Base32(...chunks);
}

const hasCrLf = (v: string): boolean => v.indexOf('\n') >= 0 || v.indexOf('\r') >= 0;

function assertFieldValue(name: string, v: string): void {
  // A CR or LF in a value would inject header lines into the record (URLs come from the web).
  if (hasCrLf(v)) throw new Error(`WARC field ${name} contains CR/LF`);
}

/**
 * Record heads are written into this per-thread buffer, not into a Uint8Array each (an ArrayBuffer
 * per head for the GC's sweeper; three per page in the parse worker). A head is a view of it,
 * valid until the next encode call on this thread resets `headAt` — every caller here compresses
 * or copies its heads before returning. When it fills, a bigger one replaces it (views already
 * handed out keep the old one alive). Bound: 4 × 3 × HEAD_TEXT_MAX bytes.
 */
let headBuf = Buffer.allocUnsafeSlow(16 * 1024);
let headAt = 0;
/** longest text (UTF-16 units) written into headBuf; a longer one (a huge outlink list) gets its own buffer */
const HEAD_TEXT_MAX = 64 * 1024;

function writeHead(head: string): Uint8Array {
  // UTF-8 needs at most 3 bytes per UTF-16 unit (heads are ASCII but for a non-ASCII URL).
  const need = head.length * 3;
  if (head.length > HEAD_TEXT_MAX) return Buffer.from(head, 'utf8');
  if (headBuf.length - headAt < need) {
    headBuf = Buffer.allocUnsafeSlow(Math.max(headBuf.length, need * 4));
    headAt = 0;
  }
  const n = headBuf.write(head, headAt, 'utf8');
  const v = headBuf.subarray(headAt, headAt + n);
  headAt += n;
  return v;
}

/**
 * The named fields and the blank line of one record (everything before its block). `fields`
 * excludes Content-Length (computed) and WARC-Block-Digest (computed when `blockDigest` is true).
 */
function recordHead(fields: [string, string][], block: readonly Uint8Array[], blockDigest: boolean): Uint8Array {
  let len = 0;
  for (const b of block) len += b.length;
  let head = 'WARC/1.1' + CRLF;
  for (const [k, v] of fields) {
    assertFieldValue(k, v);
    head += `${k}: ${v}${CRLF}`;
  }
  if (blockDigest) head += `WARC-Block-Digest: ${sha1Digest(...block)}${CRLF}`;
  head += `Content-Length: ${len}${CRLF}${CRLF}`;
  return writeHead(head);
}

/**
 * One uncompressed WARC record. `fields` excludes Content-Length (computed) and WARC-Block-Digest
 * (computed when `blockDigest` is true).
 */
export function buildRecord(fields: [string, string][], block: Uint8Array[], blockDigest = true): Uint8Array {
  headAt = 0;
  return concatRecord({ head: recordHead(fields, block, blockDigest), block });
}

/** A record as its pieces: head, block chunks, then the CRLF CRLF trailer (not stored). */
interface RecordPieces {
  head: Uint8Array;
  block: readonly Uint8Array[];
}

function concatRecord(r: RecordPieces): Uint8Array {
  let len = r.head.length + TRAILER.length;
  for (const b of r.block) len += b.length;
  const out = new Uint8Array(len);
  out.set(r.head, 0);
  let o = r.head.length;
  for (const b of r.block) {
    out.set(b, o);
    o += b.length;
  }
  out.set(TRAILER, o);
  return out;
}

// One zstd compressor per level per thread (creating a ZSTD_CCtx per record costs more than the
// compression of a small page). Bounded by the number of distinct levels used (1–22), plus one
// with the shared dictionary loaded (its CDict: about 5× the dictionary's size at level 3).
const zstdCompressors = new Map<number, Compressor>();
let dictEncoder: { slot: SharedArrayBuffer; level: number; c: Compressor } | null = null;

/**
 * Every frame with Frame_Content_Size and Content_Checksum (a torn or corrupted frame is detected
 * on resume: truncateTornWarc), and the dictionary's Dictionary_ID when there is one: what the
 * IIPC warc-zstd proposal requires of each frame.
 */
function zstdParams(level: number) {
  return { compressionLevel: level, checksumFlag: true, contentSizeFlag: true, dictIDFlag: true };
}

/** The compressor for a record group: level, and the slot's dictionary once it holds one. */
function zstdEncoder(level: number, slot: SharedArrayBuffer | undefined): Compressor {
  if (slot !== undefined && slotVersion(slot) !== 0) {
    if (dictEncoder === null || dictEncoder.slot !== slot || dictEncoder.level !== level) {
      const c = new Compressor();
      c.setParameters(zstdParams(level));
      c.loadDictionary(slotDictionary(slot)!);
      dictEncoder = { slot, level, c };
    }
    return dictEncoder.c;
  }
  let c = zstdCompressors.get(level);
  if (c === undefined) {
    c = new Compressor();
    c.setParameters(zstdParams(level));
    zstdCompressors.set(level, c);
  }
  return c;
}

/**
 * gzip members from one reused raw-deflate context per level per thread. `gzipSync` builds and
 * frees a zlib stream per call (deflateInit: ~270 KB of window + hash tables allocated and
 * cleared), ~15 µs per record on this box — with three records per page that was ~18 % of the
 * WARC gzip time (bench/html/warc-gzip.ts, bench/results/html-warc-gzip.json). Here each record
 * is deflated with Z_FULL_FLUSH, which byte-aligns the output and empties the dictionary (the next
 * record refers to nothing before it), then closed with an empty final block (bits 1,01,0000000 →
 * 0x03 0x00) and wrapped in the RFC 1952 header/trailer (CRC-32, ISIZE) by hand: every record is
 * still an independent gzip member, readable from its (offset, length) alone, by any inflater.
 *
 * Node exposes no synchronous reusable deflate, so this drives the stream's native handle the way
 * node:zlib's own `processChunkSync` does (`_handle.writeSync` + `_writeState`) — internal API,
 * checked at first use: where it is missing (another Node), `gzipSync` is used instead.
 * Bounded: one context (~270 KB) + one output buffer (grows to the largest compressed record,
 * itself bounded by the fetcher's body cap) per level used (0–9), per thread.
 */
interface GzipCtx { handle: ZlibHandle; state: Uint32Array; out: Buffer; xfl: number }
interface ZlibHandle {
  writeSync(flush: number, input: Uint8Array, inOff: number, inLen: number, out: Uint8Array, outOff: number, outLen: number): void;
}
const gzipCtxs = new Map<number, GzipCtx | null>();

function gzipCtx(level: number): GzipCtx | null {
  let c = gzipCtxs.get(level);
  if (c !== undefined) return c;
  c = null;
  // `any`: reaching node:zlib's internal handle (see above); shape checked right here.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- node:zlib's internal handle has no type (see above)
  const d = createDeflateRaw({ level, strategy: zc.Z_DEFAULT_STRATEGY }) as any;
  if (typeof d._handle?.writeSync === 'function' && d._writeState instanceof Uint32Array && process.env.DRUMCRAWL_GZIP_SYNC !== '1') {
    // RFC 1952 XFL as zlib writes it: 4 = fastest (level ≤ 1), 2 = best (9), 0 otherwise.
    c = { handle: d._handle as ZlibHandle, state: d._writeState as Uint32Array, out: Buffer.allocUnsafe(64 * 1024), xfl: level <= 1 ? 4 : level === 9 ? 2 : 0 };
  }
  gzipCtxs.set(level, c);
  return c;
}

function gzipMember(record: Uint8Array, level: number): Uint8Array {
  const c = record.byteLength === 0 ? null : gzipCtx(level);
  if (c === null) return gzipSync(record, { level, strategy: zc.Z_DEFAULT_STRATEGY });
  const n = gzipAppend(c, 0, [record]);
  return new Uint8Array(c.out.subarray(0, n));
}

/**
 * Append one gzip member holding the concatenation of `pieces` to c.out at `at` (c.out grows as
 * needed); returns the end offset. The pieces are fed to deflate in turn (Z_NO_FLUSH, the last
 * one Z_FULL_FLUSH) and CRC-32 chained over them, so a record need not be assembled uncompressed
 * first — for a response that is a copy of the whole body saved. The last piece must not be empty.
 */
function gzipAppend(c: GzipCtx, at: number, pieces: readonly Uint8Array[]): number {
  let n = at + 10; // the 10-byte header is written last (c.out may move while growing)
  let crc = 0;
  let size = 0;
  for (let i = 0; i < pieces.length; i++) {
    const p = pieces[i]!;
    const last = i === pieces.length - 1;
    if (p.byteLength === 0 && !last) continue;
    crc = crc32(p, crc);
    size += p.byteLength;
    let inOff = 0;
    for (;;) {
      const availOut = c.out.length - n;
      c.handle.writeSync(last ? zc.Z_FULL_FLUSH : zc.Z_NO_FLUSH, p, inOff, p.byteLength - inOff, c.out, n, availOut);
      const outLeft = c.state[0]!;
      const inLeft = c.state[1]!;
      n += availOut - outLeft;
      inOff = p.byteLength - inLeft;
      // A full output buffer may hold back more: grow it and go on (zlib's own loop does the same).
      if (outLeft !== 0) break;
      growOut(c, n);
    }
  }
  if (c.out.length < n + 10) growOut(c, n);
  const m = c.out;
  m.fill(0, at, at + 10);
  m[at] = 0x1f; m[at + 1] = 0x8b; m[at + 2] = 8; // ID1 ID2 CM=deflate; FLG, MTIME = 0
  m[at + 8] = c.xfl; m[at + 9] = 3; // OS = Unix, as gzipSync writes it
  m[n] = 0x03; // empty final fixed-Huffman block
  m[n + 1] = 0x00;
  m.writeUInt32LE(crc >>> 0, n + 2);
  m.writeUInt32LE(size >>> 0, n + 6);
  return n + 10;
}

function growOut(c: GzipCtx, keep: number): void {
  const bigger = Buffer.allocUnsafe(c.out.length * 2);
  c.out.copy(bigger, 0, 0, keep);
  c.out = bigger;
}

/** Compress one record as an independent gzip member / zstd frame (or return it as is). */
export function compressRecord(record: Uint8Array, opts?: EncodeOptions): Uint8Array {
  const c = opts?.compression ?? 'gzip';
  if (c === 'none') return record;
  if (c === 'zstd') return zstdEncoder(opts?.zstdLevel ?? 3, opts?.zstdDict).compress(record);
  return gzipMember(record, opts?.gzipLevel ?? 1);
}

export function fileExtension(c: WarcCompression): string {
  return c === 'gzip' ? '.warc.gz' : c === 'zstd' ? '.warc.zst' : '.warc';
}

export interface WarcinfoInput {
  filename: string;
  date: Date;
  info?: Record<string, string>;
  recordId?: string;
}

/** The warcinfo record that starts every file (fields as application/warc-fields). */
export function warcinfoRecord(x: WarcinfoInput): { record: Uint8Array; recordId: string } {
  const recordId = x.recordId ?? newRecordId();
  const info: Record<string, string> = {
    software: SOFTWARE,
    format: 'WARC File Format 1.1',
    conformsTo: 'http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/',
    ...x.info,
  };
  let body = '';
  for (const [k, v] of Object.entries(info)) {
    assertFieldValue(k, v);
    body += `${k}: ${v}${CRLF}`;
  }
  const record = buildRecord(
    [
      ['WARC-Type', 'warcinfo'],
      ['WARC-Record-ID', recordId],
      ['WARC-Date', warcDate(x.date)],
      ['WARC-Filename', x.filename],
      ['Content-Type', 'application/warc-fields'],
    ],
    [enc.encode(body)],
  );
  return { record, recordId };
}

/** WARC-Truncated reasons (WARC 1.1 §5.13). */
export type TruncatedReason = 'length' | 'time' | 'disconnect' | 'unspecified';

export interface ExchangeInput {
  url: string;
  ip: string;
  date: Date;
  requestHead: Uint8Array;
  responseHead: Uint8Array;
  /** Entity body as transferred, transfer-encoding removed (content-encoding intact). */
  body: Uint8Array;
  /**
   * The body is not all the server sent: true or 'length' (a size cap), 'time' (a time limit),
   * 'disconnect' (the connection ended early), 'unspecified'; written as WARC-Truncated (WARC 1.1
   * §5.13). Every response record holds the body as received, or says why it does not.
   */
  truncated?: boolean | TruncatedReason;
  /** 'sha1:BASE32' of body, when the caller already has it (ContentSeen); computed otherwise. */
  payloadDigest?: string;
  outlinks?: string[];
  /** Record id of the file's warcinfo, when known at encoding time (WARC-Warcinfo-ID). */
  warcinfoId?: string;
}

export interface RevisitInput {
  url: string;
  ip: string;
  date: Date;
  requestHead: Uint8Array;
  responseHead: Uint8Array;
  payloadDigest: string;
  refersToUri: string;
  refersToDate: Date;
  refersToRecordId?: string;
  warcinfoId?: string;
}

/** Records of one fetch, each compressed on its own, concatenated. Offsets are relative to `data`. */
export interface EncodedGroup {
  data: Uint8Array;
  /** One entry per record, in file order: response (or revisit), request, metadata. */
  records: { type: string; recordId: string; offset: number; length: number }[];
  /** Id of the response/revisit record (what a later revisit refers to). */
  recordId: string;
  payloadDigest: string;
}

/**
 * The stored body has its transfer-encoding removed, so a `Transfer-Encoding` header kept as is would
 * make readers (warcio, pywb) de-chunk it again. It is renamed to `X-Crawler-Transfer-Encoding`
 * (keeps the information, same length class) — documented in docs/output-format.md.
 */
export function neutralizeTransferEncoding(head: Uint8Array): Uint8Array {
  if (!hasTransferEncodingLine(head)) return head;
  const s = Buffer.from(head.buffer, head.byteOffset, head.byteLength).toString('latin1');
  return Buffer.from(s.replace(/^transfer-encoding:/gim, 'X-Crawler-Transfer-Encoding:'), 'latin1');
}

const TE_NAME = 'transfer-encoding:';

/**
 * A line of `head` starts with "transfer-encoding:" (ASCII case-insensitive) — the regex's
 * question on the bytes, without making a string of every response head (most have no such line).
 */
function hasTransferEncodingLine(head: Uint8Array): boolean {
  const n = head.length - TE_NAME.length;
  for (let i = 0; i <= n; i++) {
    // (a line starts after LF or CR, as for the regex's multiline ^)
    if ((i === 0 || head[i - 1] === 0x0a || head[i - 1] === 0x0d) && (head[i]! | 0x20) === 0x74) {
      let j = 1;
      while (j < TE_NAME.length && (head[i + j]! | 0x20) === TE_NAME.charCodeAt(j)) j++;
      if (j === TE_NAME.length) return true;
    }
  }
  return false;
}

interface Part extends RecordPieces {
  type: string;
  recordId: string;
}

function group(parts: Part[], opts: EncodeOptions | undefined, recordId: string, payloadDigest: string, borrow = false): EncodedGroup {
  const records: EncodedGroup['records'] = [];
  const c = (opts?.compression ?? 'gzip') === 'gzip' ? gzipCtx(opts?.gzipLevel ?? 1) : null;
  if (c !== null) {
    // Every record its own gzip member, all written into the context's buffer, one copy out.
    let n = 0;
    for (const p of parts) {
      const end = gzipAppend(c, n, [p.head, ...p.block, TRAILER]);
      records.push({ type: p.type, recordId: p.recordId, offset: n, length: end - n });
      n = end;
    }
    return { data: borrow ? c.out.subarray(0, n) : new Uint8Array(c.out.subarray(0, n)), records, recordId, payloadDigest };
  }
  // zstd: one encoder for the whole group (the slot is read once: every frame of a group has the
  // same dictionary)
  const z = opts?.compression === 'zstd' ? zstdEncoder(opts.zstdLevel ?? 3, opts.zstdDict) : null;
  const compressed = parts.map((p) => (z !== null ? z.compress(concatRecord(p)) : compressRecord(concatRecord(p), opts)));
  let total = 0;
  for (const b of compressed) total += b.length;
  const data = new Uint8Array(total);
  let o = 0;
  for (let i = 0; i < parts.length; i++) {
    data.set(compressed[i]!, o);
    records.push({ type: parts[i]!.type, recordId: parts[i]!.recordId, offset: o, length: compressed[i]!.length });
    o += compressed[i]!.length;
  }
  return { data, records, recordId, payloadDigest };
}

function common(type: string, id: string, x: { url: string; ip: string; date: Date; warcinfoId?: string }): [string, string][] {
  const f: [string, string][] = [
    ['WARC-Type', type],
    ['WARC-Record-ID', id],
    ['WARC-Date', warcDate(x.date)],
    ['WARC-Target-URI', x.url],
  ];
  if (x.ip !== '') f.push(['WARC-IP-Address', x.ip]);
  if (x.warcinfoId !== undefined) f.push(['WARC-Warcinfo-ID', x.warcinfoId]);
  return f;
}

function part(type: string, recordId: string, fields: [string, string][], block: Uint8Array[]): Part {
  return { type, recordId, head: recordHead(fields, block, true), block };
}

/** request record, concurrent to the response (or revisit) it belongs to. */
function requestRecord(x: { url: string; ip: string; date: Date; warcinfoId?: string; requestHead: Uint8Array }, concurrentTo: string) {
  const id = newRecordId();
  const f = common('request', id, x);
  f.push(['WARC-Concurrent-To', concurrentTo], ['Content-Type', 'application/http;msgtype=request']);
  return part('request', id, f, [x.requestHead]);
}

/**
 * response + request (+ metadata listing outlinks) for one fetch: the compressed bytes to append,
 * and where each record sits in them. Pure: usable in a worker.
 */
export function encodeExchangeRecords(x: ExchangeInput, opts?: EncodeOptions): EncodedGroup {
  return exchangeGroup(x, opts, false);
}

/**
 * `encodeExchangeRecords` whose `data` may be a view into this thread's compression buffer (gzip):
 * valid only until the next encode call on this thread. For a caller that copies the bytes on at
 * once (the parse worker writes them into its answer): one copy and one ArrayBuffer fewer per page.
 */
export function encodeExchangeRecordsView(x: ExchangeInput, opts?: EncodeOptions): EncodedGroup {
  return exchangeGroup(x, opts, true);
}

function exchangeGroup(x: ExchangeInput, opts: EncodeOptions | undefined, borrow: boolean): EncodedGroup {
  headAt = 0;
  const respId = newRecordId();
  const digest = x.payloadDigest ?? sha1Digest(x.body);
  const f = common('response', respId, x);
  f.push(['Content-Type', 'application/http;msgtype=response'], ['WARC-Payload-Digest', digest]);
  if (x.truncated !== undefined && x.truncated !== false) f.push(['WARC-Truncated', x.truncated === true ? 'length' : x.truncated]);
  const parts = [part('response', respId, f, [neutralizeTransferEncoding(x.responseHead), x.body])];
  parts.push(requestRecord(x, respId));
  if (x.outlinks !== undefined && x.outlinks.length > 0) {
    const id = newRecordId();
    const m = common('metadata', id, x);
    m.push(['WARC-Concurrent-To', respId], ['Content-Type', 'application/warc-fields']);
    // One join for the whole block (a URL with CR/LF cannot be a URL and would break the field
    // syntax: those are left out, on the slow path).
    const links = x.outlinks.some(hasCrLf) ? x.outlinks.filter((u) => !hasCrLf(u)) : x.outlinks;
    if (links.length > 0) parts.push(part('metadata', id, m, [writeHead(`outlink: ${links.join(`${CRLF}outlink: `)}${CRLF}`)]));
  }
  return group(parts, opts, respId, digest, borrow);
}

/**
 * revisit (identical-payload-digest profile: block = HTTP response head only) + request.
 */
export function encodeRevisitRecords(x: RevisitInput, opts?: EncodeOptions): EncodedGroup {
  headAt = 0;
  const id = newRecordId();
  const f = common('revisit', id, x);
  f.push(
    ['Content-Type', 'application/http;msgtype=response'],
    ['WARC-Profile', REVISIT_PROFILE],
    ['WARC-Refers-To-Target-URI', x.refersToUri],
    ['WARC-Refers-To-Date', warcDate(x.refersToDate)],
  );
  if (x.refersToRecordId !== undefined) f.push(['WARC-Refers-To', x.refersToRecordId]);
  f.push(['WARC-Payload-Digest', x.payloadDigest]);
  const parts = [part('revisit', id, f, [neutralizeTransferEncoding(x.responseHead)])];
  parts.push(requestRecord(x, id));
  return group(parts, opts, id, x.payloadDigest);
}

