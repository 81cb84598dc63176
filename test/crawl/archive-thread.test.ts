/**
 * The WARC writer in its own thread (src/threads/archive/archive-thread.ts) against the model: the same calls
 * made on a WarcWriter in this thread. Both directories must hold the same records in the same
 * order (record ids, dates and the warcinfo records aside, which are fresh per writer) and the same
 * CDXJ lines, each pointing at its record; position() must name the end of what was written; a
 * failure in the thread must reject the next sync; calls after close() are refused.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import type { Worker } from 'node:worker_threads';
import { ArchiveThread } from '../../src/threads/archive/archive-thread.js';
import {
  WarcWriter, cdxjPathFor, encodeExchangeRecords, readCdxj, type CdxSource, type WarcCompression,
} from '../../src/store/index.js';
import { isCrawlError } from '../../src/errors.js';
import { readWarc } from '../store/helpers.js';

const enc = new TextEncoder();

type Op =
  | { k: 'g'; url: string; body: string; status: number; withHead: boolean; owned: number }
  | { k: 'x'; url: string; body: string }
  | { k: 'r'; url: string; refersTo: string }
  | { k: 'd'; host: string; address: string };

const path_ = fc.stringMatching(/^[a-z0-9/]{0,30}$/);
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ k: fc.constant('g' as const), url: path_.map((p) => `http://g.test/${p}`), body: fc.string({ maxLength: 3000 }), status: fc.constantFrom(200, 404, 301), withHead: fc.boolean(), owned: fc.constantFrom(-1, 0, 1, 37) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('x' as const), url: path_.map((p) => `http://x.test/${p}`), body: fc.string({ maxLength: 500 }) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('r' as const), url: path_.map((p) => `http://r.test/${p}`), refersTo: path_.map((p) => `http://g.test/${p}`) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('d' as const), host: fc.stringMatching(/^[a-z]{1,10}\.test$/), address: fc.ipV4() }) },
);

const DATE = new Date(Date.UTC(2026, 10, 27, 12, 0, 0));
const head = (status: number): Uint8Array => enc.encode(`HTTP/1.1 ${status} X\r\nContent-Type: text/html\r\n\r\n`);
const req = (url: string): Uint8Array => enc.encode(`GET ${new URL(url).pathname} HTTP/1.1\r\nHost: ${new URL(url).host}\r\n\r\n`);

interface Writer {
  appendEncoded(g: ReturnType<typeof encodeExchangeRecords> & { owned?: boolean }, index: CdxSource): Promise<unknown>;
  writeExchange(x: Parameters<WarcWriter['writeExchange']>[0]): Promise<unknown>;
  writeRevisit(x: Parameters<WarcWriter['writeRevisit']>[0]): Promise<unknown>;
  writeDns(x: Parameters<WarcWriter['writeDns']>[0]): Promise<unknown>;
}

async function play(w: Writer, ops: Op[], compression: WarcCompression): Promise<void> {
  for (const o of ops) {
    if (o.k === 'g') {
      // a page's group, encoded beforehand as a parse or page worker does
      const x = { url: o.url, ip: '127.0.0.2', date: DATE, requestHead: req(o.url), responseHead: head(o.status), body: enc.encode(o.body) };
      const g = encodeExchangeRecords(x, { compression });
      // owned ≥ 0: the group in a buffer of its own after `owned` other bytes (a page worker's
      // ParseOutput: its link table first), which the thread takes by transfer instead of a copy
      const own = o.owned < 0 ? g : (() => {
        const b = new Uint8Array(o.owned + g.data.byteLength).fill(0xee);
        b.set(g.data, o.owned);
        return { ...g, data: b.subarray(o.owned), owned: true };
      })();
      await w.appendEncoded(own, { url: o.url, date: DATE, kind: 'response', responseHead: o.withHead ? x.responseHead : null });
    } else if (o.k === 'x') {
      await w.writeExchange({ url: o.url, ip: '127.0.0.3', date: DATE, requestHead: req(o.url), responseHead: head(200), body: enc.encode(o.body) });
    } else if (o.k === 'r') {
      await w.writeRevisit({ url: o.url, ip: '127.0.0.4', date: DATE, requestHead: req(o.url), responseHead: head(200), payloadDigest: 'sha1:AAAA', refersToUri: o.refersTo, refersToDate: DATE });
    } else {
      await w.writeDns({ host: o.host, date: DATE, server: '127.0.0.53', records: [{ address: o.address, ttl: 60 }] });
    }
  }
}

/** Every record of the directory's WARC files in order, without the fields fresh per writer. */
async function records(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const f of readdirSync(dir).filter((n) => /\.warc(\.gz)?$/.test(n)).sort()) {
    for (const r of await readWarc(path.join(dir, f))) {
      if (r.type === 'warcinfo') continue;
      const h = [...r.headers].filter(([k]) => !['warc-record-id', 'warc-warcinfo-id', 'warc-concurrent-to', 'warc-block-digest'].includes(k));
      // the request/metadata block is the same; a response's block too (its head and body)
      out.push(`${r.type} ${JSON.stringify(h)} ${Buffer.from(r.block).toString('base64')}`);
    }
  }
  return out;
}

/** CDXJ lines of every file, with the file's ordinal in place of its (time-stamped) name. */
async function cdxj(dir: string): Promise<string[]> {
  const files = readdirSync(dir).filter((n) => /\.warc(\.gz)?$/.test(n)).sort();
  const out: string[] = [];
  for (const [i, f] of files.entries()) {
    for (const l of await readCdxj(cdxjPathFor(path.join(dir, f)))) {
      assert.equal(l.json.filename, f);
      out.push(`${i} ${l.key} ${l.timestamp} ${l.json.url} ${l.json.status ?? ''} ${l.json.mime ?? ''} ${l.json.offset} ${l.json.length}`);
    }
  }
  return out;
}

test('ArchiveThread: the same records, files and CDXJ lines as a WarcWriter given the same calls (rotation included)', async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'drumcrawl-archive-'));
  let run = 0;
  try {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40 }), fc.constantFrom<WarcCompression>('none', 'gzip'), async (ops, compression) => {
        const a = path.join(root, `${run}-thread`);
        const b = path.join(root, `${run++}-model`);
        // uncompressed, records of the two writers have equal sizes (UUIDs of one length): equal rotations
        const opts = { compression, maxFileBytes: 6000, prefix: 't' };
        const t = await ArchiveThread.open({ dir: a, ...opts });
        const m = await WarcWriter.open({ dir: b, ...opts });
        await play(t, ops, compression);
        await play(m, ops, compression);
        const pos = await t.position();
        await t.close();
        await m.close();
        assert.deepEqual(await records(a), await records(b));
        if (compression === 'none') {
          assert.deepEqual(await cdxj(a), await cdxj(b));
          assert.equal(readdirSync(a).length, readdirSync(b).length);
        }
        // position(): the current file and its end, which close() did not move
        assert.equal(pos.offset, statSync(pos.file).size);
      }),
      { numRuns: 20 },
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('ArchiveThread: sync() puts every earlier call on disk; backpressure lets 48 MiB through without a stall', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'drumcrawl-archive-'));
  try {
    const t = await ArchiveThread.open({ dir, compression: 'none', cdxj: false });
    const body = new Uint8Array(1 << 20).fill(97);
    const g = encodeExchangeRecords({ url: 'http://big.test/', ip: '127.0.0.2', date: DATE, requestHead: req('http://big.test/'), responseHead: head(200), body }, { compression: 'none' });
    for (let i = 0; i < 48; i++) await t.appendEncoded(g, { url: 'http://big.test/', date: DATE, kind: 'response', responseHead: null });
    await t.sync();
    const pos = await t.position();
    assert.equal(statSync(pos.file).size, pos.offset, 'synced: the file holds everything written');
    assert.ok(pos.offset > 48 * (1 << 20));
    await t.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('ArchiveThread: a write that fails in the thread rejects the next sync with its code; calls after close are refused', async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'drumcrawl-archive-'));
  try {
    const dir = path.join(root, 'w');
    const t = await ArchiveThread.open({ dir, compression: 'none', maxFileBytes: 2000, cdxj: false });
    rmSync(dir, { recursive: true, force: true }); // the next rotation cannot create its file
    const x = { url: 'http://f.test/', ip: '127.0.0.2', date: DATE, requestHead: req('http://f.test/'), responseHead: head(200), body: new Uint8Array(3000) };
    await t.writeExchange(x);
    await t.writeExchange(x);
    await assert.rejects(t.sync(), (e: unknown) => isCrawlError(e, 'CRAWL_STORE_WRITE') && /ENOENT|no such file/.test(e.message));
    await assert.rejects(t.writeExchange(x), (e: unknown) => isCrawlError(e, 'CRAWL_STORE_WRITE'));
    await t.close();

    const u = await ArchiveThread.open({ dir: path.join(root, 'u'), compression: 'gzip' });
    await u.close();
    await assert.rejects(u.writeDns({ host: 'a.test', date: DATE, server: '127.0.0.53', records: [] }), (e: unknown) => isCrawlError(e, 'CRAWL_STORE_CLOSED'));
    // a directory that cannot be made: open fails cleanly, the thread ends
    await assert.rejects(ArchiveThread.open({ dir: path.join(root, 'u', 'nope', '\0') }), (e: unknown) => isCrawlError(e, 'CRAWL_STORE_WRITE'));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('ArchiveThread: the thread dying under a crawl fails every later call with CRAWL_ARCHIVE_WORKER_EXIT', { timeout: 600_000 }, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'drumcrawl-archive-'));
  try {
    const t = await ArchiveThread.open({ dir, compression: 'gzip' });
    await t.writeDns({ host: 'a.test', date: DATE, server: '127.0.0.53', records: [{ address: '127.0.0.9', ttl: 60 }] });
    await t.sync();
    // as an out-of-memory kill or a native crash ends it: from outside, not through close()
    await (t as unknown as { worker: Worker }).worker.terminate();
    const dead = (e: unknown): boolean => isCrawlError(e, 'CRAWL_ARCHIVE_WORKER_EXIT');
    await assert.rejects(t.sync(), dead);
    await assert.rejects(t.writeDns({ host: 'b.test', date: DATE, server: '127.0.0.53', records: [] }), dead);
    await assert.rejects(t.position(), dead);
    await t.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
