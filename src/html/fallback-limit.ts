/**
 * The bound on the parse5 fallback (links-reference.ts). The fast scanner (links.ts) is linear and
 * holds one tag at a time; the reference builds the whole DOM with source locations: about 1 s of
 * CPU and 90–250 MB of heap per million characters, the most for deep nesting (each open <svg>,
 * <math> or <template> level stays on the tree builder's stack; measured with
 * `node --expose-gc` on parse5 8: 1 Mi chars of nested <svg> → 214 MB). In a parse worker with
 * capped heap that is an out-of-memory crash, and on an 8 MB page it is past the parse timeout.
 *
 * So a page that needs the reference is handed to it only when it is at most FALLBACK_MAX_CHARS
 * long and its estimated element nesting stays at most FALLBACK_MAX_DEPTH; otherwise its links are
 * not extracted and the page's outcome is CRAWL_PARSE_LIMIT (docs/errors.md): archived, its links
 * not followed. The check is one pass over the text.
 *
 * The nesting estimate counts start tags minus end tags, leaving out void elements and elements
 * whose end tag the tree builder implies (p, li, td …): an upper bound for the shapes that make the
 * reference slow (nested foreign content and templates), generous on ordinary markup.
 */
import { CrawlError } from '../errors.js';

/** Longest text (UTF-16 code units) given to the parse5 reference. */
export const FALLBACK_MAX_CHARS = 512 * 1024;
/** Deepest estimated element nesting given to the parse5 reference. */
export const FALLBACK_MAX_DEPTH = 1024;

/** Elements that never stay open: void elements, and those closed by a sibling start tag. */
const NOT_NESTING = new Set([
  'area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr', 'param', 'keygen', 'image',
  'p', 'li', 'dt', 'dd', 'option', 'optgroup', 'tr', 'td', 'th', 'rb', 'rt', 'rp', 'rtc', 'tbody', 'thead', 'tfoot', 'colgroup', 'caption',
]);
const MAX_NAME = 8; // the longest name in NOT_NESTING ("colgroup", "optgroup")

function isAlpha(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}

/** Estimated deepest element nesting of an HTML text (see the module comment); stops once past `cap`. */
export function nestingEstimate(s: string, cap = Infinity): number {
  const n = s.length;
  let depth = 0;
  let max = 0;
  let i = 0;
  for (;;) {
    const lt = s.indexOf('<', i);
    if (lt < 0 || lt + 1 >= n) return max;
    const c = s.charCodeAt(lt + 1);
    const end = c === 0x2f;
    const p = end ? lt + 2 : lt + 1;
    if (!isAlpha(s.charCodeAt(p))) {
      i = lt + 1;
      continue;
    }
    let q = p + 1;
    while (q < n && q - p <= MAX_NAME && isAlpha(s.charCodeAt(q))) q++;
    const gt = s.indexOf('>', q);
    if (gt < 0) return max;
    const nests = q - p > MAX_NAME || !NOT_NESTING.has(s.slice(p, q).toLowerCase());
    if (nests) {
      if (end) depth = Math.max(0, depth - 1);
      else if (s.charCodeAt(gt - 1) !== 0x2f) {
        depth++;
        if (depth > max) {
          max = depth;
          if (max > cap) return max;
        }
      }
    }
    i = gt + 1;
  }
}

/** Throws CRAWL_PARSE_LIMIT when `s` is too long or too deep for the parse5 reference. */
export function checkFallbackLimit(s: string): void {
  if (s.length > FALLBACK_MAX_CHARS) {
    throw new CrawlError('CRAWL_PARSE_LIMIT', `page needs full tree construction and is ${s.length} characters long (limit ${FALLBACK_MAX_CHARS}); links not extracted`);
  }
  const depth = nestingEstimate(s, FALLBACK_MAX_DEPTH);
  if (depth > FALLBACK_MAX_DEPTH) {
    throw new CrawlError('CRAWL_PARSE_LIMIT', `page needs full tree construction and nests elements deeper than ${FALLBACK_MAX_DEPTH}; links not extracted`);
  }
}
