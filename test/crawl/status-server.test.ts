/**
 * The status server over real loopback sockets: watching (GET) and steering (POST) work for the
 * operator with the token; a page in a browser (cross-origin, rebound Host, no token) can neither
 * steer nor read it; idle connections cannot hold the server's file descriptors.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startStatusServer, MAX_CONNECTIONS, type StatusController } from '../../src/monitor/status-server.js';
import type { CrawlState, StatusSnapshot } from '../../src/monitor/stats.js';

function snap(state: CrawlState): StatusSnapshot {
  return {
    state, stopReason: null, startedAt: new Date(0).toISOString(), elapsedMs: 1, pages: 1234, requisites: 0, pagesOk: 1200, bytes: 1,
    pagesPerSec: 1, mbPerSec: 1, urlsSeen: 9000, urlsDiscovered: 1, urlsQueued: 1, duplicates: 0, inFlight: 0, parsing: 0,
    robotsFetches: 0, beast: { j: 2, qfSize: 10, qrSize: 0 }, hosts: { active: 0, waiting: 0 }, ips: { active: 0, waiting: 0 },
    dns: { lookups: 0, hitRate: 0 }, robots: { lookups: 0, hitRate: 0 }, workers: { size: 1, replaced: 0 }, outcomes: { ok: 1 },
    rssBytes: 1, cpuMsPerPage: 1, cpuSeconds: 1, urlsReady: 1, topPlds: [], checkpoints: 0, lastCheckpointAt: null,
  };
}

/** A controller that records every call. */
function recorder(): StatusController & { calls: string[]; state: CrawlState } {
  const c = {
    calls: [] as string[],
    state: 'running' as CrawlState,
    snapshot: () => snap(c.state),
    pause: () => { c.calls.push('pause'); c.state = 'paused'; },
    resume: () => { c.calls.push('resume'); c.state = 'running'; },
    stop: (r?: string) => { c.calls.push(`stop:${r ?? ''}`); c.state = 'stopping'; },
    setRuntime: (change: Record<string, unknown>) => {
      c.calls.push(`config:${JSON.stringify(change)}`);
      if ('bad' in change) throw Object.assign(new Error('bad must not'), { code: 'CRAWL_CONFIG_INVALID' });
      return change;
    },
  };
  return c;
}

interface Reply { status: number; headers: http.IncomingHttpHeaders; body: string }

/** One request with exactly the given headers (node:http lets a test set Host and Origin). */
function send(port: number, method: string, p: string, headers: Record<string, string>, body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: p, headers, agent: false }, (res) => {
      let b = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (b += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: b }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function code(r: Reply): string | undefined {
  return (JSON.parse(r.body) as { code?: string }).code;
}

test('status server: GET /status and /metrics open on loopback, POST verbs with the token, token file 0600', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dc-status-'));
  const tokenFile = path.join(dir, 'control-token');
  writeFileSync(tokenFile, 'old', { mode: 0o644 });
  const ctl = recorder();
  const srv = await startStatusServer(ctl, 0, '127.0.0.1', { tokenFile });
  try {
    assert.match(srv.token, /^[A-Za-z0-9_-]{43}$/, '32 random bytes, base64url');
    assert.equal(readFileSync(tokenFile, 'utf8'), srv.token + '\n');
    assert.equal(statSync(tokenFile).mode & 0o777, 0o600);
    const host = { host: `127.0.0.1:${srv.port}` };
    const auth = { ...host, authorization: `Bearer ${srv.token}` };
    const s = await send(srv.port, 'GET', '/status', host);
    assert.equal(s.status, 200);
    assert.equal((JSON.parse(s.body) as StatusSnapshot).pages, 1234);
    const m = await send(srv.port, 'GET', '/metrics', { host: `localhost:${srv.port}` });
    assert.match(m.headers['content-type'] ?? '', /text\/plain; version=0\.0\.4/);
    assert.match(m.body, /^drumcrawl_urls_seen_total 9000$/m);
    assert.equal(JSON.parse((await send(srv.port, 'POST', '/pause', auth)).body).state, 'paused');
    assert.equal(JSON.parse((await send(srv.port, 'POST', '/resume', auth)).body).state, 'running');
    assert.equal((await send(srv.port, 'GET', '/stop', auth)).status, 405);
    const c = await send(srv.port, 'POST', '/config', { ...auth, 'content-type': 'application/json' }, JSON.stringify({ maxPages: 9 }));
    assert.deepEqual(JSON.parse(c.body), { ok: true, runtime: { maxPages: 9 } });
    const bad = await send(srv.port, 'POST', '/config', auth, JSON.stringify({ bad: 1 }));
    assert.equal(bad.status, 400);
    assert.equal(code(bad), 'CRAWL_CONFIG_INVALID');
    const notObject = await send(srv.port, 'POST', '/config', auth, '[1]');
    assert.equal(notObject.status, 400);
    const big = await send(srv.port, 'POST', '/config', auth, JSON.stringify({ x: 'y'.repeat(70_000) }));
    assert.equal(big.status, 413);
    assert.equal((await send(srv.port, 'GET', '/nope', host)).status, 404);
    assert.equal(JSON.parse((await send(srv.port, 'POST', '/stop', auth)).body).state, 'stopping');
    assert.deepEqual(ctl.calls, ['pause', 'resume', 'config:{"maxPages":9}', 'config:{"bad":1}', 'stop:status-server']);
  } finally {
    await srv.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('status server: no token, a wrong token, a rebound Host or a foreign Origin steer nothing; no CORS', async () => {
  const ctl = recorder();
  const srv = await startStatusServer(ctl, 0);
  try {
    const own = `127.0.0.1:${srv.port}`;
    const auth = `Bearer ${srv.token}`;
    const cases: [string, string, string, Record<string, string>, number, string][] = [
      // [what, method, path, headers, status, code]
      ['no token', 'POST', '/pause', { host: own }, 401, 'CRAWL_CONTROL_UNAUTHORIZED'],
      ['wrong token', 'POST', '/stop', { host: own, authorization: `Bearer ${'A'.repeat(43)}` }, 401, 'CRAWL_CONTROL_UNAUTHORIZED'],
      ['token without Bearer', 'POST', '/stop', { host: own, authorization: srv.token }, 401, 'CRAWL_CONTROL_UNAUTHORIZED'],
      ['Basic auth', 'POST', '/pause', { host: own, authorization: 'Basic YTpi' }, 401, 'CRAWL_CONTROL_UNAUTHORIZED'],
      // The CSRF request: a page on evil.example posting through a rebound name.
      ['CSRF: evil Host and Origin', 'POST', '/config', { host: 'evil.example', origin: 'http://evil.example', 'content-type': 'text/plain' }, 403, 'CRAWL_CONTROL_HOST'],
      ['rebound Host with the token', 'POST', '/pause', { host: `evil.example:${srv.port}`, authorization: auth }, 403, 'CRAWL_CONTROL_HOST'],
      ['rebound Host, GET', 'GET', '/status', { host: `evil.example:${srv.port}` }, 403, 'CRAWL_CONTROL_HOST'],
      ['Host with a loopback prefix', 'GET', '/status', { host: `127.0.0.1.evil.example:${srv.port}` }, 403, 'CRAWL_CONTROL_HOST'],
      ['Host with another port', 'GET', '/metrics', { host: `127.0.0.1:${srv.port + 1}` }, 403, 'CRAWL_CONTROL_HOST'],
      ['foreign Origin with the token', 'POST', '/pause', { host: own, origin: 'http://evil.example', authorization: auth }, 403, 'CRAWL_CONTROL_ORIGIN'],
      ['foreign Origin, GET', 'GET', '/status', { host: own, origin: 'http://evil.example' }, 403, 'CRAWL_CONTROL_ORIGIN'],
      ['Origin null (sandboxed page)', 'POST', '/stop', { host: own, origin: 'null', authorization: auth }, 403, 'CRAWL_CONTROL_ORIGIN'],
      ['Origin on another port', 'POST', '/stop', { host: own, origin: `http://127.0.0.1:${srv.port + 1}`, authorization: auth }, 403, 'CRAWL_CONTROL_ORIGIN'],
      ['preflight', 'OPTIONS', '/config', { host: own, origin: 'http://evil.example', 'access-control-request-method': 'POST' }, 403, 'CRAWL_CONTROL_ORIGIN'],
    ];
    for (const [what, method, p, headers, status, c] of cases) {
      const r = await send(srv.port, method, p, headers, method === 'POST' ? '{"maxPages":999999}' : undefined);
      assert.equal(r.status, status, `${what}: ${r.body}`);
      assert.equal(code(r), c, what);
      for (const h of Object.keys(r.headers)) assert.ok(!h.startsWith('access-control-'), `${what}: ${h}`);
    }
    assert.deepEqual(ctl.calls, [], 'nothing was steered');
    assert.equal(ctl.state, 'running');
    // The server's own origin, [::1] and localhost as Host, and no Origin at all are the operator.
    const ok = await send(srv.port, 'POST', '/pause', { host: `localhost:${srv.port}`, origin: `http://localhost:${srv.port}`, authorization: auth });
    assert.equal(ok.status, 200, ok.body);
    assert.equal((await send(srv.port, 'GET', '/status', { host: `[::1]:${srv.port}` })).status, 200);
    assert.equal((await send(srv.port, 'GET', '/status', { host: '127.0.0.1' })).status, 200);
    const opt = await send(srv.port, 'OPTIONS', '/config', { host: own });
    assert.equal(opt.status, 405);
    for (const h of Object.keys(opt.headers)) assert.ok(!h.startsWith('access-control-'), h);
    assert.deepEqual(ctl.calls, ['pause']);
  } finally {
    await srv.close();
  }
});

/** Open file descriptors of a process (Linux /proc). */
function fdCount(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

test('status server: 2,500 idle connections hold at most MAX_CONNECTIONS fds, and idle ones are closed', async (t) => {
  // Long, so that the wait for the cap below ends well before any connection could be closed for
  // being idle: a server that held them all would hold them until then.
  const IDLE_MS = 20_000;
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./status-server-child.ts', import.meta.url)), String(IDLE_MS)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const sockets: net.Socket[] = [];
  let sampler: NodeJS.Timeout | undefined;
  const sleep = (ms: number): Promise<unknown> => new Promise((r) => setTimeout(r, ms));
  try {
    const info = await new Promise<{ port: number; token: string }>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]!) as { port: number; token: string });
      });
      child.on('exit', (c) => reject(new Error(`child exited ${c}`)));
    });
    const baseline = fdCount(child.pid!);
    let maxFds = baseline;
    sampler = setInterval(() => { maxFds = Math.max(maxFds, fdCount(child.pid!)); }, 20);
    const N = 2500;
    let connected = 0;
    let settled = 0;
    const alive = (): number => sockets.filter((s) => !s.destroyed).length;
    const started = Date.now();
    const deadline = started + IDLE_MS / 2;
    // In waves smaller than the listen backlog (511), each waited for until the server has accepted
    // it and closed what is over its cap: a burst that overflows the kernel's accept queue (a
    // loaded box accepts slowly) leaves client sockets "connected" that the server never sees, and
    // never can close. The wait ends at a deadline at half the idle timeout (a server that held
    // every connection would still hold them then).
    const WAVE = 250;
    for (let w = 0; w < N && Date.now() < deadline; w += WAVE) {
      for (let i = w; i < Math.min(N, w + WAVE); i++) {
        const s = net.connect(info.port, '127.0.0.1');
        sockets.push(s);
        let done = false;
        const mark = (): void => {
          if (!done) settled++;
          done = true;
        };
        s.on('connect', () => { connected++; mark(); });
        s.on('error', mark);
        s.on('close', mark);
      }
      while ((settled < sockets.length || alive() > MAX_CONNECTIONS) && Date.now() < deadline) await sleep(20);
    }
    const waited = Date.now() - started;
    maxFds = Math.max(maxFds, fdCount(child.pid!));
    const kept = alive();
    t.diagnostic(`${connected} of ${N} connected, ${kept} kept open after ${waited} ms, server fds ${baseline} → peak ${maxFds}`);
    assert.ok(connected >= N / 2, `the connections reached the server (${connected} connected)`);
    assert.ok(kept <= MAX_CONNECTIONS, `${kept} idle connections kept open (cap ${MAX_CONNECTIONS}; ${settled} of ${N} settled)`);
    // The cap's connections plus one being accepted and closed, and slack for the runtime's own.
    assert.ok(maxFds <= baseline + MAX_CONNECTIONS + 4, `server fds peaked at ${maxFds} (baseline ${baseline})`);
    // The held ones are idle: the server closes them after IDLE_MS (waited for; the deadline only
    // bounds a failure). Judged by the server's descriptors, not by the client's sockets: on a
    // loaded box the kernel can drop a handshake's last ACK when the accept queue is full, and the
    // client then holds a "connected" socket the server never had and so can never close (one
    // run ended with 7 of them alive after 50 s while the server held none).
    const t0 = Date.now();
    let serverFds = fdCount(child.pid!);
    while (serverFds > baseline + 1 && Date.now() - t0 < 2 * IDLE_MS + 10_000) {
      await sleep(100);
      serverFds = fdCount(child.pid!);
    }
    t.diagnostic(`after the idle timeout: server fds ${serverFds} (baseline ${baseline}), client sockets alive ${alive()}`);
    assert.ok(serverFds <= baseline + 1, `idle connections closed by the server: it holds ${serverFds} fds (baseline ${baseline})`);
    assert.ok(alive() <= kept, `no socket the server had stays open (${alive()} alive, ${kept} were kept at the cap)`);
    // And the operator gets in again.
    const r = await send(info.port, 'GET', '/status', { host: `127.0.0.1:${info.port}` });
    assert.equal(r.status, 200);
  } finally {
    clearInterval(sampler);
    for (const s of sockets) s.destroy();
    child.stdin.end();
    await new Promise((r) => {
      if (child.exitCode !== null) return r(null);
      child.once('exit', r);
      setTimeout(() => child.kill('SIGKILL'), 3000).unref();
    });
  }
});

test('status server: GET / is the status page (nonce CSP, no framing, no token in it); GET /history gives counter samples', async () => {
  const ctl = recorder();
  const srv = await startStatusServer(ctl, 0, '127.0.0.1', { history: { fineMs: 50, fineSize: 4 } });
  try {
    const host = { host: `127.0.0.1:${srv.port}` };
    const page = await send(srv.port, 'GET', '/', host);
    assert.equal(page.status, 200);
    assert.match(page.headers['content-type'] ?? '', /^text\/html; charset=utf-8$/);
    const csp = String(page.headers['content-security-policy'] ?? '');
    const nonce = /script-src 'nonce-([A-Za-z0-9_-]+)'/.exec(csp)?.[1];
    assert.ok(nonce !== undefined && nonce.length >= 16, csp);
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /connect-src 'self'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.equal(page.headers['x-frame-options'], 'DENY');
    assert.match(page.body, new RegExp(`<script nonce="${nonce}">`));
    assert.ok(!page.body.includes(srv.token), 'the page does not carry the token');
    assert.doesNotMatch(page.body, /<script src=|<link |https?:\/\/(?!www\.w3\.org\/2000\/svg)/, 'no external asset');
    const again = await send(srv.port, 'GET', '/', host);
    assert.notEqual(/nonce-([A-Za-z0-9_-]+)/.exec(String(again.headers['content-security-policy'] ?? ''))?.[1], nonce, 'a fresh nonce per response');
    // A foreign Origin or a rebound Host cannot read the page either.
    assert.equal((await send(srv.port, 'GET', '/', { host: `evil.example:${srv.port}` })).status, 403);

    // The fine ring fills at one sample per 50 ms, or later on a loaded box: read it once it is full.
    type History = { fineMs: number; fine: { t: number; pages: number }[]; coarse: unknown[] };
    let h = JSON.parse((await send(srv.port, 'GET', '/history', host)).body) as History;
    while (h.fine.length < 4) {
      await new Promise((r) => setTimeout(r, 50));
      h = JSON.parse((await send(srv.port, 'GET', '/history', host)).body) as History;
    }
    assert.equal(h.fineMs, 50);
    assert.equal(h.fine.length, 4, 'the fine ring keeps its last 4 samples');
    assert.ok(h.fine.every((s, i) => s.pages === 1234 && (i === 0 || s.t > h.fine[i - 1]!.t)), JSON.stringify(h.fine));
    assert.equal(h.coarse.length, 1, 'one coarse sample within the first minute');
    const since = h.fine[2]!.t;
    const later = JSON.parse((await send(srv.port, 'GET', `/history?since=${since}`, host)).body) as { fine: { t: number }[] };
    assert.ok(later.fine.length >= 1 && later.fine.every((s) => s.t > since));
    assert.equal((JSON.parse((await send(srv.port, 'GET', '/status', host)).body) as StatusSnapshot).pages, 1234);
  } finally {
    await srv.close();
  }
});
