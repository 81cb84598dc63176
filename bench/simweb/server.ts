// Child process of bench/simweb/run.ts: one simweb server (one Node thread = one core) under load.
import { startSimweb, type SimwebOptions } from '../../src/simweb/index.js';

const opts = JSON.parse(process.argv[2] ?? '{}') as SimwebOptions;
const sw = await startSimweb(opts);
process.send!({ type: 'ready', httpPort: sw.httpPort, dns: sw.dnsServer });
process.on('message', (m: { type: string }) => {
  if (m.type === 'stats') {
    const mem = process.memoryUsage();
    process.send!({ type: 'stats', cpu: process.cpuUsage(), rss: mem.rss, heapUsed: mem.heapUsed, external: mem.external,
      arrayBuffers: mem.arrayBuffers, requests: sw.log.total, logLength: sw.log.length });
  } else if (m.type === 'stop') {
    void sw.close().then(() => process.exit(0));
  }
});
