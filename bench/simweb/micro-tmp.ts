import { WebGraph, resolveParams } from '../../src/simweb/index.js';
const web = new WebGraph(resolveParams('bench', { plds: 400_000, hostsPerPldMean: 2.5, hostsPerPldMax: 200, pagesPerHostMin: 100, pagesPerHostMax: 100_000, ips: 256 }), 11, 8080);
let rnd = 12345;
const next = () => { rnd ^= rnd << 13; rnd ^= rnd >>> 17; rnd ^= rnd << 5; return rnd >>> 0; };
const hosts = Array.from({ length: 1000 }, () => web.hostInfo(web.hostName(next() % 400000, 0))!);
for (const phase of ['hostInfo', 'render', 'render'] as const) {
  const t0 = performance.now(); let n = 0, bytes = 0;
  while (performance.now() - t0 < 2000) { for (let k = 0; k < 100; k++) {
    if (phase === 'hostInfo') { web.hostInfo(web.hostName(next() % 400000, next() % 2)); n++; continue; }
    const info = hosts[next() % 1000]!; bytes += web.renderPage(info, next() % info.pages)!.length; n++; } }
  const s = (performance.now() - t0) / 1000;
  console.log(phase, Math.round(n / s), '/s', (bytes / s / 1e6).toFixed(0), 'MB/s');
}
