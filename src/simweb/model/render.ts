/**
 * HTML rendering of the simulated web's pages: the link plan (link-plan.ts) serialized into the
 * markup a crawler meets — <a>, <area>, <iframe>, <frame>, <link>, <base>, relative and absolute
 * hrefs in several spellings, sloppy markup on 'malformed' hosts, legacy charsets — padded with
 * filler text to the page's size, plus the calendar and repeated-segment trap pages.
 *
 * Invariant: every href resolves (with the page's base) to exactly the planned target, so the
 * ground truth of pageLinks is what a conforming parser extracts. Cost: O(links) bytes written
 * per page into a reused writer; the filler (2 × 1 MiB, made once) is shared by slices, never
 * copied.
 */
import { h2, h4, below } from './hash.js';
import { ByteWriter, L } from './byte-writer.js';
import type { HostInfo, HostModel } from './host-model.js';
import { S_FILLER } from './host-model.js';
import { makeBinaryFiller } from './binary-filler.js';
import { KIND_FARM, KIND_PLD, KIND_SPECIAL, LinkPlan, planLinks } from './link-plan.js';

const B_WWW = L('www.'), B_H = L('h'), B_DOT = L('.'), B_PLD = L('pld'), B_FARM = L('farm'), B_TEST = L('.test');
const B_HTTP = L('http://'), B_SLASH2 = L('//'), B_P = L('/p/'), B_DOTSLASH = L('./'), B_UP_P = L('../p/'), B_SID = L('?sid=');
const B_HASH_S = L('#s'), B_HASH_TOP = L('#top');
const B_DOCTYPE = L('<!DOCTYPE html>\n<html lang="en"><head>'), B_TITLE = L('<title>'), B_PAGE = L(' page '), B_TITLE_END = L('</title>\n');
const B_BASE = L('<base href="'), B_BASE_END = L('/p/">\n'), B_LINK = L('<link rel="alternate" href="'), B_LINK_END = L('">\n');
const B_HEAD_END = L('</head>\n'), B_BODY = L('<body><h1>'), B_H1_END = L('</h1>\n'), B_P_OPEN = L('<p>');
const B_UL = L('</p>\n<ul>\n'), B_UL_END = L('</ul>\n<p>'), B_DIV = L('</p>\n<div class="nav">\n'), B_DIV_END = L('</div>\n<p>');
const B_P_CLOSE = L('</p>\n'), B_END = L('</body></html>\n');
const B_FRAMESET = L('<frameset cols="50%,*">\n'), B_NOFRAMES = L('<noframes>');
// Per tag (0 a, 1 area, 2 iframe, 3 link, 4 frame): before the href, after it, after the number.
const TAG_OPEN = [L('<li><a href="'), L('<map><area shape="rect" coords="0,0,9,9" href="'), L('<iframe src="'), L(''), L('<frame src="')];
const TAG_MID = [L('">link '), L('" alt="a'), L('" width="10" height="10"></iframe>\n'), L(''), L('" name="f')];
const TAG_END = [L('</a></li>\n'), L('"></map>\n'), L(''), L(''), L('">')];

const WORDS = ('lorem ipsum dolor sit amet crawler frontier budget queue politeness robots server domain link page ' +
  'graph index search spider harvest archive record bucket merge sort disk cache batch delay host address ' +
  'network packet socket stream buffer anchor section paragraph table figure chapter theorem model estimate ' +
  'measure result average uniform random power law degree reputation spam trap calendar session redirect').split(' ');

const FILLER_BYTES = 1 << 20;

/** A rendered body: chunks (filler slices are shared, never copied) and metadata. */
export interface RenderedBody {
  contentType: string;
  chunks: Buffer[];
  length: number;
}

export class PageRenderer {
  /** Scratch state for rendering (one page at a time; rendering is synchronous). */
  readonly plan = new LinkPlan();
  private readonly writer = new ByteWriter();
  private readonly slowWriter = new ByteWriter();
  private readonly portBytes: Buffer;
  /** The host of the page being rendered, and its encoded origin (see wOrigin). */
  private curKind = -1;
  private curA = -1;
  private curB = -1;
  private curOrigin: Buffer = Buffer.alloc(0);
  /** Encoded origins of recently rendered hosts (bounded: cleared at 4096 entries). */
  private readonly originCache = new Map<string, Buffer>();
  private readonly filler: Buffer;
  private readonly fillerLatin: Buffer;
  /** binary bytes (binary-filler.ts) that image and PDF stream bodies are sliced from */
  private readonly fillerBinary: Buffer;

  constructor(
    private readonly m: HostModel,
    port: number,
    /** Origin of a host: `http://name:port` (WebGraph.origin). */
    private readonly origin: (host: string) => string,
  ) {
    this.portBytes = L(port === 80 ? '' : `:${port}`);
    this.filler = this.makeFiller(false);
    this.fillerLatin = this.makeFiller(true);
    this.fillerBinary = makeBinaryFiller(this.m.seed);
  }

  private originBytes(host: string): Buffer {
    let b = this.originCache.get(host);
    if (!b) {
      if (this.originCache.size >= 4096) this.originCache.clear();
      b = L(this.origin(host));
      this.originCache.set(host, b);
    }
    return b;
  }

  /** Write a host name (lower- or upper-case) for plan entry t. */
  private wHost(w: ByteWriter, kind: number, a: number, b: number, upper: boolean): void {
    if (upper) {
      w.litUpper(b === 0 ? B_WWW : B_H);
      if (b !== 0) { w.uint(b); w.lit(B_DOT); }
      w.litUpper(kind === KIND_FARM ? B_FARM : B_PLD);
      w.uint(a);
      w.litUpper(B_TEST);
      return;
    }
    if (b === 0) w.lit(B_WWW); else { w.buf[w.pos++] = 104 /* h */; w.uint(b); w.buf[w.pos++] = 46 /* . */; }
    w.lit(kind === KIND_FARM ? B_FARM : B_PLD);
    w.uint(a);
    w.lit(B_TEST);
  }

  /** Write "http://host:port" for a plan target. */
  private wOrigin(w: ByteWriter, kind: number, a: number, b: number, upper: boolean): void {
    if (!upper && b === this.curB && a === this.curA && kind === this.curKind) {
      // Most absolute links point at the page's own host: copy its pre-encoded origin.
      w.lit(this.curOrigin);
      return;
    }
    w.lit(B_HTTP);
    this.wHost(w, kind, a, b, upper);
    w.lit(this.portBytes);
  }

  private wPath(w: ByteWriter, plan: LinkPlan, t: number, relative: 0 | 1 | 2 | 3): void {
    // relative: 0 '/p/m', 1 'm', 2 './m', 3 '../p/m'
    if (plan.kind[t] === KIND_SPECIAL) { w.str(plan.special[t]!); return; }
    if (relative === 0) w.lit(B_P); else if (relative === 2) w.lit(B_DOTSLASH); else if (relative === 3) w.lit(B_UP_P);
    w.uint(plan.page[t]!);
    const sid = plan.sid[t]!;
    if (sid >= 0) { w.lit(B_SID); w.hex8(sid); }
  }

  /** Serialize entry t's href so that (with the page's base) it resolves to the target. */
  private wHref(w: ByteWriter, plan: LinkPlan, t: number, baseKind: number, baseA: number, baseB: number): void {
    const kind = plan.kind[t]!, a = plan.a[t]!, b = plan.b[t]!, r = plan.r[t]!;
    const form = r % 10;
    const special = kind === KIND_SPECIAL;
    const tk = special ? KIND_PLD : kind;
    if (tk === baseKind && a === baseA && b === baseB) {
      switch (form) {
        case 0: case 1: this.wPath(w, plan, t, 0); return;
        case 2: this.wPath(w, plan, t, special ? 0 : 1); return;
        case 3: this.wPath(w, plan, t, special ? 0 : 2); return;
        case 4: this.wPath(w, plan, t, special ? 0 : 3); return;
        case 5: this.wPath(w, plan, t, 0); w.lit(B_HASH_S); w.uint(r % 7); return;
        case 6: this.wOrigin(w, tk, a, b, true); this.wPath(w, plan, t, 0); return;
        default: this.wOrigin(w, tk, a, b, false); this.wPath(w, plan, t, 0); return;
      }
    }
    switch (form) {
      case 0: this.wOrigin(w, tk, a, b, true); this.wPath(w, plan, t, 0); return;
      case 1: w.lit(B_SLASH2); this.wHost(w, tk, a, b, false); w.lit(this.portBytes); this.wPath(w, plan, t, 0); return;
      case 2: this.wOrigin(w, tk, a, b, false); this.wPath(w, plan, t, 0); w.lit(B_HASH_TOP); return;
      default: this.wOrigin(w, tk, a, b, false); this.wPath(w, plan, t, 0); return;
    }
  }

  /** A filler slice of `len` bytes for (host, n, salt). */
  private fill(info: HostInfo, n: number, len: number, salt: number, latin: boolean | 'binary'): Buffer {
    const src = latin === 'binary' ? this.fillerBinary : latin ? this.fillerLatin : this.filler;
    len = Math.max(0, Math.min(len, src.length >> 1));
    const off = below(h4(this.m.seed ^ S_FILLER, info.hostIndex ^ (info.pldIndex << 8), n, salt), src.length - len);
    return src.subarray(off, off + len);
  }

  /** Render /p/n (query `sid` only on session-trap hosts). Returns null when the page does not exist. */
  renderPage(info: HostInfo, n: number, sid = 0): RenderedBody | null {
    if (!(n >= 0 && n < info.pages)) return null;
    const kind = this.m.pageKind(info, n);
    const size = this.m.pageBytes(info, n);
    if (kind === 'text' || kind === 'pdf' || kind === 'image') {
      const chunks: Buffer[] = [];
      if (kind === 'pdf') chunks.push(L('%PDF-1.4\n%\xe2\xe3\xcf\xd3\nstream\n'), this.fill(info, n, size - 39, 1, 'binary'), L('\nendstream\n%%EOF\n'));
      else if (kind === 'image') chunks.push(L('\x89PNG\r\n\x1a\n'), this.fill(info, n, size - 8, 1, 'binary'));
      else chunks.push(this.fill(info, n, size, 1, false));
      return finish(kind === 'pdf' ? 'application/pdf' : kind === 'image' ? 'image/png' : 'text/plain; charset=utf-8', chunks);
    }
    const plan = this.plan;
    planLinks(this.m, info, n, sid, plan);
    const w = this.writer;
    w.reset();
    const malformed = info.behaviour === 'malformed';
    const latin = info.charset !== null;
    const metaCharset = latin && info.charset!.where !== 'header' ? info.charset!.name : latin ? null : 'utf-8';
    const selfKind = info.farm >= 0 ? KIND_FARM : KIND_PLD;
    const selfA = info.farm >= 0 ? info.farm : info.pldIndex;
    const baseB = plan.baseHost < 0 ? info.hostIndex : plan.baseHost;
    this.curKind = selfKind;
    this.curA = selfA;
    this.curB = info.hostIndex;
    this.curOrigin = this.originBytes(info.name);
    // Part A: head (+ <link> elements) and the top of the body.
    w.ensure(4096 + plan.n * 400);
    w.lit(B_DOCTYPE);
    if (metaCharset) w.str((n & 1) ? `<meta http-equiv="Content-Type" content="text/html; charset=${metaCharset}">` : `<meta charset="${metaCharset}">`);
    w.lit(B_TITLE); w.str(info.name); w.lit(B_PAGE); w.uint(n); w.lit(B_TITLE_END);
    if (plan.baseHost >= 0) { w.lit(B_BASE); this.wOrigin(w, KIND_PLD, info.pldIndex, plan.baseHost, false); w.lit(B_BASE_END); }
    for (let t = 0; t < plan.n; t++) {
      if (plan.tag[t] !== 3) continue;
      w.lit(B_LINK); this.wHref(w, plan, t, selfKind, selfA, baseB); w.lit(B_LINK_END);
    }
    w.lit(B_HEAD_END);
    // Section bounds clamped to the plan: a page of 0 or 1 links must not render entries past plan.n
    // (the scratch plan still holds the previous page's links there).
    const n1 = Math.min(plan.n, Math.ceil(plan.n / 3));
    const n2 = Math.min(plan.n, 2 * n1);
    if (kind === 'frameset') {
      w.lit(B_FRAMESET);
      this.wLinks(w, plan, 0, plan.n, malformed, selfKind, selfA, baseB);
      w.lit(B_NOFRAMES);
      const a = w.take();
      return finish(contentTypeHtml(info), [a, this.fill(info, n, size - 400, 1, false), L('</noframes></frameset></html>\n')]);
    }
    w.lit(B_BODY); w.str(info.name); w.lit(B_PAGE); w.uint(n); w.lit(B_H1_END);
    if (malformed) {
      w.str(`<!-- <a href="/p/${info.pages + 1000}">commented out</a> -->\n<script>var s='<a href="/p/${info.pages + 1001}">';</script>\n` +
        `<textarea><a href="/p/${info.pages + 1002}"></textarea>\n<DIV><P>unclosed <B>bold <I>italic</B></I>\n</SPAN></TD>\n`);
    }
    w.lit(B_P_OPEN);
    const endA = w.pos;
    w.lit(B_UL); this.wLinks(w, plan, 0, n1, malformed, selfKind, selfA, baseB); w.lit(B_UL_END);
    const endB = w.pos;
    w.lit(B_DIV); this.wLinks(w, plan, n1, n2, malformed, selfKind, selfA, baseB); w.lit(B_DIV_END);
    const endC = w.pos;
    w.lit(B_P_CLOSE); this.wLinks(w, plan, n2, plan.n, malformed, selfKind, selfA, baseB); w.lit(B_END);
    const all = w.take();
    const fl = Math.max(64, size - all.length);
    const a = Math.floor(fl / 3);
    return finish(contentTypeHtml(info), [
      all.subarray(0, endA), this.fill(info, n, a, 1, latin),
      all.subarray(endA, endB), this.fill(info, n, a, 2, latin),
      all.subarray(endB, endC), this.fill(info, n, fl - 2 * a, 3, latin),
      all.subarray(endC),
    ]);
  }

  /** Write the body elements (all tags but <link>) of plan entries [from, to). */
  private wLinks(w: ByteWriter, plan: LinkPlan, from: number, to: number, malformed: boolean, selfKind: number, selfA: number, baseB: number): void {
    for (let t = from; t < to; t++) {
      const tag = plan.tag[t]!;
      if (tag === 3) continue;
      if (tag === 0 && malformed) {
        w.str(sloppyAnchor(this.hrefString(plan, t, selfKind, selfA, baseB), plan.r[t]!, t));
        continue;
      }
      w.lit(TAG_OPEN[tag]!);
      this.wHref(w, plan, t, selfKind, selfA, baseB);
      w.lit(TAG_MID[tag]!);
      if (tag !== 2) { w.uint(t); w.lit(TAG_END[tag]!); }
    }
  }

  /** The href of plan entry t as a string (slow path, for the sloppy serializations). */
  private hrefString(plan: LinkPlan, t: number, baseKind: number, baseA: number, baseB: number): string {
    const w = this.slowWriter;
    w.reset();
    w.ensure(1024);
    this.wHref(w, plan, t, baseKind, baseA, baseB);
    return w.buf.toString('latin1', 0, w.pos);
  }

  /** Calendar trap page /cal/<y>/<m>: links to the previous and next month and the next year. */
  renderCalendar(info: HostInfo, y: number, m: number): RenderedBody {
    const prev = m === 1 ? `/cal/${y - 1}/12` : `/cal/${y}/${m - 1}`;
    const next = m === 12 ? `/cal/${y + 1}/1` : `/cal/${y}/${m + 1}`;
    const html = `<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Calendar ${y}-${m}</title></head><body>\n` +
      `<h1>${y}-${String(m).padStart(2, '0')}</h1>\n<a href="${prev}">previous</a> <a href="${next}">next</a> ` +
      `<a href="/cal/${y + 1}/${m}">next year</a> <a href="/p/0">home</a>\n<p>No events.</p></body></html>\n`;
    return finish('text/html; charset=utf-8', [Buffer.from(html, 'latin1')]);
  }

  /** Repeated-segment trap page under /t/: relative links that append segments forever. */
  renderRepeat(path: string): RenderedBody {
    const html = `<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>${path}</title></head><body>\n` +
      `<a href="a/">a</a> <a href="b/">b</a> <a href="../">up</a> <a href="/p/0">home</a>\n</body></html>\n`;
    return finish('text/html; charset=utf-8', [Buffer.from(html, 'latin1')]);
  }

  private makeFiller(latin: boolean): Buffer {
    // Plain words and newlines only — no markup, no '&' or '<' — so any slice is valid HTML text,
    // and single-byte characters only, so a slice never splits a character.
    const b = Buffer.allocUnsafe(FILLER_BYTES);
    let pos = 0, col = 0, w = 0;
    while (pos < FILLER_BYTES) {
      const word = WORDS[h2(this.m.seed ^ S_FILLER ^ (latin ? 0x77 : 0), w++) % WORDS.length]!;
      for (let i = 0; i < word.length && pos < FILLER_BYTES; i++) {
        const c = word.charCodeAt(i);
        b[pos++] = latin && (w & 3) === 0 ? 0xc0 + (c - 97) : c;
      }
      col += word.length + 1;
      if (pos < FILLER_BYTES) b[pos++] = col > 72 ? 10 : 32;
      if (col > 72) col = 0;
    }
    return b;
  }
}

function contentTypeHtml(info: HostInfo): string {
  if (info.charset && info.charset.where !== 'meta') return `text/html; charset=${info.charset.name}`;
  if (info.charset) return 'text/html';
  return 'text/html; charset=utf-8';
}

function finish(contentType: string, chunks: Buffer[]): RenderedBody {
  let length = 0;
  for (const c of chunks) length += c.length;
  return { contentType, chunks, length };
}

/** Sloppy but HTML5-parseable anchors: the link is still there for a conforming parser. */
function sloppyAnchor(href: string, r: number, t: number): string {
  switch ((r >>> 8) % 6) {
    case 0: return `<A HREF=${href}>link ${t}</A>\n`;
    case 1: return `<a  class=x\thref = '${href}' >link ${t}</a\t>\n`;
    case 2: return `<a href="${href.replace(/\//g, '&#x2F;')}">entity ${t}</a>\n`;
    case 3: return `<li><a title="x > y" href="${href}">gt in attr</a>\n`;
    case 4: return `<p><a\nhref="${href}"\n>newlines</a></p></p>\n`;
    default: return `<a href=" ${href} ">spaces ${t}</a>\n`;
  }
}
