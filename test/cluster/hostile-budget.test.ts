/**
 * A cluster node holds what hostile servers send to its --ram as a single crawl does: the fetcher
 * its partitions share takes every body from one budget sized from the node's --ram
 * (src/budget/body-budget.ts). Twenty server IPs each stream 8 MiB bodies slowly to a node at
 * --ram 256M (a budget of 40 MiB: five such bodies): GET /status shows the budget, never held past
 * its size, and fetches waiting for it; the node exits 0 at --max-time, and every page a server was
 * asked for has its crawl.log line. A real nats-server, started here. --max-time 15: the twenty
 * bodies are asked for at once, so the budget fills (and fetches wait) within the first of the
 * bodies' 6 s; the stop then cuts the rest short, and each cut fetch still gets its line.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startHostileServers } from '../../src/simweb/hostile-server.js';
import { bodyBudgetBytes } from '../../src/budget/body-budget.js';
import { cli, tempDir, UA } from '../e2e/harness.js';
import { MiB, crawlLog, ipsOf, unlogged, type BudgetSample } from '../hostile/crawl-common.js';
import { startNats } from './nats-server.js';

test('a cluster node: one body budget from its --ram for the fetcher its partitions share', { timeout: 300_000 }, async () => {
  const nats = await startNats();
  const ips = ipsOf(40, 20);
  const srv = await startHostileServers({ ips, slowMs: 6000, bigBytes: 8 * MiB, normalPages: 10 });
  const dir = await tempDir('cluster-budget');
  try {
    const run = cli([
      'crawl', ...ips.map((ip) => srv.url(ip, '/slow-big/0')), '--allow-network', '127.0.0.0/8', '--scope', 'any', '--user-agent', UA,
      '--progress', 'none', '--state', path.join(dir, 'state'), '--out', path.join(dir, 'out'), '--ram', '256M', '--max-time', '15',
      '--host-delay', '100', '--min-host-delay', '100', '--ip-delay', '100', '--min-ip-delay', '100', '--status-port', '0',
      '--reputation', 'indegree', '--workers', '1',
      '--cluster', nats.url, '--node', 'a', '--crawl-name', 'budget', '--partitions', '4', '--expect-nodes', '1',
    ]);
    await run.waitFor(/status server: http:\/\/\S+\/status/, 180_000);
    const url = /status server: (http:\/\/\S+)\/status/.exec(run.out())![1]!;
    const budgets: BudgetSample[] = [];
    let waits = 0;
    while (run.child.exitCode === null && run.child.signalCode === null) {
      try {
        const st = (await (await fetch(`${url}/status`, { signal: AbortSignal.timeout(5000) })).json()) as { bodyBudget?: BudgetSample & { waits: number } };
        if (st.bodyBudget !== undefined) {
          budgets.push(st.bodyBudget);
          waits = Math.max(waits, st.bodyBudget.waits);
        }
      } catch { /* the server is gone: the node is ending */ }
      await new Promise((r) => setTimeout(r, 500));
    }
    assert.equal(await run.done, 0, `the node exits 0 at --max-time:\n${run.out().slice(-3000)}`);
    assert.ok(budgets.length > 0, 'GET /status of the node shows its body budget');
    const { capacity } = bodyBudgetBytes({ ramBytes: 256 * MiB, maxBodyBytes: 8 * MiB });
    for (const b of budgets) {
      assert.equal(b.capacityBytes, capacity, 'the budget is sized from the node\'s --ram');
      assert.ok(b.peakBytes <= b.capacityBytes, `held ${b.peakBytes} of ${b.capacityBytes}`);
    }
    assert.ok(waits > 0, 'twenty 8 MiB bodies at once: fetches waited for the budget');
    assert.deepEqual(unlogged(srv, crawlLog(path.join(dir, 'out'))), [], 'every fetched page has a crawl.log line');
  } finally {
    await srv.close();
    await nats.stop();
  }
});
