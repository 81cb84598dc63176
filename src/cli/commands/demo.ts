/**
 * `drumcrawl demo` — start simweb's demo web and its DNS server in this process, crawl it with live
 * progress, print a summary and where the WARC files are. Needs no network: everything is on
 * 127.0.0.0/8. Output goes to ./crawl-out/demo (replaced on each run) unless --out says otherwise.
 */
import type { Command } from 'commander';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { startSimweb } from '../../simweb/index.js';
import { resolveCrawlConfig } from '../../crawl/config.js';
import { Crawler } from '../../crawl/pipeline.js';
import { printSummary, runGuarded } from './common.js';

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('crawl a built-in synthetic web (simweb demo preset) on loopback and show the result')
    .option('--out <dir>', 'where state and WARC files go (replaced)', './crawl-out/demo')
    .option('--status-port <port>', 'also serve /metrics and /status on 127.0.0.1:port')
    .option('--progress <mode>', 'auto | tty | plain | none', 'auto')
    .option('--max-time <s>', 'stop after s seconds', '150')
    .action(async (opts: { out: string; statusPort?: string; progress: string; maxTime: string }) => {
      await runGuarded(async () => {
        const base = path.resolve(opts.out);
        await rm(base, { recursive: true, force: true });
        const web = await startSimweb({ preset: 'demo', log: false });
        try {
          process.stderr.write(`simweb demo web: ${web.seeds.length} seeds, DNS ${web.dnsServer}, HTTP port ${web.httpPort}\n`);
          const cfg = resolveCrawlConfig({
            seeds: web.seeds,
            stateDir: path.join(base, 'state'),
            outDir: path.join(base, 'warc'),
            dnsServers: [web.dnsServer],
            // simweb's servers are on loopback, which the network guard refuses unless allowed.
            allowNetworks: ['127.0.0.0/8'],
            userAgent: 'drumcrawl-demo/0.1 (+https://github.com/drumcrawl/drumcrawl)',
            // A small web on 8 simulated servers: short delays so it finishes in about a minute;
            // still polite per host (250 ms) and per IP (25 ms), start to start.
            hostDelayMs: 250,
            ipDelayMs: 25,
            minHostDelayMs: 100,
            minIpDelayMs: 10,
            fetchConcurrency: 64,
            maxTimeMs: Number(opts.maxTime) * 1000,
            ramBytes: 512 * 2 ** 20,
            checkpointIntervalMs: 10_000,
            progress: opts.progress as 'auto',
            progressIntervalMs: 2000,
            statusPort: opts.statusPort === undefined ? null : Number(opts.statusPort),
          });
          const crawler = await Crawler.open(cfg, { handleSignals: true });
          crawler.on('status-server', (url: string) => process.stderr.write(`status server: ${url}/status  ${url}/metrics\n`));
          const summary = await crawler.run();
          printSummary(summary);
          process.stdout.write(`Read the WARC files with any WARC tool, e.g.: npx warcio index ${summary.warcFiles[0] ?? summary.warcDir}\n`);
        } finally {
          await web.close();
        }
      });
    });
}
