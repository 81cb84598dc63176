import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeLinks, LinkTable, splitParseOutput, type LinkEntry } from '../../src/crawl/links-codec.js';

const entry = (i: number, url: string): LinkEntry => ({ hi: i, lo: i + 1, hostHi: i + 2, hostLo: i + 3, pldHi: i + 4, pldLo: 0xffffffff - i, url });

test('links-codec: ASCII tables (fast path) and tables with a non-ASCII URL (general path) round-trip', () => {
  const info = { digest: 'sha1:ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', charset: 'utf-8', extracted: 7, noindex: true, nofollow: false };
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
  const meta = new TextEncoder().encode(JSON.stringify({ records: [{ type: 'response', recordId: '<urn:uuid:1>', offset: 0, length: 3 }], recordId: '<urn:uuid:1>', payloadDigest: 'sha1:X' }));
  const out = new Uint8Array(8 + table.length + meta.length + 3);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, table.length, true);
  out.set(table, 4);
  dv.setUint32(4 + table.length, meta.length, true);
  out.set(meta, 8 + table.length);
  out.set([1, 2, 3], 8 + table.length + meta.length);
  const s = splitParseOutput(out);
  assert.equal(new LinkTable(s.table).url(0), 'http://a.test/');
  assert.deepEqual([...s.group!.data], [1, 2, 3]);
  assert.equal(s.group!.records[0]!.type, 'response');
  assert.equal(s.group!.payloadDigest, 'sha1:X');
});
