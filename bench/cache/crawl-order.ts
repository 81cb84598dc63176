/**
 * The stream of parsed links in crawl order on a simweb web, without running the crawler: a
 * breadth-first walk of the simweb generator's link graph in which every active host gets one page
 * per round (per-host FIFO queues served round-robin). That is the order a polite crawler produces
 * — each host is revisited only after every other active host had its turn, i.e. τ_h·S pages later
 * (thesis §V.1: duplicate links cluster within a site, so the hit rate depends on E vs τ_h·l·S).
 * Pages are the generator's own (`WebGraph.pageLinks`), links in document order, duplicates
 * included; non-HTML pages have none. Robots rules are not applied (this is a link stream, not a
 * politeness test). Bounded by `maxPages`; the seen-set is a Set of `host path` strings, O(URLs
 * discovered) — fine for the ≤ a few million URLs a bench run discovers.
 */
import { WebGraph, resolveParams, type SimwebPreset } from '../../src/simweb/index.js';
import { fingerprintInto } from '../../src/url/index.js';

export interface CrawlOrderStream {
  /** Keys of all links, (hi, lo) pairs in crawl order. */
  keys: Uint32Array;
  links: number;
  pages: number;
  /** Distinct URLs among the links. */
  uniqueLinks: number;
  /** Mean number of hosts with queued pages over the walk (≈ τ_h·S, pages between visits of a host). */
  meanActiveHosts: number;
  /** Links whose target is already among the earlier links of the same page. */
  intraPageDuplicates: number;
}

export function crawlOrderStream(opts: { preset: SimwebPreset; seed: number; maxPages: number; params?: Record<string, unknown> }): CrawlOrderStream {
  const web = new WebGraph(resolveParams(opts.preset, opts.params as never), opts.seed, 80);
  const queues = new Map<string, { q: number[]; head: number }>();
  const ring: string[] = [];
  let head = 0;
  const seen = new Set<string>();
  const enqueue = (host: string, path: string): void => {
    const key = host + ' ' + path;
    if (seen.has(key)) return;
    seen.add(key);
    if (!path.startsWith('/p/') || path.includes('?')) return; // traps and session ids: not pages
    const n = Number(path.slice(3));
    let q = queues.get(host);
    if (q === undefined) {
      q = { q: [], head: 0 };
      queues.set(host, q);
      ring.push(host);
    }
    q.q.push(n);
  };
  for (const s of web.seeds()) {
    const u = new URL(s);
    enqueue(u.hostname, u.pathname);
  }
  let cap = 1 << 22;
  let keys = new Uint32Array(cap);
  let links = 0, pages = 0, activeSum = 0, intra = 0;
  const pageSet = new Set<string>();
  while (pages < opts.maxPages && head < ring.length) {
    const host = ring[head++]!;
    const q = queues.get(host)!;
    const n = q.q[q.head++]!;
    if (q.head < q.q.length) ring.push(host);
    else queues.delete(host);
    if (head > 1 << 20) {
      ring.splice(0, head);
      head = 0;
    }
    const info = web.hostInfo(host);
    if (info === null || info.farm >= 0 || !web.hasPage(info, n)) continue;
    pages++;
    activeSum += ring.length - head;
    const { links: ls } = web.pageLinks(info, n);
    pageSet.clear();
    for (const l of ls) {
      const url = `http://${l.host}${l.path}`;
      if (pageSet.has(url)) intra++;
      else pageSet.add(url);
      if (2 * links + 2 > cap) {
        cap *= 2;
        const nk = new Uint32Array(cap);
        nk.set(keys);
        keys = nk;
      }
      fingerprintInto(url, keys, 2 * links);
      links++;
      enqueue(l.host, l.path);
    }
  }
  return {
    keys: keys.subarray(0, 2 * links), links, pages, uniqueLinks: seen.size, meanActiveHosts: activeSum / Math.max(1, pages),
    intraPageDuplicates: intra,
  };
}
