/**
 * Microbenchmark: radixSortKeys on 4.9 M keys with 28 varying hi bits (one bucket at
 * R = 256 MiB, k = 16).   node --import tsx bench/drum/micro/rs.ts [tree root]
 */
const root = process.argv[2] ?? new URL('../../..', import.meta.url).pathname.replace(/\/$/, ''); // repo root, or a tree to compare
const { radixSortKeys } = (await import(root + '/src/drum/index.js')) as typeof import('../../../src/drum/index.js');
const n = 4_900_000;
const hi = new Uint32Array(n), lo = new Uint32Array(n);
let s = 1; const r = () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0);
for (let i = 0; i < n; i++) { hi[i] = ((r() >>> 4) | (5 << 28)) >>> 0; lo[i] = r(); }
const u = () => new Uint32Array(n);
const w = { a: u(), b: u(), c: u(), d: u(), e: u(), f: u() };
const ops = new Uint8Array(n);
radixSortKeys(hi, lo, n, w, ops);
const t0 = process.cpuUsage();
for (let k = 0; k < 5; k++) radixSortKeys(hi, lo, n, w, ops);
const t = process.cpuUsage(t0);
console.log(root, ((t.user + t.system) / 5000).toFixed(0), 'ms per 4.9 M keys');
