import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { startSimweb, type Simweb } from '../../src/simweb/index.js';
import { resolverFor } from './helpers.js';

let sw: Simweb;
before(async () => { sw = await startSimweb({ preset: 'hostile', params: { dnsTtl: 123 } }); });
after(async () => { await sw.close(); });

function query(port: number, msg: Buffer, timeoutMs = 1000): Promise<Buffer | null> {
  return new Promise((resolve) => {
    const s = dgram.createSocket('udp4');
    const t = setTimeout(() => { s.close(); resolve(null); }, timeoutMs);
    s.on('message', (m) => { clearTimeout(t); s.close(); resolve(m); });
    s.send(msg, port, '127.0.0.1');
  });
}

function aQuery(name: string, id = 0x1234, qtype = 1): Buffer {
  const labels = name.split('.').map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, 'latin1')]));
  const h = Buffer.alloc(12);
  h.writeUInt16BE(id, 0); h.writeUInt16BE(0x0100, 2); h.writeUInt16BE(1, 4);
  const tail = Buffer.alloc(4); tail.writeUInt16BE(qtype, 0); tail.writeUInt16BE(1, 2);
  return Buffer.concat([h, ...labels, Buffer.from([0]), tail]);
}

test('node:dns Resolver#setServers resolves simulated hosts to their 127/8 IP with the TTL', async () => {
  const r = resolverFor(sw);
  let n = 0;
  for (const h of sw.web.hosts()) {
    if (h.dns !== 'ok') continue;
    const ans = await r.resolve4(h.name, { ttl: true });
    assert.deepEqual(ans, [{ address: h.ip, ttl: 123 }]);
    if (++n >= 20) break;
  }
  const farm = await r.resolve4('h987654.farm0.test');
  assert.equal(farm.length, 1);
  assert.match(farm[0]!, /^127\./);
  assert.deepEqual(await r.resolve4('WWW.PLD0.TEST'), [sw.web.hostInfo('www.pld0.test')!.ip]);
});

test('DNS failures: NXDOMAIN, SERVFAIL, no answer, dropped query, names outside the zone', async () => {
  const r = resolverFor(sw, 300);
  const byDns = (v: string) => sw.web.findHost((h) => h.dns === v)!.name;
  await assert.rejects(r.resolve4(byDns('nxdomain')), { code: 'ENOTFOUND' });
  await assert.rejects(r.resolve4('nosuchhost.pld1.test'), { code: 'ENOTFOUND' });
  await assert.rejects(r.resolve4(byDns('servfail')), { code: 'ESERVFAIL' });
  await assert.rejects(r.resolve4(byDns('no-answer')), { code: 'ENODATA' });
  await assert.rejects(r.resolve4(byDns('drop')), { code: 'ETIMEOUT' });
  await assert.rejects(r.resolve4('example.com'), { code: 'EREFUSED' });
  await assert.rejects(r.resolve6('www.pld0.test'), { code: 'ENODATA' });
});

test('wire format: id echoed, AA set, question echoed byte for byte, A record with TTL; FORMERR on junk', async () => {
  const ans = (await query(sw.dnsPort, aQuery('wWw.PlD0.test', 0xbeef)))!;
  assert.equal(ans.readUInt16BE(0), 0xbeef);
  const flags = ans.readUInt16BE(2);
  assert.equal(flags & 0x8000, 0x8000, 'QR');
  assert.equal(flags & 0x0400, 0x0400, 'AA');
  assert.equal(flags & 0xf, 0, 'NOERROR');
  assert.equal(ans.readUInt16BE(6), 1, 'one answer');
  const q = aQuery('wWw.PlD0.test', 0xbeef);
  assert.ok(ans.subarray(12, q.length).equals(q.subarray(12)), 'question echoed with its case');
  const rr = ans.subarray(q.length);
  assert.equal(rr.readUInt16BE(0), 0xc00c);
  assert.equal(rr.readUInt32BE(6), 123);
  assert.equal([...rr.subarray(12, 16)].join('.'), sw.web.hostInfo('www.pld0.test')!.ip);
  const bad = Buffer.concat([aQuery('x', 7).subarray(0, 12), Buffer.from([70, 1, 2])]); // label runs past the end
  const fe = (await query(sw.dnsPort, bad))!;
  assert.equal(fe.readUInt16BE(0), 7);
  assert.equal(fe.readUInt16BE(2) & 0xf, 1, 'FORMERR');
  assert.equal(await query(sw.dnsPort, Buffer.from([1, 2, 3]), 200), null, 'too short to answer: ignored');
  // The server keeps serving after junk.
  assert.ok(await query(sw.dnsPort, aQuery('www.pld0.test')));
});

test('same seed and params → byte-identical DNS answers from two servers', async () => {
  const other = await startSimweb({ preset: 'hostile', params: { dnsTtl: 123 } });
  try {
    for (const name of ['www.pld0.test', 'www.pld5.test', 'h3.farm0.test', 'nosuch.pld0.test']) {
      const a = await query(sw.dnsPort, aQuery(name, 99));
      const b = await query(other.dnsPort, aQuery(name, 99));
      assert.ok(a && b && a.equals(b), name);
    }
  } finally {
    await other.close();
  }
});
