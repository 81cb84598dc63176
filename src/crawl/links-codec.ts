/**
 * The compact link table a parse worker hands back to the event loop: one Uint8Array (its
 * ArrayBuffer is transferred, never structured-cloned as an object graph).
 *
 *   u32 count | count × [u32 hi, u32 lo, u32 textOffset, u16 urlLen, u16 pldLen] | utf-8 text
 *
 * URLs are canonical (≤ 2048 chars by src/url's default, so < 65536 bytes in UTF-8 — they are
 * ASCII after canonicalization); each entry's text is the URL followed by its PLD.
 */
export interface LinkEntry {
  hi: number;
  lo: number;
  url: string;
  pld: string;
}

const HEADER = 4;
const ENTRY = 16;
const enc = new TextEncoder();
const dec = new TextDecoder();

export function encodeLinks(links: readonly LinkEntry[]): Uint8Array {
  let textBytes = 0;
  const texts: Uint8Array[] = [];
  for (const l of links) {
    const t = enc.encode(l.url + l.pld);
    texts.push(t);
    textBytes += t.byteLength;
  }
  const n = links.length;
  const buf = new Uint8Array(HEADER + n * ENTRY + textBytes);
  const dv = new DataView(buf.buffer);
  dv.setUint32(0, n, true);
  let textOff = HEADER + n * ENTRY;
  for (let i = 0; i < n; i++) {
    const l = links[i]!;
    const t = texts[i]!;
    const p = HEADER + i * ENTRY;
    const pldLen = enc.encode(l.pld).byteLength;
    dv.setUint32(p, l.hi >>> 0, true);
    dv.setUint32(p + 4, l.lo >>> 0, true);
    dv.setUint32(p + 8, textOff, true);
    dv.setUint16(p + 12, t.byteLength - pldLen, true);
    dv.setUint16(p + 14, pldLen, true);
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
    this.count = buf.byteLength >= 4 ? this.dv.getUint32(0, true) : 0;
  }
  hi(i: number): number {
    return this.dv.getUint32(HEADER + i * ENTRY, true);
  }
  lo(i: number): number {
    return this.dv.getUint32(HEADER + i * ENTRY + 4, true);
  }
  /** the URL's UTF-8 bytes (a subarray: no copy) */
  urlBytes(i: number): Uint8Array {
    const p = HEADER + i * ENTRY;
    const off = this.dv.getUint32(p + 8, true);
    return this.buf.subarray(off, off + this.dv.getUint16(p + 12, true));
  }
  url(i: number): string {
    return dec.decode(this.urlBytes(i));
  }
  pld(i: number): string {
    const p = HEADER + i * ENTRY;
    const off = this.dv.getUint32(p + 8, true) + this.dv.getUint16(p + 12, true);
    return dec.decode(this.buf.subarray(off, off + this.dv.getUint16(p + 14, true)));
  }
}
