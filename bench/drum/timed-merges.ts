/**
 * A DRUM merged on time, as ContentSeen is (src/crawl/merge-schedule.ts: about once a second,
 * whatever the batch), as the repository grows: the CPU of each merge against the keys stored,
 * with and without a deep part (src/drum/deep.ts), in one run.
 *
 * Shape: ContentSeen's — 'variable' values of `--value` bytes (the first capture's URL and date,
 * ~72), 4-byte aux, 4 buckets, keepFirst; each merge takes `--batch` check+update tuples of new
 * random digests plus `--dup-percent` repeats of stored ones (duplicate pages). One repository per
 * mode, grown to `--keys`; the result is the CPU per merge in each tenth of the growth, and the
 * ratio of the last tenth to the second (the first warms the JIT up) — flat when near 1.
 *
 *   npm run bench:drum-timed -- [--keys 2e6] [--batch 1000] [--settle 32768] [--out name]
 *
 * (--batch 1000: about one second of pages at this box's crawl rate, ContentSeen's batch.)
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execSync } from 'node:child_process';
import { Drum } from '../../src/drum/index.js';
import { mulberry32 } from '../../src/simweb/model/hash.js';
import { SHARED_MACHINE_NOTE, machineInfo, writeResult } from '../lib/report.js';

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? def : Number(process.argv[i + 1]);
}
const outIdx = process.argv.indexOf('--out');
const KEYS = arg('keys', 2e6);
const BATCH = arg('batch', 1_000);
const SETTLE = arg('settle', 32_768);
const VALUE = arg('value', 72);
const DUP = arg('dup-percent', 2);

interface Mode {
  settleKeys: number;
  /** CPU ms per merge in each tenth of the growth, and the keys stored at its end */
  tenths: { keys: number; cpuMsPerMerge: number; wallMsPerMerge: number; mbWrittenPerMerge: number }[];
  lastOverSecond: number;
  settlings: number;
  settleCpuMs: number;
  diskBytes: number;
}

async function run(settleKeys: number): Promise<Mode> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drum-timed-'));
  const rnd = mulberry32(42);
  const value = new Uint8Array(VALUE).fill(0x61);
  const aux = new Uint8Array(4);
  let uniques = 0;
  const d = await Drum.open(dir, {
    valueBytes: 'variable', valueBytesHint: VALUE, auxBytesHint: 4, buckets: 4, ramBytes: 32 << 20, keepFirst: true,
    ...(settleKeys > 0 ? { settleKeys } : {}),
    onResults: (b) => {
      for (const r of b) if (r.unique) uniques++;
    },
  });
  const stored: number[] = [];
  const tenths: Mode['tenths'] = [];
  let acc = { cpu: 0, wall: 0, n: 0, written: 0 };
  let next = KEYS / 10;
  try {
    while (uniques < KEYS) {
      for (let j = 0; j < BATCH; j++) {
        let hi: number;
        let lo: number;
        if (stored.length > 0 && rnd() * 100 < DUP) {
          const s = Math.floor(rnd() * (stored.length / 2)) * 2;
          hi = stored[s]!;
          lo = stored[s + 1]!;
        } else {
          hi = Math.floor(rnd() * 2 ** 32) >>> 0;
          lo = Math.floor(rnd() * 2 ** 32) >>> 0;
          // a sample of the stored keys, for the duplicates (bounded)
          if (stored.length < 200_000) stored.push(hi, lo);
        }
        d.checkUpdate(hi, lo, value, aux);
      }
      const c0 = process.cpuUsage();
      const w0 = performance.now();
      const b0 = d.io.total().bytesWritten;
      await d.merge();
      const c = process.cpuUsage(c0);
      acc.written += d.io.total().bytesWritten - b0;
      acc.cpu += (c.user + c.system) / 1000;
      acc.wall += performance.now() - w0;
      acc.n++;
      if (uniques >= next) {
        const r1 = (x: number): number => Math.round(x * 10) / 10;
        tenths.push({ keys: uniques, cpuMsPerMerge: r1(acc.cpu / acc.n), wallMsPerMerge: r1(acc.wall / acc.n), mbWrittenPerMerge: r1(acc.written / acc.n / 2 ** 20) });
        acc = { cpu: 0, wall: 0, n: 0, written: 0 };
        next += KEYS / 10;
      }
    }
    const st = d.stats();
    let diskBytes = 0;
    for (const f of fs.readdirSync(dir)) diskBytes += fs.statSync(path.join(dir, f)).size;
    return {
      settleKeys,
      tenths,
      lastOverSecond: Math.round((tenths[tenths.length - 1]!.cpuMsPerMerge / tenths[1]!.cpuMsPerMerge) * 100) / 100,
      settlings: st.settlings ?? 0,
      settleCpuMs: Math.round(st.settleCpuMs ?? 0),
      diskBytes,
    };
  } finally {
    await d.close({ flush: false });
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const commit = execSync('git rev-parse --short HEAD').toString().trim();
const modes: Mode[] = [];
for (const s of [0, SETTLE]) {
  const m = await run(s);
  console.log(`settleKeys ${s}: CPU ms per merge by tenth ${m.tenths.map((t) => t.cpuMsPerMerge).join(' ')}; wall ${m.tenths.map((t) => t.wallMsPerMerge).join(' ')}; MB written ${m.tenths.map((t) => t.mbWrittenPerMerge).join(' ')}; last/second ${m.lastOverSecond}`);
  modes.push(m);
}
const result = {
  bench: 'drum-timed-merges',
  command: `npm run bench:drum-timed -- ${process.argv.slice(2).join(' ')}`.trim(),
  commit,
  machine: machineInfo(),
  note: SHARED_MACHINE_NOTE,
  keys: KEYS,
  batch: BATCH,
  valueBytes: VALUE,
  dupPercent: DUP,
  modes,
};
const out = outIdx >= 0 ? process.argv[outIdx + 1]! : `drum-timed-merges-${commit}`;
console.log(`wrote ${writeResult(out, result)}`);
