/**
 * Parse worker (runs in a parse-pool.ts thread): the CPU-heavy part of the pipeline, so the event loop
 * keeps only I/O and scheduling (thesis Fig. 2: "crawling threads" → URLseen).
 *
 *   page bytes ─► decodeHtml ─► extractLinks ─► resolve (base href / page URL) + canonicalize
 *     ─► drop nofollow / traps / out-of-scope / include-exclude ─► dedup within the page
 *     ─► fingerprint (hi, lo) + PLD ─► one compact buffer (transferred, not cloned)
 *   + payload digest (sha1, WARC form) of the bytes as transferred
 *
 * Output: the link table of links-codec.ts (URL fingerprint, host key, PLD key, URL text), the WARC
 * group's record list (binary, links-codec.ts) and its gzip members, written in place into one
 * answer buffer per batch.
 *
 * Protocol (parse-pool.ts, through piscina): a task is a WireBatch — several pages in one
 * transferred buffer — answered by one transferred buffer with each page's ParseOutput (or its
 * parser error). Before and after each page the worker writes the page's sequence number into
 * the pool's shared progress array (with the start time), so when a worker dies or hangs the
 * supervisor knows which page of its batches was in progress and which were done or not begun.
 */
import { isMainThread, workerData } from 'node:worker_threads';
import { move } from 'piscina';
import { extractLinks, decodeHtml, payloadDigest, cssUrls, decodeCss } from '../../html/index.js';
import { LinkResolver, canonicalizeUrl, fingerprintInto, fingerprintRunsInto, pldOrHost, trapCheck, unpinned } from '../../url/index.js';
import { encodeExchangeRecordsView, type EncodeOptions, type TruncatedReason } from '../../store/index.js';
import { encodeLinks, writeLinkTableAscii, tableSizeAscii, writeGroupMeta, groupMetaSize, type LinkEntry, type PageInfo, type DroppedLinks } from '../links-codec.js';
import { LinkScope, DROP_CODES } from '../../config/link-scope.js';
import { announceThreadRole } from '../thread-role.js';
export { splitParseOutput, type EncodedGroupLike } from '../links-codec.js';

/**
 * The worker's answer: one transferred buffer (split with `splitParseOutput`):
 *   u32 tableLen | link table (links-codec.ts) | u32 metaLen | the WARC group's record list (writeGroupMeta) | WARC bytes
 */
export type ParseOutput = Uint8Array;

export interface ParseWorkerData {
  images: boolean;
  include: string[];
  exclude: string[];
  scope: 'any' | 'pld' | 'host';
  scopeHosts: string[];
  scopePlds: string[];
  /** WARC encoding matching the crawl's WarcWriter (records are compressed here, in the pool). */
  warc?: EncodeOptions;
  /**
   * Set by ParsePool: progress[seq & PROGRESS_MASK] = seq while page seq is parsed, ~seq once it
   * is done; startedAt[same] = Date.now() at its start (written before the seq).
   */
  progress?: SharedArrayBuffer;
  startedAt?: SharedArrayBuffer;
}

/** Slots of the shared progress arrays (pages in the pool at once stay far below). */
export const PROGRESS_SLOTS = 1 << 16;
export const PROGRESS_MASK = PROGRESS_SLOTS - 1;

/**
 * Several pages as one piscina task: their bytes packed back to back in one transferred buffer,
 * `pages[i].buf` left out (each page's WireTask gets a view of `buf` at `offsets[i]`).
 */
export interface WireBatch {
  batch: 1;
  seqs: number[];
  pages: Omit<WireTask, 'buf'>[];
  /** byte offset of page i's bytes in buf (page i ends where i + 1 starts) */
  offsets: number[];
  buf: Uint8Array;
}

/** Pack pages into one batch (one copy of their bytes; the caller keeps its own). */
export function packBatch(tasks: readonly ParseTask[], seqs: number[]): WireBatch {
  const pages = tasks.map((t) => wireHead(t));
  let total = 0;
  for (const w of pages) total += wireBytes(w);
  const buf = new Uint8Array(total);
  const offsets: number[] = [];
  let o = 0;
  for (let i = 0; i < tasks.length; i++) {
    offsets.push(o);
    packInto(tasks[i]!, pages[i]!, buf, o);
    o += wireBytes(pages[i]!);
  }
  return { batch: 1, seqs, pages, offsets, buf };
}

/** A page's status in a batch answer. */
export const PAGE_OK = 0;
/** The parser threw (the message follows as UTF-8). */
export const PAGE_ERROR = 1;
/** The page is beyond the parser's bounds (CRAWL_PARSE_LIMIT; the message follows as UTF-8). */
export const PAGE_LIMIT = 2;

/**
 * A batch's answer: u32 count, then per page u32 status (PAGE_OK: ParseOutput; PAGE_ERROR,
 * PAGE_LIMIT: a message as UTF-8), u32 length, the bytes.
 */
export function splitBatchOutput(out: Uint8Array): { status: number; bytes: Uint8Array }[] {
  const dv = new DataView(out.buffer, out.byteOffset, out.byteLength);
  const n = dv.getUint32(0, true);
  const r: { status: number; bytes: Uint8Array }[] = [];
  let p = 4;
  for (let i = 0; i < n; i++) {
    const status = dv.getUint32(p, true);
    const len = dv.getUint32(p + 4, true);
    r.push({ status, bytes: out.subarray(p + 8, p + 8 + len) });
    p += 8 + len;
  }
  return r;
}

export interface ParseTask {
  url: string;
  /** bytes as transferred (for the payload digest) */
  body: Uint8Array;
  /** content-decoded bytes (for parsing); may be the same buffer as body */
  decoded: Uint8Array;
  charset?: string;
  /** false for non-HTML payloads: digest only */
  html: boolean;
  /** extract links at all (false past --max-depth) */
  follow: boolean;
  /**
   * extract the page's requisites (--requisites; also past --max-depth, not past a chain of
   * requisites.ts MAX_REQUISITE_HOPS): scripts, style sheets, images … of an HTML page, the URLs in a
   * style sheet (`css`)
   */
  requisites?: boolean;
  /** a style sheet (text/css): its url(…) and @import URLs are its requisites */
  css?: boolean;
  /** when set, also encode the WARC response+request(+metadata) records of this fetch */
  exchange?: { ip: string; dateMs: number; requestHead: Uint8Array; responseHead: Uint8Array; truncated: boolean | TruncatedReason };
}

/**
 * A ParseTask as it crosses the thread boundary (parse-pool.ts packs it): every byte array copied
 * once into one ArrayBuffer that is transferred, not structured-cloned — a clone copies each
 * view's whole backing store (undici's pooled slabs, too) twice (serialize + deserialize).
 *   buf = body | decoded (absent when it is the body) | requestHead | responseHead
 */
export interface WireTask {
  wire: 1;
  url: string;
  charset?: string;
  html: boolean;
  follow: boolean;
  requisites?: boolean;
  css?: boolean;
  /** byte lengths of body, decoded (-1: same bytes as body), requestHead, responseHead (-1: no exchange) */
  lens: [number, number, number, number];
  ip: string;
  dateMs: number;
  truncated: boolean | TruncatedReason;
  buf: Uint8Array;
}

/** A task's WireTask fields (no bytes yet). */
function wireHead(t: ParseTask): Omit<WireTask, 'buf'> {
  const same = t.decoded === t.body || t.decoded.byteLength === 0;
  const x = t.exchange;
  const lens: WireTask['lens'] = [t.body.byteLength, same ? -1 : t.decoded.byteLength, x ? x.requestHead.byteLength : 0, x ? x.responseHead.byteLength : -1];
  return {
    wire: 1, url: t.url, charset: t.charset, html: t.html, follow: t.follow, requisites: t.requisites, css: t.css,
    lens, ip: x?.ip ?? '', dateMs: x?.dateMs ?? 0, truncated: x?.truncated ?? false,
  };
}

function wireBytes(w: Omit<WireTask, 'buf'>): number {
  return w.lens[0] + Math.max(0, w.lens[1]) + w.lens[2] + Math.max(0, w.lens[3]);
}

/** Copy a task's byte arrays into buf at p (the layout of WireTask.buf). */
function packInto(t: ParseTask, w: Omit<WireTask, 'buf'>, buf: Uint8Array, p: number): void {
  const lens = w.lens;
  buf.set(t.body, p);
  p += lens[0];
  if (lens[1] >= 0) {
    buf.set(t.decoded, p);
    p += lens[1];
  }
  const x = t.exchange;
  if (x) {
    buf.set(x.requestHead, p);
    p += lens[2];
    buf.set(x.responseHead, p);
  }
}

/** The inverse of packInto: views into the batch's buffer, no copies. */
export function unpackTask(w: WireTask): ParseTask {
  const [bl, dl, rql, rsl] = w.lens;
  let p = 0;
  const body = w.buf.subarray(p, (p += bl));
  const decoded = dl < 0 ? body : w.buf.subarray(p, (p += dl));
  const t: ParseTask = { url: w.url, body, decoded, charset: w.charset, html: w.html, follow: w.follow, requisites: w.requisites, css: w.css };
  if (rsl >= 0) {
    const requestHead = w.buf.subarray(p, (p += rql));
    const responseHead = w.buf.subarray(p, (p += rsl));
    t.exchange = { ip: w.ip, dateMs: w.dateMs, requestHead, responseHead, truncated: w.truncated };
  }
  return t;
}

/**
 * Links taken from one page at most: the first MAX_OUTLINKS distinct link targets (a value and
 * the same value with another #fragment are one) in document order
 * (the extractor keeps no more: src/html ExtractOptions.maxLinks); the rest are counted in the link
 * table's `extracted`, and the table says the page was capped. 10,000 is STAR's largest budget of
 * one PLD per BEAST pass (the thesis crawl's top PLDs get up to 10K pages, docs/frontier.md): a
 * page naming more URLs than the biggest site is crawled in a pass asks for more than the crawl
 * takes from anyone. It keeps the largest ordinary link lists whole (index pages and long lists run
 * to a few thousand links; Heritrix stops at 6,000 per page) and bounds what one page costs the
 * worker, its link table (about 100 bytes a link) and URLseen: a page of 490,000 links costs what
 * a page of 10,000 does.
 */
export const MAX_OUTLINKS = 10_000;

const data = (workerData ?? {}) as Partial<ParseWorkerData>;
// A bench's CPU accounting per thread role (thread-role.ts; off unless DRUMCRAWL_THREAD_ROLES is set).
if (!isMainThread) announceThreadRole('parse');
// The admission filter shared with the sitemap reader (link-scope.ts).
const linkScope = new LinkScope({
  scope: data.scope ?? 'any', scopeHosts: data.scopeHosts ?? [], scopePlds: data.scopePlds ?? [], include: data.include ?? [], exclude: data.exclude ?? [],
});
const TRAP_CODE = DROP_CODES.indexOf('CRAWL_TRAP_URL');

/** piscina's entry: a batch (the pool's tasks) or one page (tests, benches). */
export default function run(input: WireBatch | ParseTask | WireTask): Uint8Array {
  if ('batch' in input) return move(parseBatch(input) as unknown as ArrayBufferView) as unknown as Uint8Array;
  return parse(input);
}

const progress = data.progress !== undefined ? new Int32Array(data.progress) : null;
const startedAt = data.startedAt !== undefined ? new Float64Array(data.startedAt) : null;

/**
 * The answer being assembled: every page's table, WARC group meta and WARC bytes are written here
 * in place, and only the finished batch is copied out, into the one buffer that is transferred.
 * Building each part as its own buffer would make ~12 ArrayBuffers per page (table, its digest
 * and charset, meta JSON, three record heads, the metadata block, the group's bytes, the page's
 * answer, four digest Buffers), each a malloc'd backing store that V8's ArrayBuffer sweeper (a
 * platform thread) must free later, and copy the WARC bytes three times. Bound: grows to the
 * largest batch answer; a buffer grown past OB_KEEP is dropped after its batch.
 */
const OB_INITIAL = 256 * 1024;
const OB_KEEP = 4 * 1024 * 1024;
let ob = new Uint8Array(OB_INITIAL);
let obv = new DataView(ob.buffer);

/** Room for `need` bytes at `at` (the bytes before `at` are kept). */
function ensure(at: number, need: number): void {
  if (at + need <= ob.byteLength) return;
  const bigger = new Uint8Array(Math.max(ob.byteLength * 2, at + need));
  bigger.set(ob.subarray(0, at));
  ob = bigger;
  obv = new DataView(ob.buffer);
}

function parseBatch(b: WireBatch): Uint8Array {
  // u32 count, then per page u32 status, u32 length, bytes (see splitBatchOutput)
  let p = 4;
  for (let i = 0; i < b.pages.length; i++) {
    const seq = b.seqs[i]!;
    const slot = seq & PROGRESS_MASK;
    if (progress !== null) {
      startedAt![slot] = Date.now();
      Atomics.store(progress, slot, seq);
    }
    const end = i + 1 < b.pages.length ? b.offsets[i + 1]! : b.buf.byteLength;
    ensure(p, 8);
    let status = PAGE_OK;
    let q: number;
    try {
      q = parseInto(unpackTask({ ...b.pages[i]!, buf: b.buf.subarray(b.offsets[i]!, end) }), p + 8);
    } catch (e) {
      const msg = enc.encode((e as Error)?.message ?? String(e));
      ensure(p + 8, msg.byteLength);
      ob.set(msg, p + 8);
      q = p + 8 + msg.byteLength;
      status = (e as { code?: unknown })?.code === 'CRAWL_PARSE_LIMIT' ? PAGE_LIMIT : PAGE_ERROR;
    }
    obv.setUint32(p, status, true);
    obv.setUint32(p + 4, q - p - 8, true);
    p = q;
    if (progress !== null) Atomics.store(progress, slot, ~seq);
  }
  obv.setUint32(0, b.pages.length, true);
  const out = ob.slice(0, p);
  if (ob.byteLength > OB_KEEP) {
    ob = new Uint8Array(OB_INITIAL);
    obv = new DataView(ob.buffer);
  }
  return out;
}

/** One page: its ParseOutput. */
export function parse(input: ParseTask | WireTask): ParseOutput {
  const task = 'wire' in input ? unpackTask(input) : input;
  // parseInto may replace `ob` with a larger buffer: read it only after (`ob.slice(0, parseInto(…))`
  // would slice the buffer the page started in, cutting a page whose output outgrew it).
  const end = parseInto(task, 0);
  return ob.slice(0, end);
}

/**
 * One page's ParseOutput written into `ob` at `at`; returns its end:
 *   u32 tableLen | link table | u32 metaLen | WARC group meta (links-codec.ts) | WARC bytes
 */
function parseInto(task: ParseTask, at: number): number {
  const page = pageLinks(task);
  // the link table (with the page's dropped links as its trailer, for the crawl log)
  ensure(at, 4 + tableSizeAscii(page.urls, page.info, page.dropped));
  let p = writeLinkTableAscii(ob, obv, at + 4, page.urls, pageKeys, page.info, fingerprintRunsInto, page.dropped, pageEmbeds);
  if (p < 0) {
    // a URL that is not ASCII (src/url never makes one; kept general): encodeLinks' general path
    const t = encodeLinks(entries(page.urls), page.info);
    ensure(at + 4, t.byteLength);
    ob.set(t, at + 4);
    p = at + 4 + t.byteLength;
  }
  obv.setUint32(at, p - at - 4, true);
  if (task.exchange === undefined) {
    ensure(p, 4);
    obv.setUint32(p, 0, true);
    return p + 4;
  }
  const x = task.exchange;
  // A view into this thread's deflate buffer (valid until the next encode): copied on right here.
  const g = encodeExchangeRecordsView(
    { url: task.url, ip: x.ip, date: new Date(x.dateMs), requestHead: x.requestHead, responseHead: x.responseHead, body: task.body, truncated: x.truncated, payloadDigest: page.info.digest, outlinks: page.urls },
    data.warc,
  );
  const metaAt = p + 4;
  ensure(metaAt, groupMetaSize(g) + g.data.byteLength);
  const warcAt = writeGroupMeta(ob, obv, metaAt, g);
  obv.setUint32(p, warcAt - metaAt, true);
  ob.set(g.data, warcAt);
  return warcAt + g.data.byteLength;
}

const enc = new TextEncoder();


/**
 * Host key and PLD key (hostKeyInto / pldKeyInto of src/url: the fingerprints of the host and of
 * pldOrHost(host)) per host, across pages: a page's links go to a few hosts, and the same hosts
 * recur from page to page (its own site above all), so the PLD lookup and two hashes are mostly
 * saved. Bound: HOST_KEYS_MAX hosts (~1 MB with their names), forgotten all at once when full.
 */
const HOST_KEYS_MAX = 8192;
const hostKeys = new Uint32Array(HOST_KEYS_MAX * 4);
const hostKeyIndex = new Map<string, number>();

function hostKeysOf(host: string): number {
  let k = hostKeyIndex.get(host);
  if (k !== undefined) return k;
  if (hostKeyIndex.size >= HOST_KEYS_MAX) hostKeyIndex.clear();
  k = hostKeyIndex.size * 4;
  fingerprintInto(host, hostKeys, k);
  fingerprintInto(pldOrHost(host), hostKeys, k + 2);
  hostKeyIndex.set(unpinned(host), k); // a copy: the host may be a slice of this page's text
  return k;
}

/**
 * Keys of the current page's followed links, 6 words each (URL hi/lo — filled in when the table is
 * written — host hi/lo, PLD hi/lo). Bound: grows to the most followed links one page had.
 */
let pageKeys = new Uint32Array(6 * 256);
/** Whether the current page's followed URL i is a page requisite (1) or a link (0). Same bound. */
let pageEmbeds = new Uint8Array(256);

const NO_URLS: string[] = [];

/** The LinkEntry list of the current page (encodeLinks' general path, tests). */
function entries(urls: readonly string[]): LinkEntry[] {
  const fp = new Uint32Array(2);
  return urls.map((url, i) => {
    fingerprintInto(url, fp, 0);
    const e: LinkEntry = { hi: fp[0]!, lo: fp[1]!, hostHi: pageKeys[i * 6 + 2]!, hostLo: pageKeys[i * 6 + 3]!, pldHi: pageKeys[i * 6 + 4]!, pldLo: pageKeys[i * 6 + 5]!, url };
    if (pageEmbeds[i] === 1) e.embed = true;
    return e;
  });
}

/** The link table of a page (digest, links resolved, filtered, keyed): parsePage without the URLs. */
export function parseToTable(task: ParseTask): Uint8Array {
  return parsePage(task).table;
}

/** The link table, plus the payload digest and the followed URLs as strings (the WARC metadata record lists them). */
export function parsePage(task: ParseTask): { table: Uint8Array; digest: string; urls: string[] } {
  const page = pageLinks(task);
  return { table: encodeLinks(entries(page.urls), page.info), digest: page.info.digest, urls: page.urls };
}

/**
 * Digest, decode, extract, resolve + canonicalize, filter, dedup: the page's followed URLs (in
 * order) and what the table's header says; host and PLD keys of URL i in pageKeys[6i + 2 .. 6i + 6).
 */
function pageLinks(task: ParseTask): { urls: string[]; info: PageInfo; dropped?: DroppedLinks } {
  const digest = payloadDigest(task.body);
  const none = (charset: string, extracted = 0, noindex = false, nofollow = false) =>
    ({ urls: NO_URLS, info: { digest, charset, extracted, noindex, nofollow } });
  const requisites = task.requisites === true;
  if (task.css === true && requisites) {
    // A style sheet: the URLs it names (@import, url(…)) are its requisites, resolved against it.
    const { text, charset } = decodeCss(task.decoded, task.charset);
    const raw = cssUrls(text);
    return resolveAll(new LinkResolver(task.url), raw.map(() => true), raw, null, { digest, charset, extracted: raw.length, noindex: false, nofollow: false });
  }
  if (!task.html) return none(task.charset ?? '');
  const { text, charset } = decodeHtml(task.decoded, task.charset);
  if (!task.follow && !requisites) return none(charset);
  const r = extractLinks(text, { images: data.images ?? false, requisites, maxLinks: MAX_OUTLINKS });
  // <base href> is itself resolved against the page URL (HTML: "document base URL").
  const base = r.baseHref !== null ? (canonicalizeUrl(r.baseHref, task.url) ?? task.url) : task.url;
  // A page requisite is taken whatever the page's or the link's nofollow and --max-depth say (the
  // page is archived, and these are what it needs to render); links only when followed.
  const follow = task.follow && !r.metaRobots.nofollow;
  const embeds: boolean[] = [];
  const raws: string[] = [];
  for (const l of r.links) {
    if (l.embed || (follow && !l.nofollow)) {
      raws.push(l.value);
      embeds.push(l.embed);
    }
  }
  return resolveAll(new LinkResolver(base), embeds, raws, follow ? r.metaRefresh : null,
    {
      digest, charset, extracted: r.links.length + r.notKept, noindex: r.metaRobots.noindex, nofollow: r.metaRobots.nofollow,
      capped: r.links.length >= MAX_OUTLINKS && r.notKept > 0,
    });
}

/**
 * Resolve + canonicalize, filter (scope, then traps), dedup: the URLs to follow, in order (their
 * kinds in pageEmbeds, host and PLD keys in pageKeys), and the dropped ones with their codes.
 */
function resolveAll(resolver: LinkResolver, embeds: readonly boolean[], raws: readonly string[], refresh: string | null, info: PageInfo): { urls: string[]; info: PageInfo; dropped?: DroppedLinks } {
  const urls: string[] = [];
  const dropped: DroppedLinks = { urls: [], codes: [] };
  {
    const seen = new Set<string>();
    let lastHost = '';
    let lastK = 0;
    const add = (raw: string, embed: boolean): void => {
      const url = resolver.resolve(raw);
      if (url === null || seen.has(url)) return;
      seen.add(url);
      // Scope first (link-scope.ts): a trap verdict is only ever about a link in scope.
      const host = resolver.lastHost;
      const code = linkScope.scopeCode(url, host);
      if (code !== null) {
        dropped.urls.push(url);
        dropped.codes.push(DROP_CODES.indexOf(code));
        return;
      }
      if (trapCheck(url) !== null) {
        dropped.urls.push(url);
        dropped.codes.push(TRAP_CODE);
        return;
      }
      // host/PLD keys of followed links only (not of in-page duplicates, traps, out-of-scope links);
      // runs of links on one host are the same string object (LinkResolver.lastHost)
      const k = host === lastHost ? lastK : hostKeysOf(host);
      lastHost = host;
      lastK = k;
      const i = urls.length;
      if (pageKeys.length < (i + 1) * 6) {
        const bigger = new Uint32Array(pageKeys.length * 2);
        bigger.set(pageKeys);
        pageKeys = bigger;
      }
      pageKeys[i * 6 + 2] = hostKeys[k]!;
      pageKeys[i * 6 + 3] = hostKeys[k + 1]!;
      pageKeys[i * 6 + 4] = hostKeys[k + 2]!;
      pageKeys[i * 6 + 5] = hostKeys[k + 3]!;
      if (pageEmbeds.length < i + 1) {
        const bigger = new Uint8Array(pageEmbeds.length * 2);
        bigger.set(pageEmbeds);
        pageEmbeds = bigger;
      }
      pageEmbeds[i] = embed ? 1 : 0;
      urls.push(url);
    };
    for (let j = 0; j < raws.length; j++) add(raws[j]!, embeds[j]!);
    if (refresh !== null) add(refresh, false);
  }
  return { urls, dropped, info };
}
