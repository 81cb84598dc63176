/**
 * Microbenchmark: DRUM's delivery phase, onResults (one object per result) against
 * onResultChunk (struct of arrays). One bucket, 5 M tuples with 110-byte aux, ~670 K unique.
 *   node --import tsx --max-semi-space-size=8 bench/drum/micro/deliver.ts <noop|chunk> [tree root]
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
const root = process.argv[3] ?? new URL('../../..', import.meta.url).pathname.replace(/\/$/, ''); // repo root, or a tree to compare
const { Drum } = (await import(root + '/src/drum/index.js')) as typeof import('../../../src/drum/index.js');
const dir = path.join(os.tmpdir(), 'drum-micro-deliver-' + process.pid); fs.rmSync(dir, { recursive: true, force: true });
const mode = process.argv[2] ?? 'noop';
let n = 0;
const d = await Drum.open(dir, mode === 'chunk' ? { buckets: 1, ramBytes: 256 << 20, bucketBytes: 1 << 30, deliver: 'unique', onResultChunk: (c) => { n += c.count; } } : { buckets: 1, ramBytes: 256 << 20, bucketBytes: 1 << 30, deliver: 'unique', onResults: (b) => { n += b.length; } });
const aux = new Uint8Array(110).fill(65);
let s = 1;
const N = 5_000_000;
for (let i = 0; i < N; i++) { s = (Math.imul(s, 1103515245) + 12345) >>> 0; const u = (s & 7) === 0 ? i : i % 50000; d.checkUpdate((u * 2654435761) >>> 0, u, null, aux); }
const c0 = process.cpuUsage();
await d.merge();
const c = process.cpuUsage(c0);
const st = d.stats();
console.log(mode, 'uniques', n, 'merge cpu ms', ((c.user + c.system) / 1000).toFixed(0), JSON.stringify(st.mergeCpuMs), JSON.stringify(st.mergeSysMs));
await d.close({ flush: false }); fs.rmSync(dir, { recursive: true, force: true });
