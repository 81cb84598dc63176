/**
 * The status server's routes as a table (status-server.ts serves them): what each GET shows and
 * what each POST verb does to the crawl. A request has passed the server's Host and Origin checks
 * before it gets here; a verb also needs the bearer token (checked here, after the route is known,
 * so that an unknown path is a 404 and a GET of a verb a 405 whatever the token).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import type { Exposition } from './metrics-exposition.js';
import { renderPrometheus, type BuildInfo, type StatusSnapshot } from './stats.js';
import type { StatusHistory } from './status-history.js';
import { statusPageCsp, statusPageHtml } from './status-page.js';

/** What the status server steers. */
export interface StatusController {
  snapshot(): StatusSnapshot;
  pause(): void;
  resume(): void;
  stop(reason?: string): void;
  /** Change runtime options (throws CRAWL_CONFIG_INVALID on a bad change). */
  setRuntime?(change: Record<string, unknown>): Record<string, unknown>;
  /** Families /metrics serves besides the snapshot's (a cluster node's: src/cluster). */
  metrics?(): Exposition;
}

/** Largest POST /config body read. */
const MAX_BODY_BYTES = 64 * 1024;

/** The three refusal codes (docs/errors.md). */
export const CRAWL_CONTROL_HOST = 'CRAWL_CONTROL_HOST';
export const CRAWL_CONTROL_ORIGIN = 'CRAWL_CONTROL_ORIGIN';
export const CRAWL_CONTROL_UNAUTHORIZED = 'CRAWL_CONTROL_UNAUTHORIZED';

type Json = (code: number, v: unknown, extra?: Record<string, string>) => void;

/** How a route answers: a body of a type, a JSON value, a refusal that closes the connection. */
export interface Reply {
  send(code: number, type: string, body: string, extra?: Record<string, string>): void;
  json: Json;
  refuse(code: number, crawlCode: string, error: string, extra?: Record<string, string>): void;
}

/** What a route reads: the controller, the server's build info and history, the request. */
export interface RouteContext extends Reply {
  ctl: StatusController;
  build: BuildInfo;
  history: StatusHistory;
  req: http.IncomingMessage;
  res: http.ServerResponse;
  /** the request target's query string (after '?'), or '' */
  query: string;
}

/** The answers on `res`. */
export function reply(res: http.ServerResponse): Reply {
  const send = (code: number, type: string, body: string, extra: Record<string, string> = {}): void => {
    res.writeHead(code, { 'content-type': type, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', ...extra });
    res.end(body);
  };
  const json: Json = (code, v, extra) => send(code, 'application/json; charset=utf-8', JSON.stringify(v) + '\n', extra);
  const refuse = (code: number, crawlCode: string, error: string, extra?: Record<string, string>): void => {
    // The body of a refused request is not read: close the connection after the answer.
    json(code, { ok: false, code: crawlCode, error }, { connection: 'close', ...extra });
  };
  return { send, json, refuse };
}

/** GET: watching the crawl. */
const WATCH = new Map<string, (c: RouteContext) => void>([
  ['/metrics', (c) => c.send(200, 'text/plain; version=0.0.4; charset=utf-8', renderPrometheus(c.ctl.snapshot(), c.build, c.ctl.metrics?.()))],
  ['/status', (c) => c.json(200, c.ctl.snapshot())],
  ['/history', (c) => {
    const since = Number(new URLSearchParams(c.query).get('since') ?? 0);
    c.json(200, c.history.read(Number.isFinite(since) ? since : 0));
  }],
  ['/', (c) => {
    const nonce = randomBytes(16).toString('base64url');
    c.send(200, 'text/html; charset=utf-8', statusPageHtml(nonce), {
      'content-security-policy': statusPageCsp(nonce), 'x-frame-options': 'DENY', 'referrer-policy': 'no-referrer',
    });
  }],
]);

/** POST with the bearer token: steering the crawl. */
const STEER = new Map<string, (c: RouteContext) => void>([
  ['/pause', (c) => {
    c.ctl.pause();
    c.json(200, { ok: true, state: c.ctl.snapshot().state });
  }],
  ['/resume', (c) => {
    c.ctl.resume();
    c.json(200, { ok: true, state: c.ctl.snapshot().state });
  }],
  ['/stop', (c) => {
    c.ctl.stop('status-server');
    c.json(200, { ok: true, state: c.ctl.snapshot().state });
  }],
  ['/config', (c) => {
    if (c.ctl.setRuntime === undefined) return c.json(404, { ok: false, error: 'this crawl takes no runtime changes' });
    readConfigBody(c.req, c.res, c.ctl.setRuntime.bind(c.ctl), c.json);
  }],
]);

/** Answer a request for `url` (its path): a route of the tables, 404, 405 or 401. */
export function route(c: RouteContext, url: string, tokenBytes: Buffer): void {
  const watch = c.req.method === 'GET' ? WATCH.get(url) : undefined;
  if (watch !== undefined) return watch(c);
  const steer = STEER.get(url);
  if (steer === undefined) return c.json(404, { ok: false, error: 'not found; try / (status page), /status, /history, /metrics, POST /pause, /resume, /stop, /config' });
  if (c.req.method !== 'POST') return c.json(405, { ok: false, error: 'use POST' }, { allow: 'POST' });
  const auth = Buffer.from(c.req.headers.authorization ?? '');
  if (auth.length !== tokenBytes.length || !timingSafeEqual(auth, tokenBytes)) {
    return c.refuse(401, CRAWL_CONTROL_UNAUTHORIZED, 'POST needs the header "Authorization: Bearer <token>" (the token is printed at start and kept in <state>/control-token)', { 'www-authenticate': 'Bearer' });
  }
  steer(c);
}

/** POST /config: a JSON object of runtime options, at most MAX_BODY_BYTES; 400 with the code on a bad change. */
function readConfigBody(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  setRuntime: (change: Record<string, unknown>) => Record<string, unknown>,
  json: Json,
): void {
  let body = '';
  let tooLarge = false;
  req.setEncoding('utf8');
  req.on('data', (c: string) => {
    if (tooLarge) return;
    body += c;
    if (body.length > MAX_BODY_BYTES) {
      tooLarge = true;
      json(413, { ok: false, code: 'CRAWL_CONFIG_INVALID', error: `the body is larger than ${MAX_BODY_BYTES} bytes` }, { connection: 'close' });
      req.resume();
    }
  });
  req.on('end', () => {
    if (tooLarge || res.headersSent) return;
    try {
      const change = JSON.parse(body || '{}') as unknown;
      if (change === null || typeof change !== 'object' || Array.isArray(change)) {
        return json(400, { ok: false, code: 'CRAWL_CONFIG_INVALID', error: 'the body must be a JSON object of runtime options' });
      }
      json(200, { ok: true, runtime: setRuntime(change as Record<string, unknown>) });
    } catch (e) {
      json(400, { ok: false, code: (e as { code?: string }).code ?? 'CRAWL_CONFIG_INVALID', error: (e as Error).message });
    }
  });
}
