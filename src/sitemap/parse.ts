/**
 * Sitemap parser (sitemaps.org protocol 0.9): XML `<urlset>`, XML `<sitemapindex>` and text
 * sitemaps (one URL per line), fed in byte chunks as they arrive (streaming: RAM is bounded by the
 * longest single construct, MAX_TOKEN_CHARS, not by the file).
 *
 * Hostile input:
 *   - a `<!DOCTYPE` anywhere refuses the whole document (CRAWL_SITEMAP_DOCTYPE): no DTD, so no
 *     entity is ever defined, let alone resolved (XXE, billion laughs). Only XML's five predefined
 *     entities and numeric character references are decoded; a `<loc>` using any other entity is
 *     dropped;
 *   - the protocol's caps (sitemaps.org, "Sitemap file location" / "Using Sitemap index files"):
 *     at most 50,000 entries and 52,428,800 bytes (50 MiB) uncompressed per file. Past either the
 *     parser stops, keeps what it read, and reports CRAWL_SITEMAP_TOO_MANY_URLS or
 *     CRAWL_SITEMAP_TOO_LARGE;
 *   - a construct (tag, comment, text run) longer than MAX_TOKEN_CHARS, or a document that is not
 *     well formed, ends the parse with CRAWL_SITEMAP_MALFORMED; the entries completed before the
 *     fault are kept (a cut-off file still lists its first URLs).
 *
 * Leniency (stated, as crawler-commons does in its non-strict mode): the namespace is not checked
 * (elements are matched on their local name, prefix stripped); `<loc>` and `<lastmod>` are taken
 * only as direct children of `<url>` / `<sitemap>`, so extension elements (`<image:loc>`) are
 * ignored; text is trimmed. RSS and Atom feeds, which the protocol also accepts, are not read
 * (CRAWL_SITEMAP_UNSUPPORTED).
 */

/** The protocol's per-file caps. */
export const SITEMAP_MAX_ENTRIES = 50_000;
export const SITEMAP_MAX_BYTES = 50 * 1024 * 1024;
/** Longest tag, comment, CDATA section or text run kept while looking for its end. */
export const MAX_TOKEN_CHARS = 1 << 20;
/** The protocol requires URLs shorter than 2,048 characters; longer `<loc>`s are dropped. */
export const MAX_LOC_CHARS = 2048;

export type SitemapKind = 'urlset' | 'index' | 'text' | 'unknown';

export interface SitemapEntry {
  /** the `<loc>` text (entity-decoded, trimmed) or a text sitemap's line */
  loc: string;
  /** the `<lastmod>` text (W3C Datetime, as written) or null */
  lastmod: string | null;
  /** listed by a `<sitemapindex>`: the entry is a sitemap, not a page */
  index: boolean;
}

export type SitemapFault =
  | 'CRAWL_SITEMAP_DOCTYPE'
  | 'CRAWL_SITEMAP_MALFORMED'
  | 'CRAWL_SITEMAP_TOO_MANY_URLS'
  | 'CRAWL_SITEMAP_TOO_LARGE'
  | 'CRAWL_SITEMAP_UNSUPPORTED';

export interface SitemapSummary {
  kind: SitemapKind;
  /** entries handed to onEntry */
  entries: number;
  /** entries skipped: empty, over MAX_LOC_CHARS, or with an undefined entity */
  skipped: number;
  /** why the parse stopped early, or null when the whole document was read */
  fault: SitemapFault | null;
  /** bytes consumed (at most SITEMAP_MAX_BYTES) */
  bytes: number;
}

export interface SitemapLimits {
  maxEntries?: number;
  maxBytes?: number;
}

const PREDEFINED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** XML character and predefined-entity references decoded; null if another entity is used. */
export function decodeXmlText(s: string): string | null {
  if (!s.includes('&')) return s;
  let bad = false;
  const out = s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[A-Za-z][A-Za-z0-9._-]*);?/g, (m, ref: string) => {
    if (!m.endsWith(';')) {
      bad = true;
      return m;
    }
    if (ref[0] === '#') {
      const cp = ref[1] === 'x' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      if (!Number.isFinite(cp) || cp <= 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
        bad = true;
        return m;
      }
      return String.fromCodePoint(cp);
    }
    const v = PREDEFINED[ref];
    if (v === undefined) bad = true;
    return v ?? m;
  });
  return bad ? null : out;
}

const localName = (qname: string): string => {
  const i = qname.indexOf(':');
  return i < 0 ? qname : qname.slice(i + 1);
};

/**
 * A streaming sitemap parser: `write` byte chunks, then `end`. Entries go to `onEntry` as soon as
 * they are complete; `done` turns true when the parse stopped (fault or cap) and later writes are
 * ignored.
 */
export class SitemapParser {
  private readonly maxEntries: number;
  private readonly maxBytes: number;
  private readonly dec = new TextDecoder('utf-8', { fatal: false });
  private buf = '';
  private kind: SitemapKind = 'unknown';
  private fault: SitemapFault | null = null;
  private entries = 0;
  private skipped = 0;
  private bytes = 0;
  private started = false;
  /** open elements' local names */
  private readonly stack: string[] = [];
  private rootClosed = false;
  /** the entry being read (inside <url>/<sitemap>) */
  private loc: string | null = null;
  private lastmod: string | null = null;
  private inEntry = false;
  /** text collected for the current <loc>/<lastmod> (raw, entities not yet decoded) */
  private text: string | null = null;
  private textBad = false;

  constructor(private readonly onEntry: (e: SitemapEntry) => void, limits: SitemapLimits = {}) {
    this.maxEntries = limits.maxEntries ?? SITEMAP_MAX_ENTRIES;
    this.maxBytes = limits.maxBytes ?? SITEMAP_MAX_BYTES;
  }

  get done(): boolean {
    return this.fault !== null;
  }

  write(chunk: Uint8Array): void {
    if (this.fault !== null) return;
    let c = chunk;
    let over = false;
    if (this.bytes + c.byteLength > this.maxBytes) {
      c = c.subarray(0, this.maxBytes - this.bytes);
      over = true;
    }
    this.bytes += c.byteLength;
    this.feed(this.dec.decode(c, { stream: true }), false);
    if (over && this.fault === null) this.stop('CRAWL_SITEMAP_TOO_LARGE');
  }

  end(): SitemapSummary {
    if (this.fault === null) this.feed(this.dec.decode(), true);
    if (this.fault === null) {
      if (this.kind === 'text') {
        this.textLine(this.buf);
        this.buf = '';
      } else if (this.kind === 'urlset' || this.kind === 'index') {
        // A cut-off document: an entry whose <loc> was complete still counts.
        if (this.inEntry) this.emitEntry();
        if (!this.rootClosed) this.fault = 'CRAWL_SITEMAP_MALFORMED';
      } else if (this.fault === null) this.fault = this.started ? 'CRAWL_SITEMAP_UNSUPPORTED' : 'CRAWL_SITEMAP_MALFORMED';
    }
    this.buf = '';
    return { kind: this.kind, entries: this.entries, skipped: this.skipped, fault: this.fault, bytes: this.bytes };
  }

  private stop(f: SitemapFault): void {
    if (this.fault === null) this.fault = f;
    this.buf = '';
  }

  private feed(s: string, last: boolean): void {
    this.buf += s;
    if (!this.started) {
      const t = this.buf.replace(/^[\ufeff\s]+/, '');
      if (t === '') {
        this.buf = '';
        return;
      }
      this.started = true;
      this.buf = t;
      if (t[0] !== '<') this.kind = 'text';
    }
    if (this.kind === 'text') this.feedText(last);
    else this.feedXml();
    if (this.fault === null && this.buf.length > MAX_TOKEN_CHARS) this.stop('CRAWL_SITEMAP_MALFORMED');
  }

  // -- text sitemaps: one URL per line (UTF-8) --------------------------------------------------

  private feedText(last: boolean): void {
    let nl: number;
    while (this.fault === null && (nl = this.buf.indexOf('\n')) >= 0) {
      this.textLine(this.buf.slice(0, nl));
      this.buf = this.buf.slice(nl + 1);
    }
    if (last && this.fault === null) {
      this.textLine(this.buf);
      this.buf = '';
    }
  }

  private textLine(line: string): void {
    const t = line.trim();
    if (t === '') return;
    this.add(t, null);
  }

  // -- XML ----------------------------------------------------------------------------------------

  private feedXml(): void {
    let i = 0;
    const b = this.buf;
    while (this.fault === null && i < b.length) {
      const lt = b.indexOf('<', i);
      if (lt < 0) {
        // Text up to the end of what we have: taken now (a <loc>'s text is accumulated, bounded;
        // whitespace between elements is dropped), so a long run never sits in the buffer.
        this.onText(b.slice(i));
        i = b.length;
        break;
      }
      if (lt > i) this.onText(b.slice(i, lt));
      if (this.fault !== null) return;
      if (b.startsWith('<!--', lt)) {
        const e = b.indexOf('-->', lt + 4);
        if (e < 0) return this.keep(lt);
        i = e + 3;
      } else if (b.startsWith('<![CDATA[', lt)) {
        const e = b.indexOf(']]>', lt + 9);
        if (e < 0) return this.keep(lt);
        this.onCdata(b.slice(lt + 9, e));
        i = e + 3;
      } else if (b.startsWith('<?', lt)) {
        const e = b.indexOf('?>', lt + 2);
        if (e < 0) return this.keep(lt);
        i = e + 2;
      } else if (b.startsWith('<!', lt)) {
        // A construct whose opening is still arriving (`<!-`, `<![CD`, `<!DOC`): wait for it.
        const head = b.slice(lt).toUpperCase();
        if (head.length < 9 && ['<!--', '<![CDATA[', '<!DOCTYPE'].some((o) => o.startsWith(head))) return this.keep(lt);
        // <!DOCTYPE: no DTD is ever accepted.
        return this.stop(b.slice(lt, lt + 9).toUpperCase() === '<!DOCTYPE' ? 'CRAWL_SITEMAP_DOCTYPE' : 'CRAWL_SITEMAP_MALFORMED');
      } else {
        const e = tagEnd(b, lt + 1);
        if (e < 0) return this.keep(lt);
        this.onTag(b.slice(lt + 1, e));
        i = e + 1;
      }
    }
    this.keep(i);
  }

  private keep(from: number): void {
    this.buf = this.fault === null ? this.buf.slice(from) : '';
  }

  private onText(raw: string): void {
    if (this.text !== null) this.appendText(raw);
    else if (this.rootClosed || this.stack.length === 0) {
      if (raw.trim() !== '') this.stop('CRAWL_SITEMAP_MALFORMED');
    }
  }

  private onCdata(s: string): void {
    if (this.text !== null) this.appendText(s.replace(/&/g, '&amp;').replace(/</g, '&lt;'));
  }

  private appendText(s: string): void {
    if (this.text!.length + s.length > MAX_LOC_CHARS * 4) {
      this.textBad = true;
      return;
    }
    this.text += s;
  }

  private onTag(body: string): void {
    if (body[0] === '/') {
      const name = localName(body.slice(1).trim());
      const open = this.stack.pop();
      if (open !== name) return this.stop('CRAWL_SITEMAP_MALFORMED');
      this.closed(name);
      return;
    }
    const selfClosing = body.endsWith('/');
    const m = /^[^\s/>]+/.exec(body);
    if (m === null) return this.stop('CRAWL_SITEMAP_MALFORMED');
    const name = localName(m[0]);
    if (this.stack.length === 0) {
      if (this.rootClosed) return this.stop('CRAWL_SITEMAP_MALFORMED');
      if (name === 'urlset') this.kind = 'urlset';
      else if (name === 'sitemapindex') this.kind = 'index';
      else return this.stop('CRAWL_SITEMAP_UNSUPPORTED');
    }
    this.stack.push(name);
    this.opened(name);
    if (selfClosing) {
      this.stack.pop();
      this.closed(name);
    }
  }

  private opened(name: string): void {
    const d = this.stack.length; // 1 = root, 2 = <url>/<sitemap>, 3 = their children
    if (d === 2 && (name === 'url' || name === 'sitemap')) {
      this.inEntry = true;
      this.loc = null;
      this.lastmod = null;
    } else if (d === 3 && this.inEntry && (name === 'loc' || name === 'lastmod')) {
      this.text = '';
      this.textBad = false;
    }
  }

  private closed(name: string): void {
    const d = this.stack.length + 1;
    if (d === 3 && this.text !== null && (name === 'loc' || name === 'lastmod')) {
      const v = this.textBad ? null : decodeXmlText(this.text);
      this.text = null;
      if (name === 'loc') {
        this.loc = v === null ? '' : v.trim(); // an unusable <loc> skips its entry (emitEntry)
      } else this.lastmod = v === null ? null : v.trim();
    } else if (d === 2 && this.inEntry) {
      this.emitEntry();
    } else if (d === 1) {
      this.rootClosed = true;
    }
  }

  private emitEntry(): void {
    this.inEntry = false;
    const loc = this.loc;
    this.loc = null;
    if (loc === null || loc === '') {
      this.skipped++;
      return;
    }
    this.add(loc, this.lastmod);
  }

  private add(loc: string, lastmod: string | null): void {
    if (loc.length > MAX_LOC_CHARS) {
      this.skipped++;
      return;
    }
    if (this.entries >= this.maxEntries) return this.stop('CRAWL_SITEMAP_TOO_MANY_URLS');
    this.entries++;
    this.onEntry({ loc, lastmod, index: this.kind === 'index' });
  }
}

/** Index of the `>` that ends the tag whose name starts at `from` (quotes respected), or -1. */
function tagEnd(b: string, from: number): number {
  let q = '';
  for (let i = from; i < b.length; i++) {
    const c = b[i]!;
    if (q !== '') {
      if (c === q) q = '';
    } else if (c === '"' || c === "'") q = c;
    else if (c === '>') return i;
  }
  return -1;
}

/** Parse a whole document held in memory (tests, small files). */
export function parseSitemap(bytes: Uint8Array, limits?: SitemapLimits): { summary: SitemapSummary; entries: SitemapEntry[] } {
  const entries: SitemapEntry[] = [];
  const p = new SitemapParser((e) => entries.push(e), limits);
  p.write(bytes);
  return { summary: p.end(), entries };
}
