/**
 * Worker-thread host of one DRUM instance. DRUM's merges use synchronous, sequential file I/O
 * (batch work, thesis IV.3); run on the event loop they would stall sockets for the length of a
 * bucket merge, and a request written late arrives closer to the previous one than the politeness
 * heaps planned. Here they stall only this thread. Protocol: see drum-proxy.ts.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Drum, type DrumOptions, type DrumResult } from '../drum/index.js';
import { BatchWriter, forEachTuple } from './drum-codec.js';

interface HostData {
  dir: string;
  opts: Omit<DrumOptions, 'onResults' | 'merge' | 'io'>;
}

const port = parentPort!;
const { dir, opts } = workerData as HostData;
const acks = new Map<number, () => void>();
let nextChunk = 1;
let lastNeeds = false;

const drum = await Drum.open(dir, {
  ...opts,
  onResults: async (batch: DrumResult[]) => {
    const w = new BatchWriter(Math.max(1024, batch.length * 64));
    for (const r of batch) w.result(r);
    const buf = w.take();
    const id = nextChunk++;
    const acked = new Promise<void>((resolve) => acks.set(id, resolve));
    port.postMessage({ t: 'results', id, buf }, [buf.buffer as ArrayBuffer]);
    await acked;
  },
});

function postState(force = false): void {
  const needs = drum.needsMerge;
  if (force || needs !== lastNeeds) {
    lastNeeds = needs;
    port.postMessage({ t: 'state', needsMerge: needs });
  }
}

port.on('message', (m: { t: string; id?: number; buf?: Uint8Array }) => {
  switch (m.t) {
    case 'tuples':
      forEachTuple(m.buf!, (op, hi, lo, value, aux) => {
        if (op === 'checkUpdate') drum.checkUpdate(hi, lo, value, aux);
        else if (op === 'check') drum.check(hi, lo, aux);
        else drum.update(hi, lo, value!, aux);
      });
      postState();
      break;
    case 'ack':
      acks.get(m.id!)?.();
      acks.delete(m.id!);
      break;
    case 'merge':
    case 'flush':
      void (m.t === 'merge' ? drum.merge() : drum.flush()).then(
        () => {
          postState(true);
          port.postMessage({ t: 'done', id: m.id, stats: statsOf() });
        },
        (e: Error & { code?: string }) => port.postMessage({ t: 'done', id: m.id, error: { message: e.message, code: e.code } }),
      );
      break;
    case 'close':
      void drum.close().then(
        () => port.postMessage({ t: 'done', id: m.id }),
        (e: Error & { code?: string }) => port.postMessage({ t: 'done', id: m.id, error: { message: e.message, code: e.code } }),
      );
      break;
  }
});

function statsOf(): { keys: number; merges: number; k: number; r: number; cacheHitRate?: number } {
  const s = drum.stats();
  return { keys: s.keys, merges: s.merges, k: s.k, r: s.r, cacheHitRate: s.cacheHitRate };
}

port.postMessage({ t: 'opened', stats: statsOf() });
