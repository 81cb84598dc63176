/**
 * One crawl across three node processes (the CLI with --cluster) on one nats-server, against one
 * node crawling the same web (in process, first): judged from simweb's request log and the
 * crawlers' state.
 *
 *   - the URL set is simweb's ground truth (what the single node fetched), no URL fetched twice
 *     across the nodes;
 *   - STAR's final per-PLD in-degrees, its rank histogram and so every PLD's budget equal the
 *     single node's;
 *   - politeness across nodes: on the crawlers' side (each node's TRACE lines: the actual starts,
 *     one clock on this box) no two requests to an IP closer than τs, none to a host closer than
 *     τh; on the wire (simweb's log) none closer less the clock-skew allowance ε unless the nodes'
 *     own starts of the two were that far apart (the server stamps a request when its event loop
 *     reads it; on a loaded box a late stamp of the earlier request shortens the gap it logs:
 *     32.9 ms logged for starts ≥ 60 ms apart at load 20; e2e/wire-log.ts); and at least 20 IPs
 *     served hosts of partitions placed on different nodes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { forkSimweb, tempDir, crawlSettings } from '../e2e/harness.js';
import { resolveCrawlConfig } from '../../src/config/config.js';
import { Crawler } from '../../src/crawl/pipeline.js';
import { partitionOf } from '../../src/cluster/partition.js';
import { pldOrHost } from '../../src/url/index.js';
import { startNats } from './nats-server.js';
import { startNode, waitAll, partitionsOf, traceLines, crawlerGaps } from './harness.js';
import { pldKeys, indegrees, histogram, budgetOf } from './star-dump.js';
import { wireLog } from '../e2e/wire-log.js';

const HOST_MS = 120;
const IP_MS = 60;
/** the clock-skew allowance of the slot rule (--clock-skew), and the wire judge's slack */
const SKEW_MS = 20;
const P = 8;
/**
 * Many PLDs, few pages each, the hosts of several PLDs on each of 32 IPs; every page links to the
 * next two PLDs' home pages (ringLinks), so trust spreads from the seeds through the web.
 */
const WEB = { plds: 60, hostsPerPldMean: 3, hostsPerPldMax: 6, pagesPerHostMin: 2, pagesPerHostMax: 5, linksPerPageMean: 6, ips: 32, ipSkew: 1, seedCount: 2, ringLinks: 2 };

test('three nodes: one node\'s URL set, STAR in-degrees and budgets; polite per host and per IP across nodes', { timeout: 600_000 }, async () => {
  const nats = await startNats();
  const web = await forkSimweb('tiny', WEB);
  try {
    const dir = await tempDir('cluster3');
    const over = {
      hostDelayMs: HOST_MS, ipDelayMs: IP_MS, minHostDelayMs: HOST_MS, minIpDelayMs: IP_MS, politenessMarginMs: 40,
      workers: 1, ramBytes: 256 * 2 ** 20, fetchTimeoutMs: 5000, checkpointIntervalMs: 5000,
    };

    // One node, in process: the reference.
    const single = path.join(dir, 'single', 'state');
    const ref = await Crawler.open(resolveCrawlConfig(crawlSettings(web, { ...over, stateDir: single, outDir: path.join(dir, 'single', 'out'), maxTimeMs: 240_000 })));
    const t0 = Date.now();
    const s1 = await ref.run();
    const t1 = Date.now();
    assert.equal(s1.stopReason, 'done');
    const r1 = await web.report({ hostMs: HOST_MS, ipMs: IP_MS, reachable: true, slackMs: IP_MS / 2, hostSlackMs: HOST_MS / 2 });
    assert.deepEqual([...r1.pageFetches].sort(), [...r1.reachable!].sort(), 'one node fetches the ground truth');
    await web.clear();

    // Three nodes.
    const c = { url: nats.url, partitions: P, expect: 3, skewMs: SKEW_MS };
    const nodes = ['n1', 'n2', 'n3'].map((id) => startNode(web, c, id, dir, over, { DRUMCRAWL_TRACE_FETCH: '1' }));
    const codes = await waitAll(nodes, 420_000);
    console.log(`one node ${((t1 - t0) / 1000).toFixed(0)} s (${s1.pages} pages), three nodes ${((Date.now() - t1) / 1000).toFixed(0)} s`);
    for (const [i, n] of nodes.entries()) assert.equal(codes[i], 0, `node ${n.id} exited ${codes[i]}:\n${n.run.out().slice(-4000)}`);
    const owner = new Map<number, string>();
    const partDir = new Map<number, string>();
    for (const n of nodes) {
      const ps = await partitionsOf(n.dir);
      assert.ok(ps.length > 0, `${n.id} holds partitions`);
      for (const p of ps) {
        assert.equal(owner.has(p), false, `partition ${p} on one node`);
        owner.set(p, n.id);
        partDir.set(p, path.join(n.dir, 'state', 'p', String(p).padStart(4, '0')));
      }
    }
    assert.equal(owner.size, P, 'every partition placed');

    // The URL set.
    const r = await web.report({ hostMs: HOST_MS, ipMs: IP_MS, reachable: true, slackMs: SKEW_MS, hostSlackMs: SKEW_MS });
    assert.deepEqual(r.duplicates, []);
    assert.equal(new Set(r.pageFetches).size, r.pageFetches.length, 'no page requested twice across the nodes');
    assert.deepEqual([...r.pageFetches].sort(), [...r1.pageFetches].sort(), 'three nodes fetch what one node fetches');
    assert.ok(r.pageFetches.length >= 150, `a meaningful web (${r.pageFetches.length} pages)`);

    // STAR: every PLD's in-degree where it lives, the histograms summed, the budgets.
    const plds = Array.from({ length: WEB.plds }, (_, i) => `pld${i}.test`);
    const keys = pldKeys(plds);
    const dSingle = await indegrees(single, keys);
    const dCluster: number[] = [];
    for (let i = 0; i < plds.length; i++) {
      const p = partitionOf(keys[2 * i]!, keys[2 * i + 1]!, P);
      dCluster.push((await indegrees(partDir.get(p)!, keys.subarray(2 * i, 2 * i + 2)))[0]!);
    }
    assert.deepEqual(dCluster, dSingle, 'per-PLD in-degrees equal the single node\'s');
    assert.ok(dSingle.filter((d) => d >= 2).length >= 5, `trust spread (in-degrees ${dSingle.join(' ')})`);
    const hSingle = await histogram([single]);
    const hCluster = await histogram([...partDir.values()]);
    assert.deepEqual([...hCluster.toBytes()], [...hSingle.toBytes()], 'the rank histogram (summed over partitions) equals the single node\'s');
    const bSingle = dSingle.map((d) => budgetOf(d, hSingle));
    assert.deepEqual(dCluster.map((d) => budgetOf(d, hCluster)), bSingle, 'budgets equal');
    assert.ok(bSingle.some((b) => b > 10), `some PLD ranked above B0 (${bSingle.join(' ')})`);

    // Politeness across nodes.
    const trace = nodes.flatMap((n) => traceLines(n.run.out(), n.id));
    assert.ok(trace.length >= r.pageFetches.length, 'every node traced its requests');
    assert.deepEqual(crawlerGaps(trace, (t) => t.ip, IP_MS), [], 'no two requests to an IP, from any nodes, started closer than τs');
    assert.deepEqual(crawlerGaps(trace, (t) => (t.robots ? null : new URL(t.url).hostname), HOST_MS), [], 'none to a host closer than τh');
    // The server's gaps, each judged on the nodes' starts when shorter (their TRACE stamps: the
    // shared clock, taken in the same synchronous run as the send).
    const wire = wireLog({ on: (_: 'dispatch', f: (e: { at: number; url: string }) => void) => { for (const t of trace) f(t); } });
    wire.stop();
    assert.deepEqual(wire.unexcused(r.ipViolationEntries, r.ipViolations, IP_MS - SKEW_MS), [], `on the wire: no IP sent two requests closer than τs − ε (${IP_MS} − ${SKEW_MS} ms)`);
    assert.deepEqual(wire.unexcused(r.hostViolationEntries, r.hostViolations, HOST_MS - SKEW_MS), [], 'on the wire: no host closer than τh − ε');
    const nodesOfIp = new Map<string, Set<string>>();
    const key = new Uint32Array(2);
    for (const [host, ip] of Object.entries(r.hostIps)) {
      const k = pldKeys([pldOrHost(host)]);
      key.set(k);
      const n = owner.get(partitionOf(key[0]!, key[1]!, P))!;
      if (!nodesOfIp.has(ip)) nodesOfIp.set(ip, new Set());
      nodesOfIp.get(ip)!.add(n);
    }
    const shared = [...nodesOfIp.values()].filter((s) => s.size >= 2).length;
    assert.ok(shared >= 20, `${shared} IPs served hosts of partitions on different nodes`);
  } finally {
    await web.close();
    await nats.stop();
  }
});
