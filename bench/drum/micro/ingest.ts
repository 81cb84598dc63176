/**
 * Microbenchmark: CPU per ingested tuple (checkUpdate with a 110-byte aux into 16
 * buckets, no merge).   node --import tsx --max-semi-space-size=8 bench/drum/micro/ingest.ts [tree root]
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
const root = process.argv[2] ?? new URL('../../..', import.meta.url).pathname.replace(/\/$/, ''); // repo root, or a tree to compare
const { Drum } = (await import(root + '/src/drum/index.js')) as typeof import('../../../src/drum/index.js');
const dir = path.join(os.tmpdir(), 'drum-micro-ingest-' + process.pid); fs.rmSync(dir, { recursive: true, force: true });
const d = await Drum.open(dir, { buckets: 16, ramBytes: 256 << 20, bucketBytes: 1 << 30, deliver: 'unique', onResults: () => undefined });
const auxPool: Uint8Array[] = [];
for (let i = 0; i < 4096; i++) auxPool.push(new TextEncoder().encode(`http://www.host${i % 977}.example.com/path/${i}/${'x'.repeat(110)}`.slice(0, 110)));
const N = 10_000_000;
const keys = new Uint32Array(8192);
let s = 1;
for (let i = 0; i < keys.length; i++) { s = (Math.imul(s, 1103515245) + 12345) >>> 0; keys[i] = s; }
const c0 = process.cpuUsage();
for (let i = 0; i < N; i++) d.checkUpdate(keys[i & 8191]!, i, null, auxPool[i & 4095]!);
const c = process.cpuUsage(c0);
console.log(root, 'ns/tuple', ((c.user + c.system) * 1000 / N).toFixed(1), 'user', (c.user * 1000 / N).toFixed(1), 'sys', (c.system * 1000 / N).toFixed(1));
await d.close({ flush: false }); fs.rmSync(dir, { recursive: true, force: true });
