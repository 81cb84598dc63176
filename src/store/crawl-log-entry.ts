/**
 * One crawl-log line's fields, as both line formats write them (crawl-log.ts: drumcrawl's TSV;
 * crawl-log-heritrix.ts: Heritrix's crawl.log).
 */
export interface CrawlLogEntry {
  time: Date; // when the fetch finished (or the URL was dropped)
  status: number | null; // HTTP status, null when there was no response (DNS, connect, timeout…)
  bytes: number; // payload bytes as transferred
  durationMs: number;
  url: string;
  hops: number | null; // links followed from a seed (0 = seed); null for robots.txt (written '-')
  digest: string | null; // payload digest 'sha1:…'
  outcome: string; // 'ok' or a stable CRAWL_* code
  mime?: string | null; // Content-Type as received, without parameters; null/absent = none
  via?: string | null; // the URL this one was found on; null/absent = a seed or not known
  path?: string | null; // Heritrix hop path from the seed (L link, R redirect, P robots.txt)
}
