/**
 * zstd WARC with page workers (`--page-workers on`): each worker thread encodes its pages' records
 * with the encode options it got at start, the dictionary slot among them, and switches to the
 * dictionary the archive thread trains from the first records, without a message (a shared slot:
 * src/store/zstd-dict.ts). Judged from the outside: every page simweb served is in the WARC, every
 * record's digests recompute, every file scans whole through the project's scanner, and the files
 * after the training begin with the dictionary frame, every frame in them naming it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readdirSync, readFileSync } from 'node:fs';
import zstdBinding from 'zstd-napi/binding.js';
import { readWarcDictionary, scanWarc, dictionaryId, zstdFrameHeader } from '../../src/store/index.js';
import { cli, crawlCommand, crawlSettings, forkSimweb, tempDir } from './harness.js';
import { readWarcDir, warcProblems } from './warc-read.js';

test('zstd WARC with page workers: the trained dictionary reaches every worker; every page archived, every file whole', { timeout: 240_000 }, async () => {
  // ~1,400 pages: enough records (several MiB) for the 1 MiB training sample
  const web = await forkSimweb('tiny', { plds: 8, hostsPerPldMean: 2.5, hostsPerPldMax: 4, pagesPerHostMin: 50, pagesPerHostMax: 90, ips: 6, linksPerPageMean: 12 });
  try {
    const dir = await tempDir('e2e-zstd-pw');
    const out = path.join(dir, 'warc');
    const run = cli(crawlCommand(crawlSettings(web, {
      stateDir: path.join(dir, 'state'), outDir: out, hostDelayMs: 20, ipDelayMs: 5, minHostDelayMs: 20, minIpDelayMs: 5,
      workers: 2, pageWorkers: 'on', warcCompression: 'zstd', warcZstdLevel: 1,
    })));
    assert.equal(await run.done, 0, run.out());
    const r = await web.report({ hostMs: 20, ipMs: 5 });
    const recs = await readWarcDir(out);
    assert.deepEqual(warcProblems(recs), []);
    const captured = new Set(recs.filter((x) => x.type === 'response' || x.type === 'revisit').map((x) => x.uri!));
    for (const u of new Set(r.pageFetches)) if (r.statusByUrl[u]! < 500) assert.ok(captured.has(u), `${u} is in the WARC`);
    const files = readdirSync(out).filter((f) => f.endsWith('.warc.zst')).sort().map((f) => path.join(out, f));
    let withDict = 0;
    for (const f of files) {
      const sc = await scanWarc(f, { collect: true });
      assert.deepEqual([sc.error, sc.validLength], [undefined, sc.fileLength], f);
      const dict = await readWarcDictionary(f);
      if (dict === null) continue;
      withDict++;
      const b = readFileSync(f);
      for (const rec of sc.list!) assert.equal(zstdFrameHeader(b, rec.offset)!.dictId, dictionaryId(dict));
      assert.ok(zstdBinding.getDictIDFromFrame(b.subarray(sc.list![0]!.offset)) === dictionaryId(dict));
    }
    assert.ok(withDict > 0, `a dictionary was trained (${files.length} files, ${recs.length} records)`);
  } finally {
    await web.close();
  }
});
