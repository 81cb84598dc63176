/**
 * A drained stop writes nothing after its final checkpoint, even while the frontier is still
 * resolving the hosts of its queues: on a web of ~40,000 hosts crawled with no politeness delay,
 * new hosts are looked up (and their answers archived as dns: records) until the very end, here
 * through a DNS relay that holds every answer 1.5 s, so that answers to lookups made before the
 * stop arrive while its checkpoint is written and the parts close. The WARC must end where the
 * final checkpoint says, so that the next resume has nothing to read back (a soak at 10^7 hosts
 * found 4,004 dns: records written after a SIGTERM's checkpoint).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { readManifest } from '../../src/state/checkpoint.js';
import { cli, crawlCommand, crawlSettings, forkSimweb, sleep, tempDir } from './harness.js';

/** A UDP relay to `server` (host:port) that holds each answer `delayMs`; closes with the returned function. */
async function slowDns(server: string, delayMs: number): Promise<{ address: string; close: () => void }> {
  const [host, port] = [server.slice(0, server.lastIndexOf(':')), Number(server.slice(server.lastIndexOf(':') + 1))];
  const front = dgram.createSocket('udp4');
  const back = dgram.createSocket('udp4');
  const asker = new Map<number, { port: number; address: string }>(); // by DNS query id
  const timers = new Set<NodeJS.Timeout>();
  front.on('message', (m, from) => {
    asker.set(m.readUInt16BE(0), { port: from.port, address: from.address });
    back.send(m, port, host);
  });
  back.on('message', (m) => {
    const to = asker.get(m.readUInt16BE(0));
    if (to === undefined) return;
    const t = setTimeout(() => { timers.delete(t); front.send(m, to.port, to.address, () => undefined); }, delayMs);
    timers.add(t);
  });
  await new Promise<void>((r) => front.bind(0, '127.0.0.1', r));
  await new Promise<void>((r) => back.bind(0, '127.0.0.1', r));
  return {
    address: `127.0.0.1:${front.address().port}`,
    close: () => { for (const t of timers) clearTimeout(t); front.close(); back.close(); },
  };
}

test('a SIGTERM while hosts are being resolved: the WARC ends at the final checkpoint', { timeout: 300_000 }, async () => {
  const web = await forkSimweb('bench', { plds: 10_000, hostsPerPldMean: 4, hostsPerPldMax: 50, ips: 16, seedCount: 20 }, { log: false });
  const dns = await slowDns(web.dnsServer, 1500);
  try {
    const dir = await tempDir('e2e-stop-dns');
    const state = path.join(dir, 'state');
    const out = path.join(dir, 'out');
    const run = cli(crawlCommand(crawlSettings({ seeds: web.seeds, dnsServer: dns.address }, {
      stateDir: state, outDir: out, hostDelayMs: 0, ipDelayMs: 0, minHostDelayMs: 0, minIpDelayMs: 0,
      ramBytes: 512 * 2 ** 20, workers: 1, warcDns: true,
    })));
    // Stopped once a few thousand pages are in (hosts are then being discovered by the hundred per
    // second), however long the start takes on a loaded box; the test's timeout bounds the wait.
    const pages = (): number => { try { return (readFileSync(path.join(out, 'crawl.log'), 'utf8').match(/\t200\t/g) ?? []).length; } catch { return 0; } };
    let exited = false;
    void run.done.then(() => { exited = true; });
    while (!exited && pages() < 3000) await sleep(250);
    run.child.kill('SIGTERM');
    assert.equal(await run.done, 0, run.out());
    const m = (await readManifest(state))!;
    assert.ok(m.warc !== null);
    assert.equal(statSync(path.join(out, m.warc.file)).size, m.warc.offset, 'the WARC ends at the final checkpoint\'s offset');
  } finally {
    dns.close();
    await web.close();
  }
});
