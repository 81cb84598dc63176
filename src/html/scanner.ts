/**
 * The tokenizer under the fast outlink extractor (links.ts): WHATWG HTML tokenizer states (§13.2.5)
 * as far as link extraction needs them — tag names and attributes, comments and DOCTYPE, raw text,
 * RCDATA and the script data states — and the three pieces of tree construction the extractor
 * follows itself: inline <svg> subtrees, <select> content and a leading <frameset>. What each start
 * tag means to the extractor is the KIND table; anything else that needs tree construction is
 * K_FALLBACK (the parse5 reference decides). One Scanner per page; attributes are materialised only
 * for the tags LinkCollector reads.
 */
import { decodeHTMLAttribute } from 'entities/decode';
import type { LinkCollector } from './collect.js';

// What the scanner does after a start tag, by (ASCII-lower-cased) tag name.
export const K_COLLECT = 1; // a LinkCollector element
export const K_SCRIPT = 2;
export const K_RAWTEXT = 4; // RAWTEXT or RCDATA: both end at the appropriate end tag
export const K_PLAINTEXT = 8;
export const K_FALLBACK = 16; // tree construction matters: use the reference
export const K_SVG = 32; // foreign content we follow (see Scanner.svgSubtree)
export const K_SELECT = 64; // "in select" insertion mode (see Scanner.selectContent)
export const K_FRAME = 128; // <frame>: ignored by the tree builder outside a frameset
export const K_FRAMESET = 256; // <frameset> before any body content (see Scanner.framesetContent)
export const KIND = new Map<string, number>([
  ['a', K_COLLECT], ['area', K_COLLECT], ['link', K_COLLECT], ['base', K_COLLECT], ['meta', K_COLLECT],
  ['img', K_COLLECT], ['image', K_COLLECT], ['iframe', K_COLLECT | K_RAWTEXT],
  // page requisites (LinkCollector reports them with ExtractOptions.requisites)
  ['source', K_COLLECT], ['video', K_COLLECT], ['audio', K_COLLECT], ['track', K_COLLECT], ['embed', K_COLLECT],
  ['object', K_COLLECT], ['input', K_COLLECT],
  ['script', K_COLLECT | K_SCRIPT], ['style', K_RAWTEXT], ['xmp', K_RAWTEXT], ['noembed', K_RAWTEXT],
  ['noframes', K_RAWTEXT], ['title', K_RAWTEXT], ['textarea', K_RAWTEXT], ['plaintext', K_PLAINTEXT],
  ['svg', K_SVG], ['math', K_FALLBACK], ['select', K_SELECT], ['frame', K_COLLECT | K_FRAME], ['frameset', K_FRAMESET],
  ['template', K_FALLBACK],
]);
const MAX_KIND_NAME = 9; // "plaintext"

/**
 * Start tags whose style attribute the reference reads: the tree builder ignores them in some
 * contexts (table parts outside a table, `<head>` after it, a `<form>` inside a form), or merges a
 * second one's attributes into the first element (`<html>`, `<body>`, which may also be implied
 * before their tag). The page then goes to the reference.
 */
export const STYLE_REFERENCE = new Set(['caption', 'col', 'colgroup', 'tbody', 'td', 'tfoot', 'th', 'thead', 'tr', 'head', 'form', 'html', 'body']);

/**
 * Start tags that leave foreign content (HTML §13.2.6.5 "any other start tag" breakout list, as in
 * parse5's EXITS_FOREIGN_CONTENT; font only with color/face/size — we bail out on any font), plus
 * the SVG HTML integration points (foreignObject, desc, title) where tokens are HTML again. Meeting
 * one of these inside <svg> sends the page to the reference.
 */
const SVG_BAIL = new Set(['b', 'big', 'blockquote', 'body', 'br', 'center', 'code', 'dd', 'div', 'dl', 'dt', 'em', 'embed',
  'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'head', 'hr', 'i', 'img', 'li', 'listing', 'menu', 'meta', 'nobr', 'ol', 'p', 'pre',
  'ruby', 's', 'small', 'span', 'strong', 'strike', 'sub', 'sup', 'table', 'tt', 'u', 'ul', 'var', 'font',
  'foreignobject', 'desc', 'title']);
const MAX_FOREIGN_DEPTH = 512; // bound on the foreign-element stack of one <svg>; deeper → reference

/**
 * Start tags that keep the parser in the head-ish insertion modes (before html … after head), where
 * a later <frameset> replaces the body. Any other start tag, end tag (but these and the raw-text
 * closers) or non-whitespace text creates <body>, after which a <frameset> is the reference's job.
 */
export const HEADISH_START = new Set(['html', 'head', 'title', 'meta', 'link', 'base', 'basefont', 'bgsound', 'script', 'style', 'noframes']);
export const HEADISH_END = new Set(['head', 'title', 'script', 'style', 'noframes']);

/**
 * NAME_SHAPE[len * 128 + first char | 0x20] = 1 when a KIND or HEADISH_START name has that length
 * and first letter. A start tag of any other shape (li, p, ul, div, span, td, h1…: most tags of a
 * page) is none of them, so its name is not sliced out and looked up (tagNameLower = ''), which is
 * what KIND and HEADISH_START would say of it anyway.
 */
const NAME_SHAPE = new Uint8Array((MAX_KIND_NAME + 1) * 128);
for (const name of [...KIND.keys(), ...HEADISH_START]) if (name.length <= MAX_KIND_NAME) NAME_SHAPE[name.length * 128 + name.charCodeAt(0)] = 1;

/** Tags whose effect inside <select> depends on table context or templates: the reference decides. */
const SELECT_BAIL = new Set(['caption', 'table', 'tbody', 'tfoot', 'thead', 'tr', 'td', 'th', 'template']);

export function isAlpha(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a);
}
/** HTML tokenizer whitespace, plus CR (the input stream turns CR into LF before tokenizing). */
export function isWs(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0c || c === 0x0d;
}
function asciiLowerName(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

/** Input-stream preprocessing + character references for one attribute value. */
function cookValue(raw: string): string {
  let v = raw;
  if (v.indexOf('\r') >= 0) v = v.replace(/\r\n?/g, '\n');
  if (v.indexOf('\0') >= 0) v = v.replace(/\0/g, '\uFFFD');
  if (v.indexOf('&') >= 0) v = decodeHTMLAttribute(v);
  return v;
}

/**
 * Scanner state for one page. Attributes of the current collected tag live in two parallel arrays
 * (bounded by the number of attributes of one tag).
 */
export class Scanner {
  private readonly s: string;
  private readonly n: number;
  // Entries past attrCount are stale (not cleared per tag: setting an array's length is a slow builtin).
  private attrNames: string[] = [];
  private attrRaw: string[] = [];
  private attrCount = 0;
  /** The LinkCollector's attribute lookup over the current tag's attributes (one closure per page, not per element). */
  private readonly lookup = (name: string): string | undefined => {
    const names = this.attrNames;
    for (let i = 0; i < this.attrCount; i++) if (names[i] === name) return cookValue(this.attrRaw[i]!); // ≤ 4 names asked
    return undefined;
  };
  /** ASCII-lower-cased name of the last start tag read by tag(…, wantName=true); '' if too long to matter. */
  tagNameLower = '';
  /** Bounds of the last tag name read by tag(), and whether that tag had the self-closing flag. */
  nameStart = 0;
  nameEnd = 0;
  selfClosing = false;
  /** Index of the next "--!>" at or after the last comment searched (-1: none left; -2: not searched yet). */
  private bangNext = -2;
  /**
   * Materialise the attributes of every start tag read with collectAttrs, not only the collected
   * tags' (with requisites, on a page that may hold CSS URLs: every element's style attribute).
   */
  collectAll = false;

  constructor(s: string) {
    this.s = s;
    this.n = s.length;
  }

  /**
   * Tag states from the tag name on (p = first name char). Returns the index after the closing '>'
   * or -1 when EOF comes first (the tag is then not emitted). When `collect`, fills attrNames /
   * attrRaw (first occurrence of a name wins, as in the tokenizer) and tagNameLower.
   */
  tag(p: number, wantName: boolean, collectAttrs: boolean): number {
    const s = this.s;
    const n = this.n;
    // Tag name state.
    const nameStart = p;
    let upper = false;
    let c = 0;
    for (; p < n; p++) {
      c = s.charCodeAt(p);
      if (isWs(c) || c === 0x2f || c === 0x3e) break;
      if (c >= 0x41 && c <= 0x5a) upper = true;
    }
    if (p >= n) return -1;
    this.nameStart = nameStart;
    this.nameEnd = p;
    this.selfClosing = false;
    if (wantName) {
      const len = p - nameStart;
      if (len <= MAX_KIND_NAME && NAME_SHAPE[len * 128 + (s.charCodeAt(nameStart) | 0x20)] === 1) {
        const raw = s.slice(nameStart, p);
        this.tagNameLower = upper ? asciiLowerName(raw) : raw;
        collectAttrs = collectAttrs && (this.collectAll || ((KIND.get(this.tagNameLower) ?? 0) & K_COLLECT) !== 0);
      } else {
        this.tagNameLower = '';
        collectAttrs = collectAttrs && this.collectAll;
      }
    }
    if (collectAttrs) {
      this.attrCount = 0;
      this.attrSet = null;
    }
    if (c === 0x3e) return p + 1;
    // Attribute states. c is s[p]: whitespace or '/'.
    for (;;) {
      // before attribute name (also reached from self-closing start tag / after quoted value)
      let slashAt = -1;
      while (p < n) {
        c = s.charCodeAt(p);
        if (c === 0x2f) slashAt = p++;
        else if (isWs(c)) p++;
        else break;
      }
      if (p >= n) return -1;
      if (c === 0x3e) {
        this.selfClosing = slashAt === p - 1; // "/>" seen in the self-closing start tag state
        return p + 1;
      }
      // attribute name: the first char may be '=' (it is part of the name then)
      const an = p;
      p++;
      for (; p < n; p++) {
        c = s.charCodeAt(p);
        if (isWs(c) || c === 0x2f || c === 0x3e || c === 0x3d) break;
      }
      if (p >= n) return -1;
      const ae = p;
      // after attribute name
      while (p < n && isWs((c = s.charCodeAt(p)))) p++;
      if (p >= n) return -1;
      if (c !== 0x3d) {
        // no value: '/', '>' or the start of the next attribute name
        if (collectAttrs) this.addAttr(an, ae, '');
        if (c === 0x3e) return p + 1;
        continue;
      }
      // before attribute value
      p++;
      while (p < n && isWs((c = s.charCodeAt(p)))) p++;
      if (p >= n) return -1;
      if (c === 0x22 || c === 0x27) {
        const q = s.indexOf(c === 0x22 ? '"' : "'", p + 1);
        if (q < 0) return -1;
        if (collectAttrs) this.addAttr(an, ae, s.slice(p + 1, q));
        p = q + 1;
        // after attribute value (quoted): '>' ends, anything else is (re)consumed as before-attribute-name
        if (p >= n) return -1;
        if (s.charCodeAt(p) === 0x3e) return p + 1;
        continue;
      }
      if (c === 0x3e) {
        // missing attribute value: the tag ends, the attribute has the empty value
        if (collectAttrs) this.addAttr(an, ae, '');
        return p + 1;
      }
      // unquoted value
      const vs = p;
      for (; p < n; p++) {
        c = s.charCodeAt(p);
        if (isWs(c) || c === 0x3e) break;
      }
      if (p >= n) return -1;
      if (collectAttrs) this.addAttr(an, ae, s.slice(vs, p));
      if (c === 0x3e) return p + 1;
    }
  }

  private attrSet: Set<string> | null = null;
  private manyAttrs(name: string): boolean {
    if (this.attrSet === null || this.attrSet.size !== this.attrCount) this.attrSet = new Set(this.attrNames.slice(0, this.attrCount));
    if (this.attrSet.has(name)) return true;
    this.attrSet.add(name);
    return false;
  }

  private addAttr(an: number, ae: number, raw: string): void {
    // upper case and NUL found by one pass over the (short) name, not a regex and an indexOf
    const s = this.s;
    let upper = false;
    let nul = false;
    for (let k = an; k < ae; k++) {
      const c = s.charCodeAt(k);
      if (c >= 0x41 && c <= 0x5a) upper = true;
      else if (c === 0) nul = true;
    }
    let name = s.slice(an, ae);
    if (upper) name = asciiLowerName(name);
    if (nul) name = name.replace(/\0/g, '\uFFFD');
    // duplicate attribute: first wins. A Set once a tag has many attributes keeps hostile pages linear.
    const n = this.attrCount;
    if (n < 16 ? this.hasAttr(name) : this.manyAttrs(name)) return;
    this.attrNames[n] = name;
    this.attrRaw[n] = raw;
    this.attrCount = n + 1;
  }

  private hasAttr(name: string): boolean {
    const names = this.attrNames;
    for (let i = 0; i < this.attrCount; i++) if (names[i] === name) return true;
    return false;
  }

  emit(c: LinkCollector, tag: string, text?: string): void {
    c.element(tag, this.lookup, text);
  }

  /** The last tag read (with its attributes collected) has a style attribute. */
  hasStyle(): boolean {
    return this.hasAttr('style');
  }

  /** Full ASCII-lower-cased name of the last tag read by tag() (NUL → U+FFFD as the tokenizer does). */
  fullName(): string {
    let name = this.s.slice(this.nameStart, this.nameEnd);
    if (/[A-Z]/.test(name)) name = asciiLowerName(name);
    if (name.indexOf('\0') >= 0) name = name.replace(/\0/g, '\uFFFD');
    return name;
  }

  /**
   * Inside <svg> (just after its start tag, not self-closing): HTML §13.2.6.5 "rules for parsing
   * tokens in foreign content" for the common case — nested SVG elements, comments, CDATA sections,
   * no raw-text elements, nothing reported (only HTML-namespace elements give links). Keeps the stack
   * of open foreign elements so end tags pop exactly as the tree builder pops them. Returns where
   * HTML scanning resumes (after the end tag that closes the root svg), n at EOF, or -1 when the
   * subtree leaves the common case (breakout tag, integration point, an end tag that would reach an
   * HTML element, </p>, </br>): the page then goes to the reference.
   */
  svgSubtree(p: number): number {
    const s = this.s;
    const n = this.n;
    const stack: string[] = ['svg'];
    for (;;) {
      const lt = s.indexOf('<', p);
      if (lt < 0 || lt + 1 >= n) return n;
      const c = s.charCodeAt(lt + 1);
      if (isAlpha(c)) {
        const end = this.tag(lt + 1, false, false);
        if (end < 0) return n;
        const name = this.fullName();
        if (SVG_BAIL.has(name)) return -1;
        if (!this.selfClosing) {
          if (stack.length >= MAX_FOREIGN_DEPTH) return -1;
          stack.push(name);
        }
        p = end;
        continue;
      }
      if (c === 0x2f) {
        const c2 = s.charCodeAt(lt + 2);
        if (isAlpha(c2)) {
          const end = this.tag(lt + 2, false, false);
          if (end < 0) return n;
          const name = this.fullName();
          if (name === 'p' || name === 'br') return -1;
          const i = stack.lastIndexOf(name);
          if (i < 0) return -1; // would be processed by the HTML rules
          stack.length = i;
          if (i === 0) return end;
          p = end;
        } else if (c2 === 0x3e) {
          p = lt + 3;
        } else if (lt + 2 >= n) {
          return n;
        } else {
          const gt = s.indexOf('>', lt + 2);
          if (gt < 0) return n;
          p = gt + 1;
        }
        continue;
      }
      if (c === 0x21) {
        if (s.startsWith('[CDATA[', lt + 2)) {
          // CDATA section: only in foreign content (case-sensitive), ends at "]]>"
          const k = s.indexOf(']]>', lt + 9);
          if (k < 0) return n;
          p = k + 3;
          continue;
        }
        const e = this.afterBang(lt);
        if (e < 0) return n;
        p = e;
        continue;
      }
      if (c === 0x3f) {
        const gt = s.indexOf('>', lt + 2);
        if (gt < 0) return n;
        p = gt + 1;
        continue;
      }
      p = lt + 1;
    }
  }

  /**
   * Inside <select> (HTML §13.2.6.4.16 "in select", as parse5 8 implements it): every start tag is
   * ignored — no element, no raw-text switch — except option/optgroup/hr (no links), script (script
   * data), and select/input/keygen/textarea, which close the select. Returns where HTML scanning
   * resumes: after </select> or <select>, AT an <input>/<keygen>/<textarea> start tag (reprocessed
   * by the caller), n at EOF, or -1 for table-related tags and template ("in select in table"
   * depends on context the scanner does not track): the page then goes to the reference.
   */
  selectContent(p: number, requisites = false): number {
    const s = this.s;
    const n = this.n;
    for (;;) {
      const lt = s.indexOf('<', p);
      if (lt < 0 || lt + 1 >= n) return n;
      const c = s.charCodeAt(lt + 1);
      if (isAlpha(c)) {
        const end = this.tag(lt + 1, this.collectAll, this.collectAll);
        if (end < 0) return n;
        const name = this.fullName();
        if (SELECT_BAIL.has(name)) return -1;
        if (name === 'select') return end;
        if (name === 'input' || name === 'keygen' || name === 'textarea') return lt;
        // With requisites, a script (the tree builder creates it here) or an option's style
        // attribute would be one: the reference reads those pages.
        if (requisites && (name === 'script' || (this.collectAll && this.hasStyle()))) return -1;
        p = name === 'script' ? this.endOfScript(end) : end;
        continue;
      }
      if (c === 0x2f) {
        const c2 = s.charCodeAt(lt + 2);
        if (isAlpha(c2)) {
          const end = this.tag(lt + 2, false, false);
          if (end < 0) return n;
          const name = this.fullName();
          if (name === 'select') return end;
          if (SELECT_BAIL.has(name)) return -1;
          p = end;
        } else if (c2 === 0x3e) {
          p = lt + 3;
        } else if (lt + 2 >= n) {
          return n;
        } else {
          const gt = s.indexOf('>', lt + 2);
          if (gt < 0) return n;
          p = gt + 1;
        }
        continue;
      }
      if (c === 0x21) {
        const e = this.afterBang(lt);
        if (e < 0) return n;
        p = e;
        continue;
      }
      if (c === 0x3f) {
        const gt = s.indexOf('>', lt + 2);
        if (gt < 0) return n;
        p = gt + 1;
        continue;
      }
      p = lt + 1;
    }
  }

  /**
   * After a <frameset> that replaced the body (HTML "in frameset" / "after frameset" / "after after
   * frameset"): only <frame> (inside a frameset), nested <frameset>, </frameset> and <noframes>
   * (RAWTEXT) do anything; every other tag is ignored, with no raw-text switch. Scans to EOF.
   */
  framesetContent(p: number, col: LinkCollector): void {
    const s = this.s;
    const n = this.n;
    let depth = 1;
    for (;;) {
      const lt = s.indexOf('<', p);
      if (lt < 0 || lt + 1 >= n) return;
      const c = s.charCodeAt(lt + 1);
      if (isAlpha(c)) {
        const end = this.tag(lt + 1, true, true);
        if (end < 0) return;
        const name = this.tagNameLower;
        p = end;
        if (name === 'frame' && depth > 0) this.emit(col, 'frame');
        else if (name === 'frameset' && depth > 0) depth++;
        else if (name === 'noframes') p = this.endOfRawText(end, name);
        continue;
      }
      if (c === 0x2f) {
        const c2 = s.charCodeAt(lt + 2);
        if (isAlpha(c2)) {
          const end = this.tag(lt + 2, false, false);
          if (end < 0) return;
          if (depth > 0 && this.fullName() === 'frameset') depth--;
          p = end;
        } else if (c2 === 0x3e) {
          p = lt + 3;
        } else if (lt + 2 >= n) {
          return;
        } else {
          const gt = s.indexOf('>', lt + 2);
          if (gt < 0) return;
          p = gt + 1;
        }
        continue;
      }
      if (c === 0x21) {
        const e = this.afterBang(lt);
        if (e < 0) return;
        p = e;
        continue;
      }
      if (c === 0x3f) {
        const gt = s.indexOf('>', lt + 2);
        if (gt < 0) return;
        p = gt + 1;
        continue;
      }
      p = lt + 1;
    }
  }

  /** After "<!" at lt (not CDATA): end of the comment / DOCTYPE / bogus comment, or -1 at EOF. */
  afterBang(lt: number): number {
    const s = this.s;
    if (s.charCodeAt(lt + 2) === 0x2d && s.charCodeAt(lt + 3) === 0x2d) {
      const p = lt + 4;
      const c0 = s.charCodeAt(p);
      if (c0 === 0x3e) return p + 1; // "<!-->"
      if (c0 === 0x2d && s.charCodeAt(p + 1) === 0x3e) return p + 2; // "<!--->"
      const e1 = s.indexOf('-->', p);
      // "--!>" is rare: remember the next one, or that there is none, so that a page with many
      // comments does not rescan to its end for every comment (quadratic otherwise)
      if (this.bangNext !== -1 && this.bangNext < p) this.bangNext = s.indexOf('--!>', p);
      const e2 = this.bangNext;
      if (e1 < 0 && e2 < 0) return -1;
      return e2 < 0 || (e1 >= 0 && e1 < e2) ? e1 + 3 : e2 + 4;
    }
    const gt = s.indexOf('>', lt + 2);
    return gt < 0 ? -1 : gt + 1;
  }

  /** Start of the appropriate end tag `</name` + (ws | '/' | '>'), ASCII case-insensitive; n if none. */
  endOfRawText(p: number, name: string): number {
    const s = this.s;
    const len = name.length;
    for (;;) {
      const k = s.indexOf('</', p);
      if (k < 0) return this.n;
      let ok = true;
      for (let j = 0; j < len; j++) {
        const c = s.charCodeAt(k + 2 + j) | 0x20; // ASCII letters only compare equal after |0x20
        if (c !== name.charCodeAt(j)) {
          ok = false;
          break;
        }
      }
      if (ok) {
        const t = s.charCodeAt(k + 2 + len);
        if (isWs(t) || t === 0x2f || t === 0x3e) return k;
      }
      p = k + 2;
    }
  }

  /** Script data states (§13.2.5.4, .15–.32). Returns the index of the closing `</script`, or n. */
  endOfScript(p: number): number {
    const s = this.s;
    const n = this.n;
    for (;;) {
      // script data state: only '<' matters
      const k = s.indexOf('<', p);
      if (k < 0) return n;
      const c1 = s.charCodeAt(k + 1);
      if (c1 === 0x2f) {
        if (this.isScriptEnd(k)) return k;
        p = k + 2;
        continue;
      }
      if (c1 === 0x21 && s.charCodeAt(k + 2) === 0x2d && s.charCodeAt(k + 3) === 0x2d) {
        const r = this.escapedScript(k + 4);
        if (r.end >= 0) return r.end;
        p = r.resume;
        continue;
      }
      p = k + 1;
    }
  }

  private isScriptEnd(k: number): boolean {
    const s = this.s;
    if ((s.charCodeAt(k + 2) | 0x20) !== 0x73 || (s.charCodeAt(k + 3) | 0x20) !== 0x63 || (s.charCodeAt(k + 4) | 0x20) !== 0x72
      || (s.charCodeAt(k + 5) | 0x20) !== 0x69 || (s.charCodeAt(k + 6) | 0x20) !== 0x70 || (s.charCodeAt(k + 7) | 0x20) !== 0x74) return false;
    const t = s.charCodeAt(k + 8);
    return isWs(t) || t === 0x2f || t === 0x3e;
  }

  /** `s[p..]` case-insensitively spells "script" followed by ws, '/' or '>'. */
  private isScriptWord(p: number): boolean {
    return this.isScriptEnd(p - 2);
  }

  /**
   * Script data escaped / double-escaped states, entered right after "<!--" (in the "escaped dash
   * dash" state). Returns {end} = index of the `</script` that ends the element, or {resume} = where
   * plain script data continues after "-->".
   */
  private escapedScript(p: number): { end: number; resume: number } {
    const s = this.s;
    const n = this.n;
    let dashes = 2; // consecutive '-' just seen (2 = "dash dash" state)
    let dbl = false;
    while (p < n) {
      const c = s.charCodeAt(p);
      if (c === 0x2d) {
        dashes++;
        p++;
        continue;
      }
      if (c === 0x3e && dashes >= 2) return { end: -1, resume: p + 1 };
      dashes = 0;
      if (c === 0x3c) {
        const c1 = s.charCodeAt(p + 1);
        if (!dbl) {
          if (c1 === 0x2f && this.isScriptEnd(p)) return { end: p, resume: 0 };
          if (isAlpha(c1) && this.isScriptWord(p + 1)) {
            dbl = true;
            p += 7; // "<script"; the terminator is consumed as ordinary escaped text
            continue;
          }
        } else if (c1 === 0x2f && this.isScriptWord(p + 2)) {
          dbl = false;
          p += 8; // "</script"
          continue;
        }
      }
      p++;
    }
    return { end: n, resume: n };
  }
}
