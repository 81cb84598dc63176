/**
 * The compact result a parse worker hands back to the event loop: one Uint8Array (its ArrayBuffer
 * is transferred with piscina's `move`, never structured-cloned as an object graph).
 *
 *   u32 count | u32 extracted | u8 flags (1 noindex, 2 nofollow) | u8 digestLen | u8 charsetLen | u8 0
 *   | count × [u32 hi, lo, hostHi, hostLo, pldHi, pldLo, textOffset, u16 urlLen, u16 0]
 *   | digest | charset | utf-8 URLs
 *
 * (hi, lo) is the URL fingerprint (URLseen key), (hostHi, hostLo) and (pldHi, pldLo) the host and
 * PLD keys the frontier and STAR use — all computed in the worker so the event loop hashes nothing.
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
}

const HEADER = 12;

export interface PageInfo {
  digest: string;
  charset: string;
  extracted: number;
  noindex: boolean;
  nofollow: boolean;
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

/** Entry i of the table: the three keys, then where the URL text is and its byte length. */
function writeEntry(dv: DataView, i: number, l: LinkEntry, textOff: number, textLen: number): void {
  const p = HEADER + i * ENTRY;
  dv.setUint32(p, l.hi >>> 0, true);
  dv.setUint32(p + 4, l.lo >>> 0, true);
  dv.setUint32(p + 8, l.hostHi >>> 0, true);
  dv.setUint32(p + 12, l.hostLo >>> 0, true);
  dv.setUint32(p + 16, l.pldHi >>> 0, true);
  dv.setUint32(p + 20, l.pldLo >>> 0, true);
  dv.setUint32(p + 24, textOff, true);
  dv.setUint16(p + 28, textLen, true);
}

function writeHeader(dv: DataView, buf: Uint8Array, n: number, info: PageInfo, digestLen: number, charsetLen: number): void {
  dv.setUint32(0, n, true);
  dv.setUint32(4, info.extracted, true);
  buf[8] = (info.noindex ? 1 : 0) | (info.nofollow ? 2 : 0);
  buf[9] = digestLen;
  buf[10] = charsetLen;
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
export class LinkTable {
  readonly count: number;
  private readonly dv: DataView;
  constructor(readonly buf: Uint8Array) {
    this.dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    this.count = buf.byteLength >= HEADER ? this.dv.getUint32(0, true) : 0;
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
  entry(i: number): LinkEntry {
    return {
      hi: this.word(i, 0), lo: this.word(i, 1), hostHi: this.word(i, 2), hostLo: this.word(i, 3),
      pldHi: this.word(i, 4), pldLo: this.word(i, 5), url: this.url(i),
    };
  }
}

/** Split a ParseOutput into the link table and the pre-encoded WARC group (if any). No copies. */
export function splitParseOutput(out: Uint8Array): { table: Uint8Array; group: EncodedGroupLike | null } {
  const dv = new DataView(out.buffer, out.byteOffset, out.byteLength);
  const tl = dv.getUint32(0, true);
  const table = out.subarray(4, 4 + tl);
  const ml = dv.getUint32(4 + tl, true);
  if (ml === 0) return { table, group: null };
  const meta = JSON.parse(dec.decode(out.subarray(8 + tl, 8 + tl + ml))) as Omit<EncodedGroupLike, 'data'>;
  return { table, group: { ...meta, data: out.subarray(8 + tl + ml) } };
}

export interface EncodedGroupLike {
  data: Uint8Array;
  records: { type: string; recordId: string; offset: number; length: number }[];
  recordId: string;
  payloadDigest: string;
}
