/**
 * The compact result a parse worker hands back to the event loop: one Uint8Array (its ArrayBuffer
 * is transferred with piscina's `move`, never structured-cloned as an object graph).
 *
 *   u32 count | u32 extracted | u8 flags (1 noindex, 2 nofollow, 4 capped) | u8 digestLen | u8 charsetLen | u8 0
 *   | count × [u32 hi, lo, hostHi, hostLo, pldHi, pldLo, textOffset, u16 urlLen, u16 flags (1: a page requisite)]
 *   | digest | charset | utf-8 URLs
 *
 * (hi, lo) is the URL fingerprint (URLseen key), (hostHi, hostLo) and (pldHi, pldLo) the host and
 * PLD keys the frontier and STAR use — all computed in the worker so the event loop hashes nothing.
 * A page requisite (--requisites: a script, style sheet, image … the page embeds) has flag 1: it
 * enters URLseen with the hop letter E instead of L (drum-codec.ts).
 * URLs are canonical (≤ 2048 chars by src/url's default: ASCII after canonicalization, < 65536 bytes).
 */
export interface LinkEntry {
  hi: number;
  lo: number;
  hostHi: number;
  hostLo: number;
  pldHi: number;
  pldLo: number;
  url: string;
  /** a page requisite (flag 1) */
  embed?: boolean;
}

const HEADER = 12;

export interface PageInfo {
  digest: string;
  charset: string;
  extracted: number;
  noindex: boolean;
  nofollow: boolean;
  /** the page had more links than the parse worker takes (parse-worker.ts MAX_OUTLINKS) */
  capped?: boolean;
}
const NO_INFO: PageInfo = { digest: '', charset: '', extracted: 0, noindex: false, nofollow: false };
const ENTRY = 32;
const enc = new TextEncoder();
const dec = new TextDecoder();

export function encodeLinks(links: readonly LinkEntry[], info: PageInfo = NO_INFO): Uint8Array {
  const digest = enc.encode(info.digest.slice(0, 255));
  const charset = enc.encode(info.charset.slice(0, 64));
  const n = links.length;
  // Canonical URLs are ASCII (src/url percent-encodes the rest), so their UTF-8 is one byte per
  // UTF-16 unit: size the buffer from the string lengths and encode each URL straight into it (no
  // Uint8Array per link). A URL that is not ASCII after all sends the table down the general path.
  let ascii = 0;
  for (let i = 0; i < n; i++) ascii += links[i]!.url.length;
  const textStart = HEADER + n * ENTRY;
  const buf = new Uint8Array(textStart + digest.byteLength + charset.byteLength + ascii);
  let textOff = textStart;
  buf.set(digest, textOff);
  textOff += digest.byteLength;
  buf.set(charset, textOff);
  textOff += charset.byteLength;
  const dv = new DataView(buf.buffer);
  for (let i = 0; i < n; i++) {
    const l = links[i]!;
    const r = enc.encodeInto(l.url, buf.subarray(textOff, textOff + l.url.length));
    if (r.read !== l.url.length || r.written !== l.url.length) return encodeLinksUtf8(links, info, digest, charset);
    writeEntry(dv, i, l, textOff, r.written);
    textOff += r.written;
  }
  writeHeader(dv, buf, n, info, digest.byteLength, charset.byteLength);
  return buf;
}

/**
 * The table of `urls` (canonical, so ASCII) written straight into dst at `at` (the parse worker's
 * answer buffer: no Uint8Array per page), with each URL's text encoded once: the URL keys are hashed
 * from the table's own bytes (fingerprintRunsInto), not from the strings. `keys` holds 6 words per
 * URL (hi, lo, hostHi, hostLo, pldHi, pldLo); hi/lo are filled in here. The caller makes room for
 * `tableSizeAscii(…)` bytes. Returns the end offset, or -1 when a URL is not ASCII (nothing usable
 * was written: the caller then takes encodeLinks' general path).
 */
export function writeLinkTableAscii(dst: Uint8Array, dv: DataView, at: number, urls: readonly string[], keys: Uint32Array, info: PageInfo,
  hashRuns: (bytes: Uint8Array, start: number, lens: ArrayLike<number>, n: number, out: Uint32Array, offset: number, stride: number) => void,
  dropped?: DroppedLinks, embeds?: Uint8Array): number {
  const n = urls.length;
  const textStart = at + HEADER + n * ENTRY;
  let p = textStart;
  p = writeAscii(dst, p, info.digest, 255);
  if (p < 0) return -1;
  const digestLen = p - textStart;
  p = writeAscii(dst, p, info.charset, 64);
  if (p < 0) return -1;
  const charsetLen = p - textStart - digestLen;
  const urlStart = p;
  if (lens.length < n) lens = new Int32Array(Math.max(n, lens.length * 2));
  for (let i = 0; i < n; i++) {
    const u = urls[i]!;
    const r = enc.encodeInto(u, dst.subarray(p, p + u.length));
    if (r.read !== u.length || r.written !== u.length || u.length > 0xffff) return -1;
    lens[i] = u.length;
    p += u.length;
  }
  hashRuns(dst, urlStart, lens, n, keys, 0, 6);
  let off = urlStart - at;
  for (let i = 0; i < n; i++) {
    const k = i * 6;
    putEntry(dv, at, i, keys[k]!, keys[k + 1]!, keys[k + 2]!, keys[k + 3]!, keys[k + 4]!, keys[k + 5]!, off, lens[i]!, embeds !== undefined ? embeds[i]! : 0);
    off += lens[i]!;
  }
  writeHeader(dv, dst, n, info, digestLen, charsetLen, at);
  if (dropped !== undefined && dropped.urls.length > 0) p = writeDropTrailer(dst, dv, at, p, dropped);
  return p;
}

/**
 * The links of a page that were not followed, each with its drop code (an index into
 * link-scope.ts DROP_CODES), so the crawl log can record them. Written after the URL texts as a
 * trailer — n × [u8 code, u16 len, ASCII url], then u32 trailer offset (from the table's start),
 * u32 n — and announced by header byte 11 = 1 (tables without it read as before).
 */
export interface DroppedLinks {
  urls: string[];
  codes: number[];
}

function writeDropTrailer(dst: Uint8Array, dv: DataView, at: number, p: number, d: DroppedLinks): number {
  const start = p;
  let n = 0;
  for (let i = 0; i < d.urls.length; i++) {
    const u = d.urls[i]!;
    if (u.length > 0xffff) continue;
    const q = writeAscii(dst, p + 3, u, 0xffff);
    if (q < 0) continue; // not ASCII (src/url never makes one): not logged
    dst[p] = d.codes[i]!;
    dv.setUint16(p + 1, u.length, true);
    p = q;
    n++;
  }
  dv.setUint32(p, start - at, true);
  dv.setUint32(p + 4, n, true);
  dst[at + 11] = 1;
  return p + 8;
}

/** Bytes the drop trailer of `d` takes at most. */
function dropTrailerSize(d: DroppedLinks | undefined): number {
  if (d === undefined || d.urls.length === 0) return 0;
  let t = 8;
  for (const u of d.urls) t += 3 + u.length;
  return t;
}

/** Bytes writeLinkTableAscii needs for these URLs at most. */
export function tableSizeAscii(urls: readonly string[], info: PageInfo, dropped?: DroppedLinks): number {
  let t = HEADER + urls.length * ENTRY + Math.min(255, info.digest.length) + Math.min(64, info.charset.length) + dropTrailerSize(dropped);
  for (let i = 0; i < urls.length; i++) t += urls[i]!.length;
  return t;
}

/** URL lengths of the table being written (scratch; bound: the most links one page had). */
let lens = new Int32Array(256);

/** `s` (≤ max chars) as ASCII bytes at p; returns the end, or -1 - p when s is not ASCII. */
function writeAscii(dst: Uint8Array, p: number, s: string, max: number): number {
  const n = Math.min(max, s.length);
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c > 0x7f) return -1 - p;
    dst[p + i] = c;
  }
  return p + n;
}

/** Entry i of the table at `at`: the three keys, then where the URL text is and its byte length (u16, u16 0). */
function putEntry(dv: DataView, at: number, i: number, hi: number, lo: number, hostHi: number, hostLo: number, pldHi: number, pldLo: number, textOff: number, textLen: number, flags = 0): void {
  const p = at + HEADER + i * ENTRY;
  dv.setUint32(p, hi >>> 0, true);
  dv.setUint32(p + 4, lo >>> 0, true);
  dv.setUint32(p + 8, hostHi >>> 0, true);
  dv.setUint32(p + 12, hostLo >>> 0, true);
  dv.setUint32(p + 16, pldHi >>> 0, true);
  dv.setUint32(p + 20, pldLo >>> 0, true);
  dv.setUint32(p + 24, textOff, true);
  dv.setUint16(p + 28, textLen, true);
  dv.setUint16(p + 30, flags, true);
}

function writeEntry(dv: DataView, i: number, l: LinkEntry, textOff: number, textLen: number): void {
  putEntry(dv, 0, i, l.hi, l.lo, l.hostHi, l.hostLo, l.pldHi, l.pldLo, textOff, textLen, l.embed === true ? 1 : 0);
}

function writeHeader(dv: DataView, buf: Uint8Array, n: number, info: PageInfo, digestLen: number, charsetLen: number, at = 0): void {
  dv.setUint32(at, n, true);
  dv.setUint32(at + 4, info.extracted, true);
  buf[at + 8] = (info.noindex ? 1 : 0) | (info.nofollow ? 2 : 0) | (info.capped === true ? 4 : 0);
  buf[at + 9] = digestLen;
  buf[at + 10] = charsetLen;
  buf[at + 11] = 0; // (a reused buffer: not zero by itself)
}

/** The general path: any URL text (UTF-8 lengths differ from string lengths). */
function encodeLinksUtf8(links: readonly LinkEntry[], info: PageInfo, digest: Uint8Array, charset: Uint8Array): Uint8Array {
  let textBytes = digest.byteLength + charset.byteLength;
  const texts: Uint8Array[] = [];
  for (const l of links) {
    const t = enc.encode(l.url);
    texts.push(t);
    textBytes += t.byteLength;
  }
  const n = links.length;
  const buf = new Uint8Array(HEADER + n * ENTRY + textBytes);
  const dv = new DataView(buf.buffer);
  writeHeader(dv, buf, n, info, digest.byteLength, charset.byteLength);
  let textOff = HEADER + n * ENTRY;
  buf.set(digest, textOff);
  textOff += digest.byteLength;
  buf.set(charset, textOff);
  textOff += charset.byteLength;
  for (let i = 0; i < n; i++) {
    const l = links[i]!;
    const t = texts[i]!;
    writeEntry(dv, i, l, textOff, t.byteLength);
    buf.set(t, textOff);
    textOff += t.byteLength;
  }
  return buf;
}

/** A read-only view over an encoded link table; no per-link objects unless asked. */
const NO_DROPS: readonly { url: string; code: number }[] = Object.freeze([]);

export class LinkTable {
  readonly count: number;
  private readonly dv: DataView;
  constructor(readonly buf: Uint8Array) {
    this.dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    this.count = buf.byteLength >= HEADER ? this.dv.getUint32(0, true) : 0;
  }
  /** the page had more links than were taken (PageInfo.capped), without decoding the rest of info() */
  get capped(): boolean {
    return this.buf.byteLength >= HEADER && (this.buf[8]! & 4) !== 0;
  }

  info(): PageInfo {
    if (this.buf.byteLength < HEADER) return NO_INFO;
    const d0 = HEADER + this.count * ENTRY;
    const dl = this.buf[9]!;
    const cl = this.buf[10]!;
    return {
      digest: dec.decode(this.buf.subarray(d0, d0 + dl)),
      charset: dec.decode(this.buf.subarray(d0 + dl, d0 + dl + cl)),
      extracted: this.dv.getUint32(4, true),
      noindex: (this.buf[8]! & 1) !== 0,
      nofollow: (this.buf[8]! & 2) !== 0,
      capped: (this.buf[8]! & 4) !== 0,
    };
  }
  /** word w (0 hi, 1 lo, 2 hostHi, 3 hostLo, 4 pldHi, 5 pldLo) of entry i */
  word(i: number, w: number): number {
    return this.dv.getUint32(HEADER + i * ENTRY + w * 4, true);
  }
  hi(i: number): number {
    return this.word(i, 0);
  }
  lo(i: number): number {
    return this.word(i, 1);
  }
  /** the URL's UTF-8 bytes (a subarray: no copy) */
  urlBytes(i: number): Uint8Array {
    const p = HEADER + i * ENTRY;
    const off = this.dv.getUint32(p + 24, true);
    return this.buf.subarray(off, off + this.dv.getUint16(p + 28, true));
  }
  url(i: number): string {
    return dec.decode(this.urlBytes(i));
  }
  /** Link i is a page requisite (flag 1). */
  embed(i: number): boolean {
    return (this.dv.getUint16(HEADER + i * ENTRY + 30, true) & 1) !== 0;
  }
  /** The page's links that were not followed, with their drop code index (writeDropTrailer). */
  dropped(): readonly { url: string; code: number }[] {
    if (this.buf.byteLength < HEADER + 8 || this.buf[11] !== 1) return NO_DROPS;
    const end = this.buf.byteLength;
    const n = this.dv.getUint32(end - 4, true);
    let p = this.dv.getUint32(end - 8, true);
    const out: { url: string; code: number }[] = [];
    for (let i = 0; i < n && p + 3 <= end - 8; i++) {
      const len = this.dv.getUint16(p + 1, true);
      out.push({ code: this.buf[p]!, url: dec.decode(this.buf.subarray(p + 3, p + 3 + len)) });
      p += 3 + len;
    }
    return out;
  }
  entry(i: number): LinkEntry {
    const e: LinkEntry = {
      hi: this.word(i, 0), lo: this.word(i, 1), hostHi: this.word(i, 2), hostLo: this.word(i, 3),
      pldHi: this.word(i, 4), pldLo: this.word(i, 5), url: this.url(i),
    };
    if (this.embed(i)) e.embed = true;
    return e;
  }
}

/** Split a ParseOutput into the link table and the pre-encoded WARC group (if any). No copies. */
export function splitParseOutput(out: Uint8Array): { table: Uint8Array; group: EncodedGroupLike | null } {
  const dv = new DataView(out.buffer, out.byteOffset, out.byteLength);
  const tl = dv.getUint32(0, true);
  const table = out.subarray(4, 4 + tl);
  const ml = dv.getUint32(4 + tl, true);
  if (ml === 0) return { table, group: null };
  const meta = readGroupMeta(out, dv, 8 + tl, 8 + tl + ml);
  return { table, group: { records: meta.records, recordId: meta.records[0]?.recordId ?? '', payloadDigest: meta.payloadDigest, data: out.subarray(8 + tl + ml) } };
}

/**
 * The WARC group's record list as the parse worker sends it, binary (JSON would cost a stringify,
 * an encode, a decode and a parse per page):
 *   u8 count | count × [u8 type code, u32 offset, u32 length, u8 idLen, id] | u8 digestLen | digest
 * ids and the digest are ASCII (`<urn:uuid:…>`, `sha1:BASE32`). The group's recordId is its first
 * record's (the response or revisit: encodeExchangeRecords/encodeRevisitRecords put it first).
 */
const RECORD_TYPES = ['response', 'request', 'metadata', 'revisit', 'resource', 'warcinfo', 'conversion', 'continuation'];

/** Bytes writeGroupMeta needs at most. */
export function groupMetaSize(g: Omit<EncodedGroupLike, 'data'>): number {
  let n = 2 + g.payloadDigest.length;
  for (const r of g.records) n += 10 + r.recordId.length;
  return n;
}

/** Write g's meta at `at` (room: groupMetaSize); returns the end. Throws on what the format cannot hold. */
export function writeGroupMeta(dst: Uint8Array, dv: DataView, at: number, g: Omit<EncodedGroupLike, 'data'>): number {
  if (g.records.length > 255 || (g.records.length > 0 && g.records[0]!.recordId !== g.recordId)) throw new Error('WARC group meta: unsupported record list');
  dst[at] = g.records.length;
  let p = at + 1;
  for (const r of g.records) {
    const t = RECORD_TYPES.indexOf(r.type);
    if (t < 0 || r.recordId.length > 255) throw new Error(`WARC group meta: cannot encode record ${r.type} ${r.recordId}`);
    dst[p] = t;
    dv.setUint32(p + 1, r.offset, true);
    dv.setUint32(p + 5, r.length, true);
    dst[p + 9] = r.recordId.length;
    p = writeAscii(dst, p + 10, r.recordId, 255);
    if (p < 0) throw new Error(`WARC group meta: record id not ASCII: ${r.recordId}`);
  }
  if (g.payloadDigest.length > 255) throw new Error('WARC group meta: payload digest too long');
  dst[p] = g.payloadDigest.length;
  p = writeAscii(dst, p + 1, g.payloadDigest, 255);
  if (p < 0) throw new Error(`WARC group meta: payload digest not ASCII: ${g.payloadDigest}`);
  return p;
}

/** The inverse of writeGroupMeta over out[at..end). */
export function readGroupMeta(out: Uint8Array, dv: DataView, at: number, end: number): { records: EncodedGroupLike['records']; payloadDigest: string } {
  const b = Buffer.from(out.buffer, out.byteOffset, out.byteLength);
  const n = out[at]!;
  let p = at + 1;
  const records: EncodedGroupLike['records'] = [];
  for (let i = 0; i < n; i++) {
    const idLen = out[p + 9]!;
    records.push({ type: RECORD_TYPES[out[p]!]!, recordId: b.toString('latin1', p + 10, p + 10 + idLen), offset: dv.getUint32(p + 1, true), length: dv.getUint32(p + 5, true) });
    p += 10 + idLen;
  }
  const dl = out[p]!;
  if (p + 1 + dl > end) throw new Error('WARC group meta: truncated');
  return { records, payloadDigest: b.toString('latin1', p + 1, p + 1 + dl) };
}

export interface EncodedGroupLike {
  data: Uint8Array;
  records: { type: string; recordId: string; offset: number; length: number }[];
  recordId: string;
  payloadDigest: string;
  /**
   * `data`'s ArrayBuffer holds nothing anyone reads after this group is archived (a page worker's
   * ParseOutput, its link table sent apart): the WARC writer's thread may take it by transfer
   * instead of a copy (archive-thread.ts appendEncoded).
   */
  owned?: boolean;
}
