/**
 * The link policy shared by both extractors. Each extractor only has to find, in source order, the
 * elements the HTML5 parser creates and their (deduplicated, decoded) attributes; this class turns
 * them into an ExtractResult. Keeping the policy in one place means the fast/reference comparison
 * tests the tokenization, which is where the two differ.
 */
import type { ExtractedLink, ExtractOptions, ExtractResult } from './types.js';
import { cssUrls } from './css.js';

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

/** `<link rel>` tokens that make its href a page requisite (the browser fetches it with the page). */
const REQUISITE_RELS = new Set(['stylesheet', 'icon', 'apple-touch-icon', 'apple-touch-icon-precomposed', 'mask-icon', 'preload', 'modulepreload']);

/**
 * The URLs of a srcset attribute (HTML "parse a srcset attribute": candidates separated by commas,
 * each a URL then optional descriptors; a URL ending in commas ends its candidate).
 */
export function srcsetUrls(v: string): string[] {
  const out: string[] = [];
  const n = v.length;
  let p = 0;
  for (;;) {
    while (p < n && (isWs(v.charCodeAt(p)) || v.charCodeAt(p) === 0x2c)) p++;
    if (p >= n) return out;
    const start = p;
    while (p < n && !isWs(v.charCodeAt(p))) p++;
    let url = v.slice(start, p);
    if (url.endsWith(',')) {
      url = url.replace(/,+$/, '');
      if (url !== '') out.push(url);
      continue;
    }
    out.push(url);
    // descriptors, up to the next comma outside parentheses
    let paren = false;
    while (p < n) {
      const c = v.charCodeAt(p);
      if (c === 0x28) paren = true;
      else if (c === 0x29) paren = false;
      else if (c === 0x2c && !paren) break;
      p++;
    }
  }
}

/** Cooks a `<style>` element's raw text as the tokenizer does (CR and CRLF → LF, NUL → U+FFFD). */
export function cookStyleText(raw: string): string {
  let t = raw;
  if (t.indexOf('\r') >= 0) t = t.replace(/\r\n?/g, '\n');
  if (t.indexOf('\0') >= 0) t = t.replace(/\0/g, '\uFFFD');
  return t;
}

export class LinkCollector {
  readonly result: ExtractResult = {
    links: [],
    baseHref: null,
    metaRobots: { noindex: false, nofollow: false },
    metaRefresh: null,
    notKept: 0,
  };
  private readonly images: boolean;
  /** page requisites reported too (ExtractOptions.requisites) */
  readonly requisites: boolean;
  private refreshSeen = false;
  /** ExtractOptions.maxLinks (Infinity: no cap) and the values kept, for it */
  private readonly maxLinks: number;
  private readonly kept: Set<string> | null;

  constructor(opts?: ExtractOptions) {
    this.images = opts?.images === true;
    this.requisites = opts?.requisites === true;
    this.maxLinks = opts?.maxLinks ?? Infinity;
    this.kept = opts?.maxLinks !== undefined ? new Set() : null;
  }

  /** One link to the result, unless the cap says no (ExtractOptions.maxLinks). */
  private add(link: ExtractedLink): void {
    const kept = this.kept;
    if (kept !== null) {
      // Past the cap no link is kept, a target seen before or not: no key to build (a page of
      // 490,000 links spent most of its parse building keys for links it then dropped).
      if (kept.size >= this.maxLinks) {
        this.result.notKept++;
        return;
      }
      // nofollow, followed and requisite occurrences of one target are told apart (each may matter);
      // values that differ only in their fragment name one URL (canonicalization drops it), so a
      // table of contents of 14,000 links to 500 pages' sections is 500 links, not past the cap
      const v = link.value;
      const h = v.indexOf('#');
      const key = `${link.embed ? '\u0001' : ''}${link.nofollow ? '\u0000' : ''}${h < 0 ? v : v.slice(0, h)}`;
      if (kept.has(key)) {
        this.result.notKept++;
        return;
      }
      kept.add(key);
    }
    this.result.links.push(link);
  }

  private embed(tag: string, attrName: string, value: string | undefined): void {
    if (value !== undefined) this.add({ tag, attr: attrName, value, nofollow: false, embed: true });
  }

  private srcset(tag: string, attr: AttrLookup): void {
    const v = attr('srcset');
    if (v !== undefined) for (const u of srcsetUrls(v)) this.embed(tag, 'srcset', u);
  }

  /** The URLs in CSS text (a `<style>` element's, or a style attribute's), as requisites. */
  css(text: string, attrName: 'text' | 'style'): void {
    for (const u of cssUrls(text, attrName === 'text')) this.embed('style', attrName, u);
  }

  /**
   * Called for every interesting element, in source order (with requisites, also every other
   * HTML element that has a style attribute). `tag` is lower case; `text`: a `<style>` element's
   * text, cooked (cookStyleText).
   */
  element(tag: string, attr: AttrLookup, text?: string): void {
    this.tagLinks(tag, attr, text);
    if (this.requisites) {
      const style = attr('style');
      if (style !== undefined) this.css(style, 'style');
    }
  }

  private tagLinks(tag: string, attr: AttrLookup, text: string | undefined): void {
    const r = this.result;
    switch (tag) {
      case 'a':
      case 'area':
      case 'link': {
        const href = attr('href');
        if (href === undefined) return;
        const rel = attr('rel');
        const toks = rel !== undefined ? tokens(rel) : null;
        const embed = this.requisites && tag === 'link' && toks !== null && toks.some((t) => REQUISITE_RELS.has(t));
        this.add({ tag, attr: 'href', value: href, nofollow: !embed && toks !== null && toks.includes('nofollow'), embed });
        return;
      }
      case 'frame':
      case 'iframe': {
        const src = attr('src');
        if (src !== undefined) this.add({ tag, attr: 'src', value: src, nofollow: false, embed: false });
        return;
      }
      case 'img': {
        if (this.requisites) {
          this.embed(tag, 'src', attr('src'));
          this.srcset(tag, attr);
          return;
        }
        if (!this.images) return;
        const src = attr('src');
        if (src !== undefined) this.add({ tag, attr: 'src', value: src, nofollow: false, embed: false });
        return;
      }
      case 'script':
      case 'embed':
      case 'audio':
      case 'track':
        if (this.requisites) this.embed(tag, 'src', attr('src'));
        return;
      case 'source':
        if (this.requisites) {
          this.embed(tag, 'src', attr('src'));
          this.srcset(tag, attr);
        }
        return;
      case 'video':
        if (this.requisites) {
          this.embed(tag, 'src', attr('src'));
          this.embed(tag, 'poster', attr('poster'));
        }
        return;
      case 'object':
        if (this.requisites) this.embed(tag, 'data', attr('data'));
        return;
      case 'input': {
        if (!this.requisites) return;
        const type = attr('type');
        if (type !== undefined && asciiLower(type) === 'image') this.embed(tag, 'src', attr('src'));
        return;
      }
      case 'style':
        if (this.requisites && text !== undefined) this.css(text, 'text');
        return;
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
            this.add({ tag: 'meta', attr: 'content', value: url, nofollow: false, embed: false });
          }
        }
        return;
      }
      default:
        return;
    }
  }
}

/** Tags whose elements LinkCollector looks at (img and the requisites' tags are filtered by opts inside). */
export const INTERESTING_TAGS: ReadonlySet<string> = new Set(['a', 'area', 'link', 'frame', 'iframe', 'img', 'base', 'meta',
  'script', 'embed', 'audio', 'track', 'source', 'video', 'object', 'input', 'style']);
