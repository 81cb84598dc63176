/**
 * One crawl across three node processes (the CLI with --cluster) on one nats-server, judged from
 * simweb's request log: the URL set equals simweb's ground truth (what one node fetches), and no
 * URL is fetched twice across the nodes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { forkSimweb, tempDir } from '../e2e/harness.js';
import { startNats } from './nats-server.js';
import { startNode, waitAll, partitionsOf } from './harness.js';

const HOST_MS = 120;
const IP_MS = 30;
/** Many PLDs, few pages each, hosts of many PLDs on each IP. */
const WEB = { plds: 40, hostsPerPldMean: 1.5, hostsPerPldMax: 3, pagesPerHostMin: 3, pagesPerHostMax: 10, linksPerPageMean: 8, ips: 24, ipSkew: 1, seedCount: 2 };

test('three nodes crawl exactly the ground truth, each URL once', { timeout: 300_000 }, async () => {
  const nats = await startNats();
  const web = await forkSimweb('tiny', WEB);
  try {
    const dir = await tempDir('cluster3');
    const c = { url: nats.url, partitions: 8, expect: 3 };
    const over = { hostDelayMs: HOST_MS, ipDelayMs: IP_MS, minHostDelayMs: HOST_MS, minIpDelayMs: IP_MS, politenessMarginMs: 40, workers: 1, ramBytes: 256 * 2 ** 20, fetchTimeoutMs: 5000, checkpointIntervalMs: 5000 };
    const nodes = ['n1', 'n2', 'n3'].map((id) => startNode(web, c, id, dir, over));
    const codes = await waitAll(nodes, 240_000);
    for (const [i, n] of nodes.entries()) assert.equal(codes[i], 0, `node ${n.id} exited ${codes[i]}:\n${n.run.out().slice(-4000)}`);
    const hosted = await Promise.all(nodes.map((n) => partitionsOf(n.dir)));
    assert.deepEqual(hosted.flat().sort((a, b) => a - b), [0, 1, 2, 3, 4, 5, 6, 7], `every partition on one node (${JSON.stringify(hosted)})`);
    assert.ok(hosted.every((h) => h.length > 0), 'every node holds partitions');
    const r = await web.report({ hostMs: HOST_MS, ipMs: IP_MS, reachable: true });
    const fetched = r.pageFetches;
    assert.deepEqual(r.duplicates, []);
    assert.equal(new Set(fetched).size, fetched.length, 'no page requested twice across the nodes');
    assert.deepEqual([...fetched].sort(), [...r.reachable!].sort(), 'fetched = reachable ∩ allowed (ground truth)');
    assert.ok(fetched.length >= 100, `a meaningful web (${fetched.length} pages)`);
  } finally {
    await web.close();
    await nats.stop();
  }
});
