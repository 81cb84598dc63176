/**
 * Worker-thread host of the crawl's WarcWriter (src/store); archive-thread.ts is its proxy on the
 * event loop and describes the protocol. Messages run one at a time, in arrival order: a `write`
 * message's groups and calls go to the writer in order (the writer serialises its file operations
 * itself), and only when all of them are done does the next message run — so `sync`, `position`
 * and `close` cover every write sent before them. The first failure is reported once; the proxy
 * then refuses every later call.
 */
import { parentPort } from 'node:worker_threads';
import { WarcWriter } from '../../store/index.js';
import { PackReader } from './archive-pack.js';
import { announceThreadRole } from '../thread-role.js';
import type { ArchiveCall, FromArchive, ToArchive } from './archive-thread.js';

const port = parentPort!;

let writer: WarcWriter | null = null;
let failed = false;
let chain: Promise<void> = Promise.resolve();

function reportFailure(e: unknown): void {
  if (failed) return;
  failed = true;
  const err = e as Error & { code?: string };
  // The writer's own codes pass; a file-system error (ENOSPC, EACCES, ENOENT…) becomes CRAWL_STORE_WRITE.
  const crawl = typeof err.code === 'string' && err.code.startsWith('CRAWL_');
  const message = crawl ? err.message : `cannot write the WARC output: ${err.message ?? String(e)}`;
  port.postMessage({ t: 'failed', error: { message, code: crawl ? err.code : 'CRAWL_STORE_WRITE' } } satisfies FromArchive);
}

function runCall(w: WarcWriter, c: ArchiveCall): Promise<unknown> {
  switch (c.k) {
    case 'x': return w.writeExchange(c.x);
    case 'r': return w.writeRevisit(c.x);
    case 'd': return w.writeDns(c.x);
    case 'g': return w.appendEncoded(c.g, c.index);
  }
}

async function handle(m: ToArchive): Promise<void> {
  if (m.t === 'open') {
    try {
      writer = await WarcWriter.open(m.opts);
      port.postMessage({ t: 'opened', encode: writer.encodeOptions, position: writer.position() } satisfies FromArchive);
    } catch (e) {
      reportFailure(e);
    }
    return;
  }
  const w = writer;
  if (w === null || failed) return;
  try {
    if (m.t === 'write') {
      const writes: Promise<unknown>[] = [];
      const packed = m.pack === null ? null : new PackReader(m.pack, m.owned);
      let g = 0;
      for (const [i, c] of m.calls.entries()) {
        for (; g < m.callAt[i]!; g++) writes.push(packed!.append(w));
        writes.push(runCall(w, c));
      }
      for (; g < m.groups; g++) writes.push(packed!.append(w));
      await Promise.all(writes);
      port.postMessage({ t: 'written', bytes: m.bytes } satisfies FromArchive);
      return;
    }
    if (m.t === 'sync') await w.sync();
    if (m.t === 'close') await w.close();
    port.postMessage({ t: 'done', id: m.id, position: w.position() } satisfies FromArchive);
  } catch (e) {
    reportFailure(e);
  }
}

announceThreadRole('archive');
port.on('message', (m: ToArchive) => {
  chain = chain.then(() => handle(m));
});
