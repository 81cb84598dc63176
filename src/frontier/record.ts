/**
 * FrontierUrl: what a URL carries between URLseen/STAR and the fetchers, and its compact binary form,
 * which is what BEAST's queues and QR store on disk (so it is kept small: varints + URL bytes).
 *
 * Wire format (version 3), all varints unsigned LEB128:
 *   u8 version=3 | varint urlLen | url bytes (UTF-8; canonical URLs are ASCII) | varint hops
 *   | u32 hostHi u32 hostLo u32 pldHi u32 pldLo (big-endian) | varint budget B | varint admitted P
 *   | varint indegree + 1 | varint discoveredAt (ms since epoch, < 2^53) | varint attempts
 *   | varint viaLen | via bytes | varint pathLen | path bytes
 * `via` (the page the URL was found on) and `path` (the hop path, Heritrix's L/R letters, at most
 * HOP_PATH_MAX letters after a count) are what crawl.log reports for the URL. `indegree` is the
 * PLD's in-degree d as STAR gave it with B (-1: not known); a version 2 record (the same without
 * it) reads with -1, a version 1 record (nor the last four fields) with -1 and both texts empty. A typical 60-byte URL found on a
 * 60-byte page encodes in ~155 bytes.
 */
import { CrawlError } from '../errors.js';

export enum UrlKind {
  Page = 0,
  /** A robots.txt fetch scheduled by the frontier (IP heap only, thesis VII.1). */
  Robots = 1,
}

export interface FrontierUrlInit {
  url: string;
  hops?: number;
  hostHi: number;
  hostLo: number;
  pldHi: number;
  pldLo: number;
  /** STAR budget B of the URL's PLD (pages per BEAST queue pass). */
  budget: number;
  /** STAR count P: this URL is the P-th unique URL of its PLD to pass budget enforcement (1-based). */
  admitted: number;
  /** The PLD's in-degree d when STAR gave B (the trusted in-degree with trust on); -1 = not known. */
  indegree?: number;
  discoveredAt?: number;
  attempts?: number;
  via?: string;
  path?: string;
}

/**
 * One URL in the frontier. A class with every field initialised in the constructor so that all
 * instances share one hidden class; `ip` and `kind` are set by the frontier on release (no allocation
 * on the hot path).
 */
export class FrontierUrl {
  url: string;
  hops: number;
  hostHi: number;
  hostLo: number;
  pldHi: number;
  pldLo: number;
  budget: number;
  admitted: number;
  /** The PLD's in-degree d when STAR gave B (trusted in-degree with trust on); -1 = not known. */
  indegree: number;
  discoveredAt: number;
  attempts: number;
  /** URL of the page this URL was found on ('' for a seed). Stored on disk. */
  via: string;
  /** Hop path from the seed (hopPath below; '' for a seed). Stored on disk. */
  path: string;
  /** Server address to fetch from; set by `Frontier.nextReady`, '' before. Not stored on disk. */
  ip: string;
  /** UrlKind.Page or UrlKind.Robots. Not stored on disk. */
  kind: UrlKind;
  /**
   * Set by `Frontier.nextReady`: the host's delay in force at release (τh with Crawl-delay, backoff
   * and the floor: Pacing.hostDelay) and the IP's (τs, ≥ τs0), ms, start to start. The last-step
   * guards (src/crawl/ports/floor-guard.ts, the fetcher's wire gate) hold the request to them against the
   * actual send of the previous request to its host / IP. Not stored on disk.
   */
  hostGapMs: number;
  ipGapMs: number;
  /** Host name, only set on robots items (for fetchRobots). Not stored on disk. */
  host: string;
  /** Frontier-internal: host table id while in RAM (-1 otherwise). */
  _host: number;
  /** Frontier-internal: RAM slab slot while in RAM (-1 otherwise). */
  _slot: number;

  constructor(init: FrontierUrlInit) {
    this.url = init.url;
    this.hops = init.hops ?? 0;
    this.hostHi = init.hostHi >>> 0;
    this.hostLo = init.hostLo >>> 0;
    this.pldHi = init.pldHi >>> 0;
    this.pldLo = init.pldLo >>> 0;
    this.budget = init.budget;
    this.admitted = init.admitted;
    this.indegree = init.indegree ?? -1;
    this.discoveredAt = init.discoveredAt ?? 0;
    this.attempts = init.attempts ?? 0;
    this.via = init.via ?? '';
    this.path = init.path ?? '';
    this.ip = '';
    this.kind = UrlKind.Page;
    this.hostGapMs = 0;
    this.ipGapMs = 0;
    this.host = '';
    this._host = -1;
    this._slot = -1;
  }
}

/**
 * Estimated heap bytes of a FrontierUrl in RAM (the bound behind the politeness layer's
 * maxUrlBytes): the object (21 fields: 24 + 21 × 8 B in V8 without pointer compression) with up to
 * five boxed numbers (16 B each: hash halves ≥ 2^31, discoveredAt), 272 B, and its three strings (one byte per character: canonical URLs are ASCII). test/frontier/
 * ram-estimates.test.ts measures decoded URLs and holds this above the measured cost.
 */
export function frontierUrlRamBytes(u: FrontierUrl): number {
  const s = (n: number): number => (n === 0 ? 0 : 16 + ((n + 7) & ~7));
  return URL_OBJECT_BYTES + s(u.url.length) + s(u.via.length) + s(u.path.length);
}
const URL_OBJECT_BYTES = 272;

/** What a URL of the real web costs by that estimate (~70-byte URL and via, a short path): the unit of ramFree under a byte bound. */
export const URL_RAM_BYTES_TYPICAL = 470;

/** Hop letters a path keeps (Heritrix's CrawlURI.MAX_HOPS_DISPLAYED); older ones become a count. */
export const HOP_PATH_MAX = 50;

/**
 * Heritrix's CrawlURI.extendHopsPath: `path` + `hop`, keeping at most HOP_PATH_MAX letters; a longer
 * path is written `<n>+<last letters>` where n counts the letters dropped. So a path is bounded
 * (≤ HOP_PATH_MAX + 11 characters) however deep the crawl goes.
 */
export function extendHopPath(path: string, hop: string): string {
  if (path.length < HOP_PATH_MAX) return path + hop;
  const plus = path.indexOf('+');
  const dropped = plus < 0 ? 0 : Number(path.slice(0, plus));
  return `${dropped + 1}+${path.slice(plus + 2)}${hop}`;
}

const encoder = new TextEncoder();
let scratch: Uint8Array = new Uint8Array(4096);

function setScratch(b: Uint8Array): void {
  scratch = b;
}

/**
 * A Buffer over the ArrayBuffer of the last record decoded: records read from a queue are views
 * into one block, so the URL string is cut from this one Buffer instead of a Buffer object per
 * record. Holds on to one block's ArrayBuffer at most.
 */
let lastAb: ArrayBufferLike | null = null;
let lastBuf: Buffer = Buffer.alloc(0);

function wholeBuffer(b: Uint8Array): Buffer {
  if (b.buffer !== lastAb) {
    lastAb = b.buffer;
    lastBuf = Buffer.from(b.buffer);
  }
  return lastBuf;
}
const tmp = new Uint8Array(8);

function putVarint(buf: Uint8Array, o: number, v: number): number {
  // Values up to 2^53: divide instead of shifting so that no precision is lost above 2^31.
  while (v >= 0x80) {
    buf[o++] = (v % 0x80) | 0x80;
    v = Math.floor(v / 0x80);
  }
  buf[o++] = v;
  return o;
}

function putU32(buf: Uint8Array, o: number, v: number): number {
  buf[o] = v >>> 24;
  buf[o + 1] = (v >>> 16) & 0xff;
  buf[o + 2] = (v >>> 8) & 0xff;
  buf[o + 3] = v & 0xff;
  return o + 4;
}

/** Encodes one record into a fresh Uint8Array of exactly its size. */
export function encodeFrontierUrl(u: FrontierUrl): Uint8Array {
  const n = encodeToScratch(u); // first: it may replace `scratch`
  return scratch.slice(0, n);
}

/**
 * encodeFrontierUrl into a shared scratch buffer: a view valid until the next encode, for callers
 * that copy it at once (BEAST's queue appends). Saves an ArrayBuffer per admitted URL — each one a
 * malloc, an ArrayBuffer extension and work for V8's ArrayBuffer sweeper on another thread.
 */
export function encodeFrontierUrlView(u: FrontierUrl): Uint8Array {
  const n = encodeToScratch(u); // first: it may replace `scratch`
  return scratch.subarray(0, n);
}

/** Encodes `u` at the start of `scratch` (grown when needed); returns the record's length. */
function encodeToScratch(u: FrontierUrl): number {
  // Canonical URLs are ASCII: bytes = chars, written by a plain loop (TextEncoder's call overhead
  // and the compaction below cost more than the copy for ~60-byte strings; so did a regex check +
  // Buffer#write('latin1'), measured).
  const url = u.url;
  const n = url.length;
  const need = n + 84 + 3 * (u.via.length + u.path.length);
  if (scratch.length < need) setScratch(new Uint8Array(need * 2));
  const buf = scratch;
  let o = 0;
  buf[o++] = 3;
  o = putVarint(buf, o, n);
  const start = o;
  for (let i = 0; i < n; i++) {
    const c = url.charCodeAt(i);
    if (c >= 0x80) return encodeUtf8ToScratch(u);
    buf[start + i] = c;
  }
  return putFields(buf, start + n, u);
}

function encodeUtf8ToScratch(u: FrontierUrl): number {
  const need = (u.url.length + u.via.length + u.path.length) * 3 + 84;
  if (scratch.length < need) setScratch(new Uint8Array(need * 2));
  const buf = scratch;
  // URL bytes first into a temp position after a maximal 5-byte length prefix, then compact.
  const { written } = encoder.encodeInto(u.url, buf.subarray(6));
  let o = 0;
  buf[o++] = 3;
  const lenStart = o;
  const lenBytes = putVarint(tmp, 0, written);
  buf.copyWithin(lenStart + lenBytes, 6, 6 + written);
  buf.set(tmp.subarray(0, lenBytes), lenStart);
  o = lenStart + lenBytes + written;
  return putFields(buf, o, u);
}

/** The fields after the URL bytes (same order in both encoders); returns the end offset. */
function putFields(buf: Uint8Array, o: number, u: FrontierUrl): number {
  o = putNumbers(buf, o, u, u.attempts);
  o = putText(buf, o, u.via);
  return putText(buf, o, u.path);
}

/** The fields between the URL and the texts, as both encoders write them. */
type RecordNumbers = Pick<FrontierUrl, 'hops' | 'hostHi' | 'hostLo' | 'pldHi' | 'pldLo' | 'budget' | 'admitted' | 'indegree' | 'discoveredAt'>;

function putNumbers(buf: Uint8Array, o: number, u: RecordNumbers, attempts: number): number {
  o = putVarint(buf, o, u.hops);
  o = putU32(buf, o, u.hostHi);
  o = putU32(buf, o, u.hostLo);
  o = putU32(buf, o, u.pldHi);
  o = putU32(buf, o, u.pldLo);
  o = putVarint(buf, o, Math.max(0, Math.floor(u.budget)));
  o = putVarint(buf, o, Math.max(0, Math.floor(u.admitted)));
  o = putVarint(buf, o, Math.max(0, Math.floor(u.indegree) + 1));
  o = putVarint(buf, o, Math.max(0, Math.floor(u.discoveredAt)));
  return putVarint(buf, o, attempts);
}

/** varint byte length + UTF-8 bytes (the caller sized `buf` for 3 bytes per char + 5). */
function putText(buf: Uint8Array, o: number, s: string): number {
  // An ASCII text under 128 characters (a via is a canonical URL, a path a few letters): a one-byte
  // length and a plain copy loop, without the subarray, encodeInto and moves below — the encode of
  // every URL in RAM at each checkpoint's snapshot (frontier.ts commit) and of each BEAST append.
  const n = s.length;
  if (n < 0x80) {
    let i = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) break;
      buf[o + 1 + i] = c;
    }
    if (i === n) {
      buf[o] = n;
      return o + 1 + n;
    }
  }
  const { written } = encoder.encodeInto(s, buf.subarray(o + 5));
  const lenBytes = putVarint(tmp, 0, written);
  buf.copyWithin(o + lenBytes, o + 5, o + 5 + written);
  buf.set(tmp.subarray(0, lenBytes), o);
  return o + lenBytes + written;
}

/**
 * A record's fields for encodeFrontierRecordBytes: the texts as byte ranges of one source buffer
 * (URLseen's result chunk), the rest as numbers. One reused object per caller: nothing is
 * allocated per URL.
 */
export interface RecordBytes extends RecordNumbers {
  src: Uint8Array;
  urlFrom: number;
  urlTo: number;
  viaFrom: number;
  viaTo: number;
  pathFrom: number;
  pathTo: number;
}

/** A RecordBytes to fill (reused by its owner: one per caller, not one per URL). */
export function emptyRecordBytes(): RecordBytes {
  return {
    src: Buffer.alloc(0), urlFrom: 0, urlTo: 0, viaFrom: 0, viaTo: 0, pathFrom: 0, pathTo: 0,
    hops: 0, hostHi: 0, hostLo: 0, pldHi: 0, pldLo: 0, budget: 0, admitted: 0, indegree: -1, discoveredAt: 0,
  };
}

/**
 * encodeFrontierUrlView of a fresh URL (attempts 0) whose texts are already bytes: the same record
 * bytes, written by copying the ranges instead of building the URL, via and path strings and
 * encoding them again (URLseen delivers ~25 unique URLs per page to the main thread; the strings
 * were half of that path's cost and most of its garbage). The ranges must be ASCII, for which the
 * string path is the identity (the caller checks; a non-ASCII URL takes the string path). A view
 * of the shared scratch, valid until the next encode.
 */
export function encodeFrontierRecordBytes(f: RecordBytes): Uint8Array {
  const urlLen = f.urlTo - f.urlFrom;
  const viaLen = f.viaTo - f.viaFrom;
  const pathLen = f.pathTo - f.pathFrom;
  const need = urlLen + viaLen + pathLen + 84;
  if (scratch.length < need) setScratch(new Uint8Array(need * 2));
  const buf = scratch;
  const src = f.src;
  let o = 0;
  buf[o++] = 3;
  o = putVarint(buf, o, urlLen);
  o = putNumbers(buf, copyRange(buf, o, src, f.urlFrom, f.urlTo), f, 0); // a fresh URL: 0 attempts
  o = putVarint(buf, o, viaLen);
  o = putVarint(buf, copyRange(buf, o, src, f.viaFrom, f.viaTo), pathLen);
  return buf.subarray(0, copyRange(buf, o, src, f.pathFrom, f.pathTo));
}

/**
 * src[from, to) to buf at o; returns the end. Short ranges by a loop (no view object: ~1 ns a byte
 * against ~85 ns a set() of a subarray, measured on this box), long ones by set().
 */
function copyRange(buf: Uint8Array, o: number, src: Uint8Array, from: number, to: number): number {
  if (to - from > 80) {
    buf.set(src.subarray(from, to), o);
    return o + to - from;
  }
  for (let i = from; i < to; i++) buf[o++] = src[i]!;
  return o;
}

function bad(msg: string): never {
  throw new CrawlError('CRAWL_FRONTIER_BAD_RECORD', `corrupt frontier record: ${msg}`);
}

// Decoder state kept at module level: nested closures would be re-created per call.
let dPos = 0;

function readVarint(b: Uint8Array): number {
  let v = 0;
  let mul = 1;
  const n = b.length;
  for (let i = 0; i < 8; i++) {
    if (dPos >= n) bad('truncated varint');
    const c = b[dPos++]!;
    v += (c & 0x7f) * mul;
    if (c < 0x80) return v;
    mul *= 0x80;
  }
  return bad('varint too long');
}

function readU32(b: Uint8Array): number {
  const o = dPos;
  if (o + 4 > b.length) bad('truncated u32');
  dPos = o + 4;
  return ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
}

/** Decodes a record produced by encodeFrontierUrl; throws CRAWL_FRONTIER_BAD_RECORD on garbage. */
export function decodeFrontierUrl(b: Uint8Array): FrontierUrl {
  dPos = 0;
  const version = b.length === 0 ? 0 : b[dPos++]!;
  if (version < 1 || version > 3) bad(`version ${b[0]}`);
  const len = readVarint(b);
  const o = dPos;
  if (o + len > b.length) bad('truncated url');
  // Canonical URLs are ASCII: latin1 is then exact and much cheaper than UTF-8 decoding.
  let ascii = true;
  for (let i = o; i < o + len; i++) {
    if (b[i]! >= 0x80) {
      ascii = false;
      break;
    }
  }
  const at = b.byteOffset + o;
  const url = wholeBuffer(b).toString(ascii ? 'latin1' : 'utf8', at, at + len);
  dPos = o + len;
  const hops = readVarint(b);
  const hostHi = readU32(b);
  const hostLo = readU32(b);
  const pldHi = readU32(b);
  const pldLo = readU32(b);
  const budget = readVarint(b);
  const admitted = readVarint(b);
  const indegree = version === 3 ? readVarint(b) - 1 : -1;
  const discoveredAt = readVarint(b);
  const attempts = readVarint(b);
  const via = version >= 2 ? readText(b) : '';
  const path = version >= 2 ? readText(b) : '';
  if (dPos !== b.length) bad('trailing bytes');
  return new FrontierUrl({ url, hops, hostHi, hostLo, pldHi, pldLo, budget, admitted, indegree, discoveredAt, attempts, via, path });
}

function readText(b: Uint8Array): string {
  const len = readVarint(b);
  if (len === 0) return '';
  if (dPos + len > b.length) bad('truncated text');
  const at = b.byteOffset + dPos;
  dPos += len;
  return wholeBuffer(b).toString('utf8', at, at + len);
}

/**
 * Reads the keys and (B, P) of an encoded record without building the URL string (BEAST's QF
 * re-spread and the QR re-scan look at millions of records and need only these).
 * out[0..3] = hostHi, hostLo, pldHi, pldLo; out[4] = budget; out[5] = admitted; out[6] = indegree
 * (-1 when not known).
 */
export function peekFrontierUrl(b: Uint8Array, out: Float64Array): void {
  dPos = 0;
  const version = b.length === 0 ? 0 : b[0]!;
  if (version < 1 || version > 3) bad(`version ${b[0]}`);
  dPos = 1;
  const len = readVarint(b);
  dPos += len;
  readVarint(b); // hops
  out[0] = readU32(b);
  out[1] = readU32(b);
  out[2] = readU32(b);
  out[3] = readU32(b);
  out[4] = readVarint(b);
  out[5] = readVarint(b);
  out[6] = version === 3 ? readVarint(b) - 1 : -1;
}

/**
 * `recs` with their URLs re-budgeted by `hook` (e.g. STAR's rebudget: B and d as they stand now):
 * decoded, passed to the hook, and re-encoded where B or d changed; a new array.
 */
export async function rebudgetRecords(recs: Uint8Array[], hook: (urls: FrontierUrl[]) => Promise<void>): Promise<Uint8Array[]> {
  const urls = recs.map(decodeFrontierUrl);
  const before = urls.map((u) => [u.budget, u.indegree]);
  await hook(urls);
  return recs.map((r, i) => (urls[i]!.budget !== before[i]![0] || urls[i]!.indegree !== before[i]![1] ? encodeFrontierUrl(urls[i]!) : r));
}

/** Path + query of an absolute URL (what robots rules match), without the fragment. */
export function pathAndQueryOf(url: string): string {
  const s = url.indexOf('://');
  const from = s < 0 ? 0 : s + 3;
  let p = from;
  const n = url.length;
  while (p < n) {
    const c = url.charCodeAt(p);
    if (c === 47 /* / */ || c === 63 /* ? */ || c === 35 /* # */) break;
    p++;
  }
  let e = url.indexOf('#', p);
  if (e < 0) e = n;
  if (p >= e) return '/';
  const rest = url.slice(p, e);
  return rest.charCodeAt(0) === 63 ? '/' + rest : rest;
}

/** scheme://authority of an absolute URL ('http://h.pld.test:8080'). */
export function originOf(url: string): string {
  const s = url.indexOf('://');
  if (s < 0) return url;
  let p = s + 3;
  while (p < url.length) {
    const c = url.charCodeAt(p);
    if (c === 47 || c === 63 || c === 35) break;
    p++;
  }
  return url.slice(0, p);
}

/** Lower-case host name (no port, no userinfo) of an absolute URL; '' when there is none. */
export function hostNameOf(url: string): string {
  const origin = originOf(url);
  const s = origin.indexOf('://');
  let a = origin.slice(s + 3);
  const at = a.lastIndexOf('@');
  if (at >= 0) a = a.slice(at + 1);
  if (a.startsWith('[')) {
    const close = a.indexOf(']');
    return a.slice(0, close + 1).toLowerCase();
  }
  const colon = a.indexOf(':');
  return (colon >= 0 ? a.slice(0, colon) : a).toLowerCase();
}
