/**
 * The crawl log: one tab-separated line per fetch attempt (Heritrix's crawl.log, as TSV so that
 * cut/awk/sort and any CSV reader take it without quoting rules). Columns are documented in
 * docs/output-format.md:
 *
 *   time  status  bytes  durationMs  url  hops  digest  outcome  mime  via  path
 *
 * or, with `format: 'heritrix'`, Heritrix's own 12-field line (crawl-log-heritrix.ts).
 *
 * `time` is when the fetch finished, as in Heritrix, whose crawl.log starts each line with the
 * completion time (the start is time − durationMs). Three kinds of lines: page fetches (`write`),
 * robots.txt fetches (`writeRobots`: hops `-`, outcome `ok` or a CRAWL_ROBOTS_* code) and URLs the
 * crawl gave up on without fetching them (`writeDropped`: status `-`, bytes 0, outcome
 * `dropped:<reason>`, the same keys as the outcome counters).
 *
 * Lines are buffered (RAM bound: bufferBytes, default 64 KiB) and written in order; flush() writes
 * them, close() flushes and closes. Fields cannot contain TAB/CR/LF (replaced by a space) so that
 * one line is always one record.
 */
import type { FileHandle } from 'node:fs/promises';
import { openOwnFile } from '../disk/safe-fs.js';
import { CrawlError } from '../errors.js';
import { formatHeritrixLine } from './crawl-log-heritrix.js';
import type { CrawlLogEntry } from './crawl-log-entry.js';

export type { CrawlLogEntry } from './crawl-log-entry.js';

export type CrawlLogFormat = 'drumcrawl' | 'heritrix';

export const CRAWL_LOG_COLUMNS = ['time', 'status', 'bytes', 'durationMs', 'url', 'hops', 'digest', 'outcome', 'mime', 'via', 'path'] as const;

/** The media type of a Content-Type value (no parameters, lower case), or null. */
export function mediaType(contentType: string | null | undefined): string | null {
  if (contentType === null || contentType === undefined) return null;
  const t = contentType.split(';', 1)[0]!.trim().toLowerCase();
  return t === '' ? null : t;
}

const dash = (s: string | null | undefined): string => (s === null || s === undefined || s === '' ? '-' : clean(s));

function clean(s: string): string {
  return /[\t\r\n]/.test(s) ? s.replace(/[\t\r\n]/g, ' ') : s;
}

/** One crawl-log line (with trailing LF). */
export function formatCrawlLogLine(e: CrawlLogEntry): string {
  return `${e.time.toISOString()}\t${e.status ?? '-'}\t${e.bytes}\t${Math.round(e.durationMs)}\t${clean(e.url)}\t${e.hops ?? '-'}\t${e.digest === null ? '-' : clean(e.digest)}\t${clean(e.outcome)}` +
    `\t${dash(mediaType(e.mime))}\t${dash(e.via)}\t${dash(e.path)}\n`;
}

/**
 * Parse one line back (tests, tools). Lines of 8 fields (written before the mime, via and path
 * columns existed: a resumed crawl appends to the same file) read with those three null.
 */
export function parseCrawlLogLine(line: string): CrawlLogEntry {
  const f = line.replace(/\n$/, '').split('\t');
  if (f.length !== CRAWL_LOG_COLUMNS.length && f.length !== 8) {
    throw new CrawlError('CRAWL_STORE_BAD_LOG_LINE', `crawl log line has ${f.length} fields, expected ${CRAWL_LOG_COLUMNS.length}`);
  }
  const opt = (v: string | undefined): string | null => (v === undefined || v === '-' ? null : v);
  return {
    time: new Date(f[0]!), status: f[1] === '-' ? null : Number(f[1]), bytes: Number(f[2]), durationMs: Number(f[3]),
    url: f[4]!, hops: f[5] === '-' ? null : Number(f[5]), digest: f[6] === '-' ? null : f[6]!, outcome: f[7]!,
    mime: opt(f[8]), via: opt(f[9]), path: opt(f[10]),
  };
}

export class CrawlLog {
  private lines: string[] = [];
  private pending = 0;
  private chain: Promise<void> = Promise.resolve();
  private closed = false;

  private readonly format: (e: CrawlLogEntry) => string;

  private constructor(private readonly fh: FileHandle, private readonly bufferBytes: number, format: CrawlLogFormat) {
    this.format = format === 'heritrix' ? formatHeritrixLine : formatCrawlLogLine;
  }

  /** Opens for append (a resumed crawl continues the same log). `format` default 'drumcrawl'. */
  static async open(path: string, opts?: { bufferBytes?: number; format?: CrawlLogFormat }): Promise<CrawlLog> {
    return new CrawlLog(await openOwnFile(path, 'a'), opts?.bufferBytes ?? 64 * 1024, opts?.format ?? 'drumcrawl');
  }

  /** Bytes of lines not yet handed to the file (≤ bufferBytes + one line). */
  get bufferedBytes(): number {
    return this.pending;
  }

  write(e: CrawlLogEntry): void {
    if (this.closed) throw new CrawlError('CRAWL_STORE_CLOSED', 'CrawlLog is closed');
    const line = this.format(e);
    this.lines.push(line);
    this.pending += line.length;
    if (this.pending >= this.bufferBytes) void this.flush().catch(() => undefined); // errors resurface on the next flush()/close()
  }

  /** A robots.txt fetch (RFC 9309): `url` is the host's /robots.txt, `outcome` 'ok' or a CRAWL_ROBOTS_* code. */
  writeRobots(e: { time: Date; status: number | null; bytes: number; durationMs: number; url: string; outcome: string; mime?: string | null; digest?: string | null }): void {
    if (this.closed) return; // see writeDropped
    // Heritrix's hop type for a prerequisite (robots.txt, DNS) is P.
    this.write({ ...e, hops: null, digest: e.digest ?? null, path: 'P' });
  }

  /**
   * A URL the crawl gave up on without fetching it (disallowed by robots.txt, its host failed to
   * resolve or kept failing, too many attempts): one line with outcome `dropped:<reason>`.
   */
  writeDropped(e: { time: Date; url: string; hops: number; reason: string; via?: string | null; path?: string | null }): void {
    // The crawler closes the log before its DRUMs and frontier, whose last merge may still admit
    // (and so drop) URLs: those late reports are not logged rather than failing the shutdown.
    if (this.closed) return;
    this.write({ time: e.time, status: null, bytes: 0, durationMs: 0, url: e.url, hops: e.hops, digest: null, outcome: `dropped:${e.reason}`, via: e.via, path: e.path });
  }

  /** One page's dropped links: writeDropped's lines as one string, the time formatted once (~6 → 1–2 µs a line). */
  writeDroppedLinks(time: Date, hops: number, links: readonly { url: string; reason: string }[]): void {
    if (this.closed || links.length === 0) return; // see writeDropped
    if (this.format !== formatCrawlLogLine) return void links.forEach((l) => this.writeDropped({ time, url: l.url, hops, reason: l.reason }));
    const head = `${time.toISOString()}\t-\t0\t0\t`;
    const out = links.map((l) => `${head}${clean(l.url)}\t${hops}\t-\tdropped:${clean(l.reason)}\t-\t-\t-\n`).join('');
    this.lines.push(out);
    this.pending += out.length;
    if (this.pending >= this.bufferBytes) void this.flush().catch(() => undefined); // as write()
  }

  /** Write buffered lines (in order). */
  flush(): Promise<void> {
    if (this.lines.length > 0) {
      const data = this.lines.join('');
      this.lines = [];
      this.pending = 0;
      this.chain = this.chain.then(() => this.fh.appendFile(data).catch(writeFailed));
    }
    return this.chain;
  }

  /** flush + fsync (checkpoints). */
  async sync(): Promise<void> {
    await this.flush();
    await this.fh.sync().catch(writeFailed);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.flush();
    this.closed = true;
    await this.fh.close();
  }
}

/** A file-system error (ENOSPC, EIO…) of the crawl log, under the code the WARC writer's carry too. */
function writeFailed(e: unknown): never {
  throw new CrawlError('CRAWL_STORE_WRITE', `cannot write the crawl log: ${(e as Error).message}`);
}
