/**
 * Shared result types of the two link extractors (src/html/links.ts, src/html/links-reference.ts).
 *
 * "The same links" — what the fast extractor must reproduce exactly — is the whole ExtractResult:
 * the ordered list of (tag, attr, value, nofollow), baseHref, metaRobots and metaRefresh.
 */

/** One URL-bearing attribute, in document (source) order. */
export interface ExtractedLink {
  /**
   * Lower-case HTML tag name: a, area, link, frame, iframe, img, meta (refresh); with requisites
   * also script, source, video, audio, track, embed, object, input; `style` for a URL in CSS (a
   * `<style>` element's text or any element's `style` attribute).
   */
  tag: string;
  /**
   * Attribute the value came from: href, src, srcset (one candidate each), poster, data, content
   * (meta refresh), style (a style attribute's CSS), text (a `<style>` element's CSS).
   */
  attr: string;
  /** Attribute value (a srcset candidate's or a CSS URL's text), entity-decoded exactly as the HTML5 tokenizer does (not trimmed, not resolved). */
  value: string;
  /** rel contains the token "nofollow" (a, area, link only). */
  nofollow: boolean;
  /**
   * A page requisite (ExtractOptions.requisites): what a browser fetches to render the page —
   * scripts, style sheets and icons (`<link rel>` stylesheet, icon, apple-touch-icon, mask-icon,
   * preload, modulepreload), images (src, srcset), media sources, `<object data>`, `<embed src>`,
   * `<input type=image>`, URLs in CSS — not a link to follow.
   */
  embed: boolean;
}

export interface ExtractResult {
  links: ExtractedLink[];
  /** href of the FIRST base element that has an href attribute (raw, decoded), or null. */
  baseHref: string | null;
  /** OR over every <meta name=robots content=...>; "none" sets both. */
  metaRobots: { noindex: boolean; nofollow: boolean };
  /** URL of the FIRST <meta http-equiv=refresh> whose content carries a URL (HTML spec parsing), or null. */
  metaRefresh: string | null;
  /** With `maxLinks`: links found and not kept (past the cap, or repeating a kept one); else 0. */
  notKept: number;
}

export interface ExtractOptions {
  /** Also report <img src> as a link (default false; with `requisites` it is a requisite instead). */
  images?: boolean;
  /** Also report page requisites (ExtractedLink.embed; default false). */
  requisites?: boolean;
  /**
   * Keep at most this many links, each target once (the first of each: a repeated value, or one
   * that differs only in its #fragment, adds nothing), the rest only counted in `notKept`; so one
   * page's result stays this size whatever the page holds. Default: every link, repeats included.
   */
  maxLinks?: number;
}
