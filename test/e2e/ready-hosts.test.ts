/**
 * A host with a large queue in RAM does not hold back the hosts discovered link by link beside it
 * (Politeness.readyRanked: the frontier is starving while its hosts with URLs queued cannot fill
 * the fetch slots, however many URLs each holds; the pipeline then merges URLseen at its short
 * cadence instead of every 5 s). `drumcrawl crawl` (the CLI, its own process) of small servers on
 * loopback: "big" hosts whose first page lists 3,000 links to their own host, and "chain" hosts
 * whose page k links only to page k + 1 — each next chain page is known only after a URLseen merge
 * of the one before. Every host is paced at 100 ms.
 *
 * The judge is the servers' request log, clocked by the big hosts (always due, one request per
 * τh): from the first leaf page a big host is asked for (its 3,000 URLs are in RAM) until each big
 * host was asked for BIG_PAGES = 200 more, the chain must have been asked for ≥ BIG_PAGES / 20
 * pages. A 5 s merge cadence lets the chain move one page per merge, about one per 50 big pages (5
 * in the window on 5f81a68); the short cadence gave 19–22 at load 12 on 2 cores. The box's load
 * slows the big hosts' clock with the crawler, so the bound rests on no wall-clock speed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import path from 'node:path';
import { rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { cli, sleep, tempDir, UA } from './harness.js';

/** Leaf pages each big host is asked for in the judged window (the judge's clock). */
const BIG_PAGES = 200;
const BIG_LINKS = 3000;

interface Hit { ip: string; path: string; at: number }

interface Web {
  url(ip: string, p: string): string;
  log: Hit[];
  close(): Promise<void>;
}

/**
 * One server per IP. /big/0 lists /big/1 … /big/BIG_LINKS; /big/k (k > 0) has no link; /c/k links
 * to /c/(k+1) on the next chain IP (`next`: the same host, or the next of a ring of chain hosts).
 */
async function startWeb(ips: string[], next: (ip: string) => string): Promise<Web> {
  const log: Hit[] = [];
  const ports = new Map<string, number>();
  const url = (ip: string, p: string): string => `http://${ip}:${ports.get(ip)}${p}`;
  const servers = await Promise.all(ips.map((ip) => new Promise<http.Server>((resolve, reject) => {
    const s = http.createServer((req, res) => {
      const p = req.url ?? '/';
      log.push({ ip, path: p, at: performance.now() });
      const html = (body: string): void => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(`<!DOCTYPE html><html><head><title>${p}</title></head><body>\n${body}</body></html>\n`);
      };
      let m: RegExpExecArray | null;
      if (p === '/big/0') {
        let links = '';
        for (let k = 1; k <= BIG_LINKS; k++) links += `<a href="/big/${k}">${k}</a>\n`;
        html(links);
      } else if (/^\/big\/\d+$/.test(p)) html('<p>a leaf</p>\n');
      else if ((m = /^\/c\/(\d+)$/.exec(p)) !== null) html(`<a href="${url(next(ip), `/c/${Number(m[1]) + 1}`)}">next</a>\n`);
      else {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('none\n');
      }
    });
    s.on('error', reject);
    s.listen(0, ip, () => {
      ports.set(ip, (s.address() as AddressInfo).port);
      resolve(s);
    });
  })));
  return {
    url, log,
    close: async () => {
      for (const s of servers) s.closeAllConnections();
      await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
    },
  };
}

/**
 * Crawls `seeds` until every big host was asked for BIG_PAGES pages (then SIGTERM: the crawl stops
 * itself; --max-time bounds a crawl that never gets there), and returns the chain pages asked for
 * meanwhile and the chain's longest gap between requests.
 */
async function crawlWeb(name: string, bigIps: string[], chainIps: string[], next: (ip: string) => string): Promise<{ chain: number; big: number; longestGapMs: number; medianGapMs: number }> {
  const web = await startWeb([...bigIps, ...chainIps], next);
  const dir = await tempDir(`dc-ready-${name}-`);
  try {
    const seeds = [...bigIps.map((ip) => web.url(ip, '/big/0')), web.url(chainIps[0]!, '/c/0')];
    const run = cli(['crawl', ...seeds, '--allow-network', '127.0.0.0/8', '--scope', 'any', '--user-agent', UA, '--progress', 'none',
      '--state', path.join(dir, 'state'), '--out', path.join(dir, 'out'), '--max-time', '300',
      '--host-delay', '100', '--min-host-delay', '100', '--ip-delay', '100', '--min-ip-delay', '100']);
    // The window: from the first request to a big host after its /big/0 (its 3,000 URLs are in
    // RAM from then on) until the big hosts were asked for BIG_PAGES more pages each.
    const bigHits = (): Hit[] => web.log.filter((h) => h.path.startsWith('/big/') && h.path !== '/big/0');
    while (bigHits().length < BIG_PAGES * bigIps.length + 1 && run.child.exitCode === null && run.child.signalCode === null) await sleep(50);
    const big = bigHits();
    run.child.kill('SIGTERM');
    await run.done;
    assert.ok(big.length >= BIG_PAGES * bigIps.length + 1, `the big hosts were asked for ${big.length} leaf pages before the crawl ended:\n${run.out().slice(-2000)}`);
    const from = big[0]!.at;
    const to = big[BIG_PAGES * bigIps.length]!.at;
    const chainTimes = web.log.filter((h) => h.path.startsWith('/c/') && h.at >= from && h.at <= to).map((h) => h.at);
    const gaps = chainTimes.slice(1).map((t, i) => t - chainTimes[i]!).sort((a, b) => a - b);
    return {
      chain: chainTimes.length,
      big: BIG_PAGES * bigIps.length,
      longestGapMs: Math.round(gaps[gaps.length - 1] ?? 0),
      medianGapMs: Math.round(gaps[gaps.length >> 1] ?? 0),
    };
  } finally {
    await web.close();
    await rm(dir, { recursive: true, force: true });
  }
}

test('a chain host beside a host with 3,000 URLs queued keeps its pace, not the 5 s merge period', async () => {
  const r = await crawlWeb('one', ['127.93.1.1'], ['127.93.1.2'], (ip) => ip);
  assert.ok(r.chain >= BIG_PAGES / 20, `chain pages while the big host was asked for ${r.big}: ${r.chain} (≥ ${BIG_PAGES / 20}; gaps median ${r.medianGapMs} ms, longest ${r.longestGapMs} ms)`);
});

// The second web shape runs under DRUMCRAWL_LONG (npm run test:long: the suite's time budget).
if (process.env.DRUMCRAWL_LONG !== undefined && process.env.DRUMCRAWL_LONG !== '') test('three big hosts, and a chain that moves across three other hosts: the chain keeps its pace', async () => {
  const chain = ['127.93.2.11', '127.93.2.12', '127.93.2.13'];
  const r = await crawlWeb('three', ['127.93.2.1', '127.93.2.2', '127.93.2.3'], chain, (ip) => chain[(chain.indexOf(ip) + 1) % chain.length]!);
  assert.ok(r.chain >= BIG_PAGES / 20, `chain pages while the big hosts were asked for ${r.big}: ${r.chain} (≥ ${BIG_PAGES / 20}; gaps median ${r.medianGapMs} ms, longest ${r.longestGapMs} ms)`);
});
