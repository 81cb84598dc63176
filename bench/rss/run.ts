/**
 * bench/rss — does the crawler's resident memory stay under `--ram` while a crawl discovers 10^7
 * URLs? (issue #7). A real crawl: `drumcrawl crawl` in its own process (from a clean extract of a
 * commit, default HEAD: see bench/lib/snapshot.ts) against simweb over loopback TCP + DNS, delays 0,
 * `--ram` 1 GiB. The harness samples the crawler process' VmRSS (all its threads: parse workers and
 * DRUM threads included) once per second from /proc, and its /status (urlsSeen, urlsDiscovered,
 * pages), until urlsSeen (unique URLs in URLseen) reaches the target, then stops the crawl
 * (SIGTERM: drain + checkpoint) and keeps sampling until it has exited.
 *
 * The web is shaped so that almost every link is a new URL: hosts of 2^30 pages, links to random
 * pages of random hosts of the same PLD (intraPldShare 0.9) or of other PLDs, no intra-page
 * duplicates, `--links` links per page (default 300). So 10^7 unique URLs arrive after ~35,000
 * pages instead of the ~10^6 pages a realistic web needs — the URLseen DRUM, STAR's tables and
 * BEAST's queues get the same 10^7 keys/records, only the bodies fetched are fewer.
 *
 * By default the crawler runs as users run it: the commit is built (tsc → dist/) and started through
 * `bin/drumcrawl` (the launcher's glibc malloc settings, no tsx loader thread in any isolate),
 * with the default WARC compression (gzip). `--from-src` runs src/cli/main.ts through tsx instead
 * (each isolate then carries a tsx loader: ~50 MiB more, docs/performance.md "Memory");
 * `--warc-compression none|zstd` overrides the compression.
 *
 *   node --import tsx bench/rss/run.ts                                  # 10^7 URLs, --ram 1G
 *   node --import tsx bench/rss/run.ts --target 2e6 --ram 512M --out rss-2e6
 *   node --import tsx bench/rss/run.ts --time 1800 --links 500
 *
 * Writes bench/results/rss-1e7.{json,svg} (or --out); exits 1 if the RSS ever exceeded --ram, 2 if
 * the target was not reached (time limit or the crawl ended first).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startSimweb, type WebParams } from '../../src/simweb/index.js';
import { SIMWEB_ALLOW_FLAGS } from '../../test/e2e/harness.js';
import { SHARED_MACHINE_NOTE, args, machineInfo, sig, writeResult, writeSvg } from '../lib/report.js';
import { lineChart } from '../lib/svg.js';
import { cpuSeconds, rssBytes, startCrawlChild } from '../lib/crawl-child.js';
import { buildTree, snapshotTree } from '../lib/snapshot.js';

const a = args();
const target = a.num('target', 1e7);
const ramArg = a.get('ram') ?? '1G';
const timeLimit = a.num('time', 3000); // seconds of crawling before giving up on the target
const links = a.num('links', 300);
const workers = a.get('workers');
const concurrency = a.num('concurrency', 256);
const outName = a.get('out') ?? 'rss-1e7';
const fromSrc = process.argv.includes('--from-src');
const warcCompression = a.get('warc-compression') ?? 'gzip';
const UA = 'drumcrawl-bench/0.1 (+https://example.test/bench)';

function parseSize(s: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?$/i.exec(s.trim());
  if (!m) throw new Error(`--ram: bad size ${s}`);
  return Math.round(Number(m[1]) * 1024 ** ' KMGT'.indexOf((m[2] || ' ').toUpperCase()));
}
const ramBytes = parseSize(ramArg);

function log(s: string): void {
  process.stderr.write(`[rss] ${new Date().toISOString().slice(11, 19)} ${s}\n`);
}

// Almost every link a new URL (see the header). 400 PLDs × ~4 hosts on 256 IPs.
const params: Partial<WebParams> = {
  plds: 400, hostsPerPldMean: 4, hostsPerPldMax: 16, pagesPerHostMin: 2 ** 30, pagesPerHostMax: 2 ** 30,
  linksPerPageMean: links, dupLinkShare: 0, intraHostShare: 0, intraPldShare: 0.9, pageBytesMean: 8192,
  nonHtmlShare: 0, framesetShare: 0, baseHrefShare: 0, ips: 256, ipSkew: 1, seedCount: 20,
};
const sim = await startSimweb({ seed: 1, params, log: false });
log(`simweb on port ${sim.httpPort}, DNS ${sim.dnsServer}; ${links} links/page; target ${target.toExponential(2)} unique URLs; --ram ${ramArg} = ${ramBytes} B`);

const tree = snapshotTree(a.get('tree') ?? 'HEAD');
const buildMs = fromSrc ? null : buildTree(tree.dir);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dc-rss-'));
const argv = [...sim.seeds, '--dns-server', sim.dnsServer, ...SIMWEB_ALLOW_FLAGS, '--state', path.join(dir, 'state'), '--out', path.join(dir, 'out'),
  '--user-agent', UA, '--ram', ramArg, '--host-delay', '0', '--min-host-delay', '0', '--ip-delay', '0', '--min-ip-delay', '0',
  '--concurrency', String(concurrency), '--warc-compression', warcCompression, '--warc-max-size', '256M', '--status-port', '0',
  '--progress', 'plain', '--progress-interval', '60000', ...(workers ? ['--workers', workers] : [])];
const loadBefore = os.loadavg();
const t0 = performance.now();
const child = startCrawlChild(argv, { root: tree.dir, product: !fromSrc });

interface Sample { t: number; rssMiB: number; urlsSeen: number; urlsDiscovered: number; pages: number; cpuS: number }
const samples: Sample[] = [];
let last = { urlsSeen: 0, urlsDiscovered: 0, pages: 0 };
let peak = 0, peakAt = 0, reached = false, reachedAt = 0, stoppedBy = 'crawl ended', lastLog = 0, stopping = false;
let maxLoad = 0;
while (child.isRunning()) {
  await new Promise((r) => setTimeout(r, 1000));
  const t = (performance.now() - t0) / 1000;
  const rss = rssBytes(child.pid);
  if (rss === 0 && !child.isRunning()) break;
  const st = await child.status();
  if (st !== null) last = { urlsSeen: Number(st.urlsSeen), urlsDiscovered: Number(st.urlsDiscovered), pages: Number(st.pages) };
  if (rss > peak) {
    peak = rss;
    peakAt = t;
  }
  maxLoad = Math.max(maxLoad, os.loadavg()[0]!);
  samples.push({ t: sig(t, 5), rssMiB: sig(rss / 2 ** 20, 5), ...last, cpuS: cpuSeconds(child.pid) });
  if (t - lastLog >= 30) {
    lastLog = t;
    log(`${t.toFixed(0)} s: RSS ${(rss / 2 ** 20).toFixed(0)} MiB (peak ${(peak / 2 ** 20).toFixed(0)}), urlsSeen ${last.urlsSeen}, discovered ${last.urlsDiscovered}, pages ${last.pages}, load ${os.loadavg()[0]!.toFixed(1)}`);
  }
  if (!stopping && last.urlsSeen >= target) {
    reached = true;
    reachedAt = t;
    stoppedBy = 'target reached';
    stopping = true;
    log(`target reached at ${t.toFixed(0)} s; stopping the crawl (SIGTERM), sampling until it exits`);
    child.child.kill('SIGTERM');
    setTimeout(() => child.child.kill('SIGKILL'), 120_000).unref();
  } else if (!stopping && t > timeLimit) {
    stoppedBy = 'time limit';
    stopping = true;
    log(`time limit at ${t.toFixed(0)} s; stopping the crawl`);
    child.child.kill('SIGTERM');
    setTimeout(() => child.child.kill('SIGKILL'), 120_000).unref();
  }
}
const exitCode = await child.exited;
const wall = (performance.now() - t0) / 1000;
await sim.close();
fs.rmSync(dir, { recursive: true, force: true });
tree.remove();

const over = samples.filter((s) => s.rssMiB * 2 ** 20 > ramBytes);
// RSS growth per 10^6 unique URLs over the second half of the crawl (least squares), to extrapolate.
function slopePerMillion(xs: Sample[]): number {
  const pts = xs.filter((s) => s.urlsSeen > 0);
  const half = pts.slice(Math.floor(pts.length / 2));
  let n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const p of half) {
    const x = p.urlsSeen / 1e6, y = p.rssMiB;
    n++; sx += x; sy += y; sxx += x * x; sxy += x * y;
  }
  return n < 2 || n * sxx - sx * sx === 0 ? NaN : (n * sxy - sx * sy) / (n * sxx - sx * sx);
}
const urlRate = samples.length > 1 ? last.urlsSeen / Math.max(1, (reachedAt || wall)) : 0;
const result = {
  bench: 'rss',
  command: `node --import tsx bench/rss/run.ts${process.argv.length > 2 ? ' ' + process.argv.slice(2).join(' ') : ''}`,
  machine: { ...machineInfo(), loadavgBefore: loadBefore.map((x) => sig(x, 3)), maxLoadavg1DuringRun: sig(maxLoad, 3) },
  note: SHARED_MACHINE_NOTE + ' RSS is what this bench judges; it does not depend on speed except through how much is in flight.',
  crawler: { commit: tree.commit, subject: tree.subject, how: fromSrc
    ? 'node --import tsx <git archive of the commit>/src/cli/main.ts crawl … (its own process)'
    : '<git archive of the commit>/bin/drumcrawl crawl … (the launcher over the built dist/; its own process)', buildMs },
  setup: {
    simweb: { params, seed: 1, port: sim.httpPort, seeds: sim.seeds.length },
    ram: ramArg, ramBytes, warcCompression, delays: 0, concurrency, workers: workers ?? 'default (cores)', target,
    rss: 'VmRSS of the crawler process (all threads) from /proc/<pid>/status, once per second',
    stopCriterion: 'urlsSeen (unique URLs in URLseen, from GET /status) ≥ target, then SIGTERM (drain + checkpoint); samples continue until exit',
  },
  reached, stoppedBy, exitCode,
  secondsToTarget: reached ? sig(reachedAt, 4) : null, wallSeconds: sig(wall, 4),
  final: last,
  uniqueUrlsPerSecond: sig(urlRate, 4),
  peakRssMiB: sig(peak / 2 ** 20, 5), peakRssAtSeconds: sig(peakAt, 4), peakOverRam: sig(peak / ramBytes, 3),
  samplesOverRam: over.length,
  rssSlopeMiBPerMillionUrlsSecondHalf: sig(slopePerMillion(samples), 3),
  verdict: over.length === 0 ? `RSS stayed under --ram (${ramArg}) at every one of ${samples.length} samples` : `RSS exceeded --ram in ${over.length} of ${samples.length} samples`,
  samples,
};
const jf = writeResult(outName, result);
const ramMiB = ramBytes / 2 ** 20;
const tMax = samples.length > 0 ? samples[samples.length - 1]!.t : 1;
const sf = writeSvg(outName, lineChart({
  title: `Crawler RSS over a crawl to ${last.urlsSeen.toLocaleString('en')} unique URLs (--ram ${ramArg})`,
  xLabel: 'seconds', yLabel: 'MiB  /  unique URLs ÷ 10^4', yMin: 0, width: 820, height: 460,
  series: [
    { name: 'crawler RSS (MiB)', color: '#d62728', points: samples.map((s) => [s.t, s.rssMiB] as [number, number]), markers: false },
    { name: `--ram ${ramArg} (MiB)`, color: '#333333', dashed: true, points: [[0, ramMiB], [tMax, ramMiB]] },
    { name: 'unique URLs seen ÷ 10,000', color: '#1f77b4', points: samples.map((s) => [s.t, s.urlsSeen / 1e4] as [number, number]), markers: false },
    { name: 'pages fetched ÷ 100', color: '#2ca02c', points: samples.map((s) => [s.t, s.pages / 100] as [number, number]), markers: false },
  ],
}));
log(`${result.verdict}; peak ${result.peakRssMiB} MiB at ${result.peakRssAtSeconds} s; urlsSeen ${last.urlsSeen}, pages ${last.pages}, ${stoppedBy}; wrote ${jf} and ${sf}`);
process.exitCode = over.length > 0 ? 1 : reached ? 0 : 2;
