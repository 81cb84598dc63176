/**
 * The message a node publishes to a partition's subject: the URLs and STAR votes one node found
 * for that partition since its last flush (docs/cluster.md, "Hand-off"). Binary, little-endian:
 *
 *   u8 0x42 'B' | u8 version 1 | u16 0 | u32 votes | u32 urls
 *   votes × [u32 srcHi, srcLo ⊕ slot, dstHi, dstLo]          (Star's PLDedges words, star.ts)
 *   urls  × [u32 hops | u16 urlLen | u16 suffixLen | url | suffix]
 *
 * `url` is the canonical URL's UTF-8, `suffix` its discovery suffix (drum-codec.ts
 * discoverySuffix: via and hop path), exactly what the sender's own URLseen would have stored.
 * A page's links share one suffix: suffixLen 0xffff means "the previous entry's suffix", so a
 * page's 50 links to one partition carry its URL once.
 */

const MAGIC = 0x42;
const VERSION = 1;
const HEADER = 12;
const SAME_SUFFIX = 0xffff;

export interface BatchUrl {
  url: Uint8Array;
  hops: number;
  suffix: Uint8Array;
}

export interface Batch {
  urls: BatchUrl[];
  /** votes packed [srcHi, srcLo ⊕ slot, dstHi, dstLo]* */
  votes: Uint32Array;
  voteCount: number;
}

/** A batch being filled for one partition. RAM: the bytes added since the last take(). */
export class BatchBuilder {
  private urlBuf = new Uint8Array(4096);
  private urlLen = 0;
  private voteBuf = new Uint32Array(256);
  private lastSuffix: Uint8Array | null = null;
  urls = 0;
  votes = 0;

  /** Bytes the batch would take now. */
  get bytes(): number {
    return HEADER + this.votes * 16 + this.urlLen;
  }

  get empty(): boolean {
    return this.urls === 0 && this.votes === 0;
  }

  private room(n: number): void {
    if (this.urlLen + n <= this.urlBuf.byteLength) return;
    let cap = this.urlBuf.byteLength * 2;
    while (cap < this.urlLen + n) cap *= 2;
    const nb = new Uint8Array(cap);
    nb.set(this.urlBuf.subarray(0, this.urlLen));
    this.urlBuf = nb;
  }

  /** One URL (copied). URLs and suffixes longer than 65,534 bytes are refused (false). */
  addUrl(url: Uint8Array, hops: number, suffix: Uint8Array): boolean {
    if (url.byteLength >= SAME_SUFFIX || suffix.byteLength >= SAME_SUFFIX) return false;
    const same = this.lastSuffix !== null && sameBytes(this.lastSuffix, suffix);
    this.room(8 + url.byteLength + (same ? 0 : suffix.byteLength));
    const b = this.urlBuf;
    let p = this.urlLen;
    b[p] = hops & 0xff;
    b[p + 1] = (hops >>> 8) & 0xff;
    b[p + 2] = (hops >>> 16) & 0xff;
    b[p + 3] = (hops >>> 24) & 0xff;
    b[p + 4] = url.byteLength & 0xff;
    b[p + 5] = url.byteLength >>> 8;
    const sl = same ? SAME_SUFFIX : suffix.byteLength;
    b[p + 6] = sl & 0xff;
    b[p + 7] = sl >>> 8;
    p += 8;
    b.set(url, p);
    p += url.byteLength;
    if (!same) {
      b.set(suffix, p);
      p += suffix.byteLength;
      this.lastSuffix = b.subarray(p - suffix.byteLength, p);
    }
    this.urlLen = p;
    this.urls++;
    return true;
  }

  /** One vote: edge words at e[o..o+3]. */
  addVote(e: Uint32Array, o: number): void {
    if ((this.votes + 1) * 4 > this.voteBuf.length) {
      const nv = new Uint32Array(this.voteBuf.length * 2);
      nv.set(this.voteBuf);
      this.voteBuf = nv;
    }
    this.voteBuf.set(e.subarray(o, o + 4), this.votes * 4);
    this.votes++;
  }

  /** The encoded batch; the builder is empty again. */
  take(): Uint8Array {
    const out = new Uint8Array(this.bytes);
    const dv = new DataView(out.buffer);
    out[0] = MAGIC;
    out[1] = VERSION;
    dv.setUint32(4, this.votes, true);
    dv.setUint32(8, this.urls, true);
    let p = HEADER;
    for (let i = 0; i < this.votes * 4; i++, p += 4) dv.setUint32(p, this.voteBuf[i]!, true);
    out.set(this.urlBuf.subarray(0, this.urlLen), p);
    this.urlLen = 0;
    this.urls = 0;
    this.votes = 0;
    this.lastSuffix = null;
    if (this.urlBuf.byteLength > 1 << 20) this.urlBuf = new Uint8Array(4096);
    return out;
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a === b) return true;
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A published batch read back (views into `buf`, no copies); throws on a malformed one. */
export function decodeBatch(buf: Uint8Array): Batch {
  if (buf.byteLength < HEADER || buf[0] !== MAGIC || buf[1] !== VERSION) throw new RangeError('not a drumcrawl URL batch');
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const voteCount = dv.getUint32(4, true);
  const n = dv.getUint32(8, true);
  let p = HEADER;
  if (p + voteCount * 16 > buf.byteLength) throw new RangeError('URL batch truncated (votes)');
  const votes = new Uint32Array(voteCount * 4);
  for (let i = 0; i < voteCount * 4; i++, p += 4) votes[i] = dv.getUint32(p, true);
  const urls: BatchUrl[] = [];
  let suffix: Uint8Array = new Uint8Array(0);
  for (let i = 0; i < n; i++) {
    if (p + 8 > buf.byteLength) throw new RangeError('URL batch truncated (entry)');
    const hops = dv.getUint32(p, true);
    const ul = dv.getUint16(p + 4, true);
    const sl = dv.getUint16(p + 6, true);
    p += 8;
    if (p + ul + (sl === SAME_SUFFIX ? 0 : sl) > buf.byteLength) throw new RangeError('URL batch truncated (text)');
    const url = buf.subarray(p, p + ul);
    p += ul;
    if (sl !== SAME_SUFFIX) {
      suffix = buf.subarray(p, p + sl);
      p += sl;
    }
    urls.push({ url, hops, suffix });
  }
  if (p !== buf.byteLength) throw new RangeError('URL batch has trailing bytes');
  return { urls, votes, voteCount };
}
