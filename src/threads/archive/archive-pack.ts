/**
 * The pages' record groups of one message to the WARC writer's thread (archive-thread.ts writes
 * them, archive-host.ts reads them): one transferred buffer instead of a structured-cloned object
 * per page. Per group:
 *
 *   u32 dataLen | data | u32 headLen (NONE: no head) | head | f64 date ms | u8 kind
 *   | u32 urlLen | url (UTF-8) | u32 metaLen | group meta (links-codec.ts writeGroupMeta)
 *
 * A group whose buffer is its own (EncodedGroupLike.owned: a page worker's ParseOutput) is not
 * copied: its ArrayBuffer goes in the message's transfer list, and `u32 dataLen | data` is
 * `u32 OWNED | u32 buffer index | u32 byteOffset | u32 byteLength` instead. The main thread then
 * neither copies the page's records (~8 KB a page on the bench web) nor writes them into fresh
 * memory: a new pack buffer's pages are faulted in as they are first written, 2–10 µs per 8 KB on
 * this VM against 0.1–0.4 µs for a copy into memory already in use.
 */
import type { CdxSource, EncodedGroup, WarcWriter } from '../../store/index.js';
import { groupMetaSize, readGroupMeta, writeGroupMeta } from '../links-codec.js';
import { GrowableBytes } from '../growable-bytes.js';

const KINDS: CdxSource['kind'][] = ['response', 'revisit', 'other'];
const NONE = 0xffffffff;
const OWNED = 0xfffffffe;
const enc = new TextEncoder();
const dec = new TextDecoder();

/** The pages' groups of one write message, as the event loop packs them (layout above). */
export class Pack extends GrowableBytes {
  /** the owned groups' buffers of this pack, to transfer with it (in their index order) */
  private owned: ArrayBuffer[] = [];
  private ownedIndex = new Map<ArrayBuffer, number>();
  /** bytes of the owned buffers */
  ownedBytes = 0;

  add(g: EncodedGroup & { owned?: boolean }, index: CdxSource): void {
    const head = index.responseHead;
    const own = g.owned === true && g.data.buffer instanceof ArrayBuffer;
    this.ensure(25 + 12 + (own ? 0 : g.data.byteLength) + (head?.byteLength ?? 0) + 3 * index.url.length + groupMetaSize(g));
    let p = this.length;
    if (own) {
      const ab = g.data.buffer as ArrayBuffer;
      let i = this.ownedIndex.get(ab);
      if (i === undefined) {
        i = this.owned.length;
        this.owned.push(ab);
        this.ownedIndex.set(ab, i);
        this.ownedBytes += ab.byteLength;
      }
      this.dv.setUint32(p, OWNED, true);
      this.dv.setUint32(p + 4, i, true);
      this.dv.setUint32(p + 8, g.data.byteOffset, true);
      this.dv.setUint32(p + 12, g.data.byteLength, true);
      p += 16;
    } else {
      this.dv.setUint32(p, g.data.byteLength, true);
      this.buf.set(g.data, p + 4);
      p += 4 + g.data.byteLength;
    }
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

  /** The owned groups' buffers of the packed groups taken last (transferred with them). */
  takeOwned(): ArrayBuffer[] {
    const out = this.owned;
    this.owned = [];
    this.ownedIndex.clear();
    this.ownedBytes = 0;
    return out;
  }
}

/** A write message's packed groups, read in order in the archive thread. */
export class PackReader {
  private p = 0;
  private readonly dv: DataView;
  constructor(private readonly pack: Uint8Array, private readonly owned: ArrayBuffer[] = []) {
    this.dv = new DataView(pack.buffer, pack.byteOffset, pack.byteLength);
  }

  /** The next group, appended with its index source. */
  append(w: WarcWriter): Promise<unknown> {
    const { pack, dv } = this;
    let p = this.p;
    const dataLen = dv.getUint32(p, true);
    let data: Uint8Array;
    if (dataLen === OWNED) {
      data = new Uint8Array(this.owned[dv.getUint32(p + 4, true)]!, dv.getUint32(p + 8, true), dv.getUint32(p + 12, true));
      p += 16;
    } else {
      data = pack.subarray(p + 4, p + 4 + dataLen);
      p += 4 + dataLen;
    }
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
