/**
 * One HTTP exchange as undici's dispatch handler sees it (fetcher.ts hands it to a Pool when its IP's
 * wire gate lets it go): the response head and body as they arrive, the body cap (truncate, then
 * abort), the content-type filter, the whole-exchange timer, and at the end the FetchResult: outcome
 * code (error-policy.ts), WARC response head (outcome.ts buildResponseHead), Retry-After, redirect
 * target, transfer- and content-decoding with its bomb cap (limits.ts). Its start (onConnect, right
 * before the socket write) and its end are reported to the fetcher's wire gate.
 *
 * What a server cannot do to it (issue #30; the caps are in docs/operations.md):
 *   - the body goes into one buffer that grows by doubling (body-buffer.ts), whatever its framing;
 *     its capacity is taken from the body budget, and when the budget refuses, the socket is
 *     paused (onHeaders / onData return false; undici's body timer does not run while paused, the
 *     whole-exchange timer does) until budget comes back (memory-budget.ts);
 *   - a body in more than FLOOD_PIECES pieces averaging under FLOOD_AVG_BYTES bytes (one-byte
 *     chunks without end) is cut: CRAWL_FETCH_CHUNK_FLOOD;
 *   - more than MAX_INTERIM interim (1xx) heads before the final one: CRAWL_FETCH_INTERIM_LIMIT
 *     (undici restarts its head timer at each, so a flood of `103 Early Hints` would otherwise run
 *     to the whole-exchange limit);
 *   - a transfer-coding other than chunked is undone if it is gzip or deflate (the payload is what
 *     the codings were applied to, RFC 9112 §6.1; the WARC head names the header
 *     X-Crawler-Transfer-Encoding) and refused otherwise: CRAWL_FETCH_TRANSFER_CODING, nothing
 *     archived. A still-coded body is never the payload.
 */
import type { Dispatcher, Pool } from 'undici';
import { FETCH_OUTCOMES as O, type FetchOutcomeCode } from './error-policy.js';
import { decodeContent, parseContentType, parseRetryAfter, type DecodeMemory } from './limits.js';
import { buildResponseHead, classifyFetchError, statusOutcome } from './outcome.js';
import { BodyBuffer } from './body-buffer.js';
import type { MemoryBudget } from './memory-budget.js';
import type { FetchResult } from './result.js';

/** What an exchange reports to (the Fetcher, fetcher.ts): its wire gate and decoding cap. */
export interface ExchangeOwner {
  /** content-decoded payload cap (limits.ts decodeContent) */
  readonly maxDecodedBytes: number;
  /** coded bytes decoded on this thread at most (larger: the libuv pool; limits.ts decodeContent) */
  readonly syncDecodeBytes: number;
  /** the request is being written to its socket (the wire gate's start) */
  exchangeWritten(ex: Exchange, now: number): void;
  /** the exchange ended; `clean` when the connection can be reused */
  exchangeEnded(ex: Exchange, clean?: boolean): void;
  /** the exchange's result is made (after decoding): it is no longer in flight */
  exchangeFinished(ex: Exchange): void;
  /** wait for the body budget: `retry` is called whenever budget may have come back, until it returns true */
  waitForBudget(retry: () => boolean): void;
}

/**
 * One IP's wire gate: exchanges waiting (FIFO) and the number handed to undici. RAM: one gate per IP
 * with an exchange waiting or running, or written to within the last minIpIntervalMs (pruned).
 */
export interface IpGate {
  ip: string;
  running: number;
  queue: Array<{ ex: Exchange; pool: Pool; opts: Dispatcher.DispatchOptions }>;
  /** performance.now() of the last request written to this IP */
  lastStart: number;
  /** the gap that request asked for (FetchRequest.ipGapMs): the gate is kept until it has passed */
  lastGap: number;
  timer: NodeJS.Timeout | null;
  pumping: boolean;
  again: boolean;
}

const EMPTY = new Uint8Array(0);
const TRACE_WIRE = process.env.DRUMCRAWL_TRACE_FETCH !== undefined && process.env.DRUMCRAWL_TRACE_FETCH !== '';

/** Interim (1xx) heads accepted before the final one. */
export const MAX_INTERIM = 32;
/** A body of more pieces than this, averaging under FLOOD_AVG_BYTES each, is a chunk flood. */
export const FLOOD_PIECES = 16_384;
export const FLOOD_AVG_BYTES = 64;
/** Transfer-codings undone (besides chunked, which undici's parser removes). */
const TRANSFER_DECODERS = new Set(['gzip', 'x-gzip', 'deflate']);

/** Sentinel reasons we abort an exchange with; onError maps them back. */
export class Stop extends Error {
  constructor(readonly why: 'cap' | 'content-type' | 'total' | 'closed' | 'interim' | 'flood' | 'transfer-coding') { super(why); }
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
  private body: BodyBuffer | null = null;
  private truncated = false;
  private interim = 0;
  /** transfer-codings to undo, in the order the server applied them (chunked left out) */
  private transferCodings: string[] = [];
  private resumeFn: (() => void) | null = null;
  /** undici's resume of this exchange's parser (given with the final head) */
  private parserResume: (() => void) | null = null;
  /** bytes the body's buffer must have room for before reading resumes (its Content-Length before the first byte) */
  private firstNeed = 0;
  /** waiting for the budget (paused socket, or a decode's memory) */
  waiting = false;
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
    private readonly fetcher: ExchangeOwner,
    private readonly res: FetchResult,
    private readonly t0: number,
    private readonly cap: number,
    private readonly accept: ReadonlySet<string> | null,
    totalMs: number,
    private readonly budget: MemoryBudget | null,
    private readonly finish: (r: FetchResult) => void,
  ) {
    this.timer = setTimeout(() => this.interrupt(new Stop('total')), totalMs);
  }

  interrupt(s: Stop): void {
    if (this.stop !== null) return;
    if (this.done) {
      // answered already, decoding: a stop (fetcher closed, crawl stopping) ends a wait for memory
      if (s.why === 'closed') this.stop = s;
      return;
    }
    this.stop = s;
    if (this.abortFn !== null) this.abortFn(s);
    else void this.complete(null); // still queued for a connection: answer now, abort on connect
  }

  get settled(): boolean {
    return this.done;
  }

  /** The socket read is paused for the budget; called by the fetcher when it may try again. true: no longer waiting. */
  retryBudget(): boolean {
    if (this.done || this.stop !== null) return true;
    if (this.body !== null && !this.body.reserve(this.body.length === 0 ? this.firstNeed : 0)) return false;
    this.waiting = false;
    const resume = this.resumeFn;
    this.resumeFn = null;
    resume?.();
    return true;
  }

  private pauseForBudget(resume: () => void): false {
    this.resumeFn = resume;
    this.waiting = true;
    this.fetcher.waitForBudget(() => this.retryBudget());
    return false;
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

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText: string): boolean {
    if (statusCode < 200) {
      // An interim head (e.g. 103 Early Hints) before the final one: passed over, counted.
      if (++this.interim > MAX_INTERIM) {
        this.interrupt(new Stop('interim'));
        return false;
      }
      return true;
    }
    this.status = statusCode;
    this.statusText = statusText;
    this.rawHeaders = rawHeaders;
    this.parserResume = resume;
    this.ctype = this.cencoding = this.locationRaw = this.retryAfterRaw = undefined;
    this.firstByteMs = performance.now() - this.t0;
    let te: string | undefined;
    let length = -1;
    // Pick the headers we act on; names are compared case-insensitively without allocating for the rest.
    for (let i = 0; i < rawHeaders.length; i += 2) {
      const name = rawHeaders[i]!;
      const n = name.length;
      if (n !== 12 && n !== 14 && n !== 16 && n !== 17 && n !== 8 && n !== 11) continue;
      const lname = name.toString('latin1').toLowerCase();
      if (lname === 'content-type') this.ctype = rawHeaders[i + 1]!.toString('latin1');
      else if (lname === 'content-encoding') this.cencoding = rawHeaders[i + 1]!.toString('latin1');
      else if (lname === 'location') this.locationRaw ??= rawHeaders[i + 1]!.toString('utf8');
      else if (lname === 'retry-after') this.retryAfterRaw = rawHeaders[i + 1]!.toString('latin1');
      else if (lname === 'transfer-encoding') te = te === undefined ? rawHeaders[i + 1]!.toString('latin1') : `${te}, ${rawHeaders[i + 1]!.toString('latin1')}`;
      else if (lname === 'content-length') length = Number(rawHeaders[i + 1]!.toString('latin1').trim());
    }
    if (te !== undefined) {
      // undici's parser removes a final `chunked`; every other coding is the body's, undone at the end
      const codings = te.toLowerCase().split(',').map((x) => x.trim()).filter((x) => x.length > 0 && x !== 'identity');
      if (codings[codings.length - 1] === 'chunked') codings.pop();
      if (codings.some((c) => !TRANSFER_DECODERS.has(c))) {
        this.transferCodings = codings;
        this.interrupt(new Stop('transfer-coding'));
        return false;
      }
      this.transferCodings = codings;
    }
    if (this.accept !== null && statusCode >= 200 && statusCode < 300 && this.ctype !== undefined) {
      const t = parseContentType(this.ctype).type;
      if (t !== undefined && !this.accept.has(t)) {
        this.interrupt(new Stop('content-type'));
        return false;
      }
    }
    // The body's buffer: no larger than the cap, nor than a declared length below it, which is
    // taken whole before the first byte is read (body-buffer.ts).
    const declared = Number.isSafeInteger(length) && length >= 0 ? Math.min(length, this.cap) : -1;
    this.body = new BodyBuffer(this.budget, declared >= 0 ? declared : this.cap);
    this.firstNeed = Math.max(0, declared);
    if (!this.body.reserve(this.firstNeed)) return this.pauseForBudget(resume);
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.done) return false;
    const b = this.body!;
    const room = this.cap - b.length;
    if (chunk.length > room) {
      if (room > 0) b.push(chunk.subarray(0, room));
      this.truncated = true;
      this.interrupt(new Stop('cap'));
      return false;
    }
    if (b.pieces >= FLOOD_PIECES && b.length < FLOOD_AVG_BYTES * b.pieces) {
      this.interrupt(new Stop('flood'));
      return false;
    }
    b.push(chunk);
    // room for the next piece before it comes, or wait for the budget with the socket paused
    if (!b.reserve(0)) return this.pauseForBudget(this.parserResume!);
    return true;
  }

  onComplete(): void {
    void this.complete(null);
  }

  onError(err: Error): void {
    void this.complete(err instanceof Stop ? null : err);
  }

  /** A decode's memory, taken from the body's Hold (waiting for it if need be; false once the fetch is stopped). */
  private decodeMemory(): DecodeMemory | undefined {
    const budget = this.budget;
    const hold = this.body?.hold;
    if (budget === null || hold === undefined) return undefined;
    return {
      take: (bytes) => {
        if (budget.take(hold, bytes)) return true;
        return new Promise<boolean>((resolve) => {
          this.waiting = true;
          this.fetcher.waitForBudget(() => {
            if (this.stop?.why === 'closed') { this.waiting = false; resolve(false); return true; }
            if (!budget.take(hold, bytes)) return false;
            this.waiting = false;
            resolve(true);
            return true;
          });
        });
      },
      give: (bytes) => budget.give(hold, bytes),
    };
  }

  /** The response's head, body and content type into the result (the exchange has ended). */
  private fillResponse(r: FetchResult, body: BodyBuffer | null): void {
    if (this.status !== undefined) {
      r.status = this.status;
      r.statusText = this.statusText;
      r.httpVersion = '1.1';
      r.responseHead = buildResponseHead(this.status, this.statusText, this.rawHeaders!);
      const raw: string[] = new Array(this.rawHeaders!.length);
      for (let i = 0; i < raw.length; i++) raw[i] = this.rawHeaders![i]!.toString('latin1');
      r.rawHeaders = raw;
    }
    r.body = body !== null ? body.bytes() : EMPTY;
    if (body !== null) r.hold = body.hold;
    r.decoded = r.body;
    r.truncated = this.truncated;
    if (this.truncated) r.truncatedReason = 'length';
    if (this.ctype !== undefined) {
      const ct = parseContentType(this.ctype);
      if (ct.type !== undefined) r.contentType = ct.type;
      if (ct.charset !== undefined) r.charset = ct.charset;
    }
  }

  /** The outcome of how the exchange ended (our stop, undici's error, or the status), before decoding. */
  private endOutcome(r: FetchResult, body: BodyBuffer | null, err: Error | null): FetchOutcomeCode {
    const stop = this.stop;
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
    } else if (stop?.why === 'interim') {
      outcome = O.INTERIM_LIMIT;
      r.errorCode = `more than ${MAX_INTERIM} interim (1xx) responses`;
    } else if (stop?.why === 'flood') {
      outcome = O.CHUNK_FLOOD;
      r.errorCode = `${body!.pieces} body pieces for ${body!.length} bytes`;
    } else if (stop?.why === 'transfer-coding') {
      outcome = O.TRANSFER_CODING;
      r.errorCode = `transfer-coding ${this.transferCodings.join(', ')}`;
    } else if (err !== null) {
      outcome = classifyFetchError(err);
      const c = (err as { code?: unknown }).code;
      r.errorCode = typeof c === 'string' ? c : err.name;
      if (this.status !== undefined) {
        r.truncated = true;
        // an idle body cut by bodyTimeoutMs is a time limit; any other error a cut connection
        r.truncatedReason = outcome === O.BODY_TIMEOUT ? 'time' : 'disconnect';
      }
    } else {
      outcome = statusOutcome(this.status!);
    }
    return outcome;
  }

  private async complete(err: Error | null): Promise<void> {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    // Clean: the response arrived whole (the connection stays open); else it is being torn down.
    this.fetcher.exchangeEnded(this, err === null && this.stop === null);
    const r = this.res;
    const body = this.body;
    this.fillResponse(r, body);
    let outcome = this.endOutcome(r, body, err);
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
    const mem = this.decodeMemory();
    const fetched = outcome !== O.TRANSFER_CODING && outcome !== O.CHUNK_FLOOD && outcome !== O.INTERIM_LIMIT && outcome !== O.ABORTED;
    if (this.transferCodings.length > 0 && r.body.length > 0 && fetched) {
      // The payload is the body with its transfer-codings undone (capped like the body itself).
      const d = await decodeContent(r.body, this.transferCodings, this.cap, r.truncated, mem, this.fetcher.syncDecodeBytes);
      if (d.ok) {
        r.body = r.decoded = d.decoded;
        // the coded bytes are garbage now
        if (mem !== undefined) mem.give(body!.capacity);
      } else {
        r.body = r.decoded = EMPTY;
        r.errorCode = `transfer-coding ${this.transferCodings.join(', ')}: ${d.detail}`;
        outcome = d.reason === 'aborted' ? O.ABORTED : O.TRANSFER_CODING;
      }
    }
    if (this.cencoding !== undefined && r.body.length > 0 && fetched && outcome !== O.CONTENT_TYPE && outcome !== O.TRANSFER_CODING && outcome !== O.ABORTED) {
      const encs = this.cencoding.toLowerCase().split(',').map((s) => s.trim()).filter((s) => s.length > 0 && s !== 'identity');
      if (encs.length > 0) {
        r.contentEncoding = encs.join(', ');
        const d = await decodeContent(r.body, encs, this.fetcher.maxDecodedBytes, r.truncated, mem, this.fetcher.syncDecodeBytes);
        if (d.ok) r.decoded = d.decoded;
        else if (d.reason === 'aborted') {
          r.decoded = EMPTY;
          outcome = O.ABORTED;
        } else {
          r.decoded = EMPTY;
          r.errorCode = d.detail;
          if (outcome === O.OK) outcome = d.reason === 'bomb' ? O.BOMB : O.DECODE;
        }
      }
    }
    r.outcome = outcome;
    r.timings = { connectMs: this.connectMs, firstByteMs: this.firstByteMs, totalMs: performance.now() - this.t0 };
    this.fetcher.exchangeFinished(this);
    this.finish(r);
  }
}
