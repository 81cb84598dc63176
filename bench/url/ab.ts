/**
 * A/B of the `full` per-link work between two src/url trees in ONE process, interleaved round by
 * round so that both see the same machine state (the shared machine's speed drifts by 1.5x between
 * minutes, which makes separate runs incomparable).
 *
 *   node --import tsx bench/url/ab.ts /path/to/other/tree [--rounds 21] [--cons-links] [--write]
 *
 * The other tree is e.g. `git archive <commit> src | tar -x -C /tmp/old` (with node_modules linked).
 * Prints JSON: per-tree median URLs/CPU-s and the median of per-round ratios (this tree / other);
 * `--write` also stores it as bench/results/url-ab.json. `--label x` names the other tree there.
 */
import os from 'node:os';
import path from 'node:path';
import { writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { LINKS_PER_PAGE, makeStream } from './stream.js';

const other = process.argv[2];
if (other === undefined || other.startsWith('--')) throw new Error('usage: ab.ts <other tree> [--rounds n] [--cons-links]');
const ri = process.argv.indexOf('--rounds');
const ROUNDS = ri >= 0 ? Number(process.argv[ri + 1]) : 21;
const CONS = process.argv.includes('--cons-links');
const WRITE = process.argv.includes('--write');
const li = process.argv.indexOf('--label');
const LABEL = li >= 0 ? process.argv[li + 1]! : other;
const loadBefore = os.loadavg();

type Url = typeof import('../../src/url/index.js');
const trees: [string, Url][] = [
  ['this', await import('../../src/url/index.js')],
  ['other', (await import(pathToFileURL(path.resolve(other, 'src/url/index.ts')).href)) as Url],
];

const pages = makeStream(1000, CONS);
const TOTAL = pages.length * LINKS_PER_PAGE;
const out = new Uint32Array(2);
let sink = 0;
const keys = new Uint32Array(2 * LINKS_PER_PAGE);
const urls: string[] = [];
/** `full` as bench/url/run.ts measures it: a page's URL keys together, when the tree has the batch. */
function fullBatch(u: Url): void {
  for (const p of pages) {
    const r = new u.LinkResolver(p.base);
    urls.length = 0;
    for (const l of p.links) {
      const x = r.resolve(l);
      if (x === null) continue;
      const pld = u.registrableDomain(r.lastHost);
      urls.push(x);
      sink += pld === null ? 0 : pld.length;
    }
    u.fingerprintManyInto(urls, keys, 0);
    sink += keys[1]!;
  }
}
/** Per-link keys (fingerprintInto per URL): runs on any tree. */
function full(u: Url): void {
  for (const p of pages) {
    const r = new u.LinkResolver(p.base);
    for (const l of p.links) {
      const x = r.resolve(l);
      if (x === null) continue;
      const pld = u.registrableDomain(r.lastHost);
      u.fingerprintInto(x, out, 0);
      sink += out[1]! + (pld === null ? 0 : pld.length);
    }
  }
}
// Contenders: each tree with per-link keys, and this tree with the batch (if it has one).
const runs: [string, () => void][] = trees.map(([name, u]) => [name, () => full(u)] as [string, () => void]);
if (typeof trees[0]![1].fingerprintManyInto === 'function') runs.push(['thisBatch', () => fullBatch(trees[0]![1])]);
for (const [, f] of runs) { f(); f(); }
const rates: Record<string, number[]> = {};
const ratios: Record<string, number[]> = {};
for (let r = 0; r < ROUNDS; r++) {
  const order = r % 2 === 0 ? runs : [...runs].reverse();
  const row: Record<string, number> = {};
  for (const [name, f] of order) {
    const c0 = process.cpuUsage();
    f();
    const c = process.cpuUsage(c0);
    row[name] = TOTAL / ((c.user + c.system) / 1e6);
    (rates[name] ??= []).push(row[name]!);
  }
  for (const name of Object.keys(row)) if (name !== 'other') (ratios[name + 'ToOther'] ??= []).push(row[name]! / row.other!);
}
const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const summary = (xs: number[]): object => ({ median: Number(med(xs).toFixed(3)), min: Number(Math.min(...xs).toFixed(3)), max: Number(Math.max(...xs).toFixed(3)) });
const result = {
  bench: 'url-ab',
  command: `node --import tsx bench/url/ab.ts <other tree> --rounds ${ROUNDS}${CONS ? ' --cons-links' : ''} --label ${LABEL} --write`,
  date: new Date().toISOString(),
  machine: { cpu: os.cpus()[0]?.model ?? 'unknown', cores: os.cpus().length, node: process.version, platform: `${process.platform} ${process.arch}` },
  loadavg: { before: loadBefore.map((x) => Number(x.toFixed(2))), after: os.loadavg().map((x) => Number(x.toFixed(2))) },
  note: 'One process, both trees, interleaved round by round; `full` per link (resolve + registrableDomain + URL key). this = per-link fingerprintInto, thisBatch = fingerprintManyInto per page, other = the other tree (per-link). Rates are URLs per CPU-second (process.cpuUsage) on a shared, loaded 2-core machine: compare the ratios.',
  other: LABEL, rounds: ROUNDS, links: CONS ? 'concatenated' : 'slices of the page text',
  fullUrlsPerCpuSec: Object.fromEntries(Object.entries(rates).map(([k, v]) => [k, Math.round(med(v))])),
  ratios: Object.fromEntries(Object.entries(ratios).map(([k, v]) => [k, summary(v)])),
  sink: sink % 7,
};
console.log(JSON.stringify(result, null, 2));
if (WRITE) {
  const file = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../results/url-ab.json');
  writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
}
