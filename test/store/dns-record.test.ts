/**
 * `dns:` records (src/store/dns-record.ts) as Heritrix writes them: a `response` record with
 * Content-Type text/dns, the DNS server's address, and a block of the 14-digit lookup time and
 * dnsjava-formatted resource records (name tab-padded to 16 columns); read back with warcio.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readdir, rm } from 'node:fs/promises';
import { WarcWriter, dnsBlock, dnsRecordLine } from '../../src/store/index.js';
import { readWarc, sha1 } from './helpers.js';
import { tempDir } from '../e2e/harness.js';

test('dnsRecordLine pads the name as dnsjava Record.toString() does', () => {
  assert.equal(dnsRecordLine('a.test', { address: '127.1.0.1', ttl: 300 }), 'a.test.\t\t\t300\tIN\tA\t127.1.0.1');
  assert.equal(dnsRecordLine('fanfiction.net', { address: '66.150.8.170', ttl: 300 }), 'fanfiction.net.\t\t300\tIN\tA\t66.150.8.170');
  assert.equal(dnsRecordLine('www.example-host.test', { address: '::1', ttl: 60 }), 'www.example-host.test.\t60\tIN\tAAAA\t::1');
  const b = Buffer.from(dnsBlock({ host: 'a.test', date: new Date('2026-11-26T20:01:02.900Z'), records: [{ address: '127.1.0.1', ttl: 300 }, { address: '127.1.0.2', ttl: 300 }] })).toString();
  assert.equal(b, '20261126200102\na.test.\t\t\t300\tIN\tA\t127.1.0.1\na.test.\t\t\t300\tIN\tA\t127.1.0.2\n');
});

test('writeDns: a dns: response record warcio reads, with the server address and digests', async () => {
  const dir = await tempDir('dns-record');
  try {
    const w = await WarcWriter.open({ dir });
    const date = new Date('2026-11-26T20:01:02Z');
    await w.writeDns({ host: 'www.pld1.test', date, server: '127.0.0.1:5353', records: [{ address: '127.1.0.3', ttl: 300 }] });
    await w.writeDns({ host: 'v6.test', date, server: '[::1]:53', records: [{ address: '::1', ttl: 30 }] });
    await w.close();
    const f = (await readdir(dir)).find((x) => x.endsWith('.warc.gz'))!;
    const recs = (await readWarc(path.join(dir, f))).filter((r) => r.type !== 'warcinfo');
    assert.equal(recs.length, 2);
    const [a, b] = recs;
    assert.equal(a!.type, 'response');
    assert.equal(a!.headers.get('warc-target-uri'), 'dns:www.pld1.test');
    assert.equal(a!.headers.get('content-type'), 'text/dns');
    assert.equal(a!.headers.get('warc-ip-address'), '127.0.0.1');
    assert.ok(a!.headers.has('warc-warcinfo-id'));
    assert.equal(Buffer.from(a!.block).toString(), '20261126200102\nwww.pld1.test.\t\t300\tIN\tA\t127.1.0.3\n');
    assert.equal(a!.headers.get('warc-payload-digest'), sha1(a!.block));
    assert.equal(a!.headers.get('warc-block-digest'), sha1(a!.block));
    assert.equal(b!.headers.get('warc-ip-address'), '::1');
    assert.match(Buffer.from(b!.block).toString(), /\tIN\tAAAA\t::1\n$/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
