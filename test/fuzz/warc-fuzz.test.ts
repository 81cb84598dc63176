/**
 * Fuzz: the WARC scanner (src/store/warc-scan.ts). Files written by WarcWriter (gzip, zstd, plain)
 * are mutated — bytes flipped, cut, spliced, repeated — or replaced by random bytes up to 5 MB;
 * scanWarc never throws and always returns a consistent answer: validLength within the file, the
 * prefix it vouches for scans again as whole and error-free with the same records, and a scan from
 * any record boundary it reported agrees with the scan from 0. (Linear cost on the hostile shapes:
 * test/store/warc-scan-hostile.test.ts.)
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { WarcWriter, scanWarc, type WarcCompression } from '../../src/store/index.js';
import { params, runs, amplifiedBytes } from './fuzz.js';

const enc = new TextEncoder();
let dir = '';
const samples = new Map<WarcCompression, Buffer>();

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'drumcrawl-warc-fuzz-'));
  for (const compression of ['gzip', 'zstd', 'none'] as const) {
    const w = await WarcWriter.open({ dir: path.join(dir, compression), compression });
    for (let i = 0; i < 6; i++) {
      const body = enc.encode(`<html>${'x'.repeat(i * 150)}</html>`);
      await w.writeExchange({
        url: `http://h${i}.test/p/${i}`, ip: '127.0.0.1', date: new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
        requestHead: enc.encode(`GET /p/${i} HTTP/1.1\r\nHost: h${i}.test\r\n\r\n`),
        responseHead: enc.encode(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n`), body,
      });
    }
    await w.close();
    samples.set(compression, readFileSync(w.position().file));
  }
});
after(() => rmSync(dir, { recursive: true, force: true }));

type Mutation = { kind: 'flip'; at: number; xor: number } | { kind: 'cut'; at: number } | { kind: 'splice'; at: number; bytes: Uint8Array } | { kind: 'dup'; from: number; len: number; at: number };
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), xor: fc.integer({ min: 1, max: 255 }) }),
  fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('splice' as const), at: fc.nat(), bytes: fc.uint8Array({ maxLength: 40 }) }),
  fc.record({ kind: fc.constant('dup' as const), from: fc.nat(), len: fc.nat({ max: 3000 }), at: fc.nat() }),
);

function mutate(b: Buffer, ms: Mutation[]): Buffer {
  let out = Buffer.from(b);
  for (const m of ms) {
    if (out.length === 0) break;
    if (m.kind === 'flip') out[m.at % out.length] ^= m.xor;
    else if (m.kind === 'cut') out = out.subarray(0, m.at % (out.length + 1));
    else if (m.kind === 'splice') { const at = m.at % (out.length + 1); out = Buffer.concat([out.subarray(0, at), m.bytes, out.subarray(at)]); }
    else { const f = m.from % out.length; const at = m.at % (out.length + 1); out = Buffer.concat([out.subarray(0, at), out.subarray(f, f + m.len), out.subarray(at)]); }
  }
  return out;
}

async function checkConsistent(file: string, bytes: Buffer): Promise<void> {
  writeFileSync(file, bytes);
  const r = await scanWarc(file, { collect: true });
  assert.equal(r.fileLength, bytes.length);
  assert.ok(r.validLength >= 0 && r.validLength <= r.fileLength, `validLength ${r.validLength}`);
  assert.equal(r.records, r.list!.length);
  for (const x of r.list!) assert.ok(x.offset >= 0 && x.offset + x.length <= r.validLength, `record ${x.offset}+${x.length} past ${r.validLength}`);
  if (r.validLength === r.fileLength) assert.equal(r.error, undefined);
  // the prefix it vouches for is whole
  writeFileSync(file, bytes.subarray(0, r.validLength));
  const p = await scanWarc(file, { collect: true });
  assert.deepEqual([p.validLength, p.error, p.records], [r.validLength, undefined, r.records], 'the valid prefix rescans whole');
  // from a reported boundary, the tail agrees with the scan from 0
  if (r.list!.length > 0) {
    writeFileSync(file, bytes);
    const k = Math.floor(r.list!.length / 2);
    const from = r.list![k]!.offset;
    const t = await scanWarc(file, { collect: true, fromOffset: from });
    assert.equal(t.validLength, r.validLength);
    assert.deepEqual(t.list, r.list!.filter((x) => x.offset >= from));
  }
}

for (const compression of ['gzip', 'zstd', 'none'] as const) {
  test(`warc fuzz (${compression}): mutated files scan without throwing, consistently`, async () => {
    const file = path.join(dir, `m-${compression}.warc`);
    await fc.assert(fc.asyncProperty(fc.array(mutation, { minLength: 1, maxLength: 4 }), async (ms) => {
      await checkConsistent(file, mutate(samples.get(compression)!, ms));
    }), params(`warc ${compression} mutations`, runs(150, 10_000)));
  });
}

test('warc fuzz: random bytes up to 5 MB, behind each format\'s magic', async () => {
  const file = path.join(dir, 'random.warc');
  const magic = fc.constantFrom(Buffer.alloc(0), Buffer.from([0x1f, 0x8b, 8, 0]), Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), Buffer.from('WARC/1.0\r\n'), Buffer.from([0x50, 0x2a, 0x4d, 0x18, 4, 0, 0, 0]));
  await fc.assert(fc.asyncProperty(magic, amplifiedBytes(), async (m, b) => {
    await checkConsistent(file, Buffer.concat([m, b]));
  }), params('warc random', runs(100, 5_000)));
});
