/**
 * One client connection of the simulated web's HTTP server (http-server.ts): requests read off the
 * socket (keep-alive, pipelining: answered in order), each routed by the server and written back,
 * with the deliveries that misbehave on purpose (trickle, huge, bomb, reset, silence), and each
 * request's line in the request log.
 */
import type net from 'node:net';
import { performance } from 'node:perf_hooks';
import type { WebGraph, RenderedBody } from './model/graph.js';
import type { RequestLog, RequestLogEntry } from './request-log.js';

const CRLF2 = Buffer.from('\r\n\r\n');
const MAX_HEAD = 32 * 1024;
const REASONS: Record<number, string> = {
  200: 'OK', 301: 'Moved Permanently', 302: 'Found', 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden',
  404: 'Not Found', 405: 'Method Not Allowed', 421: 'Misdirected Request', 429: 'Too Many Requests',
  431: 'Request Header Fields Too Large', 500: 'Internal Server Error', 501: 'Not Implemented', 502: 'Bad Gateway',
  503: 'Service Unavailable',
};

export function now(): number {
  return performance.timeOrigin + performance.now();
}

export interface Request {
  method: string;
  target: string;
  host: string;
  userAgent: string;
  keepAlive: boolean;
  extraHeaders: string;
}

export interface Response {
  status: number;
  headers?: string; // extra header lines, each ending in \r\n
  contentType?: string | null; // null = no Content-Type header
  body?: RenderedBody | Buffer | null;
  /** Special delivery. */
  mode?: 'reset' | 'silent' | 'trickle' | 'huge' | 'bomb';
}

export function textBody(s: string, contentType = 'text/html; charset=utf-8'): RenderedBody {
  const b = Buffer.from(s, 'latin1');
  return { contentType, chunks: [b], length: b.length };
}

/** What a connection asks of its server (SimHttpServer). */
export interface ConnServer {
  readonly web: WebGraph;
  readonly log: RequestLog;
  readonly trickleIntervalMs: number;
  intern(s: string): string;
  route(req: Request, localIp: string, hostName: string): Response;
  bombBody(): Promise<Buffer>;
}

export class Conn {
  private buf: Buffer | null = null;
  private busy = false;
  private closed = false;
  private pending: RequestLogEntry | null = null;
  private timer: NodeJS.Timeout | null = null;
  private keep = true;
  private total = 0;
  private lastUa = '';
  private readonly done = (bytes: number): void => this.finish(bytes);
  private readonly onWritten = (): void => this.finish(this.total);

  constructor(private readonly srv: ConnServer, private readonly socket: net.Socket, private readonly localIp: string,
    private readonly id: number) {}

  /** A request was read and its log entry is not written yet. */
  get unlogged(): boolean {
    return this.pending !== null;
  }

  /** That request's path (null: none). */
  get unloggedPath(): string | null {
    return this.pending?.path ?? null;
  }

  onData(d: Buffer): void {
    this.buf = this.buf ? Buffer.concat([this.buf, d]) : d;
    // Bound what a client can make us hold while a response is in flight (pipelining is fine; a flood is not).
    if (this.busy && this.buf.length > 1 << 20) { this.socket.destroy(); return; }
    if (!this.busy) this.pump();
  }

  onClose(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.pending) {
      this.pending.end = now();
      this.srv.log.add(this.pending);
      this.pending = null;
    }
  }

  private pump(): void {
    while (!this.busy && !this.closed && this.buf) {
      const buf = this.buf;
      const idx = buf.indexOf(CRLF2);
      if (idx < 0) {
        if (buf.length > MAX_HEAD) this.fatal(431);
        return;
      }
      const head = buf.toString('latin1', 0, idx);
      let rest = idx + 4;
      const req = parseHead(buf, idx, head);
      if (!req) { this.buf = null; this.fatal(400); return; }
      if (req.bodyLength < 0) { this.buf = null; this.fatal(501); return; }
      if (buf.length < rest + req.bodyLength) return; // wait for the (ignored) request body
      rest += req.bodyLength;
      this.buf = rest < buf.length ? buf.subarray(rest) : null;
      this.handle(req);
    }
  }

  private fatal(status: number): void {
    const b = `HTTP/1.1 ${status} ${REASONS[status]}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`;
    this.socket.end(b, 'latin1');
    this.closed = true;
  }

  private handle(req: Request & { bodyLength: number }): void {
    // Log entries live long (the ring): share their strings instead of keeping one copy per request.
    const host = this.srv.intern(normalizeHost(req.host));
    if (req.userAgent === this.lastUa) req.userAgent = this.lastUa;
    else this.lastUa = req.userAgent = this.srv.intern(req.userAgent);
    const entry: RequestLogEntry = {
      start: now(), end: 0, host, localIp: this.localIp,
      remoteIp: this.socket.remoteAddress ?? '', method: req.method, path: req.target, status: 0, bytes: 0, conn: this.id,
      userAgent: req.userAgent, extraHeaders: req.extraHeaders,
    };
    let res: Response;
    try {
      res = this.srv.route(req, this.localIp, host);
    } catch {
      res = { status: 500, body: textBody('<p>internal error</p>\n') };
    }
    if (res.mode === 'reset') {
      entry.end = entry.start;
      this.srv.log.add(entry);
      this.closed = true;
      this.socket.resetAndDestroy();
      return;
    }
    if (res.mode === 'silent') {
      // Never answer; the entry is logged when the client gives up and the socket closes.
      this.busy = true;
      this.pending = entry;
      return;
    }
    if (res.mode === 'bomb') {
      this.busy = true;
      this.pending = entry;
      void this.srv.bombBody().then((bomb) => {
        if (this.closed) return;
        this.write(entry, { status: 200, headers: 'Content-Encoding: gzip\r\n', contentType: 'text/html; charset=utf-8', body: bomb }, req);
      }, () => { this.socket.destroy(); });
      return;
    }
    this.write(entry, res, req);
  }

  private write(entry: RequestLogEntry, res: Response, req: Request): void {
    const socket = this.socket;
    const body = res.body;
    const chunks = !body ? [] : Buffer.isBuffer(body) ? [body] : body.chunks;
    let length = !body ? 0 : Buffer.isBuffer(body) ? body.length : body.length;
    const ct = res.contentType === undefined ? (body && !Buffer.isBuffer(body) ? body.contentType : 'application/octet-stream') : res.contentType;
    if (res.mode === 'huge') length = this.srv.web.params.hugeBodyBytes;
    const keep = req.keepAlive;
    const head = `HTTP/1.1 ${res.status} ${REASONS[res.status] ?? 'Status'}\r\nServer: simweb\r\n` +
      (ct === null ? '' : `Content-Type: ${ct}\r\n`) + (res.headers ?? '') + `Content-Length: ${length}\r\n` +
      (keep ? '' : 'Connection: close\r\n') + '\r\n';
    entry.status = res.status;
    this.busy = true;
    this.pending = entry;
    this.keep = keep;
    if (req.method === 'HEAD') {
      this.total = head.length;
      socket.write(head, 'latin1', this.onWritten);
      return;
    }
    if (res.mode === 'trickle') return this.trickle(head, Buffer.concat(chunks), entry, this.done);
    if (res.mode === 'huge') return this.huge(head, length, entry, this.done);
    // Corked: one writev for the head and the page's chunks (filler slices are not copied).
    // The completion callback is one bound function per connection (no closure per response).
    this.total = head.length + length;
    socket.cork();
    socket.write(Buffer.from(head, 'latin1')); // all-Buffer writev: no string storage pass in C++
    const last = chunks.length - 1;
    for (let i = 0; i < last; i++) socket.write(chunks[i]!);
    socket.write(last >= 0 ? chunks[last]! : '', this.onWritten);
    socket.uncork();
  }

  /** The response in flight is fully handed to the kernel: log it and go on with the next request. */
  private finish(bytes: number): void {
    const entry = this.pending;
    if (entry) {
      entry.bytes = bytes;
      entry.end = now();
      this.pending = null;
      this.srv.log.add(entry);
    }
    if (!this.keep) { this.closed = true; this.socket.end(); return; }
    this.busy = false;
    if (this.buf) this.pump();
  }

  private trickle(head: string, body: Buffer, entry: RequestLogEntry, done: (bytes: number) => void): void {
    const { trickleBytes } = this.srv.web.params;
    const all = Buffer.concat([Buffer.from(head, 'latin1'), body]);
    this.busy = true;
    this.pending = entry;
    let off = 0;
    const step = () => {
      this.timer = null;
      if (this.closed) return;
      const n = Math.min(trickleBytes, all.length - off);
      const piece = all.subarray(off, off + n);
      off += n;
      if (off >= all.length) { this.socket.write(piece, () => done(all.length)); return; }
      this.socket.write(piece);
      this.timer = setTimeout(step, this.srv.trickleIntervalMs);
    };
    step();
  }

  private huge(head: string, length: number, entry: RequestLogEntry, done: (bytes: number) => void): void {
    const socket = this.socket;
    const chunk = Buffer.alloc(64 * 1024, 'simweb huge body ');
    this.busy = true;
    this.pending = entry;
    socket.write(head, 'latin1');
    let left = length;
    const pump = (): void => {
      while (left > 0 && !this.closed) {
        const n = Math.min(left, chunk.length);
        left -= n;
        const ok = left === 0 ? socket.write(chunk.subarray(0, n), () => done(head.length + length)) : socket.write(chunk.subarray(0, n));
        entry.bytes = head.length + length - left;
        if (!ok && left > 0) { socket.once('drain', pump); return; }
      }
    };
    pump();
  }
}

/** Host header → host name: port and a trailing dot removed, lower-cased. */
function normalizeHost(h: string): string {
  const colon = h.lastIndexOf(':');
  if (colon >= 0 && !h.endsWith(']')) h = h.slice(0, colon);
  if (h.endsWith('.')) h = h.slice(0, -1);
  for (let i = 0; i < h.length; i++) {
    const c = h.charCodeAt(i);
    if (c >= 65 && c <= 90) return h.toLowerCase();
  }
  return h;
}

/** Is head[pos, end) equal to `lower` ignoring ASCII case? (no allocation) */
function nameIs(head: string, pos: number, end: number, lower: string): boolean {
  if (end - pos !== lower.length) return false;
  for (let i = 0; i < lower.length; i++) {
    if ((head.charCodeAt(pos + i) | 0x20) !== lower.charCodeAt(i)) return false;
  }
  return true;
}

/** Common methods as constants, so a logged entry never retains its request head through `method`. */
const METHODS = new Map(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH'].map((m) => [m, m]));

/**
 * Parse a request head. The target is copied out of the socket buffer as its own flat string (a
 * slice of the head string would keep the whole head alive for as long as the log entry lives).
 */
function parseHead(buf: Buffer, headEnd: number, head: string): (Request & { bodyLength: number }) | null {
  let eol = head.indexOf('\r\n');
  if (eol < 0) eol = head.length;
  const sp1 = head.indexOf(' ');
  const sp2 = head.indexOf(' ', sp1 + 1);
  if (sp1 <= 0 || sp2 <= sp1 + 1 || sp2 > eol) return null;
  const m = head.slice(0, sp1);
  const method = METHODS.get(m) ?? buf.toString('latin1', 0, sp1);
  const target = buf.toString('latin1', sp1 + 1, sp2);
  const version = head.slice(sp2 + 1, eol);
  if (version !== 'HTTP/1.1' && version !== 'HTTP/1.0') return null;
  let host = '', userAgent = '', connection = '', bodyLength = 0, extraHeaders = '';
  let pos = eol + 2;
  while (pos < headEnd) {
    let e = head.indexOf('\r\n', pos);
    if (e < 0) e = head.length;
    const c = head.indexOf(':', pos);
    if (c > pos && c < e) {
      let vs = c + 1, ve = e;
      while (vs < ve && (head.charCodeAt(vs) === 32 || head.charCodeAt(vs) === 9)) vs++;
      while (ve > vs && (head.charCodeAt(ve - 1) === 32 || head.charCodeAt(ve - 1) === 9)) ve--;
      if (nameIs(head, pos, c, 'host')) host = head.slice(vs, ve);
      else if (nameIs(head, pos, c, 'user-agent')) userAgent = head.slice(vs, ve);
      else if (nameIs(head, pos, c, 'connection')) connection = head.slice(vs, ve).toLowerCase();
      else if (nameIs(head, pos, c, 'content-length')) bodyLength = Number(head.slice(vs, ve)) | 0;
      else if (nameIs(head, pos, c, 'transfer-encoding')) bodyLength = -1;
      else if (!nameIs(head, pos, c, 'accept') && !nameIs(head, pos, c, 'accept-encoding')) {
        extraHeaders += `${extraHeaders === '' ? '' : '\n'}${buf.toString('latin1', pos, c)}: ${buf.toString('latin1', vs, ve)}`;
      }
    }
    pos = e + 2;
  }
  if (!host && target.startsWith('http://')) {
    const end = target.indexOf('/', 7);
    host = target.slice(7, end < 0 ? undefined : end);
  }
  const keepAlive = version === 'HTTP/1.1' ? !connection.includes('close') : connection.includes('keep-alive');
  return { method, target, host, userAgent, keepAlive, bodyLength, extraHeaders };
}
