import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, writeFile, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import {
  writeManifest, readManifest, writePending, readPending, encodePending, decodePending, emptyCounters,
  writeFileAtomic, type CheckpointManifest,
} from '../../src/crawl/checkpoint.js';
import { resolveCrawlConfig } from '../../src/crawl/config.js';
import { encodeLinks, LinkTable } from '../../src/crawl/links-codec.js';

test('manifest round-trips and the write leaves no temp file behind', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dc-ckpt-'));
  assert.equal(await readManifest(dir), null);
  const m: CheckpointManifest = {
    version: 1, epoch: 3, writtenAt: new Date().toISOString(), reason: 'periodic', finished: false,
    config: resolveCrawlConfig({ stateDir: dir }), counters: { ...emptyCounters(), pages: 7, outcomes: { ok: 7 } },
    warc: { file: 'a.warc.gz', offset: 123 }, seedsInjected: true, scopeHosts: ['a.test'], scopePlds: ['a.test'], pending: 0,
  };
  await writeManifest(dir, m);
  assert.deepEqual(await readManifest(dir), JSON.parse(JSON.stringify(m)));
  assert.deepEqual(await readdir(dir), ['manifest.json']);
  await writeFile(path.join(dir, 'manifest.json'), '{"version": 99}');
  await assert.rejects(readManifest(dir), /version 99 is not supported/);
  await writeFile(path.join(dir, 'manifest.json'), '{');
  await assert.rejects(readManifest(dir), (e: { code?: string }) => e.code === 'CRAWL_CHECKPOINT_CORRUPT');
  await writeFileAtomic(path.join(dir, 'x'), 'hello');
  assert.equal(await readFile(path.join(dir, 'x'), 'utf8'), 'hello');
});

test('pending set round-trips (property) and a truncated file is rejected', async () => {
  fc.assert(fc.property(fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 50 }), (recs) => {
    const back = decodePending(encodePending(recs));
    assert.deepEqual(back.map((b) => [...b]), recs.map((b) => [...b]));
  }));
  const enc = encodePending([new Uint8Array([1, 2, 3])]);
  assert.throws(() => decodePending(enc.subarray(0, enc.length - 1)), /truncated/);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dc-pend-'));
  assert.deepEqual(await readPending(dir), []);
  await writePending(dir, [new Uint8Array([9]), new Uint8Array([])]);
  assert.deepEqual((await readPending(dir)).map((b) => [...b]), [[9], []]);
});

test('link table codec round-trips (property)', () => {
  const u32 = fc.nat({ max: 0xffffffff });
  const entry = fc.record({ hi: u32, lo: u32, hostHi: u32, hostLo: u32, pldHi: u32, pldLo: u32, url: fc.webUrl() });
  fc.assert(fc.property(fc.array(entry, { maxLength: 40 }), (links) => {
    const t = new LinkTable(encodeLinks(links));
    assert.equal(t.count, links.length);
    links.forEach((l, i) => {
      assert.equal(t.hi(i), l.hi);
      assert.equal(t.lo(i), l.lo);
      assert.deepEqual(t.entry(i), { ...l });
    });
  }));
});
