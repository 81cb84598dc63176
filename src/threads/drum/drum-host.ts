/**
 * Worker-thread host of DRUM instances. DRUM's merges use synchronous, sequential file I/O
 * (batch work, thesis IV.3); run on the event loop they would stall sockets for the length of a
 * bucket merge, and a request written late arrives closer to the previous one than the politeness
 * heaps planned. Here they stall only this thread. Protocol: see drum-proxy.ts.
 *
 * One thread may host several instances (DrumThread in drum-proxy.ts: ContentSeen and STAR share
 * one): each talks to its proxy over its own MessagePort, sent in a `{ t: 'host' }` message on the
 * parent port. One isolate for both means the hot code (DRUM's merge, sort, codec) is JIT-compiled
 * once, not once per thread, and one heap is collected (docs/performance.md, "Threads"). The price:
 * the instances' merges run one after another, never side by side.
 */
import { parentPort, type MessagePort } from 'node:worker_threads';
import { Drum, type DrumOptions, type DrumResultChunk } from '../../drum/index.js';
// star-drum.js directly, not the frontier's index: this thread needs only STAR's store.
import { DrumPldStore, type DrumPldStoreOptions } from '../../frontier/star/star-drum.js';
import { encodeResultChunk, forEachTuple } from './drum-codec.js';
import { announceThreadRole } from '../thread-role.js';

export interface HostData {
  dir: string;
  opts: Omit<DrumOptions, 'onResults' | 'merge' | 'io' | 'beforeCommit'>;
  /** ask the proxy (one round trip) before each bucket commit: DrumOptions.beforeCommit */
  beforeCommit?: boolean;
  /** 'star': host STAR's PLDedges + PLDindegree (DrumPldStore) instead of one DRUM */
  kind?: 'drum' | 'star';
  starOpts?: DrumPldStoreOptions;
}

/** What a host answers when it failed to open (the proxy rejects its open with it). */
function openFailed(port: MessagePort, e: Error & { code?: string }): void {
  port.postMessage({ t: 'openFailed', error: { message: e.message, code: e.code } });
}

async function host(port: MessagePort, data: HostData): Promise<void> {
  if (data.kind === 'star') await hostStar(port, data);
  else await hostDrum(port, data);
}

// Each instance arrives as { t: 'host', port, data } (DrumThread.host in drum-proxy.ts).
// (With DRUMCRAWL_THREAD_ROLES set, the thread names what it hosts for a bench's CPU accounting.)
parentPort!.on('message', (m: { t: string; port: MessagePort; data: HostData }) => {
  if (m.t !== 'host') return;
  announceThreadRole(`drum:${m.data.dir.split(/[\\/]/).pop()}`);
  host(m.port, m.data).catch((e: Error) => openFailed(m.port, e));
});

/**
 * STAR's two DRUMs (src/frontier/star/star-drum.ts) in this thread: each call of the PldStore interface
 * is one message, answered with typed arrays (transferred). Calls run one at a time, in arrival
 * order (DrumPldStore routes results through per-call sinks, so two calls must not overlap).
 */
async function hostStar(port: MessagePort, { dir, starOpts }: HostData): Promise<void> {
  const store = await DrumPldStore.open(dir, starOpts);
  let chain: Promise<void> = Promise.resolve();
  type StarMsg = { t: string; id: number; op: 'addEdges' | 'admit' | 'indegrees' | 'commit' | 'close'; buf?: Uint32Array; count?: number };
  const run = async (m: StarMsg): Promise<void> => {
    const n = m.count ?? 0;
    switch (m.op) {
      case 'addEdges': {
        let deg = new Float64Array(256);
        let k = 0;
        await store.addEdges(m.buf!, n, (from, to, hi, lo) => {
          if (k + 4 > deg.length) {
            const nd = new Float64Array(deg.length * 2);
            nd.set(deg);
            deg = nd;
          }
          deg[k++] = from;
          deg[k++] = to;
          deg[k++] = hi;
          deg[k++] = lo;
        });
        const out = deg.slice(0, k);
        port.postMessage({ t: 'done', id: m.id, degrees: out }, [out.buffer]);
        break;
      }
      case 'admit': {
        const outD = new Float64Array(n);
        const outP = new Float64Array(n);
        await store.admit(m.buf!, n, outD, outP);
        port.postMessage({ t: 'done', id: m.id, outD, outP }, [outD.buffer, outP.buffer]);
        break;
      }
      case 'indegrees': {
        const outD = new Float64Array(n);
        await store.indegrees(m.buf!, n, outD);
        port.postMessage({ t: 'done', id: m.id, outD }, [outD.buffer]);
        break;
      }
      case 'commit':
        await store.commit();
        port.postMessage({ t: 'done', id: m.id });
        break;
      case 'close':
        await store.close();
        port.postMessage({ t: 'done', id: m.id });
        break;
    }
  };
  port.on('message', (m: StarMsg) => {
    chain = chain.then(() => run(m)).catch((e: Error & { code?: string }) => {
      port.postMessage({ t: 'done', id: m.id, error: { message: e.message, code: e.code } });
    });
  });
  port.postMessage({ t: 'opened', stats: { keys: 0, merges: 0, k: 0, r: 0 } });
}

async function hostDrum(port: MessagePort, { dir, opts, beforeCommit }: HostData): Promise<void> {
  const acks = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  let nextChunk = 1;
  let lastNeeds = false;
  const acked = (id: number): Promise<void> => new Promise<void>((resolve, reject) => acks.set(id, { resolve, reject }));

  const drum = await Drum.open(dir, {
    ...opts,
    // Struct-of-arrays chunks (DrumOptions.onResultChunk): encoded straight into the batch
    // for the proxy, no DrumResult object or aux view per result (URLseen: ~25 per page).
    onResultChunk: async (c: DrumResultChunk) => {
      const buf = encodeResultChunk(c);
      const id = nextChunk++;
      const done = acked(id);
      port.postMessage({ t: 'results', id, buf }, [buf.buffer as ArrayBuffer]);
      await done;
    },
    // After a bucket's last chunk, before its commit: the consumer makes what it placed durable
    // (a rejection reaches DRUM, which then commits nothing of this bucket).
    ...(beforeCommit === true
      ? {
        beforeCommit: async (bucket: number) => {
          const id = nextChunk++;
          const done = acked(id);
          port.postMessage({ t: 'beforeCommit', id, bucket });
          await done;
        },
      }
      : {}),
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
        // Read (DRUM copied every tuple into its buffers): the buffer goes back to be written again
        port.postMessage({ t: 'spare', buf: m.buf! }, [m.buf!.buffer as ArrayBuffer]);
        postState();
        break;
      case 'ack': {
        const a = acks.get(m.id!);
        acks.delete(m.id!);
        const err = (m as { error?: { message: string; code?: string } }).error;
        if (err !== undefined) a?.reject(Object.assign(new Error(err.message), { code: err.code }));
        else a?.resolve();
        break;
      }
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
      case 'persist':
        // Between two awaits of a merge under way, if any: the bucket being merged has its own files.
        void drum.persist().then(
          () => port.postMessage({ t: 'done', id: m.id }),
          (e: Error & { code?: string }) => port.postMessage({ t: 'done', id: m.id, error: { message: e.message, code: e.code } }),
        );
        break;
      case 'close':
        void drum.close().then(
          () => port.postMessage({ t: 'done', id: m.id }),
          (e: Error & { code?: string }) => port.postMessage({ t: 'done', id: m.id, error: { message: e.message, code: e.code } }),
        );
        break;
      default:
        // A request this host does not know (a worker bundle older than the main thread's code)
        // fails its call, rather than leaving it waiting for ever.
        if (m.id !== undefined) port.postMessage({ t: 'done', id: m.id, error: { message: `DRUM host: unknown request '${m.t}'`, code: 'CRAWL_DRUM_ERROR' } });
    }
  });

  function statsOf(): { keys: number; merges: number; k: number; r: number; cacheHitRate?: number; tuples: number; bytesRead: number; bytesWritten: number } {
    const s = drum.stats();
    const io = s.io.total();
    return { keys: s.keys, merges: s.merges, k: s.k, r: s.r, cacheHitRate: s.cacheHitRate, tuples: s.merged, bytesRead: io.bytesRead, bytesWritten: io.bytesWritten };
  }

  port.postMessage({ t: 'opened', stats: statsOf() });
}
