/**
 * CDXJ index lines (the pywb / OpenWayback "CDXJ" format): one line per captured record,
 *
 *   <SURT key> SP <14-digit timestamp> SP <JSON>
 *
 * with the JSON fields, in this order, of webrecorder's indexers (warcio's `cdx-index --format
 * cdxj`, cdxj-indexer, pywb): url, mime, status, digest, length, offset, filename. Values are
 * strings (status, length and offset too); a field with no value is left out. Lines sort as byte
 * strings (pywb binary-searches the file): key, then timestamp, then the JSON.
 *
 * Which records get a line, as those indexers do: response (mime = the HTTP Content-Type's type,
 * status = the HTTP status), revisit (mime `warc/revisit`, status of its HTTP head), and records
 * that are not HTTP (a `dns:` response: mime = the record's Content-Type, no status). request,
 * warcinfo and `application/warc-fields` metadata records get none.
 *
 * Pure functions; the per-file sidecar that collects and sorts the lines is cdxj-writer.ts.
 */

/**
 * SURT-ordered key of a URL, as warcio's `getSurt` and the Python `surt` package write it for a
 * canonical URL: lower-cased, a leading `www`/`wwwN.` label dropped, host labels reversed and
 * joined by commas, `:port` when not the scheme's default, `)`, the path, and the query's
 * `&`-separated parameters sorted. The scheme and the fragment are not part of it. A URI that is
 * not http(s) (`dns:host`) is its own key.
 */
export function surtKey(url: string): string {
  if (!url.startsWith('http:') && !url.startsWith('https:')) return url;
  try {
    const lower = url.replace(/^(https?:\/\/)www\d*\./, '$1').toLowerCase();
    const u = new URL(lower);
    let key = u.hostname.split('.').reverse().join(',');
    if (u.port !== '') key += ':' + u.port;
    key += ')' + u.pathname;
    if (u.search !== '') key += '?' + u.search.slice(1).split('&').sort().join('&');
    return key;
  } catch {
    return url;
  }
}

/** `yyyyMMddHHmmss` (UTC) of a date: CDX timestamps have second precision, like WARC-Date. */
export function cdxTimestamp(d: Date): string {
  // most lines of a busy crawl fall in the same second as the one before: one formatting for them
  const sec = Math.floor(d.getTime() / 1000);
  if (sec !== lastSec) {
    lastStamp = d.toISOString().replace(/[-:T]/g, '').slice(0, 14);
    lastSec = sec;
  }
  return lastStamp;
}
let lastSec = NaN;
let lastStamp = '';

/** What one index line says about one record. */
export interface CdxEntry {
  url: string;
  date: Date;
  /** media type without parameters; absent when the record does not say */
  mime?: string;
  /** HTTP status code, absent for records that are not HTTP */
  status?: number;
  /** payload digest as in WARC-Payload-Digest (`sha1:BASE32`); written without its `sha1:` label */
  digest?: string;
  /** bytes of the record in the file (its gzip member / zstd frame when compressed) */
  length: number;
  offset: number;
  /** WARC file name (no directory: the index sits beside its WARC files) */
  filename: string;
}

/** One CDXJ line (no newline). */
export function cdxjLine(e: CdxEntry): string {
  const j: Record<string, string> = { url: e.url };
  if (e.mime !== undefined && e.mime !== '') j.mime = e.mime;
  if (e.status !== undefined) j.status = String(e.status);
  if (e.digest !== undefined) {
    const i = e.digest.indexOf(':');
    j.digest = i >= 0 ? e.digest.slice(i + 1) : e.digest;
  }
  j.length = String(e.length);
  j.offset = String(e.offset);
  j.filename = e.filename;
  return `${surtKey(e.url)} ${cdxTimestamp(e.date)} ${JSON.stringify(j)}`;
}

/** Status code and media type (the Content-Type up to its first `;`, trimmed, as warcio reads it) of an HTTP response head. */
export function httpHeadInfo(head: Uint8Array): { status?: number; mime?: string } {
  const s = Buffer.from(head.buffer, head.byteOffset, head.byteLength).toString('latin1');
  const out: { status?: number; mime?: string } = {};
  const first = /^HTTP\/\S+[ \t]+(\d{3})/.exec(s);
  if (first !== null) out.status = Number(first[1]);
  const ct = /\r?\n[Cc][Oo][Nn][Tt][Ee][Nn][Tt]-[Tt][Yy][Pp][Ee][ \t]*:[ \t]*([^;\r\n]*)/.exec(s);
  if (ct !== null) {
    const m = ct[1]!.trim();
    if (m !== '') out.mime = m;
  }
  return out;
}

/**
 * Fields of a record's index line that the caller knows when it writes the record (the writer adds
 * offset, length and filename). `responseHead` null: a record that is not HTTP, indexed with
 * `mime` as given.
 */
export interface CdxSource {
  url: string;
  date: Date;
  kind: 'response' | 'revisit' | 'other';
  responseHead: Uint8Array | null;
  mime?: string;
  payloadDigest?: string;
}

/** The index line of a record written at (filename, offset, length) from what its writer knew. */
export function cdxjLineFor(src: CdxSource, filename: string, offset: number, length: number): string {
  const h = src.responseHead !== null ? httpHeadInfo(src.responseHead) : {};
  return cdxjLine({
    url: src.url,
    date: src.date,
    mime: src.kind === 'revisit' ? 'warc/revisit' : src.responseHead !== null ? h.mime : src.mime,
    status: h.status,
    digest: src.payloadDigest,
    length,
    offset,
    filename,
  });
}
