/**
 * A resume does not ask the DNS server again what the stopped run had learnt (src/dns/dns-file.ts):
 * a crawl of a few hundred hosts through a relay that logs every query name is stopped by SIGTERM
 * once it has resolved hosts, resumed, and stopped again after more pages; no name the first run
 * had an answer for (its TTL, an hour, outlasts the test) is asked in the second. A crawl's hosts
 * asked again at every resume cost a 10 s wait for DNS after a kill over 10^7 hosts (bench:soak).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { cli, crawlCommand, crawlSettings, forkSimweb, sleep, tempDir, type CliRun } from './harness.js';

/** The query name of a DNS message (RFC 1035 §4.1.2, no compression in a question), lower case. */
function queryName(m: Buffer): string {
  const labels: string[] = [];
  let i = 12;
  while (i < m.length && m[i]! > 0 && m[i]! < 64) {
    labels.push(m.subarray(i + 1, i + 1 + m[i]!).toString('latin1'));
    i += 1 + m[i]!;
  }
  return labels.join('.').toLowerCase();
}

/**
 * A UDP relay to `server` (host:port) that logs the name of every query it passes on (`names`) and
 * of every answer it passes back (`answered`).
 */
async function loggingDns(server: string): Promise<{ address: string; names: string[]; answered: string[]; close: () => void }> {
  const [host, port] = [server.slice(0, server.lastIndexOf(':')), Number(server.slice(server.lastIndexOf(':') + 1))];
  const front = dgram.createSocket('udp4');
  const back = dgram.createSocket('udp4');
  const asker = new Map<number, { port: number; address: string; name: string }>();
  const names: string[] = [];
  const answered: string[] = [];
  front.on('message', (m, from) => {
    if (m.length < 13) return;
    const name = queryName(m);
    names.push(name);
    asker.set(m.readUInt16BE(0), { port: from.port, address: from.address, name });
    back.send(m, port, host);
  });
  back.on('message', (m) => {
    const to = asker.get(m.readUInt16BE(0));
    if (to === undefined) return;
    answered.push(to.name);
    front.send(m, to.port, to.address, () => undefined);
  });
  await new Promise<void>((r) => front.bind(0, '127.0.0.1', r));
  await new Promise<void>((r) => back.bind(0, '127.0.0.1', r));
  return { address: `127.0.0.1:${front.address().port}`, names, answered, close: () => { front.close(); back.close(); } };
}

test('a resumed crawl asks the DNS server for no host the stopped run had resolved', { timeout: 300_000 }, async () => {
  const web = await forkSimweb('tiny', { plds: 120, hostsPerPldMean: 3, hostsPerPldMax: 6, pagesPerHostMin: 2, pagesPerHostMax: 6, linksPerPageMean: 10, ips: 8, seedCount: 6, dnsTtl: 3600 });
  const dns = await loggingDns(web.dnsServer);
  const runs: CliRun[] = [];
  try {
    const dir = await tempDir('e2e-resume-dns');
    const state = path.join(dir, 'state');
    const out = path.join(dir, 'out');
    const input = crawlSettings({ seeds: web.seeds, dnsServer: dns.address }, {
      stateDir: state, outDir: out, hostDelayMs: 20, ipDelayMs: 5, minHostDelayMs: 20, minIpDelayMs: 5, workers: 1, ramBytes: 256 * 2 ** 20,
    });
    const pages = (): number => { try { return (readFileSync(path.join(out, 'crawl.log'), 'utf8').match(/\t200\t/g) ?? []).length; } catch { return 0; } };
    // Stops the run by SIGTERM once the crawl log holds n pages; returns the names answered before
    // the signal (the stop's checkpoint saves the cache after it).
    const runUntil = async (run: CliRun, n: number): Promise<Set<string>> => {
      let exited = false;
      void run.done.then(() => { exited = true; });
      while (!exited && pages() < n) await sleep(100);
      const known = new Set(dns.answered);
      run.child.kill('SIGTERM');
      assert.equal(await run.done, 0, run.out());
      return known;
    };
    const first = cli(crawlCommand(input));
    runs.push(first);
    const known = await runUntil(first, 150);
    const before = dns.names.length;
    assert.ok(known.size >= 20, `the first run resolved ${known.size} hosts`);
    const second = cli(['resume', state, '--progress', 'none']);
    runs.push(second);
    await runUntil(second, pages() + 150);
    const again = dns.names.slice(before).filter((n) => known.has(n));
    assert.deepEqual([...new Set(again)], [], `${again.length} queries of the resume for names the first run had resolved (of ${dns.names.length - before} in all)`);
    assert.ok(dns.names.length > before, 'the resumed run resolved new hosts (it crawled on)');
  } finally {
    for (const r of runs) r.child.kill('SIGKILL');
    dns.close();
    await web.close();
  }
});
