/**
 * Recycled files: a merged generation's bucket files and the superseded Z are kept as spares and
 * overwritten by the next generation / Z′ instead of being deleted (docs/drum.md, "File
 * recycling"). These tests make recycled files with stale blocks of older generations after the
 * live ones and check that recovery keeps exactly the live tuples, that corruption inside the live
 * chain is still reported, and that a hard-linked Z (the benchmark's --z-cache) is never written.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Drum, type DrumResult } from '../../src/drum/index.js';
import { encodeManifest, type Manifest } from '../../src/drum/format.js';
import { isCrawlError } from '../../src/errors.js';
import { BlockReader, IoCounters, frameBlock } from '../../src/disk/index.js';

const tmpDir = (): string => fs.mkdtempSync(path.join(os.tmpdir(), 'drumr-'));

/** Aux of tuple j: its number (4 bytes) and 11 filler bytes — 16-byte aux records, 13 tuples a block pair at M = 200. */
const auxOf = (j: number): Uint8Array => {
  const a = new Uint8Array(15).fill(j & 0xff);
  new DataView(a.buffer).setUint32(0, j);
  return a;
};
const auxNo = (a: Uint8Array): number => new DataView(a.buffer, a.byteOffset).getUint32(0);
/** Key of tuple j (bucket 0 of 1; distinct keys). */
const keyOf = (j: number): [number, number] => [Math.imul(j + 1, 2654435761) >>> 0, j];

/** Live generation files of bucket 0 (b0000-<g>.kv/aux) in `dir`. */
function liveGen(dir: string): number[] {
  return fs
    .readdirSync(dir)
    .map((f) => /^b0000-(\d+)\.kv$/.exec(f))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]));
}

/**
 * A repository (1 bucket, M = 200) whose pending generation is a recycled file: two big merges
 * (300 tuples each) leave a spare pair, the next generation overwrites it with `live` tuples and
 * the process "crashes" (close without flush: buffers lost). Returns the tuple numbers that reached disk.
 */
async function recycledCrash(dir: string, live: number): Promise<{ flushed: number[]; gen: number; staleBytes: number }> {
  const d = await Drum.open(dir, { buckets: 1, bufferBytes: 200, onResults: () => undefined });
  let j = 0;
  for (let round = 0; round < 2; round++) {
    for (let t = 0; t < 300; t++, j++) d.checkUpdate(...keyOf(j), null, auxOf(j));
    await d.merge();
  }
  assert.ok(fs.existsSync(path.join(dir, 'bspare.kv')), 'a merged pair became the spare');
  const spareSize = fs.statSync(path.join(dir, 'bspare.kv')).size;
  // The pending generation was made at the 2nd merge from the 1st merge's spare: it is recycled.
  const [gen] = liveGen(dir);
  const first = j;
  for (let t = 0; t < live; t++, j++) d.checkUpdate(...keyOf(j), null, auxOf(j));
  await d.close({ flush: false });
  const kv = path.join(dir, `b0000-${gen}.kv`);
  const size = fs.statSync(kv).size;
  assert.ok(size >= spareSize, 'the pending generation overwrote a spare (its file is as long as one)');
  // Tuples on disk: whole block pairs of 13 tuples.
  const onDisk = Math.floor(live / 13) * 13;
  return { flushed: Array.from({ length: onDisk }, (_, t) => first + t), gen: gen!, staleBytes: size };
}

test('a recycled bucket file with stale blocks of older generations after the live ones reopens with exactly the live tuples', async () => {
  for (const live of [0, 5, 13, 40, 100]) {
    const dir = tmpDir();
    try {
      const { flushed, gen } = await recycledCrash(dir, live);
      const got: DrumResult[] = [];
      const d = await Drum.open(dir, { buckets: 1, onResults: (b) => void got.push(...b) });
      const kvSize = fs.statSync(path.join(dir, `b0000-${gen}.kv`)).size;
      assert.equal(kvSize, Math.ceil(flushed.length / 13) * (24 + 13 * 9), `live ${live}: the file is cut at its live end`);
      await d.merge();
      assert.deepEqual(got.map((r) => auxNo(r.aux!)), flushed, `live ${live}: exactly the live tuples, in order`);
      assert.ok(got.every((r) => r.unique));
      assert.equal(d.stats().keys, 600 + flushed.length, `live ${live}: no stale tuple reached Z`);
      await d.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
});

test('recycling over many merges and reopens keeps every result (files overwritten with shorter and longer generations)', async () => {
  const dir = tmpDir();
  try {
    let got: DrumResult[] = [];
    const opts = { buckets: 2, bufferBytes: 160, onResults: (b: DrumResult[]) => void got.push(...b) };
    let d = await Drum.open(dir, opts);
    let j = 0;
    const seen = new Set<number>();
    for (let round = 0; round < 24; round++) {
      // Rounds of very different sizes, so a recycled file is sometimes longer, sometimes shorter.
      const n = [400, 7, 90, 3, 250, 30][round % 6]!;
      const firstOfRound = j;
      for (let t = 0; t < n; t++, j++) d.checkUpdate(...keyOf(j % 700), null, auxOf(j));
      if (round % 5 === 4) {
        await d.close();
        d = await Drum.open(dir, opts);
      } else await d.merge();
      for (const r of got) {
        const no = auxNo(r.aux!);
        assert.ok(no >= firstOfRound && no < j, 'only this round’s tuples are delivered');
        assert.equal(r.unique, !seen.has(no % 700) && got.findIndex((x) => auxNo(x.aux!) % 700 === no % 700) === got.indexOf(r));
      }
      assert.equal(got.length, n, `round ${round}: every tuple once`);
      for (const r of got) seen.add(auxNo(r.aux!) % 700);
      got = [];
    }
    assert.equal(d.stats().keys, seen.size);
    await d.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('corruption inside the live chain of a recycled bucket file is reported, not cut', async () => {
  // 100 tuples: 7 live block pairs (91 tuples) over the stale blocks of the recycled pair.
  // (Each flip breaks one file's chain; the pair rule sees the other file go on. Flipping both
  // files of one pair leaves only the search for a later block of the generation to find it.)
  type Flip = [ext: 'kv' | 'aux', at: (blocks: number[]) => number];
  const cases: [string, Flip[]][] = [
    ['kv, 2nd block payload', [['kv', (b) => b[1]! + 30]]],
    ['kv, 1st block header (tag byte)', [['kv', (b) => b[0]! + 6]]],
    ['kv, 3rd block magic', [['kv', (b) => b[2]!]]],
    ['kv, last live block (its aux pair was written after it)', [['kv', (b) => b[6]! + 40]]],
    ['aux, 1st block payload', [['aux', (b) => b[0]! + 30]]],
    ['aux, 6th of 7 blocks (kv block 7 was written after it)', [['aux', (b) => b[5]! + 30]]],
    ['kv and aux, both 3rd blocks (payloads)', [['kv', (b) => b[2]! + 30], ['aux', (b) => b[2]! + 30]]],
    ['kv and aux, both 2nd blocks (stored-length fields)', [['kv', (b) => b[1]! + 17], ['aux', (b) => b[1]! + 17]]],
  ];
  for (const [what, flips] of cases) {
    const dir = tmpDir();
    try {
      const { gen } = await recycledCrash(dir, 100);
      for (const [ext, at] of flips) {
        const file = path.join(dir, `b0000-${gen}.${ext}`);
        const bytes = fs.readFileSync(file);
        // Offsets of the 7 live blocks (a chain from offset 0).
        const starts: number[] = [];
        for (let p = 0, t = 0; t < 7; t++) {
          starts.push(p);
          p += 24 + bytes.readUInt32LE(p + 16);
        }
        bytes[at(starts)]! ^= 0x5a;
        fs.writeFileSync(file, bytes);
      }
      await assert.rejects(
        Drum.open(dir, { buckets: 1, onResults: () => undefined }),
        (e: unknown) => isCrawlError(e) && /^CRAWL_(DISK_CHECKSUM|DISK_FORMAT|DRUM_)/.test(e.code),
        what,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
});

test('a hard-linked Z (nlink 2, the benchmark’s --z-cache) is never overwritten; a Z with one link is recycled', async () => {
  const src = tmpDir();
  const dir = tmpDir();
  try {
    const keys = 5000;
    await Drum.bulkLoad(src, { buckets: 2, expectedKeys: keys }, (i, append) => {
      for (let j = 0; j < keys; j++) {
        const hi = Math.floor((j * 4294967296) / keys) >>> 0;
        if (hi >>> 31 === i) append(hi, j);
      }
    });
    const pristine = new Map<string, Buffer>();
    for (const f of fs.readdirSync(src)) {
      if (f.endsWith('.z')) {
        pristine.set(f, fs.readFileSync(path.join(src, f)));
        fs.linkSync(path.join(src, f), path.join(dir, f));
      } else fs.copyFileSync(path.join(src, f), path.join(dir, f));
    }
    const d = await Drum.open(dir, { buckets: 2, bufferBytes: 256, deliver: 'unique', onResults: () => undefined });
    for (let round = 0; round < 4; round++) {
      for (let t = 0; t < 500; t++) d.checkUpdate((Math.imul(round * 500 + t + 7, 2654435761) >>> 0) | 1, t);
      const spare = path.join(dir, 'zspare.z');
      const spareIno = fs.existsSync(spare) ? fs.statSync(spare).ino : -1;
      await d.merge();
      if (round >= 2) {
        // Round 0 retires the linked Z files (deleted, not spares); from round 2 on, bucket 0's Z′
        // is written over the spare left by bucket 1's merge of the round before.
        const z0 = fs.readdirSync(dir).find((f) => f.startsWith('z0000-'))!;
        assert.equal(fs.statSync(path.join(dir, z0)).ino, spareIno, `round ${round}: bucket 0's Z′ is the recycled spare`);
      }
      for (const [f, b] of pristine) assert.deepEqual(fs.readFileSync(path.join(src, f)), b, `round ${round}: linked ${f} unchanged`);
    }
    for (const f of pristine.keys()) assert.equal(fs.statSync(path.join(src, f)).nlink, 1, `${f}: the repository's link is gone, the file kept`);
    assert.equal(d.stats().keys, keys + 2000);
    await d.close();
    // The pristine repository still opens and holds its keys.
    const s = await Drum.open(src, { buckets: 2, deliver: 'unique', onResults: () => undefined });
    assert.equal(s.stats().keys, keys);
    await s.close({ flush: false });
    // A spare Z that gained a second link after it became the spare is not overwritten either.
    const d2 = await Drum.open(dir, { buckets: 2, bufferBytes: 256, deliver: 'unique', onResults: () => undefined });
    const spare = path.join(dir, 'zspare.z');
    assert.ok(fs.existsSync(spare));
    const keep = path.join(src, 'linked-spare');
    fs.linkSync(spare, keep);
    const before = fs.readFileSync(keep);
    d2.checkUpdate(5, 5);
    d2.checkUpdate(0x80000005, 5);
    await d2.merge();
    assert.deepEqual(fs.readFileSync(keep), before, 'a linked spare is not overwritten');
    await d2.close();
  } finally {
    fs.rmSync(src, { recursive: true, force: true });
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a spare whose stale blocks may be 2^15 or more generations old is emptied before reuse (no stale tag can equal the live one mod 2^16)', async () => {
  const dir = tmpDir();
  try {
    const opts = { buckets: 2, bufferBytes: 200, onResults: () => undefined };
    let d = await Drum.open(dir, opts);
    for (let j = 0; j < 50; j++) d.checkUpdate(j, j, null, auxOf(j)); // bucket 0 (top bit clear)
    await d.close();
    // Jump the generation counter: bucket 1 (empty) gets bgen 50000.
    const mfile = path.join(dir, 'drum.json');
    const m = JSON.parse(fs.readFileSync(mfile, 'utf8')) as Manifest;
    m.buckets[1]!.bgen = 50000;
    fs.writeFileSync(mfile, encodeManifest(m)); // sealed again, as DRUM writes it
    d = await Drum.open(dir, opts);
    for (let j = 0; j < 60; j++) d.checkUpdate(j + 100, j, null, auxOf(j)); // bucket 0: its pending gen (< 100) gets 60 tuples
    d.checkUpdate(0x80000000, 1, null, auxOf(1)); // bucket 1
    await d.merge();
    // Bucket 0's merged pair (generation < 100) became the spare; bucket 1's new generation (> 50000)
    // took it and had to empty it.
    const g1 = fs.readdirSync(dir).map((f) => /^b0001-(\d+)\.kv$/.exec(f)).find((x) => x !== null)!;
    assert.ok(Number(g1[1]) > 50000);
    assert.equal(fs.statSync(path.join(dir, g1[0])).size, 0, 'the recycled pair was emptied (window rule)');
    await d.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/** Rewrites a bucket file's blocks untagged (block format 1.1: bucket files without generation tags). */
function untag(file: string): void {
  const fd = fs.openSync(file, 'r');
  const parts: Uint8Array[] = [];
  try {
    const r = new BlockReader(fd, 0, fs.fstatSync(fd).size, file, new IoCounters(), 'test');
    for (let b = r.next(); b !== null; b = r.next()) parts.push(frameBlock(b.payload, b.count, 'none'));
  } finally {
    fs.closeSync(fd);
  }
  fs.writeFileSync(file, Buffer.concat(parts));
}

test('bucket files of an older drumcrawl (untagged blocks) are read as before; corruption in them is still reported', async () => {
  const make = async (dir: string): Promise<void> => {
    const d = await Drum.open(dir, { buckets: 1, bufferBytes: 200, onResults: () => undefined });
    for (let j = 0; j < 100; j++) d.checkUpdate(...keyOf(j), null, auxOf(j));
    await d.close({ flush: false });
    for (const ext of ['kv', 'aux']) untag(path.join(dir, `b0000-1.${ext}`));
  };
  const dir = tmpDir();
  try {
    await make(dir);
    const got: DrumResult[] = [];
    const d = await Drum.open(dir, { buckets: 1, onResults: (b) => void got.push(...b) });
    await d.merge();
    assert.deepEqual(got.map((r) => auxNo(r.aux!)), Array.from({ length: 91 }, (_, j) => j));
    await d.close();
    for (const exts of [['kv'], ['aux'], ['kv', 'aux']]) {
      fs.rmSync(dir, { recursive: true, force: true });
      await make(dir);
      for (const ext of exts) {
        const file = path.join(dir, `b0000-1.${ext}`);
        const b = fs.readFileSync(file);
        b[30]! ^= 0x40; // first block's payload
        fs.writeFileSync(file, b);
      }
      await assert.rejects(Drum.open(dir, { buckets: 1, onResults: () => undefined }), (e: unknown) => isCrawlError(e, 'CRAWL_DISK_CHECKSUM'), exts.join('+'));
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('after a reboot (another boot id wrote the repository) a break in an unsynced chain ends it instead of being reported; within one boot it is corruption', async () => {
  // Power loss: bucket pages written after the last fsync may reach the disk in any order, so a
  // recycled file can show a stale or garbled block between live ones. Simulated by garbling the
  // 3rd of 7 live block pairs' kv payload; the writer-boot file says who wrote the files.
  const bootNow = ((): string | null => {
    try {
      return fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      return null;
    }
  })();
  if (bootNow === null) return; // no boot id on this OS: the strict rule always applies (tested above)
  for (const rebooted of [true, false]) {
    const dir = tmpDir();
    try {
      const { flushed, gen } = await recycledCrash(dir, 100);
      assert.equal(fs.readFileSync(path.join(dir, 'writer-boot'), 'utf8').trim(), bootNow, 'open records this boot');
      const file = path.join(dir, `b0000-${gen}.kv`);
      const bytes = fs.readFileSync(file);
      let p = 0;
      for (let t = 0; t < 2; t++) p += 24 + bytes.readUInt32LE(p + 16);
      bytes[p + 30]! ^= 0x5a; // inside the 3rd block's payload
      fs.writeFileSync(file, bytes);
      if (rebooted) fs.writeFileSync(path.join(dir, 'writer-boot'), '00000000-0000-4000-8000-000000000000\n');
      if (!rebooted) {
        await assert.rejects(Drum.open(dir, { buckets: 1, onResults: () => undefined }), (e: unknown) => isCrawlError(e) && e.code === 'CRAWL_DISK_CHECKSUM');
        continue;
      }
      const got: DrumResult[] = [];
      const d = await Drum.open(dir, { buckets: 1, onResults: (b) => void got.push(...b) });
      assert.equal(fs.readFileSync(path.join(dir, 'writer-boot'), 'utf8').trim(), bootNow, 'this boot writes from now on');
      await d.merge();
      assert.deepEqual(got.map((r) => auxNo(r.aux!)), flushed.slice(0, 26), 'the two block pairs before the break, nothing after it');
      assert.equal(d.stats().keys, 600 + 26);
      await d.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
});
