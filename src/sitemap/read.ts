/**
 * A fetched sitemap's body → parser: plain, or gzip (`.xml.gz`, recognised by its magic bytes
 * 1f 8b whatever the name or Content-Type says; a body sent with `Content-Encoding: gzip` arrives
 * here already decoded by the fetcher). Decompression is streamed and bounded: it stops as soon as
 * the parser has read the protocol's 50 MiB of uncompressed bytes (a gzip bomb costs at most that
 * much inflating, never the memory of its full output), and runs on libuv's thread pool, so the
 * event loop only sees the parser's chunks.
 */
import { createGunzip } from 'node:zlib';
import { SitemapParser, type SitemapEntry, type SitemapLimits, type SitemapSummary } from './parse.js';

/** Feed the parser this many bytes at a time (plain bodies): the event loop runs between chunks. */
const PLAIN_CHUNK = 256 * 1024;

export const isGzip = (b: Uint8Array): boolean => b.byteLength >= 2 && b[0] === 0x1f && b[1] === 0x8b;

export interface SitemapReadSummary extends Omit<SitemapSummary, 'fault'> {
  fault: SitemapSummary['fault'] | 'CRAWL_SITEMAP_GZIP';
  gzip: boolean;
}

export async function readSitemap(body: Uint8Array, onEntry: (e: SitemapEntry) => void, limits?: SitemapLimits): Promise<SitemapReadSummary> {
  const p = new SitemapParser(onEntry, limits);
  if (!isGzip(body)) {
    for (let o = 0; o < body.byteLength && !p.done; o += PLAIN_CHUNK) {
      p.write(body.subarray(o, o + PLAIN_CHUNK));
      if (o + PLAIN_CHUNK < body.byteLength) await new Promise<void>((r) => setImmediate(r));
    }
    return { ...p.end(), gzip: false };
  }
  const gz = createGunzip({ chunkSize: 64 * 1024 });
  let gzipFault = false;
  await new Promise<void>((resolve) => {
    let settled = false;
    const finish = (): void => {
      if (settled) return;
      settled = true;
      resolve();
    };
    gz.on('data', (chunk: Buffer) => {
      p.write(chunk);
      // The parser stopped (a cap or a fault): inflate no further.
      if (p.done) {
        gz.destroy();
        finish();
      }
    });
    gz.on('error', () => {
      gzipFault = !p.done;
      finish();
    });
    gz.on('end', finish);
    gz.on('close', finish);
    gz.end(body);
  });
  const s = p.end();
  return { ...s, fault: gzipFault && s.fault !== 'CRAWL_SITEMAP_TOO_LARGE' ? 'CRAWL_SITEMAP_GZIP' : s.fault, gzip: true };
}
