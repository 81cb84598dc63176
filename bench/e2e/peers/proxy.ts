/**
 * Resolving HTTP forward proxy for the peer crawlers (wget2, Scrapy, Crawlee), run as its own child
 * process of bench/e2e/peers/run.ts.
 *
 * Why: simweb's hosts (`www.pld42.test` …) live on 127.0.0.0/8 addresses that only simweb's own DNS
 * server knows. drumcrawl takes `--dns-server`; the peers cannot be pointed at a custom DNS server
 * (wget2 1.99 has no resolver option, Scrapy/Twisted and Node use the system resolver), and editing
 * /etc/hosts would change a shared machine. All three honour an HTTP proxy, so they send absolute-form
 * requests (`GET http://www.pld42.test:PORT/p/7 HTTP/1.1`) here; the proxy resolves the host through
 * simweb's DNS (node:dns Resolver, cached) and forwards the request to that IP with the same Host
 * header over keep-alive connections, so simweb sees the same per-host/per-IP traffic a direct
 * crawler would cause. Cost: one extra loopback hop per request, paid by this process (its CPU is
 * measured and reported separately, never charged to a peer).
 *
 * wget2 1.99.1 drops the port from the absolute-form request line and from Host when it uses a
 * proxy (`GET http://www.pld0.test/p/0` for a link to `http://www.pld0.test:36865/p/0`); every simweb
 * host listens on the same port, so a request without a port goes to simweb's port (argv[3]).
 *
 *   node --import tsx bench/e2e/peers/proxy.ts <dns host:port> <simweb http port>  → prints "PROXY <port>"
 */
import * as http from 'node:http';
import { Resolver } from 'node:dns/promises';

const dnsServer = process.argv[2];
const defaultPort = Number(process.argv[3] ?? 80);
if (!dnsServer) throw new Error('usage: proxy.ts <dns host:port> <simweb http port>');
const resolver = new Resolver({ timeout: 2000, tries: 2 });
resolver.setServers([dnsServer]);
// Bounded by the number of simweb hosts a crawl touches (thousands).
const cache = new Map<string, Promise<string | null>>();
const agent = new http.Agent({ keepAlive: true, maxSockets: 16, maxFreeSockets: 16, scheduling: 'fifo' });
const DEBUG = process.env.PROXY_DEBUG === '1';
let requests = 0;
let failures = 0;

function resolve(host: string): Promise<string | null> {
  let p = cache.get(host);
  if (p === undefined) {
    p = resolver.resolve4(host).then((a) => a[0] ?? null, () => null);
    cache.set(host, p);
  }
  return p;
}

async function proxy(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  requests++;
  let target: URL;
  try {
    target = new URL(req.url ?? '');
  } catch {
    res.writeHead(400).end('proxy: absolute-form request expected');
    return;
  }
  const t0 = performance.now();
  const ip = await resolve(target.hostname);
  const tDns = performance.now() - t0;
  if (ip === null) {
    failures++;
    res.writeHead(502, { 'content-type': 'text/plain' }).end('proxy: DNS failure');
    return;
  }
  const headers = { ...req.headers };
  delete headers['proxy-connection'];
  delete headers['proxy-authorization'];
  headers.host = target.port ? target.host : `${target.hostname}:${defaultPort}`;
  const up = http.request(
    { host: ip, port: Number(target.port || defaultPort), method: req.method, path: target.pathname + target.search, headers, agent },
    (ur) => {
      if (DEBUG) process.stderr.write(`proxy ${req.method} ${req.url} dns ${tDns.toFixed(0)} ms, head ${(performance.now() - t0).toFixed(0)} ms\n`);
      res.writeHead(ur.statusCode ?? 502, ur.statusMessage, ur.headers);
      ur.pipe(res);
    },
  );
  up.setTimeout(30_000, () => up.destroy(new Error('upstream timeout')));
  up.on('error', () => {
    failures++;
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end('proxy: upstream error');
    else res.destroy();
  });
  req.pipe(up);
}

// A request the proxy cannot pass on (e.g. http.request refusing its headers) fails alone: 502 or a cut
// connection, counted, never an unhandled rejection that would end the proxy mid-bench.
const server = http.createServer((req, res) => {
  proxy(req, res).catch(() => {
    failures++;
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end('proxy: error');
    else res.destroy();
  });
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  const addr = server.address();
  process.stdout.write(`PROXY ${typeof addr === 'object' && addr ? addr.port : 0}\n`);
});
process.on('SIGTERM', () => {
  process.stdout.write(`STATS ${JSON.stringify({ requests, failures })}\n`);
  server.close();
  agent.destroy();
  process.exit(0);
});
