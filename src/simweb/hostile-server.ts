/**
 * Hostile HTTP servers on loopback: what a web server can do to a crawler's fetch, body, parse and
 * RAM, each behaviour at its own path, over raw sockets (framing, interim heads and transfer-codings
 * are written byte for byte, which an HTTP library would not let a server get wrong). Used by the
 * hostile-site suite (test/hostile/) and `npm run bench:hostile`; docs/simweb.md lists the paths.
 *
 * One listener per IP (all on one port, as simweb's), so that each IP is its own server for the
 * crawler's per-IP politeness. Every answer is bounded: a flood, a trickle or an endless head stops
 * after `floodMs` (the connection is then ended), so no request loop outlives its test.
 *
 *   /n/<k>            an ordinary HTML page (~2 KB) linking to /n/<k+1> … /n/<k+4> (k < normalPages),
 *                     and to `extraLinks(k)` (e.g. hostile pages elsewhere: an ordinary site that
 *                     links to a hostile one)
 *   /flood/1/…        chunked, `1\r\na\r\n` without end: one-byte chunks (`/flood/2/…`: two-byte)
 *   /flood/gzip/…     Content-Encoding: gzip, chunked: a gzip stream sent one byte per chunk
 *   /slow-big/…       Content-Length bigBytes (8 MiB) of HTML, sent evenly over slowMs
 *   /slow-chunked/…   the same bytes chunked, without a Content-Length (the body's size is known
 *                     only at its end), one chunk per write
 *   /gzip-big/…       91 KB of gzip that decodes to 15 MiB of HTML (below a 16 MiB bomb cap)
 *   /links/…          an 8 MiB page of 490,000 `<a href>` links, each to its own URL
 *   /te/gzip/…        Transfer-Encoding: gzip, chunked (the body gzipped, then chunked)
 *   /te/deflate/…     Transfer-Encoding: deflate, chunked
 *   /te/unknown/…     Transfer-Encoding: x-scramble, chunked
 *   /te/gzip-close/…  Transfer-Encoding: gzip (not chunked: the body runs to the connection's close)
 *   /hints/flood/…    `103 Early Hints` heads without end (no final response)
 *   /hints/<n>/…      n `103` heads, then an ordinary 200
 *   /trailers/…       a chunked body, then trailer lines without end
 *   /head/huge/…      a response head whose header lines never end
 *   /head/slow/…      a response head written one byte per 500 ms
 *   /bomb/br/…, /bomb/deflate/…, /bomb/gzip-gzip/…, /bomb/gzip/…   decompression bombs (64 MiB decoded)
 *   /chunk/ext/…      a chunk whose chunk-extension never ends
 *   /chunk/huge-size/…  a chunk size beyond 64 bits
 *   /robots.txt       404, or per IP (`robots`): 'self' redirects to itself, 'chain:<n>' redirects
 *                     n times (/robots-hop/1 … n) and then answers `Disallow: /`, 'disallow' answers
 *                     `Disallow: /`
 *   anything else     404
 */
import net from 'node:net';
import zlib from 'node:zlib';

export type HostileRobots = 'none' | 'self' | 'disallow' | `chain:${number}`;

export interface HostileServerOptions {
  /** Loopback addresses to listen on (one listener each, same port). */
  ips: readonly string[];
  /** 0: a free port, the same on every IP. */
  port?: number;
  /** How long an endless answer (flood, trickle, endless head) lasts before the server ends it, ms. Default 30 000. */
  floodMs?: number;
  /** How long a /slow-big/ body takes, ms. Default 20 000. */
  slowMs?: number;
  /** Size of a /slow-big/ body. Default 8 MiB. */
  bigBytes?: number;
  /** Ordinary pages /n/0 … /n/(normalPages − 1). Default 1000. */
  normalPages?: number;
  /** robots.txt behaviour per IP (default 'none': 404). */
  robots?: Readonly<Record<string, HostileRobots>>;
  /** Absolute URLs page /n/<k> links to besides its own host's (default none). */
  extraLinks?: (k: number) => string[];
}

export interface HostileLogEntry {
  /** ms (performance.timeOrigin + performance.now()) when the request head was complete */
  start: number;
  /** local address (the server's IP) */
  ip: string;
  path: string;
}

export interface HostileServers {
  readonly port: number;
  /** `http://<ip>:<port><path>` */
  url(ip: string, path: string): string;
  /** every request, in arrival order (bounded: the oldest are dropped past 1,000,000) */
  readonly log: HostileLogEntry[];
  /** connections open now */
  open(): number;
  close(): Promise<void>;
}

const MiB = 1024 * 1024;
const now = (): number => performance.timeOrigin + performance.now();

/** A deterministic pseudo-random byte source (xorshift32), for incompressible filler. */
function prng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    return s;
  };
}

/** Lower-case letters and spaces, pseudo-random (compresses about 1.6×, as prose does). */
function words(n: number, seed: number): Buffer {
  const r = prng(seed);
  const b = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) {
    const x = r() % 32;
    b[i] = x < 6 ? 0x20 : 0x61 + (x % 26);
  }
  return b;
}

/** An HTML page of exactly `n` bytes: a head, a few links, filler text. */
function htmlOf(n: number, seed: number): Buffer {
  const head = Buffer.from('<!DOCTYPE html><html><head><title>big</title></head><body><a href="/n/1">n1</a><p>', 'latin1');
  const tail = Buffer.from('</p></body></html>\n', 'latin1');
  return Buffer.concat([head, words(Math.max(0, n - head.length - tail.length), seed), tail]).subarray(0, n);
}

/** The cached bodies (built once per process, on first use). */
const cache = new Map<string, Buffer>();
function cached(key: string, build: () => Buffer): Buffer {
  let b = cache.get(key);
  if (b === undefined) {
    b = build();
    cache.set(key, b);
  }
  return b;
}

/**
 * 15 MiB of HTML that gzip (level 9) takes down to about 91 KB: repeated paragraphs with a
 * sprinkling of varied words, and a link every 4 KiB.
 */
function gzipBig(): Buffer {
  return cached('gzip-big', () => {
    const parts: Buffer[] = [Buffer.from('<!DOCTYPE html><html><body>\n', 'latin1')];
    const r = prng(7);
    const para = Buffer.from('<p>lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor</p>\n'.repeat(48), 'latin1');
    let n = 0;
    for (let k = 0; n < 15 * MiB - 4096; k++) {
      const p = Buffer.concat([para, Buffer.from(`<a href="/g/${r() % 100_000}">w${r() % 997}</a>\n`, 'latin1')]);
      parts.push(p);
      n += p.length;
    }
    parts.push(Buffer.from('</body></html>\n', 'latin1'));
    return zlib.gzipSync(Buffer.concat(parts), { level: 9 });
  });
}

/** 490,000 links, each to its own URL, in under 8 MiB (16 bytes a link). */
function linksPage(): Buffer {
  return cached('links', () => {
    const head = '<!DOCTYPE html><html><head><title>links</title></head><body>\n';
    const b = Buffer.allocUnsafe(head.length + 490_000 * 16 + 16);
    let p = b.write(head, 0, 'latin1');
    for (let i = 0; i < 490_000; i++) p += b.write(`<a href=/${String(i).padStart(6, '0')}>`, p, 'latin1');
    p += b.write('</body></html>\n', p, 'latin1');
    return b.subarray(0, p);
  });
}

const BOMB_BYTES = 64 * MiB;
function bomb(kind: string): Buffer {
  return cached(`bomb-${kind}`, () => {
    const zeros = Buffer.alloc(BOMB_BYTES);
    switch (kind) {
      case 'br': return zlib.brotliCompressSync(zeros, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } });
      case 'deflate': return zlib.deflateSync(zeros, { level: 9 });
      case 'gzip-gzip': return zlib.gzipSync(zlib.gzipSync(Buffer.alloc(15 * MiB, 0x61), { level: 9 }), { level: 9 });
      default: return zlib.gzipSync(zeros, { level: 9 });
    }
  });
}

/** One gzip member of 256 KiB of text, sent one byte per chunk by /flood/gzip/ (repeated: members concatenate). */
function gzipMember(): Buffer {
  return cached('gzip-member', () => zlib.gzipSync(htmlOf(256 * 1024, 11), { level: 1 }));
}

/** `1\r\na\r\n` (or `2\r\nab\r\n`) repeated to about 64 KiB. */
function floodBlock(size: 1 | 2): Buffer {
  return cached(`flood-${size}`, () => Buffer.from((size === 1 ? '1\r\na\r\n' : '2\r\nab\r\n').repeat(size === 1 ? 10_922 : 9362), 'latin1'));
}

/** A gzip member as one-byte chunks: each byte b becomes `1\r\n<b>\r\n`. */
function asOneByteChunks(b: Buffer): Buffer {
  const out = Buffer.allocUnsafe(b.length * 6);
  for (let i = 0; i < b.length; i++) {
    out[6 * i] = 0x31; out[6 * i + 1] = 0x0d; out[6 * i + 2] = 0x0a;
    out[6 * i + 3] = b[i]!; out[6 * i + 4] = 0x0d; out[6 * i + 5] = 0x0a;
  }
  return out;
}

function gzipFlood(): Buffer {
  return cached('gzip-flood', () => asOneByteChunks(gzipMember()));
}

/** Chunked framing of `b` in chunks of `size` bytes, with the last chunk. */
function chunked(b: Buffer, size = 4096): Buffer {
  const parts: Buffer[] = [];
  for (let o = 0; o < b.length; o += size) {
    const c = b.subarray(o, o + size);
    parts.push(Buffer.from(`${c.length.toString(16)}\r\n`, 'latin1'), c, Buffer.from('\r\n', 'latin1'));
  }
  parts.push(Buffer.from('0\r\n\r\n', 'latin1'));
  return Buffer.concat(parts);
}

/** An ordinary page; `where` (server and path) makes each server's pages its own (no duplicates across them). */
function page(k: number, normalPages: number, where: string, extra: string[] = []): Buffer {
  let links = '';
  for (let j = 1; j <= 4; j++) if (k + j < normalPages) links += `<a href="/n/${k + j}">page ${k + j}</a>\n`;
  for (const x of extra) links += `<a href="${x}">elsewhere</a>\n`;
  return Buffer.from(`<!DOCTYPE html><html><head><title>page ${k}</title></head><body>\n${links}<p>${'ordinary text '.repeat(120)}</p><!-- ${where} --></body></html>\n`, 'latin1');
}

function head(status: string, headers: string[]): string {
  return `HTTP/1.1 ${status}\r\nServer: hostile\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n`;
}

/** The servers' state and what each path answers (startHostileServers listens and hands it the sockets). */
class Hostile {
  readonly floodMs: number;
  readonly slowMs: number;
  readonly bigBytes: number;
  readonly normalPages: number;
  readonly robots: Record<string, HostileRobots>;
  readonly log: HostileLogEntry[] = [];
  readonly sockets = new Set<net.Socket>();
  readonly timers = new Set<NodeJS.Timeout>();
  closed = false;

  constructor(readonly opts: HostileServerOptions) {
    this.floodMs = opts.floodMs ?? 30_000;
    this.slowMs = opts.slowMs ?? 20_000;
    this.bigBytes = opts.bigBytes ?? 8 * MiB;
    this.normalPages = opts.normalPages ?? 1000;
    this.robots = opts.robots ?? {};
  }

  later(ms: number, f: () => void): void {
    const t = setTimeout(() => { this.timers.delete(t); f(); }, ms);
    this.timers.add(t);
  }

  /** Write `gen()` blocks while the socket takes them, for floodMs; then `end` (or close). */
  stream(s: net.Socket, first: Buffer | string, gen: () => Buffer, end: Buffer | string | null): void {
    const until = Date.now() + this.floodMs;
    s.write(first);
    const pump = (): void => {
      while (!s.destroyed && !this.closed) {
        if (Date.now() >= until) {
          if (end !== null) s.end(end);
          else s.end();
          return;
        }
        if (!s.write(gen())) {
          s.once('drain', pump);
          return;
        }
      }
    };
    pump();
  }

  send(s: net.Socket, status: string, headers: string[], body: Buffer | string): void {
    const b = typeof body === 'string' ? Buffer.from(body, 'latin1') : body;
    s.write(head(status, [...headers, `Content-Length: ${b.length}`]));
    s.write(b);
  }

  serve(s: net.Socket, ip: string, path: string): void {
    this.log.push({ start: now(), ip, path });
    if (this.log.length > 1_000_000) this.log.splice(0, this.log.length - 1_000_000);
    if (path === '/robots.txt' || path.startsWith('/robots-hop/')) return this.serveRobots(s, ip, path);
    const seg = path.split('/');
    switch (seg[1]) {
      case 'n': {
        const k = Number(seg[2]);
        if (!Number.isInteger(k) || k < 0 || k >= this.normalPages) return this.send(s, '404 Not Found', [HTML], 'none\n');
        return this.send(s, '200 OK', [HTML], page(k, this.normalPages, `${ip} ${path}`, this.opts.extraLinks?.(k)));
      }
      case 'flood': {
        if (seg[2] === 'gzip') {
          const block = gzipFlood();
          return this.stream(s, head('200 OK', [HTML, 'Content-Encoding: gzip', TE]), () => block, '0\r\n\r\n');
        }
        const block = floodBlock(seg[2] === '2' ? 2 : 1);
        return this.stream(s, head('200 OK', [HTML, TE]), () => block, '0\r\n\r\n');
      }
      case 'slow-big':
      case 'slow-chunked': return this.serveSlow(s, seg[1] === 'slow-chunked');
      case 'gzip-big': return this.send(s, '200 OK', [HTML, 'Content-Encoding: gzip'], gzipBig());
      case 'links': return this.send(s, '200 OK', [HTML], linksPage());
      case 'te': return this.serveTe(s, seg[2], `${ip} ${path}`);
      case 'hints': {
        const hint = Buffer.from(head('103 Early Hints', ['Link: </style.css>; rel=preload; as=style']), 'latin1');
        if (seg[2] === 'flood') {
          const block = cached('hints', () => Buffer.concat(Array.from({ length: 256 }, () => hint)));
          return this.stream(s, block, () => block, null);
        }
        const n = Math.min(10_000, Number(seg[2]) || 0);
        for (let i = 0; i < n; i++) s.write(hint);
        return this.send(s, '200 OK', [HTML], page(0, this.normalPages, `${ip} ${path}`));
      }
      case 'trailers': {
        const line = Buffer.from(`X-Trailer: ${'t'.repeat(100)}\r\n`.repeat(64), 'latin1');
        return this.stream(s, `${head('200 OK', [HTML, TE, 'Trailer: X-Trailer'])}5\r\nhello\r\n0\r\n`, () => line, '\r\n');
      }
      case 'head': return this.serveHead(s, seg[2]);
      case 'bomb': {
        const kind = seg[2] ?? 'gzip';
        const enc = kind === 'br' ? 'br' : kind === 'deflate' ? 'deflate' : kind === 'gzip-gzip' ? 'gzip, gzip' : 'gzip';
        return this.send(s, '200 OK', [HTML, `Content-Encoding: ${enc}`], bomb(kind));
      }
      case 'chunk': {
        if (seg[2] === 'ext') {
          const block = Buffer.alloc(64 * 1024, 0x78);
          return this.stream(s, `${head('200 OK', [HTML, TE])}1;`, () => block, null);
        }
        if (seg[2] === 'huge-size') return void s.end(`${head('200 OK', [HTML, TE])}FFFFFFFFFFFFFFFFFFFF\r\na\r\n0\r\n\r\n`);
        return this.send(s, '404 Not Found', [HTML], 'none\n');
      }
      default:
        return this.send(s, '404 Not Found', [HTML], 'none\n');
    }
  }

  private serveRobots(s: net.Socket, ip: string, path: string): void {
    const mode = this.robots[ip] ?? 'none';
    const hop = path === '/robots.txt' ? 0 : Number(path.slice('/robots-hop/'.length));
    if (mode === 'self') return this.send(s, '301 Moved Permanently', ['Location: /robots.txt', HTML], '');
    if (mode === 'disallow') return this.send(s, '200 OK', ['Content-Type: text/plain'], 'User-agent: *\nDisallow: /\n');
    if (mode.startsWith('chain:')) {
      const n = Number(mode.slice(6));
      if (hop < n) return this.send(s, '302 Found', [`Location: /robots-hop/${hop + 1}`, HTML], '');
      return this.send(s, '200 OK', ['Content-Type: text/plain'], 'User-agent: *\nDisallow: /\n');
    }
    return this.send(s, '404 Not Found', [HTML], 'no robots.txt\n');
  }

  /** bigBytes of HTML over slowMs, with a Content-Length or chunked (one chunk a write). */
  private serveSlow(s: net.Socket, isChunked: boolean): void {
    const body = cached(`big-${this.bigBytes}`, () => htmlOf(this.bigBytes, 3));
    s.write(head('200 OK', [HTML, isChunked ? TE : `Content-Length: ${body.length}`]));
    const pieces = Math.max(1, Math.ceil(this.slowMs / 100));
    const step = Math.ceil(body.length / pieces);
    let off = 0;
    const next = (): void => {
      if (s.destroyed || this.closed) return;
      const piece = body.subarray(off, off + step);
      const ok = s.write(isChunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`, 'latin1'), piece, Buffer.from('\r\n', 'latin1')]) : piece);
      off += step;
      if (off >= body.length) {
        if (isChunked) s.write('0\r\n\r\n');
        return;
      }
      // a client that does not read holds the server back (TCP flow control), as a real one would be
      if (ok) this.later(100, next);
      else s.once('drain', () => this.later(100, next));
    };
    next();
  }

  private serveTe(s: net.Socket, kind: string | undefined, where: string): void {
    const body = page(0, this.normalPages, where);
    if (kind === 'gzip') return void s.write(Buffer.concat([Buffer.from(head('200 OK', [HTML, 'Transfer-Encoding: gzip, chunked'])), chunked(zlib.gzipSync(body))]));
    if (kind === 'deflate') return void s.write(Buffer.concat([Buffer.from(head('200 OK', [HTML, 'Transfer-Encoding: deflate, chunked'])), chunked(zlib.deflateSync(body))]));
    if (kind === 'unknown') return void s.write(Buffer.concat([Buffer.from(head('200 OK', [HTML, 'Transfer-Encoding: x-scramble, chunked'])), chunked(body)]));
    if (kind === 'gzip-close') {
      s.write(head('200 OK', [HTML, 'Transfer-Encoding: gzip', 'Connection: close']));
      s.end(zlib.gzipSync(body));
      return;
    }
    return this.send(s, '404 Not Found', [HTML], 'none\n');
  }

  private serveHead(s: net.Socket, kind: string | undefined): void {
    if (kind === 'huge') {
      const line = Buffer.from(`X-Header: ${'h'.repeat(100)}\r\n`.repeat(64), 'latin1');
      return this.stream(s, 'HTTP/1.1 200 OK\r\n', () => line, null);
    }
    if (kind === 'slow') {
      const text = `HTTP/1.1 200 OK\r\nX-Slow: ${'s'.repeat(10_000)}`;
      const until = Date.now() + this.floodMs;
      let i = 0;
      const next = (): void => {
        if (s.destroyed || this.closed) return;
        if (Date.now() >= until || i >= text.length) return void s.end();
        s.write(text[i++]!);
        this.later(500, next);
      };
      next();
      return;
    }
    return this.send(s, '404 Not Found', [HTML], 'none\n');
  }

  onConnection(s: net.Socket, ip: string): void {
    this.sockets.add(s);
    s.setNoDelay(true);
    s.on('close', () => this.sockets.delete(s));
    s.on('error', () => undefined);
    let buf = '';
    s.on('data', (d: Buffer) => {
      buf += d.toString('latin1');
      if (buf.length > 64 * 1024) return void s.destroy();
      // One request at a time: the crawler never pipelines; a request after a response on a
      // keep-alive connection is answered the same way.
      for (let end = buf.indexOf('\r\n\r\n'); end >= 0; end = buf.indexOf('\r\n\r\n')) {
        const line = buf.slice(0, buf.indexOf('\r\n'));
        buf = buf.slice(end + 4);
        const path = line.split(' ')[1] ?? '/';
        this.serve(s, ip, path);
      }
    });
  }
}

const HTML = 'Content-Type: text/html; charset=utf-8';
const TE = 'Transfer-Encoding: chunked';

export async function startHostileServers(opts: HostileServerOptions): Promise<HostileServers> {
  const h = new Hostile(opts);
  // The large bodies are built before the servers listen (seconds of zlib at level 9 on a loaded
  // box), never while a client waits: a server busy building would look like a slow server.
  gzipBig();
  linksPage();
  for (const k of ['br', 'deflate', 'gzip-gzip', 'gzip']) bomb(k);
  gzipFlood();
  cached(`big-${h.bigBytes}`, () => htmlOf(h.bigBytes, 3));
  for (let attempt = 0; attempt < 20; attempt++) {
    const servers: net.Server[] = [];
    try {
      let port = opts.port ?? 0;
      for (const ip of opts.ips) {
        const srv = net.createServer((s) => h.onConnection(s, ip));
        await new Promise<void>((resolve, reject) => {
          srv.once('error', reject);
          srv.listen(port, ip, () => { srv.off('error', reject); resolve(); });
        });
        servers.push(srv);
        port = (srv.address() as net.AddressInfo).port;
      }
      return {
        port,
        url: (ip, path) => `http://${ip}:${port}${path}`,
        log: h.log,
        open: () => h.sockets.size,
        close: async () => {
          h.closed = true;
          for (const t of h.timers) clearTimeout(t);
          h.timers.clear();
          const done = Promise.all(servers.map((srv) => new Promise((r) => srv.close(r))));
          for (const s of h.sockets) s.destroy();
          await done;
        },
      };
    } catch (err) {
      await Promise.all(servers.map((srv) => new Promise((r) => srv.close(r))));
      if ((opts.port ?? 0) === 0 && (err as NodeJS.ErrnoException).code === 'EADDRINUSE') continue;
      throw err;
    }
  }
  throw new Error('hostile servers: no port free on every IP after 20 tries');
}
