/**
 * Page requisites in the crawl (--requisites, config.ts): a URL a page embeds (script, style sheet,
 * image, media, object; docs/configuration.md) enters URLseen with the hop letter E (Heritrix's
 * embed hop; links-codec.ts flags it, drum-codec.ts writes the letter), so a requisite is told from a
 * page by the last letter of its hop path wherever it goes — the frontier's records, crawl.log.
 * Requisites are counted apart from pages (--max-pages counts pages), and a requisite's own
 * requisites (a style sheet's @import and url()) are taken along a chain of at most
 * MAX_REQUISITE_HOPS.
 */

/**
 * Longest chain of requisites taken from a page: the Python manual's pages need five (page → its
 * style sheet → @import → @import → @import → an image in the last sheet); Heritrix's default of 2
 * (maxTransHops) would miss the last two. A chain is finite anyway (URLseen), this bounds what a
 * generated one can add per page.
 */
export const MAX_REQUISITE_HOPS = 8;

/** The URL with hop path `path` is a page requisite. */
export function isRequisitePath(path: string): boolean {
  return path.charCodeAt(path.length - 1) === 0x45; // 'E'
}

/** Requisite hops at the end of hop path `path` (how deep in a chain of requisites its URL is). */
export function requisiteChain(path: string): number {
  let n = 0;
  for (let i = path.length - 1; i >= 0 && path.charCodeAt(i) === 0x45; i--) n++;
  return n;
}

/** A style sheet (text/css): parsed for the URLs it names. */
export function isCss(contentType: string | undefined): boolean {
  return contentType !== undefined && /^text\/css\b/i.test(contentType);
}
