/**
 * The pages' record groups of one message to the WARC writer's thread (archive-thread.ts writes
 * them, archive-host.ts reads them): one transferred buffer instead of a structured-cloned object
 * per page. Per group:
 *
 *   u32 dataLen | data | u32 headLen (NONE: no head) | head | f64 date ms | u8 kind
 *   | u32 urlLen | url (UTF-8) | u32 metaLen | group meta (links-codec.ts writeGroupMeta)
 */
import type { CdxSource, EncodedGroup, WarcWriter } from '../../store/index.js';
import { groupMetaSize, readGroupMeta, writeGroupMeta } from '../links-codec.js';
import { GrowableBytes } from '../growable-bytes.js';

const KINDS: CdxSource['kind'][] = ['response', 'revisit', 'other'];
const NONE = 0xffffffff;
const enc = new TextEncoder();
const dec = new TextDecoder();

/** The pages' groups of one write message, as the event loop packs them (layout above). */
export class Pack extends GrowableBytes {
  add(g: EncodedGroup, index: CdxSource): void {
    const head = index.responseHead;
    this.ensure(25 + g.data.byteLength + (head?.byteLength ?? 0) + 3 * index.url.length + groupMetaSize(g));
    let p = this.length;
    this.dv.setUint32(p, g.data.byteLength, true);
    this.buf.set(g.data, p + 4);
    p += 4 + g.data.byteLength;
    this.dv.setUint32(p, head === null ? NONE : head.byteLength, true);
    if (head !== null) this.buf.set(head, p + 4);
    p += 4 + (head?.byteLength ?? 0);
    this.dv.setFloat64(p, index.date.getTime(), true);
    this.buf[p + 8] = KINDS.indexOf(index.kind);
    const { written } = enc.encodeInto(index.url, this.buf.subarray(p + 13));
    this.dv.setUint32(p + 9, written, true);
    p += 13 + written;
    const end = writeGroupMeta(this.buf, this.dv, p + 4, g);
    this.dv.setUint32(p, end - p - 4, true);
    this.length = end;
    this.count++;
  }

  /** The packed groups, in the buffer itself (to transfer: no copy); the next ones go to a fresh one. */
  take(): Uint8Array {
    const out = this.buf.subarray(0, this.length);
    this.buf = new Uint8Array(Math.max(1 << 16, this.length + (this.length >> 2)));
    this.dv = new DataView(this.buf.buffer);
    this.length = 0;
    this.count = 0;
    return out;
  }
}

/** A write message's packed groups, read in order in the archive thread. */
export class PackReader {
  private p = 0;
  private readonly dv: DataView;
  constructor(private readonly pack: Uint8Array) {
    this.dv = new DataView(pack.buffer, pack.byteOffset, pack.byteLength);
  }

  /** The next group, appended with its index source. */
  append(w: WarcWriter): Promise<unknown> {
    const { pack, dv } = this;
    let p = this.p;
    const dataLen = dv.getUint32(p, true);
    const data = pack.subarray(p + 4, p + 4 + dataLen);
    p += 4 + dataLen;
    const headLen = dv.getUint32(p, true);
    const head = headLen === NONE ? null : pack.subarray(p + 4, p + 4 + headLen);
    p += 4 + (headLen === NONE ? 0 : headLen);
    const date = new Date(dv.getFloat64(p, true));
    const kind = KINDS[pack[p + 8]!]!;
    const urlLen = dv.getUint32(p + 9, true);
    const url = dec.decode(pack.subarray(p + 13, p + 13 + urlLen));
    p += 13 + urlLen;
    const metaLen = dv.getUint32(p, true);
    const meta = readGroupMeta(pack, dv, p + 4, p + 4 + metaLen);
    p += 4 + metaLen;
    this.p = p;
    const g: EncodedGroup = { data, records: meta.records, recordId: meta.records[0]?.recordId ?? '', payloadDigest: meta.payloadDigest };
    return w.appendEncoded(g, { url, date, kind, responseHead: head });
  }
}
