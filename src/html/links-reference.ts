/**
 * Reference link extractor: the WHATWG HTML parser (parse5 8, full tree construction) defines which
 * elements exist. This is the correctness oracle for the fast extractor in links.ts.
 *
 * Deliberate choices (documented in docs/output-format.md):
 * - scriptingEnabled: false — we do not run scripts, so <noscript> content is markup (as in a
 *   no-JS browser) and its links count.
 * - Only HTML-namespace elements count; <svg>/<math> foreign content (svg <a href>) does not.
 * - <template> content counts (its links are real URLs, rendered client-side).
 * - Source order: elements are ordered by the offset of the start tag that created them. The tree
 *   builder's "reconstruct the active formatting elements" clones an <a> for mis-nested markup;
 *   clones share the original's start offset (or have none) and are reported once.
 * - Start tags the tree builder ignores (e.g. <frame> outside a frameset, anything after
 *   <frameset>, most tags inside <select>) create no element and give no link.
 */
import { parse, type DefaultTreeAdapterTypes } from 'parse5';
import { LinkCollector, INTERESTING_TAGS } from './collect.js';
import type { ExtractOptions, ExtractResult } from './types.js';

type Node = DefaultTreeAdapterTypes.Node;
type Element = DefaultTreeAdapterTypes.Element;
type ParentNode = DefaultTreeAdapterTypes.ParentNode;

const HTML_NS = 'http://www.w3.org/1999/xhtml';

export function extractLinksReference(html: string, opts?: ExtractOptions): ExtractResult {
  const doc = parse(html, { scriptingEnabled: false, sourceCodeLocationInfo: true });
  const requisites = opts?.requisites === true;
  const found: { offset: number; el: Element }[] = [];
  const seen = new Set<number>();
  // Iterative walk (deeply nested malformed pages would overflow a recursive one).
  const stack: Node[] = [doc];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if ('tagName' in node) {
      const el = node as Element;
      if (el.namespaceURI === HTML_NS && (INTERESTING_TAGS.has(el.tagName) ||
        (requisites && el.attrs.some((a) => a.name === 'style' && a.namespace === undefined)))) {
        const off = el.sourceCodeLocation?.startOffset;
        if (off !== undefined && !seen.has(off)) {
          seen.add(off);
          found.push({ offset: off, el });
        }
      }
      if (el.tagName === 'template' && 'content' in el) stack.push((el as DefaultTreeAdapterTypes.Template).content);
    }
    const kids = (node as ParentNode).childNodes;
    if (kids !== undefined) for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]!);
  }
  found.sort((x, y) => x.offset - y.offset);
  const c = new LinkCollector(opts);
  for (const { el } of found) {
    const attrs = el.attrs;
    // a <style> element's CSS: its text (one text node, or none)
    const text = el.tagName === 'style' ? el.childNodes.map((k) => ('value' in k ? (k as DefaultTreeAdapterTypes.TextNode).value : '')).join('') : undefined;
    c.element(el.tagName, (name) => {
      for (const a of attrs) if (a.name === name && a.namespace === undefined) return a.value;
      return undefined;
    }, text);
  }
  return c.result;
}
