/**
 * Fast outlink extractor (hot path). A hand-written scanner over the JS string that implements the
 * WHATWG HTML tokenizer (§13.2.5) only as far as link extraction needs it:
 *
 *   data state      → jump with indexOf('<'); start tags, end tags, comments, DOCTYPE, bogus comments
 *   tag states      → tag name, attribute name/value (quoted/unquoted), self-closing, EOF-in-tag
 *                     (a tag cut by EOF is not emitted); attributes are materialised only for the
 *                     eight tags LinkCollector looks at, otherwise just skipped
 *   raw text        → script (with the escaped / double-escaped states), RAWTEXT (style, xmp, iframe,
 *                     noembed, noframes), RCDATA (title, textarea), PLAINTEXT (stops the scan)
 *   input stream    → CR/CRLF→LF and NUL→U+FFFD applied to the attribute values we return
 *   char references → `entities`' attribute decoder, the same code parse5's tokenizer uses
 *                     (legacy names without ';' before '=' or an alphanumeric are not decoded)
 *
 * Tree construction matters for links in only a few places: foreign content (<svg>, <math>: a
 * different tokenizer behaviour and svg-namespace <a>), <select> (most start tags ignored) and
 * framesets (<frame> ignored outside one; everything but frames ignored after one), and <template>
 * (its "in column group" mode can drop an <a>). Inline <svg> (icons: nested SVG elements, CDATA,
 * comments) is followed exactly by svgSubtree(), <select> content by selectContent(), and a
 * <frameset> met before any body content by framesetContent(); anything else in them (breakout
 * tags like <p> or <div>, integration points like <foreignObject>, table tags inside a select, a
 * frameset after body content) and any start tag for math or template hands the whole page to the parse5 reference (links-reference.ts), so the
 * result is by construction identical; the fallback rate is
 * measured in bench/html. Everything else in tree construction creates the element for every start
 * tag we care about (foster parenting, adoption agency, <image>→<img>, noscript with
 * scripting disabled), so the token stream order is the element order the reference reports.
 */
import { LinkCollector } from './collect.js';
import { extractLinksReference } from './links-reference.js';
import { checkFallbackLimit } from './fallback-limit.js';
import type { ExtractOptions, ExtractResult } from './types.js';
import {
  HEADISH_END, HEADISH_START, KIND, K_COLLECT, K_FALLBACK, K_FRAME, K_FRAMESET, K_PLAINTEXT, K_RAWTEXT, K_SCRIPT, K_SELECT, K_SVG,
  STYLE_REFERENCE, Scanner, isAlpha, isWs,
} from './scanner.js';
import { cookStyleText } from './collect.js';

/** A page that may hold a URL in CSS (with requisites, style attributes are then read on every element). */
const CSS_URL = /url\(/i;

/** Statistics for the bench: how often the fast path had to defer to the reference. */
export const fastExtractStats = { pages: 0, fallbacks: 0 };

/**
 * The fast extractor. Returns exactly what extractLinksReference returns (see the module comment and
 * test/html/links.test.ts), much faster. A page that needs the reference but is longer or deeper
 * than its bound (fallback-limit.ts) throws CrawlError CRAWL_PARSE_LIMIT; nothing else is thrown.
 */
export function extractLinks(html: string, opts?: ExtractOptions): ExtractResult {
  fastExtractStats.pages++;
  const r = scan(html, opts);
  if (r !== null) return r;
  fastExtractStats.fallbacks++;
  checkFallbackLimit(html);
  return extractLinksReference(html, opts);
}

/** Fast scan; null when the page needs the reference (see K_FALLBACK). */
export function scan(s: string, opts?: ExtractOptions): ExtractResult | null {
  const n = s.length;
  const sc = new Scanner(s);
  const col = new LinkCollector(opts);
  const requisites = col.requisites;
  // Requisites: the style attribute of every HTML element may name URLs (url(…)); only a page that
  // has `url(` anywhere can hold one, so only there are every tag's attributes read.
  const styleAttrs = requisites && CSS_URL.test(s);
  sc.collectAll = styleAttrs;
  let i = 0;
  // Still in the head-ish insertion modes (no <body> yet): decides what a <frameset> does.
  let headish = true;
  for (;;) {
    const lt = s.indexOf('<', i);
    if (lt < 0 || lt + 1 >= n) break;
    if (headish) {
      for (let k = i; k < lt; k++) {
        if (!isWs(s.charCodeAt(k))) {
          headish = false;
          break;
        }
      }
    }
    const c = s.charCodeAt(lt + 1);
    if (isAlpha(c)) {
      const end = sc.tag(lt + 1, true, true);
      if (end < 0) break;
      const name = sc.tagNameLower;
      const kind = KIND.get(name) ?? 0;
      i = end;
      if (kind & K_FRAMESET) {
        if (!headish || styleAttrs) return null; // (frameset elements' style attributes: the reference)
        sc.framesetContent(end, col);
        break;
      }
      if (headish && !HEADISH_START.has(name)) headish = false;
      if (kind === 0) {
        // Any other HTML element: only its style attribute can matter.
        if (styleAttrs && sc.hasStyle() && !otherStyle(sc, col, name)) return null;
        continue;
      }
      if (kind & K_APART) {
        // Tags tree construction treats apart (rare: no call on the common tags' path).
        i = apartTag(sc, col, kind, name, end, requisites, styleAttrs);
        if (i < 0) return null;
        continue;
      }
      if (kind & K_COLLECT) sc.emit(col, name === 'image' ? 'img' : name);
      if (kind & K_RAWTEXT) {
        i = sc.endOfRawText(end, name);
        // a <style> element's CSS (and the style attribute of any raw-text element)
        if (requisites && name === 'style') sc.emit(col, name, cookStyleText(s.slice(end, i)));
        else if (styleAttrs && !(kind & K_COLLECT) && sc.hasStyle()) sc.emit(col, name);
      } else if (kind & K_SCRIPT) i = sc.endOfScript(end);
      else if (kind & K_PLAINTEXT) {
        if (styleAttrs && sc.hasStyle()) sc.emit(col, name);
        break;
      }
      continue;
    }
    if (c === 0x2f) {
      // "</"
      const c2 = s.charCodeAt(lt + 2);
      if (isAlpha(c2)) {
        const end = sc.tag(lt + 2, false, false);
        if (end < 0) break;
        if (headish && !HEADISH_END.has(sc.fullName())) headish = false;
        i = end;
      } else if (c2 === 0x3e) {
        i = lt + 3; // "</>" is dropped
      } else if (lt + 2 >= n) {
        break;
      } else {
        const gt = s.indexOf('>', lt + 2); // bogus comment
        if (gt < 0) break;
        i = gt + 1;
      }
      continue;
    }
    if (c === 0x21) {
      // "<!": comment, or DOCTYPE / CDATA-outside-foreign-content / bogus comment (all end at '>')
      const e = sc.afterBang(lt);
      if (e < 0) break;
      i = e;
      continue;
    }
    if (c === 0x3f) {
      const gt = s.indexOf('>', lt + 2); // "<?": bogus comment
      if (gt < 0) break;
      i = gt + 1;
      continue;
    }
    headish = false; // a '<' that starts no tag is text
    i = lt + 1;
  }
  return col.result;
}

/** <frame>, <select>, <svg> and the tags that need the reference: what scan() does apart. */
const K_APART = K_FALLBACK | K_FRAME | K_SELECT | K_SVG;

/**
 * A start tag of kind K_APART ending at `end`: where scanning goes on, or -1 when the page needs
 * the reference (K_FALLBACK, or content the follower does not handle).
 */
function apartTag(sc: Scanner, col: LinkCollector, kind: number, name: string, end: number, requisites: boolean, styleAttrs: boolean): number {
  if (kind & K_FALLBACK) return -1;
  if (kind & K_FRAME) return end; // ignored outside a frameset (it also started the body)
  if (kind & K_SELECT) {
    if (styleAttrs && sc.hasStyle()) sc.emit(col, name);
    return sc.selectContent(end, requisites);
  }
  // K_SVG
  if (sc.selfClosing) return end;
  return sc.svgSubtree(end);
}

/**
 * The style attribute of an element scan() otherwise passes over (kind 0): emitted, or false when
 * the page needs the reference (tags the tree builder may ignore or merge: STYLE_REFERENCE).
 */
function otherStyle(sc: Scanner, col: LinkCollector, name: string): boolean {
  const full = name !== '' ? name : sc.fullName();
  if (STYLE_REFERENCE.has(full)) return false;
  sc.emit(col, name);
  return true;
}
