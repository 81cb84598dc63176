import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeLinks, LinkTable, splitParseOutput, writeGroupMeta, groupMetaSize, writeLinkTableAscii, tableSizeAscii, type LinkEntry } from '../../src/threads/links-codec.js';
import { fingerprintInto, fingerprintRunsInto } from '../../src/url/index.js';

const entry = (i: number, url: string): LinkEntry => ({ hi: i, lo: i + 1, hostHi: i + 2, hostLo: i + 3, pldHi: i + 4, pldLo: 0xffffffff - i, url });

test('links-codec: ASCII tables (fast path) and tables with a non-ASCII URL (general path) round-trip', () => {
  const info = { digest: 'sha1:ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', charset: 'utf-8', extracted: 7, noindex: true, nofollow: false, capped: false };
  for (const urls of [
    ['http://a.test/', 'https://b.test/x?y=1#', 'http://c.test/' + 'p'.repeat(2000)],
    ['http://a.test/', 'http://b.test/ünï', 'http://c.test/€/𝄞', 'http://d.test/'],
    [],
  ]) {
    const links = urls.map((u, i) => entry(i * 10, u));
    const t = new LinkTable(encodeLinks(links, info));
    assert.equal(t.count, urls.length);
    assert.deepEqual(t.info(), info);
    for (let i = 0; i < urls.length; i++) {
      assert.deepEqual(t.entry(i), links[i]);
      assert.deepEqual(t.urlBytes(i), new TextEncoder().encode(urls[i]!));
    }
  }
});

test('links-codec: splitParseOutput finds the table, the WARC group meta and its bytes', () => {
  const table = encodeLinks([entry(1, 'http://a.test/')], { digest: 'sha1:X', charset: '', extracted: 1, noindex: false, nofollow: false });
  const g = {
    records: [
      { type: 'response', recordId: '<urn:uuid:1>', offset: 0, length: 3 },
      { type: 'request', recordId: '<urn:uuid:22>', offset: 3, length: 0x12345678 },
      { type: 'metadata', recordId: '<urn:uuid:333>', offset: 0xfffffff0, length: 0 },
    ],
    recordId: '<urn:uuid:1>',
    payloadDigest: 'sha1:X',
  };
  const meta = new Uint8Array(groupMetaSize(g) + 5);
  assert.equal(writeGroupMeta(meta, new DataView(meta.buffer), 5, g), meta.length);
  const out = new Uint8Array(8 + table.length + meta.length - 5 + 3);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, table.length, true);
  out.set(table, 4);
  dv.setUint32(4 + table.length, meta.length - 5, true);
  out.set(meta.subarray(5), 8 + table.length);
  out.set([1, 2, 3], 8 + table.length + meta.length - 5);
  const s = splitParseOutput(out);
  assert.equal(new LinkTable(s.table).url(0), 'http://a.test/');
  assert.deepEqual([...s.group!.data], [1, 2, 3]);
  assert.deepEqual({ records: s.group!.records, recordId: s.group!.recordId, payloadDigest: s.group!.payloadDigest }, g);
  // what the binary form cannot hold is refused, not mangled
  assert.throws(() => writeGroupMeta(meta, new DataView(meta.buffer), 0, { ...g, records: [{ ...g.records[0]!, type: 'odd' }] }));
  assert.throws(() => writeGroupMeta(meta, new DataView(meta.buffer), 0, { ...g, recordId: '<urn:uuid:other>' }));
});

test('links-codec: writeLinkTableAscii writes what encodeLinks writes (keys hashed from the table bytes), and declines a non-ASCII URL', () => {
  const info = { digest: 'sha1:ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', charset: 'windows-1252', extracted: 9, noindex: false, nofollow: true };
  for (const urls of [[], ['http://a.test/'], ['http://a.test/', 'https://b.test/x?y=1', 'http://c.test/' + 'p'.repeat(3000)]]) {
    const keys = new Uint32Array(6 * urls.length);
    for (let i = 0; i < keys.length; i++) keys[i] = (i * 2654435761) >>> 0;
    const dst = new Uint8Array(7 + tableSizeAscii(urls, info) + 5);
    const end = writeLinkTableAscii(dst, new DataView(dst.buffer), 7, urls, keys, info, fingerprintRunsInto);
    assert.equal(end, dst.length - 5);
    const fp = new Uint32Array(2);
    const links = urls.map((url, i) => {
      fingerprintInto(url, fp, 0);
      return { hi: fp[0]!, lo: fp[1]!, hostHi: keys[6 * i + 2]!, hostLo: keys[6 * i + 3]!, pldHi: keys[6 * i + 4]!, pldLo: keys[6 * i + 5]!, url };
    });
    assert.deepEqual(dst.subarray(7, end), encodeLinks(links, info));
  }
  const dst = new Uint8Array(1000);
  assert.equal(writeLinkTableAscii(dst, new DataView(dst.buffer), 0, ['http://a.test/ü'], new Uint32Array(6), info, fingerprintRunsInto), -1);
});
