/**
 * The link policy shared by both extractors. Each extractor only has to find, in source order, the
 * elements the HTML5 parser creates and their (deduplicated, decoded) attributes; this class turns
 * them into an ExtractResult. Keeping the policy in one place means the fast/reference comparison
 * tests the tokenization, which is where the two differ.
 */
import type { ExtractOptions, ExtractResult } from './types.js';

/** Attribute lookup: value of the FIRST attribute with that (lower-case) name, or undefined. */
export type AttrLookup = (name: string) => string | undefined;

/** ASCII-only lower-casing (HTML's "ASCII lowercase"; String#toLowerCase would map e.g. U+212A to k). */
export function asciiLower(s: string): string {
  return /[A-Z]/.test(s) ? s.replace(/[A-Z]+/g, (m) => m.toLowerCase()) : s;
}

/** ASCII-case-insensitive membership in a token list separated by ASCII whitespace or commas. */
function tokens(list: string): string[] {
  return asciiLower(list).split(/[\t\n\f\r ,]+/);
}

function isWs(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d;
}

/**
 * HTML "shared declarative refresh steps" (WHATWG HTML §4.2.5.3): returns the URL string, '' when
 * the content is a valid refresh with no URL (refresh to self), or null when it is not valid.
 */
export function parseMetaRefresh(input: string): string | null {
  const n = input.length;
  let p = 0;
  while (p < n && isWs(input.charCodeAt(p))) p++;
  const timeStart = p;
  while (p < n && input.charCodeAt(p) >= 0x30 && input.charCodeAt(p) <= 0x39) p++;
  if (p === timeStart && input.charCodeAt(p) !== 0x2e) return null;
  while (p < n && ((input.charCodeAt(p) >= 0x30 && input.charCodeAt(p) <= 0x39) || input.charCodeAt(p) === 0x2e)) p++;
  if (p >= n) return '';
  let c = input.charCodeAt(p);
  if (c !== 0x3b && c !== 0x2c && !isWs(c)) return null;
  while (p < n && isWs(input.charCodeAt(p))) p++;
  c = input.charCodeAt(p);
  if (c === 0x3b || c === 0x2c) {
    p++;
    while (p < n && isWs(input.charCodeAt(p))) p++;
  }
  if (p >= n) return '';
  let urlString = input.slice(p);
  parse: {
    c = input.charCodeAt(p);
    if (c === 0x55 || c === 0x75) {
      p++;
      c = input.charCodeAt(p);
      if (c !== 0x52 && c !== 0x72) break parse;
      p++;
      c = input.charCodeAt(p);
      if (c !== 0x4c && c !== 0x6c) break parse;
      p++;
      while (p < n && isWs(input.charCodeAt(p))) p++;
      if (input.charCodeAt(p) !== 0x3d) break parse;
      p++;
      while (p < n && isWs(input.charCodeAt(p))) p++;
    }
    // "skip quotes"
    let quote = '';
    c = input.charCodeAt(p);
    if (c === 0x22 || c === 0x27) {
      quote = input[p]!;
      p++;
    }
    urlString = input.slice(p);
    if (quote !== '') {
      const q = urlString.indexOf(quote);
      if (q >= 0) urlString = urlString.slice(0, q);
    }
  }
  // The URL parser strips leading/trailing C0 controls and spaces; we strip ASCII whitespace so the
  // caller gets a clean string (the URL parser would ignore it anyway).
  return urlString.replace(/^[\t\n\f\r ]+|[\t\n\f\r ]+$/g, '');
}

export class LinkCollector {
  readonly result: ExtractResult = {
    links: [],
    baseHref: null,
    metaRobots: { noindex: false, nofollow: false },
    metaRefresh: null,
  };
  private readonly images: boolean;
  private refreshSeen = false;

  constructor(opts?: ExtractOptions) {
    this.images = opts?.images === true;
  }

  /** Called for every interesting element, in source order. `tag` is lower case. */
  element(tag: string, attr: AttrLookup): void {
    const r = this.result;
    switch (tag) {
      case 'a':
      case 'area':
      case 'link': {
        const href = attr('href');
        if (href === undefined) return;
        const rel = attr('rel');
        r.links.push({ tag, attr: 'href', value: href, nofollow: rel !== undefined && tokens(rel).includes('nofollow') });
        return;
      }
      case 'frame':
      case 'iframe': {
        const src = attr('src');
        if (src !== undefined) r.links.push({ tag, attr: 'src', value: src, nofollow: false });
        return;
      }
      case 'img': {
        if (!this.images) return;
        const src = attr('src');
        if (src !== undefined) r.links.push({ tag, attr: 'src', value: src, nofollow: false });
        return;
      }
      case 'base': {
        if (r.baseHref !== null) return;
        const href = attr('href');
        if (href !== undefined) r.baseHref = href;
        return;
      }
      case 'meta': {
        const content = attr('content');
        if (content === undefined) return;
        const name = attr('name');
        if (name !== undefined && asciiLower(name.replace(/^[\t\n\f\r ]+|[\t\n\f\r ]+$/g, '')) === 'robots') {
          const toks = tokens(content);
          if (toks.includes('none')) {
            r.metaRobots.noindex = true;
            r.metaRobots.nofollow = true;
          }
          if (toks.includes('noindex')) r.metaRobots.noindex = true;
          if (toks.includes('nofollow')) r.metaRobots.nofollow = true;
        }
        const equiv = attr('http-equiv');
        if (equiv !== undefined && !this.refreshSeen && asciiLower(equiv) === 'refresh') {
          const url = parseMetaRefresh(content);
          if (url === null) return;
          // Only the first valid declarative refresh counts (HTML "will declaratively refresh").
          this.refreshSeen = true;
          if (url !== '') {
            r.metaRefresh = url;
            r.links.push({ tag: 'meta', attr: 'content', value: url, nofollow: false });
          }
        }
        return;
      }
      default:
        return;
    }
  }
}

/** Tags whose elements LinkCollector looks at (img is filtered by opts inside). */
export const INTERESTING_TAGS: ReadonlySet<string> = new Set(['a', 'area', 'link', 'frame', 'iframe', 'img', 'base', 'meta']);
