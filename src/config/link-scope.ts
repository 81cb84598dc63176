/**
 * Whether a discovered URL may enter URLseen: the one admission filter for links parsed from pages
 * (parse-worker.ts) and URLs listed in sitemaps (src/sitemap/crawl.ts). A refused URL gets the
 * stable code the crawl log records (`dropped:<code>`, docs/output-format.md), judged in this order:
 *   CRAWL_SCOPE_OUT — outside --scope (the seeds' hosts for `host`, their PLDs for `pld`);
 *   CRAWL_SCOPE_EXCLUDED — matches an --exclude regex, or none of the --include ones;
 *   CRAWL_TRAP_URL  — a crawler-trap heuristic (src/url/traps.ts: repeated segments, path depth,
 *                     query parameters, length).
 * Scope first: a link the crawl would not follow anyway is not a trap of this crawl's, and a trap
 * verdict in the crawl log is then always about a URL in scope.
 */
import { canonicalizeUrl, hostOf, pldOrHost, trapCheck } from '../url/index.js';
import type { CrawlScope } from './config.js';

export type LinkDropCode = 'CRAWL_TRAP_URL' | 'CRAWL_SCOPE_OUT' | 'CRAWL_SCOPE_EXCLUDED';
/** The codes by number, as the parse worker's link table carries them (links-codec.ts DroppedLinks). */
export const DROP_CODES: readonly LinkDropCode[] = ['CRAWL_TRAP_URL', 'CRAWL_SCOPE_OUT', 'CRAWL_SCOPE_EXCLUDED'];

export interface LinkScopeInit {
  scope: CrawlScope;
  scopeHosts: readonly string[];
  scopePlds: readonly string[];
  include: readonly string[];
  exclude: readonly string[];
}

export class LinkScope {
  private readonly scope: CrawlScope;
  private readonly hosts: Set<string>;
  private readonly plds: Set<string>;
  private readonly include: RegExp[];
  private readonly exclude: RegExp[];

  constructor(o: LinkScopeInit) {
    this.scope = o.scope;
    this.hosts = new Set(o.scopeHosts);
    this.plds = new Set(o.scopePlds);
    this.include = o.include.map((s) => new RegExp(s));
    this.exclude = o.exclude.map((s) => new RegExp(s));
  }

  /** Scope and include/exclude only (the worker runs the trap check after it, on links in scope). */
  scopeCode(url: string, host: string): LinkDropCode | null {
    if (this.scope === 'host' && !this.hosts.has(host)) return 'CRAWL_SCOPE_OUT';
    if (this.scope === 'pld' && !this.plds.has(pldOrHost(host))) return 'CRAWL_SCOPE_OUT';
    for (const re of this.exclude) if (re.test(url)) return 'CRAWL_SCOPE_EXCLUDED';
    if (this.include.length > 0 && !this.include.some((re) => re.test(url))) return 'CRAWL_SCOPE_EXCLUDED';
    return null;
  }

  /** The code that refuses canonical `url` (on `host`), or null when it may enter URLseen. */
  check(url: string, host: string): LinkDropCode | null {
    const code = this.scopeCode(url, host);
    if (code !== null) return code;
    return trapCheck(url) !== null ? 'CRAWL_TRAP_URL' : null;
  }
}

/** The seeds' hosts and PLDs: what --scope host / pld keeps to (stored in the checkpoint, so a resume keeps them). */
export function scopeAnchors(seeds: readonly string[]): { hosts: string[]; plds: string[] } {
  const hosts = new Set<string>();
  const plds = new Set<string>();
  for (const s of seeds) {
    const c = canonicalizeUrl(s);
    if (c === null) continue;
    const h = hostOf(c);
    hosts.add(h);
    plds.add(pldOrHost(h));
  }
  return { hosts: [...hosts], plds: [...plds] };
}
