/**
 * bench:cluster — pages/s of a cluster crawl with 1 and with N nodes (default 3) in the same run,
 * each node's fetch concurrency capped (`--concurrency`, standing in for one machine's bandwidth:
 * all nodes share this box's two cores), on a web of thousands of hosts whose every answer
 * trickles out (simweb `trickle` behaviour: pieces of `trickleBytes` every `trickleIntervalMs`), so
 * that a fetch takes ~150–250 ms of wall time and little CPU: a node's rate is its concurrency
 * over the fetch time, as a real crawler's is its bandwidth over the page size.
 *
 *   npm run bench:cluster -- [--seconds 40] [--warmup 15] [--nodes 3] [--concurrency 8] [--pairs 2] [--partitions 12]
 *     [--trickle-ms 50] [--trickle-bytes 1024] [--no-build] [--out cluster-<commit>]
 *
 * Each run: a fresh nats-server (JetStream, own store, monitoring port), a fresh simweb, the nodes
 * (bin/drumcrawl: the built product); after the warm-up, the window's page requests (simweb's log)
 * give pages/s; each node's CPU (/proc), the broker's CPU (/proc) and bytes in and out
 * (nats-server /varz) over the window give CPU and broker bytes per page. Runs alternate 1, N, N,
 * 1, … so both see the same load; medians are reported, with the ratio. Under the bench lock
 * (`flock /tmp/heavy.lock npm run bench:cluster`).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { forkSimweb, tempDir, SIMWEB_ALLOW_FLAGS, sleep, type SimwebChild } from '../../test/e2e/harness.js';
import { startNats, type NatsServer } from '../../test/cluster/nats-server.js';
import { startCrawlChild, type CrawlChild } from '../lib/crawl-child.js';
import { args, machineInfo, writeResult, REPO_ROOT, SHARED_MACHINE_NOTE } from '../lib/report.js';
import { statCpu } from '../lib/thread-cpu.js';

const a = args();
const seconds = a.num('seconds', 40);
const warmup = a.num('warmup', 15);
const N = a.num('nodes', 3);
const concurrency = a.num('concurrency', 8);
const pairs = a.num('pairs', 2);
const P = a.num('partitions', 12);
/** The trickle: a piece of `trickleBytes` every `trickleMs` (a page's fetch time, i.e. one machine's bandwidth over its concurrency). */
const trickleMs = a.num('trickle-ms', 50);
const trickleBytes = a.num('trickle-bytes', 1024);
const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
const outName = a.get('out') ?? `cluster-${commit}`;
if (!a.has('no-build')) execFileSync('npm', ['run', '--silent', 'build'], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'inherit'] });

/** Thousands of hosts on 256 IPs, every answer trickled: ~4 KB pages in pieces (by default 1 KB, 50 ms apart). */
const WEB = {
  plds: 2000, hostsPerPldMean: 2.5, hostsPerPldMax: 50, pagesPerHostMin: 20, pagesPerHostMax: 2000, ips: 256, ipSkew: 1, seedCount: 40,
  pageBytesMean: 4096, linksPerPageMean: 30, behaviours: { trickle: 1 }, trickleBytes, trickleIntervalMs: trickleMs,
};

function cpuMs(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const c = statCpu(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    return c.user + c.sys;
  } catch {
    return 0;
  }
}

async function varz(nats: NatsServer): Promise<{ inBytes: number; outBytes: number; inMsgs: number }> {
  const v = (await (await fetch(`http://127.0.0.1:${nats.monitorPort}/varz`)).json()) as { in_bytes: number; out_bytes: number; in_msgs: number };
  return { inBytes: v.in_bytes, outBytes: v.out_bytes, inMsgs: v.in_msgs };
}

interface Run {
  nodes: number;
  pages: number;
  pagesPerSec: number;
  nodeCpuMsPerPage: number;
  brokerCpuMsPerPage: number;
  brokerBytesInPerPage: number;
  brokerBytesOutPerPage: number;
  brokerMsgsPerPage: number;
  loadavg: number[];
}

async function run(n: number): Promise<Run> {
  const nats = await startNats({ monitor: true });
  const web: SimwebChild = await forkSimweb('bench', WEB, { log: true });
  const dir = await tempDir(`bench-cluster-${n}`);
  const kids: CrawlChild[] = [];
  try {
    for (let i = 1; i <= n; i++) {
      const id = `b${i}`;
      kids.push(startCrawlChild([
        ...web.seeds, '--dns-server', web.dnsServer, ...SIMWEB_ALLOW_FLAGS, '--scope', 'any', '--progress', 'none',
        '--state', path.join(dir, id, 'state'), '--out', path.join(dir, id, 'out'),
        '--concurrency', String(concurrency), '--workers', '1', '--ram', '1536M',
        '--host-delay', '200', '--min-host-delay', '200', '--ip-delay', '10', '--min-ip-delay', '10', '--politeness-margin', '5',
        '--cluster', nats.url, '--node', id, '--partitions', String(P), '--expect-nodes', String(n),
      ], { product: true }));
    }
    // Until every node fetches (placement, partitions open), then the warm-up.
    for (let i = 0; i < 600 && (await web.requests()) < 50 * n; i++) await sleep(500);
    await sleep(warmup * 1000);
    const c0 = kids.map((k) => cpuMs(k.pid));
    const b0 = cpuMs(nats.pid());
    const v0 = await varz(nats);
    const t0 = Date.now();
    await sleep(seconds * 1000);
    const t1 = Date.now();
    const c1 = kids.map((k) => cpuMs(k.pid));
    const b1 = cpuMs(nats.pid());
    const v1 = await varz(nats);
    for (const k of kids) if (!k.isRunning()) throw new Error(`node exited early:\n${k.stderrTail()}`);
    const r = await web.report({ hostMs: 1, ipMs: 1, reachable: false });
    const pages = r.pageStarts.filter((s) => s >= t0 && s < t1).length;
    const per = (x: number): number => (pages === 0 ? 0 : x / pages);
    const out: Run = {
      nodes: n, pages, pagesPerSec: (pages * 1000) / (t1 - t0),
      nodeCpuMsPerPage: per(c1.reduce((s, x, i) => s + x - c0[i]!, 0)),
      brokerCpuMsPerPage: per(b1 - b0),
      brokerBytesInPerPage: per(v1.inBytes - v0.inBytes), brokerBytesOutPerPage: per(v1.outBytes - v0.outBytes), brokerMsgsPerPage: per(v1.inMsgs - v0.inMsgs),
      loadavg: machineInfo().loadavg,
    };
    process.stderr.write(`[cluster] ${n} node(s): ${out.pagesPerSec.toFixed(1)} pages/s, ${out.nodeCpuMsPerPage.toFixed(2)} ms node CPU/page, broker ${out.brokerCpuMsPerPage.toFixed(3)} ms and ${out.brokerBytesInPerPage.toFixed(0)} B in / ${out.brokerBytesOutPerPage.toFixed(0)} B out per page\n`);
    return out;
  } finally {
    await Promise.all(kids.map((k) => k.stop(20_000)));
    await web.close();
    await nats.stop();
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

const runs: Run[] = [];
for (let i = 0; i < pairs; i++) for (const n of i % 2 === 0 ? [1, N] : [N, 1]) runs.push(await run(n));
const one = runs.filter((r) => r.nodes === 1);
const many = runs.filter((r) => r.nodes === N);
const summary = (rs: Run[]) => ({
  pagesPerSec: median(rs.map((r) => r.pagesPerSec)),
  nodeCpuMsPerPage: median(rs.map((r) => r.nodeCpuMsPerPage)),
  brokerCpuMsPerPage: median(rs.map((r) => r.brokerCpuMsPerPage)),
  brokerBytesInPerPage: median(rs.map((r) => r.brokerBytesInPerPage)),
  brokerBytesOutPerPage: median(rs.map((r) => r.brokerBytesOutPerPage)),
  brokerMsgsPerPage: median(rs.map((r) => r.brokerMsgsPerPage)),
});
const result = {
  bench: 'cluster',
  command: `flock /tmp/heavy.lock npm run bench:cluster -- ${process.argv.slice(2).join(' ')}`.trim(),
  commit,
  machine: machineInfo(),
  note: SHARED_MACHINE_NOTE,
  settings: { seconds, warmup, nodes: N, concurrencyPerNode: concurrency, partitions: P, web: WEB },
  one: summary(one),
  many: summary(many),
  speedup: median(many.map((r) => r.pagesPerSec)) / median(one.map((r) => r.pagesPerSec)),
  runs,
};
process.stdout.write(JSON.stringify({ speedup: result.speedup, one: result.one, many: result.many }, null, 2) + '\n');
process.stderr.write(`wrote ${writeResult(outName, result)}\n`);
process.exit(0);
