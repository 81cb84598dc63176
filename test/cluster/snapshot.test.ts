/**
 * A partition's directory packed and unpacked (src/cluster/engine/snapshot.ts), through the stream and
 * through a real nats-server's object store: the same files with the same bytes come back; a cut
 * stream is refused and leaves the target as it was.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { mkdir, readFile, writeFile, readdir, stat } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tempDir } from '../e2e/harness.js';
import { packDir, unpackDir, uploadPartition, downloadPartition } from '../../src/cluster/engine/snapshot.js';
import { openEngine } from '../../src/cluster/engine/engine.js';
import { startNats } from './nats-server.js';

async function tree(dir: string, rel = ''): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const e of await readdir(path.join(dir, rel), { withFileTypes: true })) {
    const r = path.join(rel, e.name);
    if (e.isDirectory()) for (const [k, v] of await tree(dir, r)) out.set(k, v);
    else out.set(r, (await readFile(path.join(dir, r))).toString('base64'));
  }
  return out;
}

async function sample(dir: string): Promise<void> {
  await mkdir(path.join(dir, 'urlseen', 'b0'), { recursive: true });
  await mkdir(path.join(dir, 'frontier'), { recursive: true });
  await writeFile(path.join(dir, 'manifest.json'), '{"epoch":3}');
  await writeFile(path.join(dir, 'empty.log'), '');
  await writeFile(path.join(dir, 'urlseen', 'b0', 'z.bin'), randomBytes(3_000_001));
  await writeFile(path.join(dir, 'frontier', 'q'), randomBytes(70_000));
}

async function collect(s: ReadableStream<Uint8Array>): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  for await (const c of s as unknown as AsyncIterable<Uint8Array>) out.push(c);
  return out;
}

test('snapshot: pack → unpack gives the same files; a cut stream is refused and the target is untouched', async () => {
  const a = await tempDir('snap-a');
  const b = await tempDir('snap-b');
  await sample(a);
  const chunks = await collect(packDir(a));
  const target = path.join(b, 'p', '0003');
  // re-chunked at odd sizes: the reader must not depend on where chunks end
  const all = Buffer.concat(chunks);
  const rechunk = async function* (n: number): AsyncGenerator<Uint8Array> { for (let i = 0; i < all.length; i += n) yield all.subarray(i, i + n); };
  await unpackDir(rechunk(7), target);
  assert.deepEqual(await tree(target), await tree(a));
  // a stale copy in the way is replaced
  await writeFile(path.join(target, 'stale'), 'x');
  await unpackDir(rechunk(65_536), target);
  assert.deepEqual(await tree(target), await tree(a));
  const cut = async function* (): AsyncGenerator<Uint8Array> { yield all.subarray(0, all.length - 5); };
  await assert.rejects(unpackDir(cut(), target), /malformed/);
  assert.deepEqual(await tree(target), await tree(a), 'the target is as it was');
  assert.equal((await stat(path.join(target, 'empty.log'))).size, 0);
});

test('snapshot: through the object store of a real nats-server', { timeout: 60_000 }, async () => {
  const nats = await startNats();
  const e = await openEngine(nats.url, 'snap', 'n1');
  try {
    const a = await tempDir('snap-os');
    await sample(a);
    const size = await uploadPartition(e, 'p0003.n1.1', a);
    assert.ok(size > 3_000_000);
    const target = path.join(await tempDir('snap-os-b'), 'p', '0003');
    await downloadPartition(e, 'p0003.n1.1', target);
    assert.deepEqual(await tree(target), await tree(a));
    await assert.rejects(downloadPartition(e, 'nope', target), /not in the object store/);
  } finally {
    await e.close();
    await nats.stop();
  }
});
