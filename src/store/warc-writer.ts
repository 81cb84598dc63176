/**
 * Appends WARC record groups to size-rotated files. Encoding (digests + compression) is done by the
 * pure functions in warc-record.ts — in the caller's thread by writeExchange/writeRevisit, or in a
 * worker by the caller, who then hands the bytes to appendEncoded().
 *
 * Files: `<prefix>-<yyyyMMddHHmmssSSS>-<serial 5 digits>.warc.gz|.warc.zst|.warc`, each beginning
 * with its own warcinfo record. The time stamp is the writer's opening time, the same for every
 * file it rotates to, so `<prefix>-<stamp>-` names one writer's files (a resume's recovery touches
 * only the files of the writer its checkpoint recorded: src/crawl/recovery.ts). A new file is started when appending a group would take the current
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
import { CrawlError } from '../errors.js';
import { CdxjSidecar } from './cdxj-writer.js';
import { cdxjLineFor, type CdxSource } from './cdxj.js';
import { encodeDnsRecord, type DnsAnswerInput } from './dns-record.js';
import {
  compressRecord, encodeExchangeRecords, encodeRevisitRecords, fileExtension, warcinfoRecord,
  type EncodedGroup, type ExchangeInput, type RevisitInput, type WarcCompression,
} from './warc-record.js';

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
  private readonly opts: Required<Omit<WarcWriterOptions, 'info' | 'now'>> & Pick<WarcWriterOptions, 'info'> & { now: () => Date };
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
  }

  static async open(opts: WarcWriterOptions): Promise<WarcWriter> {
    const w = new WarcWriter(opts);
    await mkdir(w.opts.dir, { recursive: true });
    await w.startFile();
    return w;
  }

  /** Options for encodeExchangeRecords/encodeRevisitRecords in a worker, matching this writer. */
  get encodeOptions(): { compression: WarcCompression; gzipLevel: number; zstdLevel: number } {
    return { compression: this.opts.compression, gzipLevel: this.opts.gzipLevel, zstdLevel: this.opts.zstdLevel };
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
    return res;
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
