/**
 * Sitemaps of the simulated web (sitemaps.org protocol 0.9), deterministic from the seed.
 *
 * A share `sitemapShare` of the ordinary hosts (robots 'allow-all' or 'rules', behaviour 'normal',
 * DNS 'ok', no trap, not a farm) has sitemaps. Such a host:
 *   - names `/sitemap_index.xml` in a `Sitemap:` line of its robots.txt;
 *   - serves that index, listing `/sm/pages-0.xml` (urlset), `/sm/pages-1.xml.gz` (a gzip file,
 *     `Content-Type: application/gzip`, no Content-Encoding), `/sm/nested.xml` (an index inside the
 *     index, listing the text sitemap `/sm/pages-2.txt`), and a sitemap on another host (which the
 *     protocol forbids an index to list);
 *   - has `sitemapHiddenPages` pages `/hidden/<k>` that no page links to: only the sitemaps list
 *     them (k mod 3 says which one), each with a `<lastmod>` in the XML ones; pages-0 also lists a
 *     URL on another host (refused by the protocol's location rule) and the host's /p/0;
 *   - serves `/sitemap.xml` (found only by `--sitemaps robots+root`), listing 3 more hidden pages
 *     `/hidden/<sitemapHiddenPages + j>`;
 *   - if `sitemapBigEntries` > 0, its index also lists `/sm/big.xml`, a urlset of that many
 *     entries `/big/<k>` (pages that do not exist: 404), for the protocol's 50,000-entry cap.
 * Hidden pages are small HTML pages with one link back to /p/0.
 */
import { gzipSync } from 'node:zlib';
import { h3, unit } from './hash.js';
import type { WebParams } from './params.js';
import type { HostInfo } from './host-model.js';

const S_SITEMAP = 0x2001;

/** Does `info` have sitemaps? */
export function hasSitemaps(seed: number, params: Readonly<WebParams>, info: HostInfo): boolean {
  if (params.sitemapShare <= 0 || info.farm >= 0 || info.pldIndex < 0) return false;
  if (info.robots !== 'allow-all' && info.robots !== 'rules') return false;
  if (info.behaviour !== 'normal' || info.dns !== 'ok' || info.trap !== null) return false;
  return unit(h3(seed ^ S_SITEMAP, info.pldIndex, info.hostIndex)) < params.sitemapShare;
}

/** The `Sitemap:` line(s) its robots.txt gains ('' for a host without sitemaps). */
export function robotsSitemapLines(origin: string): string {
  return `\n# sitemaps (sitemaps.org)\nSitemap: ${origin}/sitemap_index.xml\n`;
}

/** Hidden page numbers listed by sitemap `part` (0, 1, 2) of a host; 3 = the root /sitemap.xml. */
export function hiddenPagesOf(params: Readonly<WebParams>, part: number): number[] {
  const out: number[] = [];
  if (part === 3) {
    for (let j = 0; j < 3; j++) out.push(params.sitemapHiddenPages + j);
    return out;
  }
  for (let k = part; k < params.sitemapHiddenPages; k += 3) out.push(k);
  return out;
}

/** A deterministic W3C date for hidden page k. */
export const hiddenLastmod = (k: number): string => `2026-${String(1 + (k % 12)).padStart(2, '0')}-${String(1 + (k % 28)).padStart(2, '0')}`;

const XML_HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n';
const NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"';

function urlset(entries: { loc: string; lastmod?: string }[]): string {
  let s = `${XML_HEAD}<urlset ${NS}>\n`;
  for (const e of entries) s += ` <url><loc>${e.loc.replace(/&/g, '&amp;')}</loc>${e.lastmod ? `<lastmod>${e.lastmod}</lastmod>` : ''}<changefreq>weekly</changefreq></url>\n`;
  return `${s}</urlset>\n`;
}

function index(locs: string[]): string {
  let s = `${XML_HEAD}<sitemapindex ${NS}>\n`;
  for (const l of locs) s += ` <sitemap><loc>${l}</loc><lastmod>2026-01-01</lastmod></sitemap>\n`;
  return `${s}</sitemapindex>\n`;
}

export interface SitemapResponse {
  status: number;
  contentType: string;
  body: Buffer;
}

/**
 * The response for `path` on a sitemap host (sitemaps, hidden pages), or null when `path` is none
 * of them (the server goes on with its ordinary routes).
 */
export function sitemapResponse(params: Readonly<WebParams>, info: HostInfo, origin: string, path: string): SitemapResponse | null {
  const xml = (s: string): SitemapResponse => ({ status: 200, contentType: 'application/xml', body: Buffer.from(s, 'utf8') });
  const hidden = (part: number): { loc: string; lastmod: string }[] =>
    hiddenPagesOf(params, part).map((k) => ({ loc: `${origin}/hidden/${k}`, lastmod: hiddenLastmod(k) }));
  switch (path) {
    case '/sitemap_index.xml': {
      const locs = [`${origin}/sm/pages-0.xml`, `${origin}/sm/pages-1.xml.gz`, `${origin}/sm/nested.xml`, `http://elsewhere.${info.pld}/sm/foreign.xml`];
      if (params.sitemapBigEntries > 0) locs.push(`${origin}/sm/big.xml`);
      return xml(index(locs));
    }
    case '/sm/pages-0.xml':
      return xml(urlset([...hidden(0), { loc: `${origin}/p/0` }, { loc: `http://elsewhere.${info.pld}/p/0?from=sitemap&x=1` }]));
    case '/sm/pages-1.xml.gz':
      return { status: 200, contentType: 'application/gzip', body: gzipSync(Buffer.from(urlset(hidden(1)), 'utf8')) };
    case '/sm/nested.xml':
      return xml(index([`${origin}/sm/pages-2.txt`]));
    case '/sm/pages-2.txt':
      return { status: 200, contentType: 'text/plain; charset=utf-8', body: Buffer.from(hidden(2).map((e) => e.loc).join('\n') + '\n', 'utf8') };
    case '/sitemap.xml':
      return xml(urlset(hidden(3)));
    case '/sm/big.xml': {
      if (params.sitemapBigEntries <= 0) return null;
      const parts: string[] = [`${XML_HEAD}<urlset ${NS}>\n`];
      for (let k = 0; k < params.sitemapBigEntries; k++) parts.push(`<url><loc>${origin}/big/${k}</loc></url>\n`);
      parts.push('</urlset>\n');
      return xml(parts.join(''));
    }
  }
  const m = /^\/hidden\/(\d{1,7})$/.exec(path);
  if (m !== null && Number(m[1]) < params.sitemapHiddenPages + 3) {
    const k = Number(m[1]);
    const html = `<!DOCTYPE html><html><head><title>${info.name} hidden ${k}</title></head><body><p>Listed only in this host's sitemaps.</p><a href="/p/0">home</a></body></html>\n`;
    return { status: 200, contentType: 'text/html; charset=utf-8', body: Buffer.from(html, 'utf8') };
  }
  return null;
}
