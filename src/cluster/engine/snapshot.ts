/**
 * A partition's state directory on its way between nodes (docs/cluster.md, "Moves"): the old
 * owner, its partition stopped and checkpointed, packs the directory into the crawl's object store
 * (JetStream object store `dc_<crawl>_parts`, chunked, checksummed by the server) and releases the
 * lease naming the object; the new owner takes the lease, unpacks the object into its own
 * `<state>/p/<NNNN>` and resumes the partition there like any moved crawl state (recovery.ts
 * relocate). Nothing but the one directory moves: the WARC files stay where they were written.
 *
 * Format (streamed both ways, RAM: one file chunk at a time):
 *   per file:  u32 pathLen | path (UTF-8, relative, '/'-separated) | f64 size | size bytes
 *   end:       u32 0
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, rm, stat, rename } from 'node:fs/promises';
import path from 'node:path';
import { once } from 'node:events';
import { CrawlError } from '../../errors.js';
import type { Engine } from './engine.js';

/** Every regular file under dir, relative paths, sorted. */
async function files(dir: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of (await readdir(path.join(dir, rel), { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const r = rel === '' ? e.name : `${rel}/${e.name}`;
    if (e.isDirectory()) out.push(...(await files(dir, r)));
    else if (e.isFile()) out.push(r);
  }
  return out;
}

function header(rel: string, size: number): Uint8Array {
  const p = new TextEncoder().encode(rel);
  const h = new Uint8Array(4 + p.byteLength + 8);
  const dv = new DataView(h.buffer);
  dv.setUint32(0, p.byteLength, true);
  h.set(p, 4);
  dv.setFloat64(4 + p.byteLength, size, true);
  return h;
}

/** The directory as a stream of the format above. */
export function packDir(dir: string): ReadableStream<Uint8Array> {
  let list: string[] | null = null;
  let i = 0;
  let cur: AsyncIterator<Buffer> | null = null;
  return new ReadableStream<Uint8Array>({
    async pull(ctl) {
      list ??= await files(dir);
      for (;;) {
        if (cur !== null) {
          const r = await cur.next();
          if (!r.done) {
            ctl.enqueue(new Uint8Array(r.value.buffer, r.value.byteOffset, r.value.byteLength));
            return;
          }
          cur = null;
        }
        if (i >= list.length) {
          ctl.enqueue(new Uint8Array(4));
          ctl.close();
          return;
        }
        const rel = list[i++]!;
        const full = path.join(dir, ...rel.split('/'));
        const size = (await stat(full)).size;
        ctl.enqueue(header(rel, size));
        // The file is read up to the size its header announced (it does not change: the partition is closed).
        if (size > 0) cur = createReadStream(full, { start: 0, end: size - 1, highWaterMark: 1 << 20 })[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
      }
    },
  });
}

/** Unpacks a stream of the format into `dir` (made new: written beside it, then renamed into place). */
export async function unpackDir(src: AsyncIterable<Uint8Array>, dir: string): Promise<void> {
  const tmp = `${dir}.incoming`;
  await rm(tmp, { recursive: true, force: true });
  await mkdir(tmp, { recursive: true });
  let buf: Uint8Array = new Uint8Array(0);
  let need: { rel: string; left: number; out: ReturnType<typeof createWriteStream> } | null = null;
  let ended = false;
  const bad = (why: string): CrawlError => new CrawlError('CRAWL_CLUSTER_SNAPSHOT', `partition snapshot for ${dir} is malformed: ${why}`);
  for await (const chunk of src) {
    buf = buf.byteLength === 0 ? chunk : concat(buf, chunk);
    for (;;) {
      if (need !== null) {
        if (buf.byteLength === 0) break;
        const n = Math.min(need.left, buf.byteLength);
        if (!need.out.write(buf.subarray(0, n))) await once(need.out, 'drain');
        buf = buf.subarray(n);
        need.left -= n;
        if (need.left === 0) {
          need.out.end();
          await once(need.out, 'finish');
          need = null;
        }
        continue;
      }
      if (ended) {
        if (buf.byteLength > 0) throw bad('bytes after the end');
        break;
      }
      if (buf.byteLength < 4) break;
      const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
      const pl = dv.getUint32(0, true);
      if (pl === 0) {
        ended = true;
        buf = buf.subarray(4);
        continue;
      }
      if (buf.byteLength < 4 + pl + 8) break;
      const rel = new TextDecoder().decode(buf.subarray(4, 4 + pl));
      const size = dv.getFloat64(4 + pl, true);
      if (rel.split('/').some((s) => s === '' || s === '.' || s === '..') || path.isAbsolute(rel)) throw bad(`path ${rel}`);
      if (!(size >= 0 && Number.isInteger(size))) throw bad(`size ${size}`);
      buf = buf.subarray(4 + pl + 8);
      const full = path.join(tmp, ...rel.split('/'));
      await mkdir(path.dirname(full), { recursive: true });
      const out = createWriteStream(full);
      if (size === 0) {
        out.end();
        await once(out, 'finish');
      } else need = { rel, left: size, out };
    }
  }
  if (!ended || need !== null) throw bad('truncated');
  await rm(dir, { recursive: true, force: true });
  await rename(tmp, dir);
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a);
  out.set(b, a.byteLength);
  return out;
}

/** Packs `dir` into the object store under `name`; returns its size in bytes. */
export async function uploadPartition(e: Engine, name: string, dir: string): Promise<number> {
  const os = await e.objects();
  const info = await os.put({ name }, packDir(dir));
  return info.size;
}

/** Unpacks the object `name` into `dir`. */
export async function downloadPartition(e: Engine, name: string, dir: string): Promise<void> {
  const os = await e.objects();
  const r = await os.get(name);
  if (r === null) throw new CrawlError('CRAWL_CLUSTER_SNAPSHOT', `partition snapshot ${name} is not in the object store`);
  await unpackDir(r.data as unknown as AsyncIterable<Uint8Array>, dir);
  const err = await r.error;
  if (err !== null && err !== undefined) throw new CrawlError('CRAWL_CLUSTER_SNAPSHOT', `partition snapshot ${name}: ${err.message}`, { cause: err });
}

export async function deleteSnapshot(e: Engine, name: string): Promise<void> {
  const os = await e.objects();
  await os.delete(name).catch(() => undefined);
}
