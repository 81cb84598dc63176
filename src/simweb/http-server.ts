/**
 * A minimal HTTP/1.1 server on node:net, one listener per simulated IP (all on the same port).
 * Hand-written rather than node:http for two reasons: it must misbehave on purpose (RST, silence,
 * trickle, lying headers), which needs raw socket control; and it must never be the bottleneck of a
 * crawl benchmark (≥ 10,000 pages/s of 21.5 KB on one core, see bench/simweb). Responses are written
 * corked, as the head plus the page's chunks (filler slices are shared Buffers, never copied).
 *
 * Keep-alive and pipelining are supported; requests on one connection are answered in order. The
 * host comes from the Host header; a known host reached on an IP that is not its own gets 421, an
 * unknown host 404. Responses carry no Date header, so equal requests get byte-identical answers.
 */
import net from 'node:net';
import zlib from 'node:zlib';
import { performance } from 'node:perf_hooks';
import { parseUint, type WebGraph, type HostInfo, type RenderedBody } from './model/graph.js';
import type { RequestLog, RequestLogEntry } from './request-log.js';
import { CrawlError } from '../errors.js';

const CRLF2 = Buffer.from('\r\n\r\n');
const MAX_HEAD = 32 * 1024;
const REASONS: Record<number, string> = {
  200: 'OK', 301: 'Moved Permanently', 302: 'Found', 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden',
  404: 'Not Found', 405: 'Method Not Allowed', 421: 'Misdirected Request', 429: 'Too Many Requests',
  431: 'Request Header Fields Too Large', 500: 'Internal Server Error', 501: 'Not Implemented', 502: 'Bad Gateway',
  503: 'Service Unavailable',
};

function now(): number {
  return performance.timeOrigin + performance.now();
}

interface Request {
  method: string;
  target: string;
  host: string;
  userAgent: string;
  keepAlive: boolean;
  extraHeaders: string;
}

interface Response {
  status: number;
  headers?: string; // extra header lines, each ending in \r\n
  contentType?: string | null; // null = no Content-Type header
  body?: RenderedBody | Buffer | null;
  /** Special delivery. */
  mode?: 'reset' | 'silent' | 'trickle' | 'huge' | 'bomb';
}

function textBody(s: string, contentType = 'text/html; charset=utf-8'): RenderedBody {
  const b = Buffer.from(s, 'latin1');
  return { contentType, chunks: [b], length: b.length };
}

export interface ConnectionStats {
  /** Connections open now. */
  open: number;
  /** Highest number of simultaneously open connections seen per local IP. */
  maxOpenPerIp: Map<string, number>;
  /** Connections accepted since start. */
  accepted: number;
  /**
   * Requests read whose log entry is not written yet: an answer still being written (logged once
   * handed to the kernel), or a silent one waiting for its connection to close. A test that reads
   * the log waits for 0 (no clock involved).
   */
  unlogged: number;
  /** The paths of those requests (robots.txt included). */
  unloggedPaths: string[];
}

export class SimHttpServer {
  readonly port: number;
  private readonly servers: net.Server[];
  private readonly sockets = new Set<net.Socket>();
  private readonly conns = new Set<Conn>();
  private readonly openPerIp = new Map<string, number>();
  private readonly maxPerIp = new Map<string, number>();
  private accepted = 0;
  private connSeq = 0;
  /** Last served request per 'too-many-requests' host (bounded by the number of such hosts; cleared at 10,000). */
  private readonly lastServed = new Map<string, number>();
  /** Fixed responses by 'host path', served before the generated web (setFixedResponse). */
  private readonly fixed = new Map<string, Response>();
  /** Per-host request counts of the 'every Nth' fixed responses (bounded by the fixed table). */
  private readonly fixedHits = new Map<string, number>();
  private bomb: Promise<Buffer> | null = null;
  private bombStream: zlib.Gzip | null = null;
  private closed = false;
  /** The pause between two pieces of a trickled answer, ms (WebParams.trickleIntervalMs; Simweb.setTrickleInterval changes it while the web runs). */
  trickleIntervalMs: number;

  private constructor(readonly web: WebGraph, readonly log: RequestLog, port: number, servers: net.Server[]) {
    this.port = port;
    this.servers = servers;
    this.trickleIntervalMs = web.params.trickleIntervalMs;
  }

  /**
   * Listen on every address in `ips` at `port` (0 = pick a free port and use it on every IP,
   * retrying with a new port when one of the IPs has it taken). `bind` builds the web for the port.
   */
  static async listen(ips: readonly string[], port: number, bind: (port: number) => { web: WebGraph; log: RequestLog }): Promise<SimHttpServer> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const servers: net.Server[] = [];
      let self: SimHttpServer | null = null;
      const onConn = (s: net.Socket) => self?.onConnection(s);
      try {
        const first = net.createServer({ noDelay: true }, onConn);
        await listenOn(first, ips[0]!, port);
        servers.push(first);
        const actual = (first.address() as net.AddressInfo).port;
        for (let i = 1; i < ips.length; i++) {
          const srv = net.createServer({ noDelay: true }, onConn);
          await listenOn(srv, ips[i]!, actual);
          servers.push(srv);
        }
        const { web, log } = bind(actual);
        self = new SimHttpServer(web, log, actual, servers);
        return self;
      } catch (err) {
        await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
        const code = (err as NodeJS.ErrnoException).code;
        if (port === 0 && code === 'EADDRINUSE') continue;
        throw new CrawlError('CRAWL_SIMWEB_LISTEN', `simweb: cannot listen on port ${port}: ${(err as Error).message}`, { cause: err });
      }
    }
    throw new CrawlError('CRAWL_SIMWEB_LISTEN', 'simweb: no port free on every simulated IP after 20 tries');
  }

  /** Host names and user agents seen (bounded: cleared at 65,536 entries). */
  private readonly interned = new Map<string, string>();
  intern(s: string): string {
    const hit = this.interned.get(s);
    if (hit !== undefined) return hit;
    if (this.interned.size >= 65_536) this.interned.clear();
    // Flatten once (a fresh string), so the interned copy does not pin the request head it came from.
    const own = s.length > 12 ? Buffer.from(s, 'latin1').toString('latin1') : s;
    this.interned.set(own, own);
    return own;
  }

  /**
   * Serve this response for `GET path` on `host` (any of the server's IPs), before the generated
   * web is asked: tests place hand-made pages (links to forbidden addresses, redirects, 429s with a
   * given Retry-After) on an otherwise ordinary simulated host. `failFirst`: answer the first n
   * requests of the path with `failWith` (a status with its headers, or 'reset' to reset the
   * connection) and only then with the response — a server that recovers, for retry tests.
   */
  setFixedResponse(host: string, path: string, res: {
    status: number; headers?: Record<string, string>; body?: string; contentType?: string;
    failFirst?: number; failWith?: { status: number; headers?: Record<string, string> } | 'reset';
  }): void {
    const hdr = (h: Record<string, string> | undefined): string => Object.entries(h ?? {}).map(([k, v]) => `${k}: ${v}\r\n`).join('');
    const ok: Response = { status: res.status, headers: hdr(res.headers), body: textBody(res.body ?? '', res.contentType) };
    this.fixed.set(`${host.toLowerCase()} ${path}`, ok);
    if (res.failFirst !== undefined && res.failFirst > 0 && res.failWith !== undefined) {
      const fail: Response = res.failWith === 'reset' ? { status: 0, mode: 'reset' }
        : { status: res.failWith.status, headers: hdr(res.failWith.headers), body: textBody(`<p>${res.failWith.status}</p>\n`) };
      this.fixed.set(`${host.toLowerCase()} ${path} fail`, fail);
      this.fixedHits.set(`${host.toLowerCase()} ${path}`, -res.failFirst);
    }
  }

  private fixedResponse(host: string, path: string): Response | undefined {
    const key = `${host} ${path}`;
    const ok = this.fixed.get(key);
    if (ok === undefined) return undefined;
    const left = this.fixedHits.get(key);
    if (left !== undefined && left < 0) {
      this.fixedHits.set(key, left + 1);
      return this.fixed.get(`${key} fail`);
    }
    return ok;
  }

  connectionStats(): ConnectionStats {
    const unloggedPaths: string[] = [];
    for (const c of this.conns) if (c.unloggedPath !== null) unloggedPaths.push(c.unloggedPath);
    return { open: this.sockets.size, maxOpenPerIp: new Map(this.maxPerIp), accepted: this.accepted, unlogged: unloggedPaths.length, unloggedPaths };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.bombStream?.destroy();
    const done = Promise.all(this.servers.map((s) => new Promise((r) => s.close(r))));
    for (const s of this.sockets) s.destroy();
    await done;
  }

  private onConnection(socket: net.Socket): void {
    if (this.closed) { socket.destroy(); return; }
    const ip = socket.localAddress ?? '';
    this.accepted++;
    this.sockets.add(socket);
    const open = (this.openPerIp.get(ip) ?? 0) + 1;
    this.openPerIp.set(ip, open);
    if (open > (this.maxPerIp.get(ip) ?? 0)) this.maxPerIp.set(ip, open);
    const conn = new Conn(this, socket, this.intern(ip), ++this.connSeq);
    this.conns.add(conn);
    socket.on('data', (d: Buffer) => conn.onData(d));
    socket.on('error', () => { /* peers reset connections; nothing to do */ });
    socket.on('close', () => {
      this.sockets.delete(socket);
      this.conns.delete(conn);
      this.openPerIp.set(ip, (this.openPerIp.get(ip) ?? 1) - 1);
      conn.onClose();
    });
  }

  /** Decide the response for one request. */
  route(req: Request, localIp: string, hostName: string): Response {
    const web = this.web;
    if (req.method !== 'GET' && req.method !== 'HEAD') return { status: 405, headers: 'Allow: GET, HEAD\r\n', body: textBody('method not allowed\n', 'text/plain') };
    if (this.fixed.size > 0) {
      const f = this.fixedResponse(hostName, req.target);
      if (f !== undefined) return f;
    }
    const info = web.hostInfo(hostName);
    if (!info) return { status: 404, body: textBody(`<!DOCTYPE html><title>unknown host</title><p>simweb has no host '${escapeHtml(hostName)}'.</p>\n`) };
    if (info.ip !== localIp) return { status: 421, body: textBody(`<!DOCTYPE html><title>misdirected</title><p>${info.name} is served on ${info.ip}, not ${localIp}.</p>\n`) };
    let path = req.target;
    if (path.startsWith('http://')) {
      const slash = path.indexOf('/', 7);
      path = slash < 0 ? '/' : path.slice(slash);
    }
    if (path === '/robots.txt') return this.robots(info);
    if (path.startsWith('/robots-for/') && info.pldIndex === 0 && info.hostIndex === 0 && path.endsWith('.txt')) {
      const other = web.hostInfo(path.slice('/robots-for/'.length, -4));
      if (!other || other.robots !== 'redirect') return notFound();
      return { status: 200, body: textBody(web.robotsRulesText(other), 'text/plain; charset=utf-8') };
    }
    const sm = web.sitemapResponse(info, path);
    if (sm !== null) return sm;
    switch (info.behaviour) {
      case 'reset': return { status: 0, mode: 'reset' };
      case 'no-response': return { status: 0, mode: 'silent' };
      case 'server-error': {
        const n = pageNumber(path);
        const status = [500, 502, 503][(n < 0 ? 0 : n) % 3]!;
        return { status, headers: status === 503 ? 'Retry-After: 120\r\n' : '', body: textBody(`<!DOCTYPE html><title>${status}</title><p>server error</p>\n`) };
      }
      case 'too-many-requests': {
        const t = Date.now();
        const last = this.lastServed.get(info.name);
        if (last !== undefined && t - last < this.web.params.retryAfterS * 1000) {
          return { status: 429, headers: `Retry-After: ${this.web.params.retryAfterS}\r\n`, body: textBody('<!DOCTYPE html><title>429</title><p>slow down</p>\n') };
        }
        if (this.lastServed.size >= 10_000) this.lastServed.clear();
        this.lastServed.set(info.name, t);
        break;
      }
      default:
        break; // the other behaviours shape the page itself, below
    }
    if (path === '/') return { status: 301, headers: `Location: ${web.origin(info.name)}/p/0\r\n`, body: textBody('<a href="/p/0">moved</a>\n') };
    const q = path.indexOf('?');
    const pathOnly = q < 0 ? path : path.slice(0, q);
    const query = q < 0 ? '' : path.slice(q + 1);
    let body: RenderedBody | null = null;
    if (pathOnly.startsWith('/p/')) {
      const n = pageNumber(pathOnly);
      if (info.behaviour === 'redirect-chain' && n >= 0 && info.pages > n && q < 0) {
        return redirect(301, `${web.origin(info.name)}/rd/${web.params.redirectChainLength - 1}/p/${n}`);
      }
      if (info.behaviour === 'redirect-loop' && n >= 0 && info.pages > n && q < 0) return redirect(302, `/loop/p/${n}`);
      let sid = 0;
      if (q >= 0) {
        if (info.trap !== 'session') return notFound();
        sid = web.parseSid(query);
        if (sid === -1) return notFound();
      }
      if (n >= 0) body = web.renderPage(info, n, sid);
    } else if (info.trap === 'calendar' && pathOnly.startsWith('/cal/') && q < 0) {
      const m = /^\/cal\/(-?\d{1,7})\/(\d{1,2})$/.exec(pathOnly);
      if (m && Number(m[2]) >= 1 && Number(m[2]) <= 12) body = web.renderCalendar(info, Number(m[1]), Number(m[2]));
    } else if (info.trap === 'repeat' && /^\/t\/((a|b)\/)*$/.test(pathOnly) && q < 0) {
      body = web.renderRepeat(pathOnly);
    } else if (info.behaviour === 'redirect-chain' && pathOnly.startsWith('/rd/') && q < 0) {
      const m = /^\/rd\/(\d+)\/p\/(\d+)$/.exec(pathOnly);
      if (m) {
        const k = Number(m[1]);
        const n = pageNumber(`/p/${m[2]}`);
        if (n >= 0 && n < info.pages && k < web.params.redirectChainLength) {
          if (k > 0) return redirect(301, `${web.origin(info.name)}/rd/${k - 1}/p/${n}`);
          body = web.renderPage(info, n);
        }
      }
    } else if (info.behaviour === 'redirect-loop' && pathOnly.startsWith('/loop/p/') && q < 0) {
      const n = pageNumber(pathOnly.slice(5));
      if (n >= 0 && n < info.pages) return redirect(302, `/p/${n}`);
    }
    if (!body) return notFound();
    return this.deliver(info, body);
  }

  /** Apply content-level behaviours to a 200 page. */
  private deliver(info: HostInfo, body: RenderedBody): Response {
    switch (info.behaviour) {
      case 'trickle': return { status: 200, body, mode: 'trickle' };
      case 'wrong-type': return { status: 200, contentType: 'image/jpeg', body };
      case 'no-type': return { status: 200, contentType: null, body };
      case 'gzip': return { status: 200, headers: 'Content-Encoding: gzip\r\n', contentType: body.contentType, body: zlib.gzipSync(Buffer.concat(body.chunks)) };
      case 'deflate': return { status: 200, headers: 'Content-Encoding: deflate\r\n', contentType: body.contentType, body: zlib.deflateSync(Buffer.concat(body.chunks)) };
      case 'br': return {
        status: 200, headers: 'Content-Encoding: br\r\n', contentType: body.contentType,
        body: zlib.brotliCompressSync(Buffer.concat(body.chunks), { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } }),
      };
      case 'huge-body': return { status: 200, contentType: body.contentType, body, mode: 'huge' };
      case 'bomb': return { status: 200, mode: 'bomb' };
      default: return { status: 200, body };
    }
  }

  private robots(info: HostInfo): Response {
    const web = this.web;
    switch (info.robots) {
      case 'absent': return notFound();
      case 'unauthorized': return { status: 401, headers: 'WWW-Authenticate: Basic realm="simweb"\r\n', body: textBody('<p>unauthorized</p>\n') };
      case 'forbidden': return { status: 403, body: textBody('<p>forbidden</p>\n') };
      case 'server-error': return { status: 503, body: textBody('<p>unavailable</p>\n') };
      case 'timeout': return { status: 0, mode: 'silent' };
      case 'redirect': return redirect(301, `${web.origin('www.pld0.test')}/robots-for/${info.name}.txt`);
      case 'garbage': return { status: 200, contentType: 'text/plain', body: web.robotsBody(info) };
      default: return { status: 200, contentType: 'text/plain; charset=utf-8', body: web.robotsBody(info) };
    }
  }

  /** The decompression bomb: gzip of bombDecodedBytes zero bytes, built once (streamed, 1 MiB at a time). */
  bombBody(): Promise<Buffer> {
    if (!this.bomb) {
      this.bomb = new Promise<Buffer>((resolve, reject) => {
        // Z_RLE: zeros compress exactly as well as with the default strategy (~1030:1), 5× faster.
        const gz = zlib.createGzip({ level: 9, strategy: zlib.constants.Z_RLE });
        this.bombStream = gz;
        const out: Buffer[] = [];
        gz.on('data', (d: Buffer) => out.push(d));
        gz.on('end', () => resolve(Buffer.concat(out)));
        gz.on('error', reject);
        const zero = Buffer.alloc(1 << 20);
        let left = this.web.params.bombDecodedBytes;
        const pump = (): void => {
          while (left > 0) {
            if (this.closed) { gz.destroy(); reject(new Error('server closed')); return; }
            const n = Math.min(left, zero.length);
            left -= n;
            if (!gz.write(n === zero.length ? zero : zero.subarray(0, n))) { gz.once('drain', pump); return; }
          }
          gz.end();
        };
        pump();
      });
    }
    return this.bomb;
  }
}

function listenOn(srv: net.Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    srv.once('error', reject);
    srv.listen({ host, port, backlog: 1024, exclusive: true }, () => { srv.off('error', reject); resolve(); });
  });
}

function pageNumber(path: string): number {
  // '/p/<n>' with canonical decimal n (no leading zeros)
  return path.startsWith('/p/') ? parseUint(path.slice(3)) : -1;
}

function notFound(): Response {
  return { status: 404, body: textBody('<!DOCTYPE html><title>404</title><p>not found</p>\n') };
}

function redirect(status: number, location: string): Response {
  return { status, headers: `Location: ${location}\r\n`, body: textBody(`<a href="${location}">moved</a>\n`) };
}

function escapeHtml(s: string): string {
  return s.replace(/[<>&"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** One client connection: parses requests (pipelined ones in order) and writes responses. */
class Conn {
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

  constructor(private readonly srv: SimHttpServer, private readonly socket: net.Socket, private readonly localIp: string,
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
