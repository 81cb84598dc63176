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
import { parseUint, type WebGraph, type HostInfo, type RenderedBody } from './model/graph.js';
import type { RequestLog } from './request-log.js';
import { Conn, textBody, type ConnServer, type Request, type Response } from './http-conn.js';
import { CrawlError } from '../errors.js';

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

export class SimHttpServer implements ConnServer {
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
