/**
 * robots.txt Crawl-delay on the wire, on real servers: nginx serving three real manuals as virtual
 * hosts on their own loopback addresses, names from dnsmasq, every request timed by tcpdump in a
 * network namespace of the test's own (harness.ts). Two hosts ask for a Crawl-delay (0.2 s and
 * 0.12 s), one does not; all three are crawled at once to depth 1 (every page the three front pages
 * link to: a crawl that ends by itself, the same requests whatever the box's speed), by three
 * crawlers side by side (page workers off, on, off), each with a user agent of its own. Judged from
 * the packet timestamps: no two requests of one crawler to a host with a Crawl-delay d (robots.txt
 * included: the delay is the host's) are less than d apart, and none to the third closer than the
 * configured floor τh0. Gaps at or above d are the safety property: nothing here depends on how fast
 * the box is, only on the order the kernel saw the requests in.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { manualSites, startRealWeb } from './harness.js';
import { hostGaps } from './pcap.js';
import { cliArgv, tempDir } from '../e2e/harness.js';

const UA = 'drumcrawl-realweb/0.1 (+https://example.test/bot)';
const FLOOR_MS = 50;
const DELAYS: Record<string, number> = { 'reference.debian.test': 200, 'www.postgresql.test': 120 };

test('Crawl-delay holds on the wire: three real sites at once, three runs, page workers off and on', { timeout: 600_000 }, async () => {
  const sites = manualSites();
  for (const s of sites) {
    if (s.host === 'reference.debian.test') s.robots = 'User-agent: *\nCrawl-delay: 0.2\n';
    if (s.host === 'www.postgresql.test') s.robots = 'User-agent: *\nDisallow: /sql-\nAllow: /sql-select.html$\nCrawl-delay: 0.12\n';
    if (s.host === 'docs.python.test') s.robots = 'User-agent: *\nDisallow: /library/idle\n';
  }
  const web = await startRealWeb({ sites });
  try {
    const runs: { pageWorkers: string; uaTag: string }[] = [
      { pageWorkers: 'off', uaTag: 'run1' }, { pageWorkers: 'on', uaTag: 'run2' }, { pageWorkers: 'off', uaTag: 'run3' },
    ];
    await Promise.all(runs.map(async (run) => {
      const dir = await tempDir('realweb-delay');
      const r = web.exec(process.execPath, [...cliArgv(), 'crawl', ...sites.map((s) => `http://${s.host}/`),
        '--state', path.join(dir, 'state'), '--out', path.join(dir, 'out'), '--dns-server', web.dnsServer,
        '--allow-network', '127.0.0.0/8', '--user-agent', `${UA} ${run.uaTag}`, '--progress', 'none', '--max-depth', '1',
        '--host-delay', String(FLOOR_MS), '--min-host-delay', String(FLOOR_MS), '--ip-delay', '10', '--min-ip-delay', '10',
        '--page-workers', run.pageWorkers]);
      assert.equal(await r.done, 0, r.out());
    }));
    const reqs = await web.requests();
    for (const run of runs) {
      const mine = reqs.filter((q) => q.userAgent.endsWith(run.uaTag));
      const gaps = hostGaps(mine);
      for (const [host, d] of Object.entries(DELAYS)) {
        const g = gaps.get(host) ?? [];
        assert.ok(g.length >= 10, `${run.uaTag}: ${host} got ${g.length + 1} requests (the check needs some)`);
        const under = g.filter((x) => x.gap < d).map((x) => `${x.gap.toFixed(1)} ms before ${x.to.target} (after ${x.from.target})`);
        assert.deepEqual(under, [], `${run.uaTag} (page workers ${run.pageWorkers}): ${host} has Crawl-delay ${d} ms`);
      }
      const py = gaps.get('docs.python.test') ?? [];
      assert.ok(py.length >= 10, `${run.uaTag}: docs.python.test got ${py.length + 1} requests`);
      assert.deepEqual(py.filter((x) => x.gap < FLOOR_MS).map((x) => `${x.gap.toFixed(1)} ms before ${x.to.target}`), [],
        `${run.uaTag}: docs.python.test spaced by the floor τh0 = ${FLOOR_MS} ms`);
      const disallowed = mine.filter((q) => (q.host === 'www.postgresql.test' && q.target.startsWith('/sql-') && q.target !== '/sql-select.html') ||
        (q.host === 'docs.python.test' && q.target.startsWith('/library/idle')));
      assert.deepEqual(disallowed.map((q) => q.host + q.target), [], 'no disallowed URL fetched');
    }
  } finally {
    await web.close();
  }
});
