/**
 * URLs a style sheet names (CSS Syntax Level 3, as far as finding them needs it): `url(…)` tokens,
 * quoted or not, and the string of an `@import "…"` rule. Comments are skipped; strings elsewhere
 * are skipped whole (a `url(` inside a string is text); escapes (`\` + up to six hex digits and one
 * whitespace, or `\` + any character) are decoded in the URLs returned. `image-set()`, `@font-face`
 * `src:` and every property name a URL through `url(…)` or a string: only `@import` takes a bare
 * string as a URL. Values are returned as written (not resolved, not deduplicated), in order.
 * Used for a page's page requisites (--requisites): style sheets fetched, `<style>` blocks and
 * `style` attributes of HTML pages (collect.ts). A style attribute holds declarations only (CSS
 * Style Attributes §2): an `@import` there is no rule, so `imports` is false for it.
 */

function isWs(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d;
}
function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}
/** CSS identifier characters (ASCII letters, digits, '-', '_', non-ASCII, escapes start with '\'). */
function isNameChar(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x5f || c >= 0x80;
}

/** Case-insensitive match of ASCII `word` (lower case) at s[p]. */
function at(s: string, p: number, word: string): boolean {
  if (p + word.length > s.length) return false;
  for (let k = 0; k < word.length; k++) if ((s.charCodeAt(p + k) | 0x20) !== word.charCodeAt(k)) return false;
  return true;
}

/** An escape at s[p] (the backslash): [decoded text, index after it]. */
function escape(s: string, p: number): [string, number] {
  let q = p + 1;
  if (q >= s.length) return ['\uFFFD', q];
  const c = s.charCodeAt(q);
  if (!isHex(c)) return [s[q]!, q + 1];
  const start = q;
  while (q < s.length && q - start < 6 && isHex(s.charCodeAt(q))) q++;
  let cp = parseInt(s.slice(start, q), 16);
  if (cp === 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) cp = 0xfffd;
  if (q < s.length && isWs(s.charCodeAt(q))) q++;
  return [String.fromCodePoint(cp), q];
}

/** A string token starting at s[p] (the quote): [value, index after it] (an unclosed string ends at a newline or EOF). */
function string(s: string, p: number): [string, number] {
  const quote = s.charCodeAt(p);
  let out = '';
  let q = p + 1;
  let from = q;
  while (q < s.length) {
    const c = s.charCodeAt(q);
    if (c === quote) return [out + s.slice(from, q), q + 1];
    if (c === 0x0a) return [out + s.slice(from, q), q];
    if (c === 0x5c) {
      out += s.slice(from, q);
      if (q + 1 < s.length && s.charCodeAt(q + 1) === 0x0a) q += 2; // escaped newline: nothing
      else {
        const [t, r] = escape(s, q);
        out += t;
        q = r;
      }
      from = q;
      continue;
    }
    q++;
  }
  return [out + s.slice(from), q];
}

export function cssUrls(css: string, imports = true): string[] {
  const out: string[] = [];
  const n = css.length;
  let p = 0;
  // Quick exit: no url( (and no @import, where it counts) anywhere.
  if (!(imports ? /url\(|@import/i : /url\(/i).test(css)) return out;
  while (p < n) {
    const c = css.charCodeAt(p);
    if (c === 0x2f && css.charCodeAt(p + 1) === 0x2a) {
      const e = css.indexOf('*/', p + 2);
      p = e < 0 ? n : e + 2;
      continue;
    }
    if (c === 0x22 || c === 0x27) {
      p = string(css, p)[1];
      continue;
    }
    if (c === 0x5c) {
      p = escape(css, p)[1];
      continue;
    }
    if (imports && c === 0x40 && at(css, p + 1, 'import') && !isNameChar(css.charCodeAt(p + 7))) {
      p += 7;
      while (p < n && isWs(css.charCodeAt(p))) p++;
      const q = css.charCodeAt(p);
      if (q === 0x22 || q === 0x27) {
        const [v, e] = string(css, p);
        out.push(v);
        p = e;
      }
      continue; // url(…) is found by the branch below
    }
    if ((c | 0x20) === 0x75 && at(css, p, 'url(') && (p === 0 || !isNameChar(css.charCodeAt(p - 1)))) {
      p += 4;
      while (p < n && isWs(css.charCodeAt(p))) p++;
      const q = css.charCodeAt(p);
      if (q === 0x22 || q === 0x27) {
        const [v, e] = string(css, p);
        out.push(v);
        p = e;
        continue;
      }
      // unquoted: up to ')' or whitespace (then only whitespace may come before ')')
      let v = '';
      let from = p;
      while (p < n) {
        const d = css.charCodeAt(p);
        if (d === 0x29 || isWs(d)) break;
        if (d === 0x5c) {
          v += css.slice(from, p);
          const [t, r] = escape(css, p);
          v += t;
          p = r;
          from = p;
          continue;
        }
        if (d === 0x22 || d === 0x27 || d === 0x28) {
          v = '';
          from = p;
          break; // a bad url token: not a URL
        }
        p++;
      }
      v += css.slice(from, p);
      // whitespace may only be followed by ')' (or the end): `url(a b)` is a bad url token
      let q2 = p;
      while (q2 < n && isWs(css.charCodeAt(q2))) q2++;
      if (q2 > p && q2 < n && css.charCodeAt(q2) !== 0x29) {
        p = q2;
        continue;
      }
      if (v !== '') out.push(v);
      continue;
    }
    p++;
  }
  return out;
}

/**
 * A style sheet's bytes as text (CSS Syntax §3.2, "determine the fallback encoding"): a byte order
 * mark wins, then the HTTP charset, then an `@charset "…";` rule at the very start, then UTF-8. A
 * label TextDecoder does not know falls back to UTF-8. Returns the label used.
 */
export function decodeCss(bytes: Uint8Array, httpCharset?: string): { text: string; charset: string } {
  let label = 'utf-8';
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) label = 'utf-8';
  else if (bytes[0] === 0xfe && bytes[1] === 0xff) label = 'utf-16be';
  else if (bytes[0] === 0xff && bytes[1] === 0xfe) label = 'utf-16le';
  else if (httpCharset !== undefined && httpCharset !== '') label = httpCharset;
  else {
    const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, 1024)).toString('latin1');
    const m = /^@charset "([^"]{1,40})";/.exec(head);
    if (m !== null) label = m[1]!;
  }
  try {
    return { text: new TextDecoder(label).decode(bytes), charset: label.toLowerCase() };
  } catch {
    return { text: new TextDecoder('utf-8').decode(bytes), charset: 'utf-8' };
  }
}
