/**
 * What the crawler archives besides its page fetches (docs/output-format.md):
 * - every robots.txt request that got an HTTP answer (each redirect hop too, any status), as the
 *   request + response records of any capture, indexed in the CDXJ like a page;
 * - with `warcDns` (the default), every DNS answer a server gave, as a `dns:<host>` response
 *   record the way Heritrix writes it (src/store/dns-record.ts).
 * Neither takes part in ContentSeen dedup: robots.txt is fetched once per host per day at most,
 * and a DNS answer is not a page.
 */
import type { ArchiveThread } from './archive-thread.js';
import { isHttpResponse, type FetchResult } from '../../fetch/index.js';
import type { DnsCacheOptions } from '../../dns/index.js';

/** A response record's WARC-Truncated value for a fetch result (false: the whole body). */
function truncation(r: FetchResult): false | 'length' | 'time' | 'disconnect' | 'unspecified' {
  return r.truncated ? r.truncatedReason ?? 'unspecified' : false;
}

/** Archive the HTTP answers of one robots.txt fetch (its hops, in order). */
export async function archiveRobots(warc: ArchiveThread, results: readonly FetchResult[]): Promise<void> {
  for (const r of results) {
    if (!isHttpResponse(r)) continue;
    await warc.writeExchange({
      url: r.url, ip: r.ip, date: new Date(r.startedAt), requestHead: r.requestHead, responseHead: r.responseHead!, body: r.body,
      truncated: truncation(r),
    });
  }
}

/**
 * The DnsCache `onAnswer` hook that writes `dns:` records. A write that fails is reported to
 * `onError` (the crawler stops with a checkpoint); one refused because the writer has closed (an
 * answer arriving during shutdown) is not an error. While `open()` is false (from the crawl's
 * final checkpoint on) answers are not archived: the WARC then ends where that checkpoint says,
 * and the next run resolves those hosts again and archives its own answers.
 */
export function dnsArchiver(warc: ArchiveThread, onError: (e: unknown) => void, open: () => boolean = () => true): NonNullable<DnsCacheOptions['onAnswer']> {
  return (a) => {
    if (!open()) return;
    warc.writeDns(a).catch((e: unknown) => {
      if ((e as { code?: string }).code !== 'CRAWL_STORE_CLOSED') onError(e);
    });
  };
}
