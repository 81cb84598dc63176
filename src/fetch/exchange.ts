/**
 * One HTTP exchange as undici's dispatch handler sees it (fetcher.ts hands it to a Pool when its IP's
 * wire gate lets it go): the response head and body as they arrive, the body cap (truncate, then
 * abort), the content-type filter, the whole-exchange timer, and at the end the FetchResult: outcome
 * code (error-policy.ts), WARC response head (outcome.ts buildResponseHead), Retry-After, redirect
 * target, content decoding with its bomb cap (limits.ts). Its start (onConnect, right before the
 * socket write) and its end are reported to the fetcher's wire gate.
 */
import type { Dispatcher } from 'undici';
import { FETCH_OUTCOMES as O, type FetchOutcomeCode } from './error-policy.js';
import { decodeContent, parseContentType, parseRetryAfter } from './limits.js';
import { buildResponseHead, classifyFetchError, statusOutcome } from './outcome.js';
import type { Fetcher, FetchResult, IpGate } from './fetcher.js';

const EMPTY = new Uint8Array(0);
const TRACE_WIRE = process.env.DRUMCRAWL_TRACE_FETCH !== undefined && process.env.DRUMCRAWL_TRACE_FETCH !== '';

/** Sentinel reasons we abort an exchange with; onError maps them back. */
export class Stop extends Error {
  constructor(readonly why: 'cap' | 'content-type' | 'total' | 'closed') { super(why); }
}

/** State of one exchange; implements undici's (legacy, raw-header) dispatch handler. */
export class Exchange implements Dispatcher.DispatchHandler {
  /** The IP gate this exchange waits in or runs under (set by the fetcher). */
  gate: IpGate | null = null;
  /** Handed to undici (holds one of the gate's slots until it settles). */
  dispatched = false;
  /** Host key (lower case): what host spacing counts, robots.txt requests included. */
  hostKey: string | null = null;
  /** A robots.txt request: spaced per IP only (RFC 9309), though it counts as a start on its host. */
  robots = false;
  /** This request's own spacing from the previous one to its host / IP (FetchRequest.hostGapMs / ipGapMs). */
  hostGap = 0;
  ipGap = 0;
  private abortFn: ((err?: Error) => void) | null = null;
  private stop: Stop | null = null;
  private done = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly chunks: Buffer[] = [];
  private bytes = 0;
  private truncated = false;
  status: number | undefined;
  statusText = '';
  rawHeaders: Buffer[] | null = null;
  connectMs: number | undefined;
  firstByteMs: number | undefined;
  private ctype: string | undefined;
  private cencoding: string | undefined;
  private locationRaw: string | undefined;
  private retryAfterRaw: string | undefined;

  constructor(
    private readonly fetcher: Fetcher,
    private readonly res: FetchResult,
    private readonly t0: number,
    private readonly cap: number,
    private readonly accept: ReadonlySet<string> | null,
    totalMs: number,
    private readonly finish: (r: FetchResult) => void,
  ) {
    this.timer = setTimeout(() => this.interrupt(new Stop('total')), totalMs);
  }

  interrupt(s: Stop): void {
    if (this.done || this.stop !== null) return;
    this.stop = s;
    if (this.abortFn !== null) this.abortFn(s);
    else void this.complete(null); // still queued for a connection: answer now, abort on connect
  }

  get settled(): boolean {
    return this.done;
  }

  onConnect(abort: (err?: Error) => void): void {
    if (this.done || this.stop !== null) { abort(this.stop ?? new Stop('closed')); return; }
    this.abortFn = abort;
    const now = performance.now();
    this.connectMs = now - this.t0;
    // undici calls onConnect right before it writes the request (in the same synchronous run): the
    // start the server will see. But the thread may be descheduled between this read of the clock
    // and the write (at load ~20 on 2 cores a Crawl-delay of 120 ms was undercut by 3.7 ms on the
    // wire, test/realweb), so the start is stamped again once the write has returned (a microtask
    // runs after the run that wrote): the later stamp is at or after the packet left, and the next
    // request to the host / IP, held to it + its delay, can never be closer on the wire.
    this.fetcher.exchangeWritten(this, now);
    this.res.wireAt = performance.timeOrigin + now;
    queueMicrotask(() => {
      const after = performance.now();
      this.fetcher.exchangeWritten(this, after);
      this.res.wireAt = performance.timeOrigin + after;
    });
    if (TRACE_WIRE) process.stderr.write(`WIRE ${(performance.timeOrigin + now).toFixed(1)} ${this.res.ip} ${this.res.url}\n`);
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], _resume: () => void, statusText: string): boolean {
    // A 1xx (e.g. 103 Early Hints) may precede the final head: every call starts afresh.
    this.status = statusCode;
    this.statusText = statusText;
    this.rawHeaders = rawHeaders;
    this.ctype = this.cencoding = this.locationRaw = this.retryAfterRaw = undefined;
    this.firstByteMs = performance.now() - this.t0;
    // Pick the headers we act on; names are compared case-insensitively without allocating for the rest.
    for (let i = 0; i < rawHeaders.length; i += 2) {
      const name = rawHeaders[i]!;
      const n = name.length;
      if (n !== 12 && n !== 16 && n !== 8 && n !== 11) continue;
      const lname = name.toString('latin1').toLowerCase();
      if (lname === 'content-type') this.ctype = rawHeaders[i + 1]!.toString('latin1');
      else if (lname === 'content-encoding') this.cencoding = rawHeaders[i + 1]!.toString('latin1');
      else if (lname === 'location') this.locationRaw ??= rawHeaders[i + 1]!.toString('utf8');
      else if (lname === 'retry-after') this.retryAfterRaw = rawHeaders[i + 1]!.toString('latin1');
    }
    if (this.accept !== null && statusCode >= 200 && statusCode < 300 && this.ctype !== undefined) {
      const t = parseContentType(this.ctype).type;
      if (t !== undefined && !this.accept.has(t)) {
        this.interrupt(new Stop('content-type'));
        return false;
      }
    }
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.done) return false;
    const room = this.cap - this.bytes;
    if (chunk.length > room) {
      if (room > 0) { this.chunks.push(chunk.subarray(0, room)); this.bytes += room; }
      this.truncated = true;
      this.interrupt(new Stop('cap'));
      return false;
    }
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    return true;
  }

  onComplete(): void {
    void this.complete(null);
  }

  onError(err: Error): void {
    void this.complete(err instanceof Stop ? null : err);
  }

  private async complete(err: Error | null): Promise<void> {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    // Clean: the response arrived whole (the connection stays open); else it is being torn down.
    this.fetcher.exchangeEnded(this, err === null && this.stop === null);
    const r = this.res;
    const stop = this.stop;
    if (this.status !== undefined) {
      r.status = this.status;
      r.statusText = this.statusText;
      r.httpVersion = '1.1';
      r.responseHead = buildResponseHead(this.status, this.statusText, this.rawHeaders!);
      const raw: string[] = new Array(this.rawHeaders!.length);
      for (let i = 0; i < raw.length; i++) raw[i] = this.rawHeaders![i]!.toString('latin1');
      r.rawHeaders = raw;
    }
    r.body = this.chunks.length === 1 ? this.chunks[0]! : this.chunks.length === 0 ? EMPTY : Buffer.concat(this.chunks, this.bytes);
    r.decoded = r.body;
    r.truncated = this.truncated;
    if (this.truncated) r.truncatedReason = 'length';
    if (this.ctype !== undefined) {
      const ct = parseContentType(this.ctype);
      if (ct.type !== undefined) r.contentType = ct.type;
      if (ct.charset !== undefined) r.charset = ct.charset;
    }
    let outcome: FetchOutcomeCode;
    if (stop?.why === 'total') {
      outcome = O.TOTAL_TIMEOUT;
      r.truncated = this.status !== undefined;
      if (r.truncated) r.truncatedReason = 'time';
    } else if (stop?.why === 'closed') {
      outcome = O.ABORTED;
      if (this.status !== undefined) {
        r.truncated = true;
        r.truncatedReason = 'disconnect';
      }
    } else if (stop?.why === 'content-type') {
      outcome = O.CONTENT_TYPE;
    } else if (err !== null) {
      outcome = classifyFetchError(err);
      const c = (err as { code?: unknown }).code;
      r.errorCode = typeof c === 'string' ? c : err.name;
      if (this.status !== undefined) {
        r.truncated = true;
        r.truncatedReason = 'disconnect';
      }
    } else {
      outcome = statusOutcome(this.status!);
    }
    const now = Date.now();
    if (this.status === 429 || this.status === 503) {
      const ra = parseRetryAfter(this.retryAfterRaw, now);
      if (ra !== undefined) r.retryAfterMs = ra;
    }
    if (this.status !== undefined && this.status >= 300 && this.status < 400) {
      let loc: string | undefined;
      const raw = this.locationRaw?.trim() ?? '';
      // An empty Location, or one that leads back to this URL, names no target (HTTP_3XX below).
      if (raw !== '') {
        try { loc = new URL(raw, r.url).href; } catch { loc = undefined; }
        if (loc !== undefined && loc.replace(/#.*$/, '') === new URL(r.url).href.replace(/#.*$/, '')) loc = undefined;
      }
      if (loc !== undefined && (loc.startsWith('http://') || loc.startsWith('https://'))) r.location = loc;
      if (outcome === O.REDIRECT && r.location === undefined) outcome = O.HTTP_3XX;
    }
    if (this.cencoding !== undefined && r.body.length > 0 && outcome !== O.CONTENT_TYPE) {
      const encs = this.cencoding.toLowerCase().split(',').map((s) => s.trim()).filter((s) => s.length > 0 && s !== 'identity');
      if (encs.length > 0) {
        r.contentEncoding = encs.join(', ');
        const d = await decodeContent(r.body, encs, this.fetcher.maxDecodedBytes, r.truncated);
        if (d.ok) r.decoded = d.decoded;
        else {
          r.decoded = EMPTY;
          r.errorCode = d.detail;
          if (outcome === O.OK) outcome = d.reason === 'bomb' ? O.BOMB : O.DECODE;
        }
      }
    }
    r.outcome = outcome;
    r.timings = { connectMs: this.connectMs, firstByteMs: this.firstByteMs, totalMs: performance.now() - this.t0 };
    this.finish(r);
  }
}
