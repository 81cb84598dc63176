/**
 * Appends WARC record groups to size-rotated files. Encoding (digests + compression) is done by the
 * pure functions in warc-record.ts — in the caller's thread by writeExchange/writeRevisit, or in a
 * worker by the caller, who then hands the bytes to appendEncoded().
 *
 * Files: `<prefix>-<yyyyMMddHHmmssSSS>-<serial 5 digits>.warc.gz|.warc.zst|.warc`, each beginning
 * with its own warcinfo record. The time stamp is the writer's opening time, the same for every
 * file it rotates to, so `<prefix>-<stamp>-` names one writer's files (a resume's recovery touches
 * only the files of the writer its checkpoint recorded: src/state/recovery.ts). A new file is started when appending a group would take the current
 * one past maxFileBytes (a group larger than maxFileBytes still goes into a file of its own).
 *
 * Writes are batched: groups are buffered up to bufferBytes (default 1 MiB; the RAM bound) and
 * written with one writev. Offsets returned are final as soon as the call returns; bytes are on
 * disk after the returned promise of a flushing call, and durable after sync().
 *
 * Index: every response, revisit and `dns:` record gets a CDXJ line in the index beside its file
 * (cdxj-writer.ts: `<name>.cdxj.open` while the file is written, synced with it; sorted into
 * `<name>.cdxj` when the file is finished — in the background after a rotation, awaited by the next
 * sync() and by close()). Off with `cdxj: false`.
 */
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Decompressor } from 'zstd-napi';
import { CrawlError } from '../errors.js';
import { CdxjSidecar } from './cdxj/cdxj-writer.js';
import { cdxjLineFor, type CdxSource } from './cdxj/cdxj.js';
import { encodeDnsRecord, type DnsAnswerInput } from './dns-record.js';
import {
  compressRecord, encodeExchangeRecords, encodeRevisitRecords, fileExtension, warcinfoRecord,
  type EncodedGroup, type ExchangeInput, type RevisitInput, type WarcCompression,
} from './warc-record.js';
import { dictionaryFrame, dictionaryId, publishDictionary, slotDictionary, zstdFrameHeader } from './zstd-dict.js';
import { trainDictionary } from './zstd-train.js';

export interface WarcWriterOptions {
  dir: string;
  prefix?: string; // default 'drumcrawl'
  maxFileBytes?: number; // default 1 GiB (IIPC/Heritrix convention)
  compression?: WarcCompression; // default 'gzip'
  gzipLevel?: number; // default 1 (see EncodeOptions.gzipLevel)
  zstdLevel?: number; // default 3
  bufferBytes?: number; // default 1 MiB
  /** Extra warcinfo fields (operator, isPartOf, robots, http-header-user-agent, …). */
  info?: Record<string, string>;
  /** Clock for file names and warcinfo dates (tests). */
  now?: () => Date;
  /** Write a CDXJ index beside each file (default true). */
  cdxj?: boolean;
  /**
   * zstd: the shared dictionary slot (zstd-dict.ts newDictSlot), the same one the encoders in
   * other threads get through `encodeOptions`. A dictionary in it when the writer opens starts
   * every file; an empty slot with `zstdTrain` gets one trained from the first records.
   */
  zstdDict?: SharedArrayBuffer;
  /**
   * zstd with an empty slot: once `sampleBytes` of records (each cut to its first 64 KiB) have been
   * written, train a dictionary of `dictBytes` on them (zstd-train.ts), publish it in the slot and
   * start a new file with it. The records before are in files without a dictionary. false: no
   * training. @default false
   */
  zstdTrain?: false | { sampleBytes?: number; dictBytes?: number };
  /** Store the dictionary compressed in each file's dictionary frame. @default true */
  zstdDictCompressed?: boolean;
}

export interface WriteResult {
  file: string; // absolute path
  offset: number; // of the response/revisit record
  length: number; // of the response/revisit record (compressed bytes)
  recordId: string;
  payloadDigest: string;
}

/** CRLF CRLF after each record's block (uncompressed files). */
const PLAIN_TRAILER = 4;

function stamp(d: Date): string {
  return d.toISOString().replace(/[-:TZ.]/g, '');
}

export class WarcWriter {
  private fh: FileHandle | null = null;
  private file = '';
  private size = 0; // logical size, including buffered bytes
  private serial = 0;
  /** the opening time, in every file name of this writer */
  private runStamp = '';
  private warcinfoId = '';
  private infoSize = 0;
  private buf: Uint8Array[] = [];
  private bufBytes = 0;
  private chain: Promise<void> = Promise.resolve();
  private closed = false;
  /** the index of the current file (null: `cdxj: false`) */
  private cdx: CdxjSidecar | null = null;
  /** indexes of rotated-away files being sorted */
  private finishing = new Set<Promise<unknown>>();
  private finishError: unknown = null;
  private readonly opts: Required<Omit<WarcWriterOptions, 'info' | 'now' | 'zstdDict' | 'zstdTrain' | 'zstdDictCompressed'>> & Pick<WarcWriterOptions, 'info'> & { now: () => Date };
  /** zstd: the shared slot, the dictionary of the current file (null: none) and its ID (0: none) */
  private readonly slot: SharedArrayBuffer | undefined;
  private dict: Uint8Array | null = null;
  private dictId = 0;
  private readonly dictCompressed: boolean;
  /** zstd training: samples gathered so far (null: not training) */
  private sampler: { bytes: number; target: number; dictBytes: number; parts: Uint8Array[] } | null = null;
  private plainDecoder: Decompressor | null = null;
  /** Files finished (rotated away from) or current, in creation order. */
  readonly files: string[] = [];

  private constructor(o: WarcWriterOptions) {
    const maxFileBytes = o.maxFileBytes ?? 1 << 30;
    if (!Number.isFinite(maxFileBytes) || maxFileBytes <= 0) throw new CrawlError('CRAWL_STORE_BAD_OPTION', 'options.maxFileBytes must be a positive number');
    const compression = o.compression ?? 'gzip';
    if (!['gzip', 'zstd', 'none'].includes(compression)) throw new CrawlError('CRAWL_STORE_BAD_OPTION', `options.compression must be gzip, zstd or none, not ${compression}`);
    const int = (name: string, v: number | undefined, lo: number, hi: number) => {
      if (v !== undefined && !(Number.isInteger(v) && v >= lo && v <= hi)) {
        throw new CrawlError('CRAWL_STORE_BAD_OPTION', `options.${name} must be an integer in [${lo}, ${hi}]`);
      }
    };
    int('gzipLevel', o.gzipLevel, 0, 9);
    int('zstdLevel', o.zstdLevel, 1, 22);
    int('bufferBytes', o.bufferBytes, 0, 1 << 30);
    this.opts = {
      dir: path.resolve(o.dir),
      prefix: o.prefix ?? 'drumcrawl',
      maxFileBytes,
      compression,
      gzipLevel: o.gzipLevel ?? 1,
      zstdLevel: o.zstdLevel ?? 3,
      bufferBytes: o.bufferBytes ?? 1 << 20,
      info: o.info,
      now: o.now ?? (() => new Date()),
      cdxj: o.cdxj ?? true,
    };
    this.dictCompressed = o.zstdDictCompressed ?? true;
    this.slot = compression === 'zstd' ? o.zstdDict : undefined;
    if (this.slot !== undefined) {
      const d = slotDictionary(this.slot);
      if (d !== null) {
        this.dict = d;
        this.dictId = dictionaryId(d);
      } else if (o.zstdTrain !== undefined && o.zstdTrain !== false) {
        const target = o.zstdTrain.sampleBytes ?? 1 << 20;
        const dictBytes = o.zstdTrain.dictBytes ?? 65536;
        int('zstdTrain.sampleBytes', target, 1024, 1 << 30);
        int('zstdTrain.dictBytes', dictBytes, 256, this.slot.byteLength - 8 - 1024);
        this.sampler = { bytes: 0, target, dictBytes, parts: [] };
      }
    }
  }

  static async open(opts: WarcWriterOptions): Promise<WarcWriter> {
    const w = new WarcWriter(opts);
    await mkdir(w.opts.dir, { recursive: true });
    await w.startFile();
    return w;
  }

  /** Options for encodeExchangeRecords/encodeRevisitRecords in a worker, matching this writer. */
  get encodeOptions(): { compression: WarcCompression; gzipLevel: number; zstdLevel: number; zstdDict?: SharedArrayBuffer } {
    const o = { compression: this.opts.compression, gzipLevel: this.opts.gzipLevel, zstdLevel: this.opts.zstdLevel };
    return this.slot === undefined ? o : { ...o, zstdDict: this.slot };
  }

  /** The Dictionary_ID of the current file's dictionary (0: none). */
  get dictionaryId(): number {
    return this.dictId;
  }

  private async startFile(): Promise<void> {
    const now = this.opts.now();
    if (this.runStamp === '') this.runStamp = stamp(now);
    this.serial++;
    const name = `${this.opts.prefix}-${this.runStamp}-${String(this.serial).padStart(5, '0')}${fileExtension(this.opts.compression)}`;
    this.file = path.join(this.opts.dir, name);
    // 'wx': never clobber an existing file (a resumed crawl starts a new serial/timestamp)
    this.fh = await open(this.file, 'wx');
    this.files.push(this.file);
    if (this.opts.cdxj) this.cdx = await CdxjSidecar.create(this.file);
    this.size = 0;
    // warc-zstd: the dictionary frame first, so that the file reads alone
    if (this.dict !== null) this.push(dictionaryFrame(this.dict, this.dictCompressed));
    const info = warcinfoRecord({ filename: name, date: now, info: this.opts.info });
    this.warcinfoId = info.recordId;
    this.push(compressRecord(info.record, this.encodeOptions));
    this.infoSize = this.size; // a file holding only its warcinfo takes any group, however large
  }

  private push(b: Uint8Array): void {
    this.buf.push(b);
    this.bufBytes += b.length;
    this.size += b.length;
  }

  private async flushBuffer(): Promise<void> {
    if (this.bufBytes === 0 || this.fh === null) return;
    const bufs = this.buf;
    this.buf = [];
    this.bufBytes = 0;
    const fh = this.fh;
    this.chain = this.chain.then(async () => {
      let chunks = bufs;
      while (chunks.length > 0) {
        const { bytesWritten } = await fh.writev(chunks);
        // writev may write partially: drop what went out and retry the rest
        let left = bytesWritten;
        const rest: Uint8Array[] = [];
        for (const c of chunks) {
          if (left >= c.length) left -= c.length;
          else { rest.push(c.subarray(left)); left = 0; }
        }
        chunks = rest;
      }
    });
    await this.chain;
  }

  /**
   * Append a pre-encoded group (from encodeExchangeRecords/encodeRevisitRecords, e.g. run in a
   * worker with `writer.encodeOptions`). Rotates first if needed.
   */
  appendEncoded(g: EncodedGroup, index?: CdxSource): Promise<WriteResult> {
    return this.serial_(() => this.append(g, index));
  }

  /** Run file operations one at a time (rotation must not interleave with appends). */
  private queue: Promise<unknown> = Promise.resolve();
  private serial_<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.queue.then(fn);
    this.queue = p.catch(() => undefined);
    return p;
  }

  private needsRotation(bytes: number): boolean {
    return this.size + bytes > this.opts.maxFileBytes && this.size > this.infoSize;
  }

  private async append(g: EncodedGroup, index?: CdxSource): Promise<WriteResult> {
    if (this.closed) throw new CrawlError('CRAWL_STORE_CLOSED', 'WarcWriter is closed');
    if (this.slot !== undefined) g = this.matchDictionary(g);
    if (this.needsRotation(g.data.length)) await this.rotate();
    const base = this.size;
    this.push(g.data);
    const main = g.records[0]!;
    const res: WriteResult = { file: this.file, offset: base + main.offset, length: main.length, recordId: g.recordId, payloadDigest: g.payloadDigest };
    if (index !== undefined && this.cdx !== null) {
      // uncompressed: the length without the record's CRLF CRLF trailer, as warcio and pywb write it
      const len = this.opts.compression === 'none' ? res.length - PLAIN_TRAILER : res.length;
      this.cdx.add(cdxjLineFor({ payloadDigest: g.payloadDigest, ...index }, path.basename(this.file), res.offset, len));
    }
    if (this.bufBytes >= this.opts.bufferBytes) await this.flushBuffer();
    if (this.sampler !== null) await this.sample(g);
    return res;
  }

  /**
   * zstd with a slot: a group whose frames name another dictionary than the current file's
   * (encoded in a worker before the slot's dictionary was published) is decompressed and
   * compressed again with the file's; one naming a dictionary the writer does not have is refused.
   */
  private matchDictionary(g: EncodedGroup): EncodedGroup {
    const id = zstdFrameHeader(g.data)?.dictId ?? 0;
    if (id === this.dictId) return g;
    if (id !== 0) throw new CrawlError('CRAWL_STORE_DICT', `a record group was compressed with zstd dictionary ${id}, which this WARC writer does not have (its dictionary: ${this.dictId})`);
    this.plainDecoder ??= new Decompressor();
    const parts: Uint8Array[] = [];
    for (const r of g.records) parts.push(compressRecord(this.plainDecoder.decompress(g.data.subarray(r.offset, r.offset + r.length)), this.encodeOptions));
    let total = 0;
    for (const p of parts) total += p.length;
    const data = new Uint8Array(total);
    const records: EncodedGroup['records'] = [];
    let o = 0;
    for (let i = 0; i < parts.length; i++) {
      data.set(parts[i]!, o);
      records.push({ ...g.records[i]!, offset: o, length: parts[i]!.length });
      o += parts[i]!.length;
    }
    return { ...g, data, records };
  }

  /**
   * Training: keep the group's records (decompressed, each cut to 64 KiB) until the target is
   * reached, then train, start a file with the dictionary and publish it to the encoders.
   */
  private async sample(g: EncodedGroup): Promise<void> {
    const s = this.sampler!;
    // (only while the files have no dictionary: the sampler ends when one is trained)
    const dec = (this.plainDecoder ??= new Decompressor());
    for (const r of g.records) {
      const rec = dec.decompress(g.data.subarray(r.offset, r.offset + r.length));
      const part = rec.subarray(0, Math.min(rec.length, 65536, s.target - s.bytes));
      s.parts.push(Uint8Array.from(part));
      s.bytes += part.length;
      if (s.bytes >= s.target) break;
    }
    if (s.bytes < s.target) return;
    this.sampler = null;
    const samples = new Uint8Array(s.bytes);
    let o = 0;
    for (const p of s.parts) { samples.set(p, o); o += p.length; }
    const dict = trainDictionary(samples, { dictBytes: s.dictBytes });
    // Published first (this writer's own records, the new file's warcinfo included, are encoded
    // with it from here on; nothing else is appended before the rotation, which runs inside this
    // serialized append), then the next file starts with it. Groups the workers encoded before
    // they saw it are re-encoded here (matchDictionary).
    publishDictionary(this.slot!, dict);
    this.dict = dict;
    this.dictId = dictionaryId(dict);
    await this.rotate();
  }

  private async rotate(): Promise<void> {
    await this.flushBuffer();
    await this.fh!.sync();
    await this.fh!.close();
    this.fh = null;
    this.finishIndex();
    await this.startFile();
  }

  /** Sort the finished file's index in the background (awaited by sync() and close()). */
  private finishIndex(): void {
    const cdx = this.cdx;
    this.cdx = null;
    if (cdx === null) return;
    const p: Promise<unknown> = cdx.finish().catch((e: unknown) => { this.finishError ??= e; });
    this.finishing.add(p);
    void p.then(() => this.finishing.delete(p));
  }

  private async awaitFinishing(): Promise<void> {
    while (this.finishing.size > 0) await Promise.all([...this.finishing]);
    if (this.finishError !== null) {
      const e = this.finishError;
      this.finishError = null;
      throw new CrawlError('CRAWL_STORE_INDEX', `cannot write the CDXJ index: ${(e as Error).message}`, { cause: e });
    }
  }

  /** request + response (+ metadata with outlinks) for one fetch. */
  writeExchange(x: Omit<ExchangeInput, 'warcinfoId'>): Promise<WriteResult> {
    return this.encodeAndAppend((id) => encodeExchangeRecords({ ...x, warcinfoId: id }, this.encodeOptions),
      { url: x.url, date: x.date, kind: 'response', responseHead: x.responseHead });
  }

  /** revisit (identical payload digest) + request. */
  writeRevisit(x: Omit<RevisitInput, 'warcinfoId'>): Promise<WriteResult> {
    return this.encodeAndAppend((id) => encodeRevisitRecords({ ...x, warcinfoId: id }, this.encodeOptions),
      { url: x.url, date: x.date, kind: 'revisit', responseHead: x.responseHead });
  }

  /** A DNS answer as a `dns:` response record (dns-record.ts). */
  writeDns(x: Omit<DnsAnswerInput, 'warcinfoId'>): Promise<WriteResult> {
    return this.encodeAndAppend((id) => encodeDnsRecord({ ...x, warcinfoId: id }, this.encodeOptions),
      { url: `dns:${x.host}`, date: x.date, kind: 'other', responseHead: null, mime: 'text/dns' });
  }

  /**
   * Records carry WARC-Warcinfo-ID of the file they land in: when the group triggers a rotation it
   * is encoded again for the new file (once per file, so the cost is negligible).
   */
  private encodeAndAppend(encode: (warcinfoId: string) => EncodedGroup, index: CdxSource): Promise<WriteResult> {
    return this.serial_(async () => {
      if (this.closed) throw new CrawlError('CRAWL_STORE_CLOSED', 'WarcWriter is closed');
      let g = encode(this.warcinfoId);
      if (this.needsRotation(g.data.length)) {
        await this.rotate();
        g = encode(this.warcinfoId);
      }
      return this.append(g, index);
    });
  }

  /** Write buffered bytes and fsync the current file (checkpoints). */
  sync(): Promise<void> {
    return this.serial_(() => this.syncNow());
  }

  private async syncNow(): Promise<void> {
    await this.flushBuffer();
    await this.chain;
    if (this.fh !== null) await this.fh.sync();
    // the index lines of every record synced above are durable too (a resume trusts them up to
    // the checkpoint's offset: cdxj-recover.ts), and the indexes of rotated-away files are done
    await this.cdx?.sync();
    await this.awaitFinishing();
  }

  /** Current file and its logical end (after sync(), everything before it is durable). */
  position(): { file: string; offset: number } {
    return { file: this.file, offset: this.size };
  }

  close(): Promise<void> {
    return this.serial_(async () => {
      if (this.closed) return;
      await this.syncNow();
      this.closed = true;
      await this.fh?.close();
      this.fh = null;
      this.finishIndex();
      await this.awaitFinishing();
    });
  }
}
