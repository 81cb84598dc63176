/**
 * The status server (the Dominos "admin interface to watch and steer a running crawl"): GET / (the
 * live status page, status-page.ts), GET /status (the JSON snapshot), GET /history (counter samples
 * over time, status-history.ts) and GET /metrics (Prometheus text, stats.ts) to watch; POST /pause,
 * /resume, /stop and /config to steer.
 *
 * It listens on loopback, but loopback is not a boundary: any web page open in the operator's
 * browser can send requests to 127.0.0.1 (CSRF), and a name the attacker controls can be made to
 * resolve to 127.0.0.1 after the page loaded (DNS rebinding). So:
 *
 * - every POST needs `Authorization: Bearer <token>`; the token is 32 random bytes made at start,
 *   given to the operator (the CLI prints it) and written to a file of mode 0600 (the state dir's
 *   `control-token`). A browser cannot add that header to a cross-origin request without a CORS
 *   preflight, which is never granted (no Access-Control-* header is ever sent);
 * - the Host header must name the server itself (127.0.0.1, localhost, [::1] or the bound address,
 *   with the server's port or none): a rebound name in Host is refused, even for GET;
 * - a request carrying an Origin header other than the server's own is refused, even for GET;
 * - at most MAX_CONNECTIONS connections are open at once (the kernel hands over more, Node closes
 *   them at once), a connection idle for idleTimeoutMs is closed, and a request head must arrive
 *   within headersTimeoutMs: idle or slow clients cannot hold file descriptors.
 *
 * Refusals are JSON `{ ok: false, code, error }` with a CRAWL_CONTROL_* code (docs/errors.md).
 * The routes, and the token check of the POST verbs, are a table in status-routes.ts.
 */
import { randomBytes } from 'node:crypto';
import { open } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { openOwnFile } from '../disk/safe-fs.js';
import { buildInfo } from './build-info.js';
import { StatusHistory, type HistoryOptions } from './status-history.js';
import { CRAWL_CONTROL_HOST, CRAWL_CONTROL_ORIGIN, reply, route, type StatusController } from './status-routes.js';

export interface StatusServer {
  readonly port: number;
  readonly url: string;
  /** The bearer token every POST needs. */
  readonly token: string;
  close(): Promise<void>;
}

export interface StatusServerOptions {
  /** Write the token here (created with mode 0600, replaced if it exists). @default none */
  tokenFile?: string;
  /** Connections open at once; more are closed as they arrive. @default MAX_CONNECTIONS */
  maxConnections?: number;
  /** A connection without traffic for this long is closed. @default 10000 */
  idleTimeoutMs?: number;
  /** A request's head must be complete within this time. @default 5000 */
  headersTimeoutMs?: number;
  /** Sampling periods and ring sizes of GET /history. @default StatusHistory's */
  history?: HistoryOptions;
}

/** Concurrent connections the status server keeps (a scraper and an operator need a few). */
export const MAX_CONNECTIONS = 64;
/** File name of the token in the state directory. */
export const CONTROL_TOKEN_FILE = 'control-token';

export { CRAWL_CONTROL_HOST, CRAWL_CONTROL_ORIGIN, CRAWL_CONTROL_UNAUTHORIZED, type StatusController } from './status-routes.js';

/** Host header values that name this server: loopback names and the bound address, with or without the port. */
function allowedHosts(host: string, port: number): Set<string> {
  const names = new Set(['127.0.0.1', 'localhost', '[::1]', host.includes(':') ? `[${host}]` : host]);
  const out = new Set<string>();
  for (const n of names) {
    out.add(n);
    out.add(`${n}:${port}`);
  }
  return out;
}

/** Write the token file: mode 0600 from its creation (no window in which others may read it). */
async function writeTokenFile(file: string, token: string): Promise<void> {
  // Never through a link planted at its name (src/disk/safe-fs.ts); the mode is set through the descriptor.
  const fh = await openOwnFile(file, 'w', 0o600);
  try {
    await fh.chmod(0o600); // an existing file keeps its mode on open: set it
    await fh.writeFile(token + '\n');
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * Serve the status surfaces on host:port (loopback by default). Resolves once listening and, when
 * `opts.tokenFile` is given, once the token is on disk.
 */
export async function startStatusServer(ctl: StatusController, port: number, host = '127.0.0.1', opts: StatusServerOptions = {}): Promise<StatusServer> {
  const token = randomBytes(32).toString('base64url');
  const tokenBytes = Buffer.from(`Bearer ${token}`);
  let hosts = new Set<string>();
  let origins = new Set<string>();
  const build = buildInfo();
  const history = new StatusHistory(() => ctl.snapshot(), opts.history);

  const server = http.createServer({
    headersTimeout: opts.headersTimeoutMs ?? 5000,
    requestTimeout: 2 * (opts.headersTimeoutMs ?? 5000),
    keepAliveTimeout: 1000,
    // How often Node checks headersTimeout / requestTimeout (default 30 s).
    connectionsCheckingInterval: Math.min(1000, opts.headersTimeoutMs ?? 5000),
  }, (req, res) => handle(req, res));
  server.maxConnections = opts.maxConnections ?? MAX_CONNECTIONS;
  // Idle sockets (also before the first byte of a request) are closed after this time.
  server.setTimeout(opts.idleTimeoutMs ?? 10_000, (socket) => socket.destroy());

  function handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const [url, query = ''] = (req.url ?? '/').split('?', 2) as [string, string?];
    const r = reply(res);
    const hostHeader = (req.headers.host ?? '').toLowerCase();
    if (!hosts.has(hostHeader)) return r.refuse(403, CRAWL_CONTROL_HOST, 'the Host header must name this server (127.0.0.1, localhost or [::1])');
    const origin = req.headers.origin;
    if (origin !== undefined && !origins.has(origin.toLowerCase())) return r.refuse(403, CRAWL_CONTROL_ORIGIN, 'cross-origin requests are refused');
    try {
      route({ ctl, build, history, req, res, query, ...r }, url, tokenBytes);
    } catch (e) {
      r.json(500, { ok: false, error: (e as Error).message });
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  hosts = allowedHosts(host, addr.port);
  origins = new Set([...hosts].filter((h) => h.endsWith(`:${addr.port}`)).map((h) => `http://${h}`));
  history.start();
  const close = (): Promise<void> =>
    new Promise<void>((resolve) => {
      history.stop();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  if (opts.tokenFile !== undefined) {
    try {
      await writeTokenFile(opts.tokenFile, token);
    } catch (e) {
      await close();
      throw e;
    }
  }
  return {
    port: addr.port,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${addr.port}`,
    token,
    close,
  };
}
