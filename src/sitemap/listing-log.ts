/**
 * sitemaps.log (in the output directory, beside crawl.log): one tab-separated line per entry read
 * from a fetched sitemap, and one per sitemap whose parse stopped early:
 *
 *   time  sitemap  loc  lastmod  outcome
 *
 * `loc` is the entry as listed (`-` on a sitemap's own line); `lastmod` its `<lastmod>` as written
 * (W3C Datetime) or `-`; `outcome` is `queued` (handed to URLseen, which may still find it seen),
 * `sitemap` (a nested sitemap of an index, queued), or the CRAWL_* code that refused it or stopped
 * the parse (docs/output-format.md). Buffered like the crawl log (bufferBytes, 64 KiB).
 */
import { open, type FileHandle } from 'node:fs/promises';

const clean = (s: string): string => (/[\t\r\n]/.test(s) ? s.replace(/[\t\r\n]/g, ' ') : s);

export class SitemapListingLog {
  private lines: string[] = [];
  private pending = 0;
  private chain: Promise<void> = Promise.resolve();
  private closed = false;

  private constructor(private readonly fh: FileHandle, private readonly bufferBytes: number) {}

  static async open(path: string, opts?: { bufferBytes?: number }): Promise<SitemapListingLog> {
    return new SitemapListingLog(await open(path, 'a'), opts?.bufferBytes ?? 64 * 1024);
  }

  write(time: Date, sitemap: string, loc: string | null, lastmod: string | null, outcome: string): void {
    if (this.closed) return;
    const line = `${time.toISOString()}\t${clean(sitemap)}\t${loc === null ? '-' : clean(loc)}\t${lastmod === null || lastmod === '' ? '-' : clean(lastmod)}\t${outcome}\n`;
    this.lines.push(line);
    this.pending += line.length;
    if (this.pending >= this.bufferBytes) void this.flush().catch(() => undefined);
  }

  flush(): Promise<void> {
    if (this.lines.length > 0) {
      const data = this.lines.join('');
      this.lines = [];
      this.pending = 0;
      this.chain = this.chain.then(() => this.fh.appendFile(data));
    }
    return this.chain;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.flush();
    this.closed = true;
    await this.fh.close();
  }
}
