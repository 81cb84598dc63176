// Child process of bench/simweb/run.ts: one server (one Node thread = at most one core) under load.
// Mode 'simweb' runs startSimweb; mode 'static' is the baseline: the cheapest possible keep-alive
// server on the same machine, answering every request with one constant ~21.5 KB response.
import net from 'node:net';
import { startSimweb, type SimwebOptions } from '../../src/simweb/index.js';

const mode = process.argv[2];
const opts = JSON.parse(process.argv[3] ?? '{}') as SimwebOptions & { staticIps?: string[] };
let close: () => Promise<void>;
let requests = () => 0;
if (mode === 'static') {
  const body = Buffer.alloc(22016, 'x');
  const resp = Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: ${body.length}\r\n\r\n`), body]);
  const big = Buffer.alloc(1 << 20, 'y');
  let n = 0;
  const servers: net.Server[] = [];
  let port = 0;
  for (const ip of opts.staticIps!) {
    const srv = net.createServer({ noDelay: true }, (s) => {
      s.on('error', () => {});
      s.on('data', (d: Buffer) => {
        let i = -1;
        while ((i = d.indexOf('\r\n\r\n', i + 1)) >= 0) {
          n++;
          const m = process.env.STATIC_MODE;
          if (m === 'writev' || m === 'concat') {
            const parts = [resp.subarray(0, 200)];
            for (let k = 0; k < 7; k++) { const o = Math.floor(Math.random() * (big.length - 4000)); parts.push(big.subarray(o, o + Math.floor((resp.length - 200) / 7) + (k === 6 ? (resp.length - 200) % 7 : 0))); }
            if (m === 'concat') s.write(Buffer.concat(parts));
            else { s.cork(); for (const p of parts) s.write(p); s.uncork(); }
          } else s.write(resp);
        }
      });
    });
    await new Promise<void>((r) => srv.listen(port, ip, () => r()));
    port = (srv.address() as net.AddressInfo).port;
    servers.push(srv);
  }
  process.send!({ type: 'ready', httpPort: port });
  requests = () => n;
  close = () => Promise.all(servers.map((s) => new Promise((r) => s.close(r)))).then(() => undefined);
} else {
  const sw = await startSimweb(opts);
  process.send!({ type: 'ready', httpPort: sw.httpPort, dns: sw.dnsServer });
  requests = () => sw.log.total;
  close = () => sw.close();
}
process.on('message', (m: { type: string }) => {
  if (m.type === 'stats') {
    const mem = process.memoryUsage();
    process.send!({ type: 'stats', cpu: process.cpuUsage(), rss: mem.rss, heapUsed: mem.heapUsed, requests: requests() });
  } else if (m.type === 'stop') {
    setTimeout(() => process.exit(0), 2000).unref();
    void close().then(() => process.exit(0));
  }
});
