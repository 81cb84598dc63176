// Child process of bench/simweb/run.ts: one server (one Node thread = at most one core) under load.
// Plain JS, run without tsx, importing simweb compiled by tsc (as in production, dist/), so the
// measurement includes no transpiler overhead. argv: mode, path of the compiled simweb index.js, options.
// Mode 'simweb' runs startSimweb; mode 'static' is the baseline: the cheapest possible keep-alive
// server on the same machine, answering every request with one constant ~21.5 KB response.
import net from 'node:net';

const [mode, modulePath, json] = process.argv.slice(2);
const opts = JSON.parse(json ?? '{}');
let close;
let requests = () => 0;
if (mode === 'static') {
  const body = Buffer.alloc(22016, 'x');
  const resp = Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: ${body.length}\r\n\r\n`), body]);
  let n = 0;
  const servers = [];
  let port = 0;
  for (const ip of opts.staticIps) {
    const srv = net.createServer({ noDelay: true }, (s) => {
      s.on('error', () => {});
      s.on('data', (d) => {
        let i = -1;
        while ((i = d.indexOf('\r\n\r\n', i + 1)) >= 0) { n++; s.write(resp); }
      });
    });
    await new Promise((r) => srv.listen(port, ip, () => r()));
    port = srv.address().port;
    servers.push(srv);
  }
  process.send({ type: 'ready', httpPort: port });
  requests = () => n;
  close = () => Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
} else {
  const { startSimweb } = await import(modulePath);
  const sw = await startSimweb(opts);
  process.send({ type: 'ready', httpPort: sw.httpPort, dns: sw.dnsServer });
  requests = () => sw.log.total;
  close = () => sw.close();
}
process.on('message', (m) => {
  if (m.type === 'stats') {
    // Memory samples are taken after a full GC, so they show live memory, not garbage not yet collected.
    if (m.gc && globalThis.gc) globalThis.gc();
    const mem = process.memoryUsage();
    process.send({ type: 'stats', cpu: process.cpuUsage(), rss: mem.rss, heapUsed: mem.heapUsed, requests: requests() });
  } else if (m.type === 'stop') {
    setTimeout(() => process.exit(0), 2000).unref();
    void close().then(() => process.exit(0));
  }
});
