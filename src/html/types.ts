/**
 * Shared result types of the two link extractors (src/html/links.ts, src/html/links-reference.ts).
 *
 * "The same links" — what the fast extractor must reproduce exactly — is the whole ExtractResult:
 * the ordered list of (tag, attr, value, nofollow), baseHref, metaRobots and metaRefresh.
 */

/** One URL-bearing attribute, in document (source) order. */
export interface ExtractedLink {
  /** Lower-case HTML tag name: a, area, link, frame, iframe, img (images only), meta (refresh). */
  tag: string;
  /** Attribute the value came from: href, src, or content (meta refresh). */
  attr: string;
  /** Attribute value, entity-decoded exactly as the HTML5 tokenizer does (not trimmed, not resolved). */
  value: string;
  /** rel contains the token "nofollow" (a, area, link only). */
  nofollow: boolean;
}

export interface ExtractResult {
  links: ExtractedLink[];
  /** href of the FIRST base element that has an href attribute (raw, decoded), or null. */
  baseHref: string | null;
  /** OR over every <meta name=robots content=...>; "none" sets both. */
  metaRobots: { noindex: boolean; nofollow: boolean };
  /** URL of the FIRST <meta http-equiv=refresh> whose content carries a URL (HTML spec parsing), or null. */
  metaRefresh: string | null;
}

export interface ExtractOptions {
  /** Also report <img src> (default false). */
  images?: boolean;
}
