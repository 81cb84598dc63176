/**
 * WARC records over a byte stream (warc-scan.ts feeds it the file's records, decompressed or not):
 * where each record starts and ends and what its head says, holding one head at a time.
 */

/** Longest WARC record head accepted (version line + fields + CRLF CRLF). */
export const MAX_HEAD = 256 * 1024;

export interface ParsedHead {
  contentLength: number;
  type: string | null;
  recordId: string | null;
  targetUri: string | null;
}

const WARC_MAGIC = Buffer.from('WARC/1.', 'latin1');
const CRLFCRLF = Buffer.from('\r\n\r\n', 'latin1');
export const CR = 0x0d;
export const LF = 0x0a;

/** A field's value in h[from, to): leading and trailing spaces/tabs removed. */
function trimmed(h: Buffer, from: number, to: number): string {
  while (from < to && (h[from] === 0x20 || h[from] === 0x09)) from++;
  while (to > from && (h[to - 1] === 0x20 || h[to - 1] === 0x09)) to--;
  return h.toString('latin1', from, to);
}

/**
 * The fields of a record head h[0, len) (without the closing CRLF CRLF): line by line, the first
 * occurrence of each name (case-insensitive), Content-Length required and all digits.
 */
function parseHead(h: Buffer, len: number): ParsedHead | string {
  let contentLength: number | null = null;
  let type: string | null = null;
  let recordId: string | null = null;
  let targetUri: string | null = null;
  let p = 0;
  while (p < len) {
    let e = h.indexOf(LF, p);
    if (e < 0 || e > len) e = len;
    const lineEnd = e > p && h[e - 1] === CR ? e - 1 : e;
    const colon = h.subarray(p, lineEnd).indexOf(0x3a);
    // field names are short tokens; a longer "name" is not one of the four we read
    if (colon > 0 && colon <= 16) {
      const name = h.toString('latin1', p, p + colon).toLowerCase();
      const v0 = p + colon + 1;
      if (name === 'content-length' && contentLength === null) {
        const v = trimmed(h, v0, lineEnd);
        if (v.length > 0 && v.length <= 15 && /^[0-9]+$/.test(v)) contentLength = Number(v);
      } else if (name === 'warc-type' && type === null) type = trimmed(h, v0, lineEnd);
      else if (name === 'warc-record-id' && recordId === null) recordId = trimmed(h, v0, lineEnd);
      else if (name === 'warc-target-uri' && targetUri === null) targetUri = trimmed(h, v0, lineEnd);
    }
    p = e + 1;
  }
  if (contentLength === null) return 'no Content-Length';
  return { contentLength, type, recordId, targetUri };
}

const enum St { Sep, Head, Body, Trailer }

/**
 * WARC records over a byte stream fed in pieces of any size. Between records any CR/LF is
 * skipped. `onStart(i)` is called when a record's first byte is at piece index i, `onEnd(i, head)`
 * when its trailer ends just before piece index i. Holds the current head only.
 */
export class RecordStream {
  private st = St.Sep;
  private head = Buffer.allocUnsafe(4096);
  private headLen = 0;
  /** progress through CR LF CR LF at the end of the head (0..4) */
  private match = 0;
  private left = 0;
  private tpos = 0;
  private cur: ParsedHead | null = null;
  error: string | null = null;

  constructor(
    private readonly onStart: (i: number) => void,
    private readonly onEnd: (i: number, h: ParsedHead) => void,
  ) {}

  /** No record begun and not finished. */
  get between(): boolean {
    return this.st === St.Sep && this.error === null;
  }

  /** Feed bytes; false (and `error` set) when they are not WARC records. */
  feed(b: Uint8Array): boolean {
    if (this.error !== null) return false;
    const n = b.length;
    let i = 0;
    while (i < n) {
      switch (this.st) {
        case St.Sep:
          while (i < n && (b[i] === CR || b[i] === LF)) i++;
          if (i < n) {
            this.onStart(i);
            this.st = St.Head;
            this.headLen = 0;
            this.match = 0;
          }
          break;
        case St.Head: {
          let j = i;
          let m = this.match;
          while (j < n && m < 4) {
            const c = b[j++];
            if (c === CR) m = m === 2 ? 3 : 1;
            else if (c === LF) m = m === 1 ? 2 : m === 3 ? 4 : 0;
            else m = 0;
          }
          this.match = m;
          if (!this.appendHead(b, i, j)) return false;
          i = j;
          if (m === 4) {
            const h = parseHead(this.head, this.headLen - 4);
            if (typeof h === 'string') return this.fail(h);
            this.cur = h;
            this.left = h.contentLength;
            this.st = this.left > 0 ? St.Body : St.Trailer;
            this.tpos = 0;
            if (this.head.length > 64 * 1024) this.head = Buffer.allocUnsafe(4096);
          }
          break;
        }
        case St.Body: {
          const take = Math.min(this.left, n - i);
          i += take;
          this.left -= take;
          if (this.left === 0) {
            this.st = St.Trailer;
            this.tpos = 0;
          }
          break;
        }
        case St.Trailer:
          while (i < n && this.tpos < 4) {
            if (b[i] !== CRLFCRLF[this.tpos]) return this.fail('record not followed by CRLF CRLF (wrong Content-Length?)');
            i++;
            this.tpos++;
          }
          if (this.tpos === 4) {
            this.st = St.Sep;
            this.onEnd(i, this.cur!);
          }
          break;
      }
    }
    return true;
  }

  private fail(msg: string): false {
    this.error = msg;
    return false;
  }

  /** Copy b[from, to) onto the head; checks the "WARC/1." start and MAX_HEAD. */
  private appendHead(b: Uint8Array, from: number, to: number): boolean {
    const old = this.headLen;
    const len = old + (to - from);
    if (len > MAX_HEAD) return this.fail(`WARC head longer than ${MAX_HEAD} bytes`);
    if (len > this.head.length) {
      const bigger = Buffer.allocUnsafe(Math.min(MAX_HEAD, Math.max(len, this.head.length * 2)));
      this.head.copy(bigger, 0, 0, old);
      this.head = bigger;
    }
    this.head.set(b.subarray(from, to), old);
    this.headLen = len;
    for (let k = old; k < Math.min(len, WARC_MAGIC.length); k++) if (this.head[k] !== WARC_MAGIC[k]) return this.fail('not a WARC record');
    if (this.match === 4 && len < WARC_MAGIC.length + 4) return this.fail('not a WARC record');
    return true;
  }
}
