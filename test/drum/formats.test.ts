import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { ClockCache, Drum, drumAlpha, planBuckets, radixSortKeys, theorem2Alpha, type DrumResult } from '../../src/drum/index.js';
import { isCrawlError } from '../../src/errors.js';
import { mulberry32 } from '../../src/simweb/model/hash.js';

const tmpDir = (): string => fs.mkdtempSync(path.join(os.tmpdir(), 'drumf-'));

/** `s` is `radixSortKeys(hi, lo, n)`: keys in BigInt order, `pos` pointing back, equal keys stable. */
function assertSortedStable(hi: Uint32Array, lo: Uint32Array, n: number, s: ReturnType<typeof radixSortKeys>): void {
  const ref = BigUint64Array.from({ length: n }, (_, i) => (BigInt(hi[i]!) << 32n) | BigInt(lo[i]!)).sort();
  for (let j = 0; j < n; j++) {
    assert.equal((BigInt(s.hi[j]!) << 32n) | BigInt(s.lo[j]!), ref[j]);
    assert.equal(s.lo[j], lo[s.pos[j]!]);
    if (j > 0 && s.hi[j] === s.hi[j - 1] && s.lo[j] === s.lo[j - 1]) assert.ok(s.pos[j]! > s.pos[j - 1]!, 'stable');
  }
}

test('Theorem 2 (eq. 7) reproduces the thesis Tables II and III within 3 %', () => {
  const Ns = [800e6, 8e9, 80e9, 800e9, 8e12];
  const base = { U: 100e6, b: 110, p: 1 / 9 };
  const close = (got: number, want: number, what: string): void =>
    assert.ok(Math.abs(got - want) / want < 0.03, `${what}: model ${got.toFixed(3)} vs thesis ${want}`);
  const tableII = [2.26, 2.35, 3.3, 12.5, 104];
  Ns.forEach((N, i) => close(theorem2Alpha({ ...base, n: 59 * N, R: 1e9, D: 4.3e12 }), tableII[i]!, `Table II N=${N}`));
  const tableIII: Record<number, number[]> = { 4: [2.3, 2.7, 3.3, 3.3, 8.1], 8: [2.3, 2.7, 3.3, 3.3, 3.7] };
  for (const R of [4, 8]) {
    Ns.forEach((N, i) => {
      const D = Math.max((1 / 9) * 8 * 59 * N, 1e12);
      close(theorem2Alpha({ ...base, n: 59 * N, R: R * 1e9, D }), tableIII[R]![i]!, `Table III R=${R}GB N=${N}`);
    });
  }
});

test('bucket plan: RAM-bound uses k0 = R/4M; disk-bound takes the smaller root and fills D', () => {
  const M = 256 * 1024;
  const ram = planBuckets({ R: 1e9, D: 1e15, b: 110, H: 8, P: 4, M });
  assert.equal(ram.regime, 'ram-bound');
  assert.equal(ram.kModel, 1e9 / (4 * M));
  const disk = planBuckets({ R: 1e9, D: 1e11, b: 110, H: 8, P: 4, M });
  assert.equal(disk.regime, 'disk-bound');
  // k·r·(H+b)/H = D (eq. 9)
  const used = (disk.kModel * disk.rModel * (8 + 110)) / 8;
  assert.ok(Math.abs(used - 1e11) / 1e11 < 1e-9);
  assert.ok(disk.kModel < ram.kModel);
});

test('drumAlpha (eq. 14 with separate sizes) equals theorem2Alpha when the sizes are the thesis ones', () => {
  for (const [R, D, N] of [
    [1e9, 4.3e12, 8e9],
    [4e9, 1e12, 800e6],
    [2e8, 1e14, 80e9],
  ] as const) {
    const n = 59 * N;
    const plan = planBuckets({ R, D, b: 110, H: 8, P: 4, M: 256 * 1024 });
    const a = drumAlpha({ n, U: 100e6, b: 110, p: 1 / 9, k: plan.kModel, r: plan.rModel, Hz: 8, Hb: 8, auxOverhead: 0, queueBytes: 110 });
    const t = theorem2Alpha({ n, R, D, U: 100e6, b: 110, p: 1 / 9 });
    assert.ok(Math.abs(a - t) / t < 1e-9, `R=${R} D=${D}: ${a} vs ${t}`);
  }
});

test('radix sort: same order as BigUint64Array.sort, stable among equal keys', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 5 }), fc.nat({ max: 0xffffffff })), { maxLength: 400 }), fc.boolean(), (pairs, sameTop) => {
      const n = pairs.length;
      const hi = new Uint32Array(n);
      const lo = new Uint32Array(n);
      pairs.forEach(([h, l], i) => {
        hi[i] = sameTop ? 0x40000000 | h : (h * 0x33333333) >>> 0;
        lo[i] = l % 7 === 0 ? 7 : l;
      });
      const s = radixSortKeys(hi, lo, n);
      const ref = BigUint64Array.from({ length: n }, (_, i) => (BigInt(hi[i]!) << 32n) | BigInt(lo[i]!)).sort();
      for (let j = 0; j < n; j++) {
        assert.equal((BigInt(s.hi[j]!) << 32n) | BigInt(s.lo[j]!), ref[j]);
        assert.equal(s.hi[j], hi[s.pos[j]!]);
        assert.equal(s.lo[j], lo[s.pos[j]!]);
        if (j > 0 && s.hi[j] === s.hi[j - 1] && s.lo[j] === s.lo[j - 1]) assert.ok(s.pos[j]! > s.pos[j - 1]!, 'stable');
      }
    }),
  );
});

test('radix sort: any number of varying hi bits (0–32, digit passes of ≤ 11 bits) sorts like BigUint64Array.sort', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 32 }), fc.nat({ max: 0xffffffff }), fc.array(fc.tuple(fc.nat({ max: 0xffffffff }), fc.nat({ max: 3 })), { maxLength: 600 }), (bits, top, pairs) => {
      const n = pairs.length;
      const low = bits === 32 ? 0xffffffff : (1 << bits) - 1;
      const hi = Uint32Array.from(pairs, ([h]) => ((top & ~low) | (h & low)) >>> 0);
      const lo = Uint32Array.from(pairs, ([, l]) => l);
      const s = radixSortKeys(hi, lo, n);
      assertSortedStable(hi, lo, n, s);
    }),
  );
});

test('radix sort: long runs of one hi (skewed keys) take the radix path for lo and stay stable', () => {
  const rnd = mulberry32(7);
  for (const n of [65, 66, 1000, 5000]) {
    const hi = new Uint32Array(n);
    const lo = new Uint32Array(n);
    for (let i = 0; i < n; i++) {
      hi[i] = i % 3 === 0 ? 5 : 0xfffffffe + (i % 2); // runs of thousands of equal hi
      lo[i] = rnd() < 0.3 ? 42 : Math.floor(rnd() * 4294967296) >>> 0; // and of equal keys
    }
    const s = radixSortKeys(hi, lo, n);
    assertSortedStable(hi, lo, n, s);
  }
});

test('CLOCK cache: no false hits, bounded size, second-chance eviction', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 60 })), { maxLength: 500 }), fc.integer({ min: 1, max: 20 }), (ops, cap) => {
      const c = new ClockCache(cap);
      const inserted = new Set<number>();
      for (const [ins, k] of ops) {
        if (ins) {
          c.insert(k, k * 7);
          inserted.add(k);
          assert.ok(c.lookup(k, k * 7), 'a key is found right after its insertion');
        } else if (c.lookup(k, k * 7)) assert.ok(inserted.has(k), 'hit on a key never inserted');
      }
      let found = 0;
      for (let k = 0; k <= 60; k++) if (c.lookup(k, k * 7)) found++;
      assert.ok(found <= cap);
    }),
  );
  // A referenced entry survives one sweep; an unreferenced one is evicted first.
  const c = new ClockCache(2);
  c.insert(0, 1);
  c.insert(0, 2);
  c.lookup(0, 1); // referenced
  c.insert(0, 3); // evicts (0,2)
  assert.ok(c.lookup(0, 1));
  assert.ok(!c.lookup(0, 2));
  assert.ok(c.lookup(0, 3));
});

async function filledRepo(dir: string): Promise<void> {
  const d = await Drum.open(dir, { buckets: 2, bufferBytes: 128, onResults: () => undefined });
  for (let i = 0; i < 3000; i++) d.checkUpdate((i * 2654435761) >>> 0, i, null, new Uint8Array(10));
  await d.close();
}

test('a corrupted cache file Z is reported (CRAWL_DISK_CHECKSUM), a truncated one too (CRAWL_DISK_TRUNCATED)', async () => {
  const dir = tmpDir();
  await filledRepo(dir);
  const z = path.join(dir, fs.readdirSync(dir).find((f) => f.startsWith('z0000'))!);
  const good = fs.readFileSync(z);
  const bad = Buffer.from(good);
  bad[Math.floor(bad.length / 2)]! ^= 0x01;
  fs.writeFileSync(z, bad);
  const d = await Drum.open(dir, { buckets: 2, onResults: () => undefined });
  d.checkUpdate(1, 1); // bucket 0
  await assert.rejects(d.merge(), (e: unknown) => isCrawlError(e, 'CRAWL_DISK_CHECKSUM'));
  await d.close({ flush: false });
  fs.writeFileSync(z, good.subarray(0, good.length - 5));
  await assert.rejects(Drum.open(dir, { buckets: 2, onResults: () => undefined }), (e: unknown) => isCrawlError(e, 'CRAWL_DISK_TRUNCATED'));
  fs.writeFileSync(path.join(dir, 'drum.json'), '{not json');
  await assert.rejects(Drum.open(dir, { buckets: 2, onResults: () => undefined }), (e: unknown) => isCrawlError(e, 'CRAWL_DRUM_MANIFEST'));
  fs.rmSync(dir, { recursive: true, force: true });
});

test('bucket files: a torn tail is cut back to the last complete block pair; corruption before it is reported', async () => {
  const dir = tmpDir();
  let d = await Drum.open(dir, { buckets: 1, bufferBytes: 200, onResults: () => undefined });
  for (let i = 0; i < 100; i++) d.checkUpdate(i, i, null, new Uint8Array(15).fill(i));
  // Crash: aux records are 16 bytes (varint + 15), so a pair of blocks is written every
  // ceil(200/16) = 13 tuples: 7 pairs (91 tuples) are on disk, 9 tuples die with the buffers.
  await d.close({ flush: false });
  const aux = path.join(dir, 'b0000-1.aux');
  const kv = path.join(dir, 'b0000-1.kv');
  const auxBytes = fs.readFileSync(aux);
  const kvBytes = fs.readFileSync(kv);
  fs.writeFileSync(aux, auxBytes.subarray(0, auxBytes.length - 7)); // torn last aux block
  const got: DrumResult[] = [];
  d = await Drum.open(dir, { buckets: 1, onResults: (b) => void got.push(...b) });
  assert.ok(fs.statSync(kv).size < kvBytes.length, 'the kv file was cut back to the pair boundary');
  await d.merge();
  assert.equal(got.length, 78, 'the torn 7th pair is dropped, the 6 complete pairs are merged');
  assert.deepEqual(got.map((r) => r.aux![0]), Array.from({ length: 78 }, (_, i) => i));
  await d.close({ flush: false });
  // Corruption in the middle of a bucket file is not a crash artefact: it is reported.
  fs.rmSync(dir, { recursive: true, force: true });
  d = await Drum.open(dir, { buckets: 1, bufferBytes: 200, onResults: () => undefined });
  for (let i = 0; i < 100; i++) d.checkUpdate(i, i, null, new Uint8Array(15).fill(i));
  await d.close({ flush: false });
  const bad = Buffer.from(fs.readFileSync(kv));
  bad[30]! ^= 0xff;
  fs.writeFileSync(kv, bad);
  await assert.rejects(Drum.open(dir, { buckets: 1, onResults: () => undefined }), (e: unknown) => isCrawlError(e, 'CRAWL_DISK_CHECKSUM'));
  assert.ok(kvBytes.length > 0);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a repository in an older on-disk format is refused with CRAWL_DRUM_FORMAT, not misread', async () => {
  const dir = tmpDir();
  const d = await Drum.open(dir, { ramBytes: 1 << 20, buckets: 2, bufferBytes: 1024, deliver: 'unique', onResults: () => undefined });
  d.checkUpdate(1, 2);
  await d.close();
  const mfile = path.join(dir, 'drum.json');
  const m = JSON.parse(fs.readFileSync(mfile, 'utf8')) as { version: number };
  assert.equal(m.version, Drum.Z_FORMAT);
  fs.writeFileSync(mfile, JSON.stringify({ ...m, version: 1 }));
  await assert.rejects(
    Drum.open(dir, { ramBytes: 1 << 20, buckets: 2, bufferBytes: 1024, deliver: 'unique', onResults: () => undefined }),
    (e: unknown) => isCrawlError(e) && e.code === 'CRAWL_DRUM_FORMAT',
  );
  fs.rmSync(dir, { recursive: true, force: true });
});
