// Crawlee peer for bench/e2e/peers: CheerioCrawler following every link (strategy 'all'), through the
// resolving proxy. Usage: node crawlee_peer.mjs <seeds file> <proxy url> <max pages> <concurrency> <sameDomainDelaySecs>
// A delay > 0 means the polite run: robots.txt is also obeyed (respectRobotsTxtFile, Crawlee ≥ 3.13).
// Crawlee is installed in bench/.peers (git-ignored) by run.ts; this file is copied there to resolve it.
import { readFileSync } from 'node:fs';
import { CheerioCrawler, ProxyConfiguration, Configuration, log } from 'crawlee';

const [seedsFile, proxyUrl, maxPages, concurrency, delay] = process.argv.slice(2);
const seeds = readFileSync(seedsFile, 'utf8').split('\n').filter(Boolean);
log.setLevel(log.LEVELS.WARNING);
const config = new Configuration({ persistStorage: false, purgeOnStart: true, availableMemoryRatio: 0.5 });
const crawler = new CheerioCrawler({
  proxyConfiguration: new ProxyConfiguration({ proxyUrls: [proxyUrl] }),
  maxRequestsPerCrawl: Number(maxPages),
  maxConcurrency: Number(concurrency),
  minConcurrency: Math.min(8, Number(concurrency)),
  sameDomainDelaySecs: Number(delay),
  respectRobotsTxtFile: Number(delay) > 0,
  maxRequestRetries: 1,
  requestHandlerTimeoutSecs: 30,
  useSessionPool: false,
  persistCookiesPerSession: false,
  additionalMimeTypes: ['text/plain', 'application/pdf', 'image/png'],
  async requestHandler({ enqueueLinks, contentType }) {
    if (!contentType?.type?.includes('html')) return;
    await enqueueLinks({ strategy: 'all', selector: 'a[href]' }); // enqueueLinks reads href only
  },
  failedRequestHandler() {},
}, config);
await crawler.run(seeds);
