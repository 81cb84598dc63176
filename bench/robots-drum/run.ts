/**
 * RobotsCache and RobotsRequested (src/robots/robots-cache.ts, robots-requested.ts) as the crawl
 * drives them, on the DRUM engine in this process (the crawl runs them in a DRUM worker thread;
 * the merge work is the same): rounds of `batch` host checks, a share `--new` of them hosts never
 * seen; every miss becomes a RobotsRequested check+update and a RobotsCache update with a real
 * entry (src/robots/robots-entry.ts). Same options as the crawl: one bucket, R from
 * robotsDrumRam(--ram).
 *
 *   node --import tsx bench/robots-drum/run.ts [--hosts 200000] [--batch 20000] [--new 0.5] [--ram 512M] [--out bench/results/robots-drum.json]
 *
 * Reports per DRUM: tuples merged per second of merge wall time, α (DRUM bytes read + written per
 * byte of aux merged, DrumStats.alpha), disk bytes per host key in Z, and DRUM bytes read +
 * written per tuple (per host checked or asked: a URL costs nothing here, its host does).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Drum } from '../../src/drum/index.js';
import { compileRobots, parseRobotsTxt } from '../../src/robots/index.js';
import { encodeRobotsEntry } from '../../src/robots/robots-entry.js';
import { robotsDrumRam } from '../../src/crawl/ports/robots-stage.js';

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : def;
}
const hosts = Number(arg('hosts', '200000'));
const batch = Number(arg('batch', '20000'));
const newShare = Number(arg('new', '0.5'));
const ramArg = arg('ram', '512M');
const ram = Number(ramArg.replace(/[MG]$/i, '')) * (/G$/i.test(ramArg) ? 2 ** 30 : 2 ** 20);
const outFile = arg('out', 'bench/results/robots-drum.json');

// Entries as the crawl stores them: 30 % with rules, the rest allow-all (simweb's bench mix).
const ruled = encodeRobotsEntry({ rules: compileRobots(parseRobotsTxt('User-agent: *\nDisallow: /private/\nDisallow: /tmp/\nAllow: /tmp/ok\n'), 'drumcrawl'), outcome: 'ok', expiresAt: Date.now() + 86_400_000, sitemaps: [] });
const open = encodeRobotsEntry({ rules: compileRobots(parseRobotsTxt(''), 'drumcrawl'), outcome: 'CRAWL_ROBOTS_UNAVAILABLE', expiresAt: Date.now() + 86_400_000, sitemaps: [] });
const aux = new TextEncoder().encode('h12.pld123456.test http://h12.pld123456.test'); // a host + origin, ~45 bytes
const askedAt = new Uint8Array(8);

/** splitmix-style 64-bit host key of host number i */
function key(i: number): [number, number] {
  let h = Math.imul(i ^ 0x9e3779b9, 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  let l = Math.imul((i + 0x7f4a7c15) ^ 0x165667b1, 0x27d4eb2f) >>> 0;
  l = (l ^ (l >>> 15)) >>> 0;
  return [h, l];
}

const dir = await mkdtemp(path.join(os.tmpdir(), 'dc-bench-robots-'));
const r = robotsDrumRam(ram);
let misses: number[] = [];
const cache = await Drum.open(path.join(dir, 'robotscache'), {
  ramBytes: r.cache, buckets: 1, valueBytes: 'variable', valueBytesHint: 60, auxBytesHint: 40,
  onResults: (b) => {
    for (const x of b) if (x.op === 'check' && x.unique) misses.push(x.keyHi, x.keyLo);
  },
});
const requested = await Drum.open(path.join(dir, 'robotsrequested'), { ramBytes: r.requested, buckets: 1, valueBytes: 8, auxBytesHint: 40, onResults: () => undefined });

let seen = 0;
let rand = 12345;
const next = (): number => ((rand = (Math.imul(rand, 1103515245) + 12345) >>> 0) / 2 ** 32);
let cacheMs = 0;
let reqMs = 0;
let cacheTuples = 0;
let reqTuples = 0;

while (seen < hosts) {
  for (let j = 0; j < batch; j++) {
    const i = seen === 0 || next() < newShare ? seen++ : Math.floor(next() * seen);
    const [hi, lo] = key(i);
    cache.check(hi, lo, aux);
    cacheTuples++;
  }
  let t = performance.now();
  await cache.merge();
  cacheMs += performance.now() - t;
  for (let j = 0; j < misses.length; j += 2) {
    requested.checkUpdate(misses[j]!, misses[j + 1]!, askedAt, aux);
    cache.update(misses[j]!, misses[j + 1]!, j % 10 < 3 ? ruled : open);
    reqTuples++;
    cacheTuples++;
  }
  misses = [];
  t = performance.now();
  await requested.merge();
  reqMs += performance.now() - t;
}

const summary = (name: string, d: Drum, ms: number, tuples: number) => {
  const s = d.stats();
  const io = s.io.total();
  return {
    drum: name, R: s.plan.R, k: s.k, r: s.r, keys: s.keys, tuples, merges: s.merges,
    tuplesPerSec: Math.round((tuples / ms) * 1000), alpha: Number(s.alpha.toFixed(2)), predictedAlpha: Number(s.predictedAlpha.toFixed(2)),
    zBytesPerKey: Number(s.zBytesPerKey.toFixed(1)), diskBytesPerTuple: Number(((io.bytesRead + io.bytesWritten) / tuples).toFixed(1)),
    mergeSeconds: Number((ms / 1000).toFixed(2)),
  };
};
const out = {
  command: `node --import tsx bench/robots-drum/run.ts --hosts ${hosts} --batch ${batch} --new ${newShare} --ram ${ramArg}`,
  at: new Date().toISOString(), cpus: os.cpus().length, note: 'shared 2-core box; wall time of the merges (another crawl or bench may have run meanwhile)',
  hosts, batch, newShare, rounds: Math.ceil(hosts / (batch * newShare)),
  robotsCache: summary('RobotsCache', cache, cacheMs, cacheTuples),
  robotsRequested: summary('RobotsRequested', requested, reqMs, reqTuples),
};
await cache.close();
await requested.close();
await rm(dir, { recursive: true, force: true });
console.log(JSON.stringify(out, null, 2));
writeFileSync(outFile, JSON.stringify(out, null, 2) + '\n');
