/**
 * Character-encoding determination for HTML bytes, following the WHATWG HTML "determine the
 * character encoding" order (§13.2.3.1) minus the steps a crawler cannot take (user override,
 * parent document, frequency analysis): BOM > transport (HTTP Content-Type charset) > <meta> prescan
 * of the first 1024 bytes (§13.2.3.2) > utf-8. Labels are resolved with TextDecoder, which
 * implements the WHATWG Encoding label table (Node has full ICU: windows-1252, shift_jis, gb18030…);
 * unknown labels are ignored and the next source is tried.
 */
import { TextDecoder } from 'node:util';

/** Canonical encoding name for a WHATWG label, or null when the label is unknown/unsupported. */
function resolveLabel(label: string): string | null {
  const l = label.trim();
  if (l === '') return null;
  // Node's ICU has no x-user-defined; decoding it as windows-1252 keeps ASCII exact (documented deviation).
  if (l.toLowerCase() === 'x-user-defined') return 'windows-1252';
  try {
    return new TextDecoder(l).encoding;
  } catch {
    return null;
  }
}

// One decoder per encoding actually seen (bounded by the ~40 encodings of the WHATWG table).
const decoders = new Map<string, TextDecoder>();
function decoderFor(encoding: string): TextDecoder {
  let d = decoders.get(encoding);
  if (d === undefined) {
    d = new TextDecoder(encoding);
    decoders.set(encoding, d);
  }
  return d;
}

/**
 * windows-1252 done by hand: Node 20's TextDecoder('windows-1252') decodes 0x80–0x9F as C1 controls
 * (it is really ISO-8859-1), while WHATWG maps them to € ‚ ƒ … (Encoding spec index-windows-1252).
 */
const W1252_HIGH =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f' +
  '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';
function decodeWindows1252(b: Uint8Array): string {
  const s = Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1');
  return /[\x80-\x9f]/.test(s) ? s.replace(/[\x80-\x9f]/g, (c) => W1252_HIGH[c.charCodeAt(0) - 0x80]!) : s;
}

/** Encoding named by a byte order mark, or null. */
export function sniffBom(b: Uint8Array): string | null {
  if (b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) return 'utf-8';
  if (b.length >= 2 && b[0] === 0xfe && b[1] === 0xff) return 'utf-16be';
  if (b.length >= 2 && b[0] === 0xff && b[1] === 0xfe) return 'utf-16le';
  return null;
}

function isSp(c: number): boolean {
  return c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d || c === 0x20;
}
function lowerByte(c: number): number {
  return c >= 0x41 && c <= 0x5a ? c + 0x20 : c;
}

/** HTML "extract a character encoding from a meta element" (§2.6.5 / §4.2.5.5). */
function charsetFromContent(s: string): string | null {
  let p = 0;
  const lower = s.toLowerCase();
  for (;;) {
    const k = lower.indexOf('charset', p);
    if (k < 0) return null;
    p = k + 7;
    while (p < s.length && isSp(s.charCodeAt(p))) p++;
    if (s.charCodeAt(p) !== 0x3d) continue;
    p++;
    while (p < s.length && isSp(s.charCodeAt(p))) p++;
    const c = s.charCodeAt(p);
    if (c === 0x22 || c === 0x27) {
      const q = s.indexOf(s[p]!, p + 1);
      return q < 0 ? null : s.slice(p + 1, q);
    }
    let e = p;
    while (e < s.length && !isSp(s.charCodeAt(e)) && s.charCodeAt(e) !== 0x3b) e++;
    return e === p ? null : s.slice(p, e);
  }
}

/**
 * The encoding a <meta> element declares (the prescan's steps for one meta, §13.2.3.2), its
 * attributes read by `next`; null when it declares none the prescan takes.
 */
function metaEncoding(next: () => [string, string] | null): string | null {
  const seen = new Set<string>();
  let gotPragma = false;
  let needPragma: boolean | null = null;
  let charset: string | null = null;
  for (let a = next(); a !== null; a = next()) {
    const [name, value] = a;
    if (seen.has(name)) continue;
    seen.add(name);
    if (name === 'http-equiv') {
      if (value === 'content-type') gotPragma = true;
    } else if (name === 'content') {
      if (charset === null) {
        const label = charsetFromContent(value);
        if (label !== null) {
          charset = label;
          needPragma = true;
        }
      }
    } else if (name === 'charset') {
      charset = value;
      needPragma = false;
    }
  }
  if (needPragma === null || (needPragma && !gotPragma) || charset === null) return null;
  let enc = resolveLabel(charset);
  if (enc === null) return null;
  if (enc === 'utf-16le' || enc === 'utf-16be') enc = 'utf-8';
  if (enc === 'x-user-defined') enc = 'windows-1252';
  return enc;
}

/**
 * The HTML prescan (§13.2.3.2) over the first 1024 bytes: the encoding from the first <meta charset>
 * or <meta http-equiv=content-type content="…charset=…"> that names a supported encoding, else null.
 */
export function prescanCharset(bytes: Uint8Array): string | null {
  const b = bytes.length > 1024 ? bytes.subarray(0, 1024) : bytes;
  const n = b.length;
  let p = 0;
  // "get an attribute": returns [name, value] or null; advances p.
  const getAttr = (): [string, string] | null => {
    while (p < n && (isSp(b[p]!) || b[p] === 0x2f)) p++;
    if (p >= n || b[p] === 0x3e) return null;
    let name = '';
    let value = '';
    for (;;) {
      if (p >= n) return null;
      const c = b[p]!;
      if (c === 0x3d && name !== '') {
        p++;
        break;
      }
      if (isSp(c)) {
        while (p < n && isSp(b[p]!)) p++;
        if (b[p] !== 0x3d) return [name, ''];
        p++;
        break;
      }
      if (c === 0x2f || c === 0x3e) return [name, ''];
      name += String.fromCharCode(lowerByte(c));
      p++;
    }
    while (p < n && isSp(b[p]!)) p++;
    if (p >= n) return null;
    const q = b[p]!;
    if (q === 0x22 || q === 0x27) {
      p++;
      for (;;) {
        if (p >= n) return null;
        const c = b[p]!;
        p++;
        if (c === q) return [name, value];
        value += String.fromCharCode(lowerByte(c));
      }
    }
    if (q === 0x3e) return [name, ''];
    for (;;) {
      if (p >= n) return null;
      const c = b[p]!;
      if (isSp(c) || c === 0x3e) return [name, value];
      value += String.fromCharCode(lowerByte(c));
      p++;
    }
  };
  while (p < n) {
    if (b[p] !== 0x3c) {
      p++;
      continue;
    }
    if (b[p + 1] === 0x21 && b[p + 2] === 0x2d && b[p + 3] === 0x2d) {
      // comment: to the first '>' preceded by "--" that comes after the '<' ("<!-->" closes)
      let k = p + 2;
      while (k + 2 < n && !(b[k] === 0x2d && b[k + 1] === 0x2d && b[k + 2] === 0x3e)) k++;
      if (k + 2 >= n) return null;
      p = k + 3;
      continue;
    }
    const isMeta = lowerByte(b[p + 1] ?? 0) === 0x6d && lowerByte(b[p + 2] ?? 0) === 0x65 && lowerByte(b[p + 3] ?? 0) === 0x74
      && lowerByte(b[p + 4] ?? 0) === 0x61 && (isSp(b[p + 5] ?? 0) || b[p + 5] === 0x2f);
    if (isMeta) {
      p += 6;
      const enc = metaEncoding(getAttr);
      if (enc !== null) return enc;
      continue;
    }
    const c1 = b[p + 1] ?? 0;
    const letter = (lowerByte(c1) >= 0x61 && lowerByte(c1) <= 0x7a);
    const endLetter = c1 === 0x2f && lowerByte(b[p + 2] ?? 0) >= 0x61 && lowerByte(b[p + 2] ?? 0) <= 0x7a;
    if (letter || endLetter) {
      p += endLetter ? 2 : 1;
      while (p < n && !isSp(b[p]!) && b[p] !== 0x3e) p++;
      while (getAttr() !== null) { /* skip attributes (quoted '>' must not end the tag) */ }
      continue;
    }
    if (c1 === 0x21 || c1 === 0x2f || c1 === 0x3f) {
      while (p < n && b[p] !== 0x3e) p++;
      p++;
      continue;
    }
    p++;
  }
  return null;
}

/**
 * Decode HTML bytes to text. Returns the text (without BOM) and the canonical WHATWG encoding name
 * used. Malformed sequences become U+FFFD (never throws).
 */
export function decodeHtml(bytes: Uint8Array, headerCharset?: string): { text: string; charset: string } {
  let enc = sniffBom(bytes);
  if (enc === null && headerCharset !== undefined) enc = resolveLabel(headerCharset);
  if (enc === null) enc = prescanCharset(bytes);
  if (enc === null) enc = 'utf-8';
  if (enc === 'windows-1252') return { text: decodeWindows1252(bytes), charset: enc };
  let d: TextDecoder;
  try {
    d = decoderFor(enc);
  } catch {
    enc = 'utf-8';
    d = decoderFor(enc);
  }
  // TextDecoder drops a BOM matching its own encoding (ignoreBOM defaults to false).
  return { text: d.decode(bytes), charset: d.encoding };
}
