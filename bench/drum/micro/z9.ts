/**
 * Microbenchmark: the Z pass of one bucket at U = 10^9 density (62.5 M keys, 5-byte gaps)
 * merged with 4.9 M tuples like the bench's.   node --import tsx --max-semi-space-size=8 bench/drum/micro/z9.ts [tree root]
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
const root = process.argv[2] ?? new URL('../../..', import.meta.url).pathname.replace(/\/$/, ''); // repo root, or a tree to compare
const { Drum } = (await import(root + '/src/drum/index.js')) as typeof import('../../../src/drum/index.js');
const dir = path.join(os.tmpdir(), 'drum-micro-z9-' + process.pid); fs.rmSync(dir, { recursive: true, force: true });
const U = 62_500_000;
const mix = (j: number): number => { let x = Math.imul(j ^ 0x5bd1e995, 0x9e3779b1); x ^= x >>> 15; x = Math.imul(x, 0x85ebca6b); return (x ^ (x >>> 13)) >>> 0; };
const hiOf = (j: number): number => Math.floor((j * 268435456) / U) >>> 0;
await Drum.bulkLoad(dir, { buckets: 16, expectedKeys: U * 16 }, (i: number, app: (h: number, l: number) => void) => { if (i === 0) for (let j = 0; j < U; j++) app(hiOf(j), mix(j)); });
let n = 0;
const d = await Drum.open(dir, { buckets: 16, ramBytes: 256 << 20, bucketBytes: 1 << 30, deliver: 'unique', onResultChunk: (c: { count: number }) => { n += c.count; } });
let s = 1;
const rnd = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 4294967296);
for (let i = 0; i < 4_900_000; i++) {
  const u = rnd();
  if (u < 1 / 9) d.checkUpdate((rnd() * 268435456) >>> 0, (rnd() * 4294967296) >>> 0, null, null);
  else { const j = u < 0.5 ? Math.floor(rnd() * U) : Math.floor(rnd() * 50000) * 1250; d.checkUpdate(hiOf(j), mix(j), null, null); }
}
const c0 = process.cpuUsage();
await d.merge();
const c = process.cpuUsage(c0);
const st = d.stats();
console.log(root, 'merge', ((c.user + c.system) / 1000).toFixed(0), 'zPass', st.mergeCpuMs.zPass.toFixed(0), 'sys', st.mergeSysMs.zPass.toFixed(0), 'zBytes/key', st.zBytesPerKey.toFixed(2), 'uniques', n);
await d.close({ flush: false }); fs.rmSync(dir, { recursive: true, force: true });
