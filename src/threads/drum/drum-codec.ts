/**
 * Binary batches between the event loop and the DRUM worker thread (drum-host.ts): tuples in,
 * results out, one transferred buffer per batch instead of structured-cloned object graphs; and the
 * crawler's aux and value layouts inside them (URLseen: the URL record; ContentSeen: the first
 * capture and the page's job id).
 *
 *   tuple:  u8 op | u32 hi | u32 lo | u32 valueLen (0xffffffff = none) | value | u32 auxLen (or none) | aux
 *   links:  u8 3 | u32 hops | u32 suffixLen | suffix | u32 tableLen | link table (links-codec.ts)
 *           — a page's links, expanded in the DRUM thread into one checkUpdate per link
 *   result: u8 op | u8 unique | u32 hi | u32 lo | u32 valueLen (or none) | value | u32 auxLen (or none) | aux
 */
import type { DrumOp, DrumResult, DrumResultChunk } from '../../drum/index.js';
import { FrontierUrl, emptyRecordBytes, type RecordBytes } from '../../frontier/index.js';
import { LinkTable } from '../links-codec.js';
import { GrowableBytes } from '../growable-bytes.js';

const NONE = 0xffffffff;
/** Op code of a link-table entry (BatchWriter.linkTable); tuple ops are 0–2. */
const LINKS = 3;
const OPS: readonly DrumOp[] = ['check', 'update', 'checkUpdate'];
const OP_CODE: Record<DrumOp, number> = { check: 0, update: 1, checkUpdate: 2 };

/** One batch of tuples (or results) being written. */
export class BatchWriter extends GrowableBytes {
  private bytes(b: Uint8Array | null | undefined): void {
    if (b === null || b === undefined) {
      this.ensure(4);
      this.dv.setUint32(this.length, NONE, true);
      this.length += 4;
      return;
    }
    this.ensure(4 + b.byteLength);
    this.dv.setUint32(this.length, b.byteLength, true);
    this.buf.set(b, this.length + 4);
    this.length += 4 + b.byteLength;
  }
  tuple(op: DrumOp, hi: number, lo: number, value: Uint8Array | null | undefined, aux: Uint8Array | null | undefined): void {
    this.ensure(9);
    this.buf[this.length] = OP_CODE[op];
    this.dv.setUint32(this.length + 1, hi >>> 0, true);
    this.dv.setUint32(this.length + 5, lo >>> 0, true);
    this.length += 9;
    this.bytes(value);
    this.bytes(aux);
    this.count++;
  }
  /**
   * A page's link table as one entry (`links` of them): the URLseen thread expands it into one
   * checkUpdate per link with encodeAux's aux (host key, PLD key, `hops`, URL bytes + `suffix`),
   * so the event loop copies the table once instead of writing a tuple per link.
   */
  linkTable(table: Uint8Array, links: number, hops: number, suffix: Uint8Array): void {
    this.ensure(13 + suffix.byteLength + table.byteLength);
    const dv = this.dv;
    let p = this.length;
    this.buf[p] = LINKS;
    dv.setUint32(p + 1, hops >>> 0, true);
    dv.setUint32(p + 5, suffix.byteLength, true);
    this.buf.set(suffix, p + 9);
    p += 9 + suffix.byteLength;
    dv.setUint32(p, table.byteLength, true);
    this.buf.set(table, p + 4);
    this.length = p + 4 + table.byteLength;
    this.count += links;
  }
  result(r: DrumResult): void {
    this.ensure(10);
    this.buf[this.length] = OP_CODE[r.op];
    this.buf[this.length + 1] = r.unique ? 1 : 0;
    this.dv.setUint32(this.length + 2, r.keyHi >>> 0, true);
    this.dv.setUint32(this.length + 6, r.keyLo >>> 0, true);
    this.length += 10;
    this.bytes(r.value);
    this.bytes(r.aux);
    this.count++;
  }
  /** The batch (a copy sized to fit, safe to transfer); the writer is reset. */
  take(): Uint8Array {
    const out = this.buf.slice(0, this.length);
    this.length = 0;
    this.count = 0;
    return out;
  }

  /**
   * The batch in the writer's own buffer (to transfer: no copy), the writer going on in `spare` (a
   * buffer an earlier batch was sent in, given back by the DRUM thread once read: drum-proxy.ts)
   * or, without one, in a new buffer of the same size. A copy into a new buffer (take) writes the
   * batch into memory not yet in use, whose pages fault in as they are written: 2–10 µs per 8 KB
   * on this VM, against 0.1–0.4 µs for memory in use.
   */
  handOver(spare: Uint8Array | undefined): Uint8Array {
    const out = this.buf.subarray(0, this.length);
    this.buf = spare ?? new Uint8Array(this.buf.byteLength);
    this.dv = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
    this.length = 0;
    this.count = 0;
    return out;
  }
}

/**
 * One DRUM delivery chunk (struct of arrays, DrumOptions.onResultChunk) as a result batch — the
 * same bytes as BatchWriter.result() per result, written in one pass into a buffer sized exactly
 * (safe to transfer: the chunk's own arrays are reused by DRUM).
 */
export function encodeResultChunk(c: DrumResultChunk): Uint8Array {
  const n = c.count;
  const vals = c.values;
  let size = n * 18 + (c.auxStart[n]! - c.auxStart[0]!);
  if (vals !== null) for (let i = 0; i < n; i++) size += vals[i]?.byteLength ?? 0;
  const out = new Uint8Array(size);
  const dv = new DataView(out.buffer);
  const aux = c.auxBytes;
  let p = 0;
  for (let i = 0; i < n; i++) {
    out[p] = c.op[i]!;
    out[p + 1] = c.unique[i]!;
    dv.setUint32(p + 2, c.keyHi[i]!, true);
    dv.setUint32(p + 6, c.keyLo[i]!, true);
    p += 10;
    const v = vals === null ? null : vals[i] ?? null;
    if (v === null) {
      dv.setUint32(p, NONE, true);
      p += 4;
    } else {
      dv.setUint32(p, v.byteLength, true);
      out.set(v, p + 4);
      p += 4 + v.byteLength;
    }
    if (c.auxNull[i] === 1) {
      dv.setUint32(p, NONE, true);
      p += 4;
    } else {
      const a = c.auxStart[i]!;
      const len = c.auxStart[i + 1]! - a;
      dv.setUint32(p, len, true);
      p += 4;
      // short copies byte by byte: a subarray per result would be one more object
      for (let k = 0; k < len; k++) out[p + k] = aux[a + k]!;
      p += len;
    }
  }
  return p === size ? out : out.subarray(0, p);
}

export function forEachTuple(
  buf: Uint8Array,
  fn: (op: DrumOp, hi: number, lo: number, value: Uint8Array | null, aux: Uint8Array | null) => void,
): void {
  // Runs per link in the URLseen host: lengths read inline (no [view, offset] pair per field).
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const end = buf.byteLength;
  let p = 0;
  while (p < end) {
    if (buf[p] === LINKS) {
      p = expandLinks(buf, dv, p, fn);
      continue;
    }
    const op = OPS[buf[p]!]!;
    const hi = dv.getUint32(p + 1, true);
    const lo = dv.getUint32(p + 5, true);
    p += 9;
    let value: Uint8Array | null = null;
    let n = dv.getUint32(p, true);
    p += 4;
    if (n !== NONE) {
      value = buf.subarray(p, p + n);
      p += n;
    }
    let aux: Uint8Array | null = null;
    n = dv.getUint32(p, true);
    p += 4;
    if (n !== NONE) {
      aux = buf.subarray(p, p + n);
      p += n;
    }
    fn(op, hi, lo, value, aux);
  }
}

/** The hop letters of a link (L) and of a page requisite (E), as bytes. */
const HOP_L = 0x4c;
const HOP_E = 0x45;

/** URLseen aux of the link being expanded (bound: the longest URL + suffix seen). */
let linkAux = new Uint8Array(4096);

/** The link-table entry at p as checkUpdate tuples (BatchWriter.linkTable); returns the entry's end. */
function expandLinks(buf: Uint8Array, dv: DataView, p: number, fn: (op: DrumOp, hi: number, lo: number, value: Uint8Array | null, aux: Uint8Array | null) => void): number {
  const hops = dv.getUint32(p + 1, true);
  const sl = dv.getUint32(p + 5, true);
  const suffix = buf.subarray(p + 9, p + 9 + sl);
  p += 9 + sl;
  const tl = dv.getUint32(p, true);
  const t = new LinkTable(buf.subarray(p + 4, p + 4 + tl));
  for (let i = 0; i < t.count; i++) {
    const url = t.urlBytes(i);
    const n = AUX_HEADER + url.byteLength + sl;
    if (linkAux.byteLength < n) linkAux = new Uint8Array(n * 2);
    const a = linkAux;
    putLe32(a, 0, t.word(i, 2));
    putLe32(a, 4, t.word(i, 3));
    putLe32(a, 8, t.word(i, 4));
    putLe32(a, 12, t.word(i, 5));
    putLe32(a, 16, hops);
    a.set(url, AUX_HEADER);
    a.set(suffix, AUX_HEADER + url.byteLength);
    // A page requisite: its hop path ends in E, not L (the suffix is the page's via + path + L).
    if (sl > 0 && t.embed(i) && a[n - 1] === HOP_L) a[n - 1] = HOP_E;
    fn('checkUpdate', t.word(i, 0), t.word(i, 1), null, a.subarray(0, n));
  }
  return p + 4 + tl;
}

function putLe32(b: Uint8Array, o: number, v: number): void {
  b[o] = v & 0xff;
  b[o + 1] = (v >>> 8) & 0xff;
  b[o + 2] = (v >>> 16) & 0xff;
  b[o + 3] = v >>> 24;
}

/**
 * Each result of a batch as offsets into `buf` (no object, no subarray per result): value and aux
 * at [off, off + len), len -1 when absent.
 */
export function forEachResult(
  buf: Uint8Array,
  fn: (op: DrumOp, unique: boolean, hi: number, lo: number, valueOff: number, valueLen: number, auxOff: number, auxLen: number) => void,
): void {
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const end = buf.byteLength;
  let p = 0;
  while (p < end) {
    const op = OPS[buf[p]!]!;
    const unique = buf[p + 1] === 1;
    const hi = dv.getUint32(p + 2, true);
    const lo = dv.getUint32(p + 6, true);
    p += 10;
    let n = dv.getUint32(p, true);
    p += 4;
    const valueOff = p;
    const valueLen = n === NONE ? -1 : n;
    if (n !== NONE) p += n;
    n = dv.getUint32(p, true);
    p += 4;
    const auxOff = p;
    const auxLen = n === NONE ? -1 : n;
    if (n !== NONE) p += n;
    fn(op, unique, hi, lo, valueOff, valueLen, auxOff, auxLen);
  }
}

/** The results of a batch as DrumResult objects (value and aux are views of `buf`). */
export function decodeResults(buf: Uint8Array): DrumResult[] {
  const out: DrumResult[] = [];
  forEachResult(buf, (op, unique, keyHi, keyLo, vo, vl, ao, al) => {
    out.push({ op, unique, keyHi, keyLo, value: vl < 0 ? null : buf.subarray(vo, vo + vl), aux: al < 0 ? null : buf.subarray(ao, ao + al) });
  });
  return out;
}

// ---------------------------------------------------------------- URLseen and ContentSeen records

export const AUX_HEADER = 20;
const enc = new TextEncoder();
const dec = new TextDecoder();

/**
 * URLseen aux: [u32 hostHi, hostLo, pldHi, pldLo, hops] + URL bytes + the discovery suffix
 * (discoverySuffix: NUL via NUL path; empty for a seed). Canonical URLs hold no NUL (it would be
 * percent-encoded), so the first NUL ends the URL.
 */
export function encodeAux(hostHi: number, hostLo: number, pldHi: number, pldLo: number, hops: number, url: Uint8Array): Uint8Array {
  const b = new Uint8Array(AUX_HEADER + url.byteLength);
  const dv = new DataView(b.buffer);
  dv.setUint32(0, hostHi, true);
  dv.setUint32(4, hostLo, true);
  dv.setUint32(8, pldHi, true);
  dv.setUint32(12, pldLo, true);
  dv.setUint32(16, hops, true);
  b.set(url, AUX_HEADER);
  return b;
}

/** Little-endian u32 at `o` (no DataView object per read: these run per URL and per page). */
export const le32 = (b: Uint8Array, o: number): number => (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0;

/**
 * `b[from, to)` as a string: canonical URLs are ASCII, for which latin1 is exact and cheaper than
 * UTF-8. `b` is a Buffer over a whole result batch: no view object per URL.
 */
function urlTextAt(b: Buffer, from: number, to: number): string {
  for (let i = from; i < to; i++) if (b[i]! >= 0x80) return dec.decode(b.subarray(from, to));
  return b.toString('latin1', from, to);
}

const EMPTY_SUFFIX = new Uint8Array(0);

/** The aux tail after a URL: NUL, the page it was found on, NUL, its hop path (crawl.log's via, path). */
export function discoverySuffix(via: string, path: string): Uint8Array {
  return via === '' && path === '' ? EMPTY_SUFFIX : enc.encode(`\0${via}\0${path}`);
}

/** `url` + `suffix` in a reused scratch (the DRUM batch copies the tail at once). */
let tailScratch = new Uint8Array(4096);
export function withSuffix(url: Uint8Array, suffix: Uint8Array): Uint8Array {
  if (suffix.byteLength === 0) return url;
  const n = url.byteLength + suffix.byteLength;
  if (tailScratch.byteLength < n) tailScratch = new Uint8Array(n * 2);
  tailScratch.set(url, 0);
  tailScratch.set(suffix, url.byteLength);
  return tailScratch.subarray(0, n);
}

/**
 * URLseen's unique URLs of one result chunk (aux = encodeAux's), as offsets into the chunk: no
 * string and no object per URL (URLseen delivers ~25 per page to the main thread). Per URL i:
 * pos[4i..4i+3] = aux start, URL end, via end (= URL end when the aux has no discovery suffix),
 * aux end; plds[2i], plds[2i+1] = its PLD key, the layout STAR's assignKeys takes.
 */
export class UniqueUrls {
  count = 0;
  pos = new Int32Array(256);
  plds = new Uint32Array(128);
  constructor(readonly buf: Buffer) {}

  push(a: number, urlEnd: number, viaEnd: number, end: number): void {
    const i = this.count++;
    if (this.pos.length < 4 * this.count) {
      const p = new Int32Array(this.pos.length * 2);
      p.set(this.pos);
      this.pos = p;
      const k = new Uint32Array(this.plds.length * 2);
      k.set(this.plds);
      this.plds = k;
    }
    this.pos[4 * i] = a;
    this.pos[4 * i + 1] = urlEnd;
    this.pos[4 * i + 2] = viaEnd;
    this.pos[4 * i + 3] = end;
    this.plds[2 * i] = le32(this.buf, a + 8);
    this.plds[2 * i + 1] = le32(this.buf, a + 12);
  }

  /** URL i's aux holds only ASCII (canonical URLs always do): its record can be copied from the bytes. */
  ascii(i: number): boolean {
    const b = this.buf;
    for (let j = this.pos[4 * i]! + AUX_HEADER, end = this.pos[4 * i + 3]!; j < end; j++) if (b[j]! >= 0x80) return false;
    return true;
  }

  /** URL i's texts and keys into `f` (encodeFrontierRecordBytes); B, P, d and the date are the caller's. */
  fields(i: number, f: RecordBytes): void {
    const b = this.buf;
    const a = this.pos[4 * i]!;
    const urlEnd = this.pos[4 * i + 1]!;
    const viaEnd = this.pos[4 * i + 2]!;
    const end = this.pos[4 * i + 3]!;
    f.src = b;
    f.urlFrom = a + AUX_HEADER;
    f.urlTo = urlEnd;
    f.viaFrom = viaEnd === urlEnd ? urlEnd : urlEnd + 1;
    f.viaTo = viaEnd;
    f.pathFrom = viaEnd === urlEnd ? end : viaEnd + 1;
    f.pathTo = end;
    f.hostHi = le32(b, a);
    f.hostLo = le32(b, a + 4);
    f.pldHi = le32(b, a + 8);
    f.pldLo = le32(b, a + 12);
    f.hops = le32(b, a + 16);
  }

  /** URL i as a FrontierUrl (B and P 0): the string path, for a URL that is not ASCII. */
  url(i: number, now: number): FrontierUrl {
    const f = this.scratch;
    this.fields(i, f);
    const b = this.buf;
    return new FrontierUrl({
      url: urlTextAt(b, f.urlFrom, f.urlTo),
      via: urlTextAt(b, f.viaFrom, f.viaTo),
      path: b.toString('latin1', f.pathFrom, f.pathTo),
      hostHi: f.hostHi,
      hostLo: f.hostLo,
      pldHi: f.pldHi,
      pldLo: f.pldLo,
      hops: f.hops,
      budget: 0,
      admitted: 0,
      discoveredAt: now,
    });
  }

  private readonly scratch = emptyRecordBytes();
}

/**
 * The unique URLs of a URLseen result chunk whose key `keep` accepts. An aux is the URL, then
 * either nothing or NUL via NUL path (discoverySuffix); canonical URLs hold no NUL.
 */
export function scanUniqueUrls(buf: Uint8Array, keep: (hi: number, lo: number) => boolean): UniqueUrls {
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  const out = new UniqueUrls(b);
  forEachResult(buf, (_op, unique, hi, lo, _vo, _vl, a, n) => {
    if (!unique || n < AUX_HEADER || !keep(hi, lo)) return;
    const end = a + n;
    const urlEnd = b.indexOf(0, a + AUX_HEADER);
    const viaEnd = urlEnd < 0 || urlEnd >= end ? -1 : b.indexOf(0, urlEnd + 1);
    if (viaEnd > urlEnd && viaEnd < end) out.push(a, urlEnd, viaEnd, end);
    else out.push(a, end, end, end);
  });
  return out;
}

/**
 * ContentSeen value: [f64 date ms] + URL of the first capture (for the revisit's WARC-Refers-To-*),
 * encoded into a scratch buffer: a view valid until the next call (the DRUM batch copies it at once;
 * a fresh ArrayBuffer per page would be one more malloc for V8's ArrayBuffer sweeper).
 */
let contentScratch = new Uint8Array(1024);
let contentScratchDv = new DataView(contentScratch.buffer);
export function encodeContentValue(url: string, date: Date): Uint8Array {
  if (contentScratch.byteLength < 8 + url.length * 3) {
    contentScratch = new Uint8Array(2 * (8 + url.length * 3));
    contentScratchDv = new DataView(contentScratch.buffer);
  }
  contentScratchDv.setFloat64(0, date.getTime(), true);
  const { written } = enc.encodeInto(url, contentScratch.subarray(8));
  return contentScratch.subarray(0, 8 + written);
}
/** ContentSeen aux: the page's job id (u32 LE); scratch, copied by the DRUM batch like the value. */
export const contentAux = new Uint8Array(4);
export function decodeContentValue(b: Uint8Array): { url: string; date: Date } {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  return { date: new Date(dv.getFloat64(0, true)), url: dec.decode(b.subarray(8)) };
}
