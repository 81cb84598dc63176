/**
 * The transcribed tables (bench/models/printed.ts) must match the thesis text cell for cell, and
 * the worked examples must occur in it. The thesis is resolved relative to the repository root
 * (`../shared/seeds/`), as in CI.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CRAWL_SIZES, EXAMPLES, TABLE_II, TABLE_III, TABLE_V, TABLE_VI, TABLE_VII } from '../../bench/models/printed.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const thesis = readFileSync(path.resolve(repoRoot, '../shared/seeds/irlbot-thesis-lee-2008.txt'), 'utf8');
const lines = thesis.split('\n');

/** The tab-separated N rows that follow a table caption. */
function rowsAfter(caption: string): string[][] {
  const start = lines.findIndex((l) => l.startsWith(caption));
  assert.ok(start >= 0, `caption ${caption} not found`);
  const labels = new Set<string>(CRAWL_SIZES.map((s) => s.label));
  return lines.slice(start + 1, start + 14).map((l) => l.split('\t')).filter((c) => labels.has(c[0]!));
}

function assertColumns(caption: string, columns: ReadonlyArray<readonly string[]>): void {
  const rows = rowsAfter(caption);
  assert.deepEqual(rows.map((r) => r[0]), CRAWL_SIZES.map((s) => s.label), caption);
  rows.forEach((r, i) => assert.deepEqual(r.slice(1), columns.map((c) => c[i]), `${caption} row ${r[0]}`));
}

test('Tables II, III, VI and VII are transcribed cell for cell', () => {
  assertColumns('Table II.', [TABLE_II.mercatorB, TABLE_II.polybot, TABLE_II.drum]);
  assertColumns('Table III.', [TABLE_III.r4.mercatorB, TABLE_III.r4.drum, TABLE_III.r8.mercatorB, TABLE_III.r8.drum]);
  assertColumns('Table VI.', [TABLE_VI.r4.mercatorB, TABLE_VI.r4.drum, TABLE_VI.r8.mercatorB, TABLE_VI.r8.drum]);
  assertColumns('Table VII.', [TABLE_VII.r4.mercatorB, TABLE_VII.r4.drum, TABLE_VII.r8.mercatorB, TABLE_VII.r8.drum]);
});

test('Table V is transcribed cell for cell', () => {
  const start = lines.findIndex((l) => l.startsWith('Table V.'));
  const rows = lines.slice(start + 1).filter((l) => l.includes('\t')).slice(1, 1 + TABLE_V.length);
  assert.deepEqual(rows.map((l) => l.split('\t')), TABLE_V.map((r) => [r.method, r.mu, r.size, r.sCache]));
});

test('every worked example occurs in the text as printed', () => {
  const phrases: Record<keyof typeof EXAMPLES, string> = {
    seekHitRate: `(i.e., ${EXAMPLES.seekHitRate}% for IRLbot)`,
    asymptoticPolybotRatio: `roughly ${EXAMPLES.asymptoticPolybotRatio} times faster than Polybot`,
    dOpt1GB: `D_{opt} = ${EXAMPLES.dOpt1GB}$ TB`,
    dOpt2GB: `D_{opt} = ${EXAMPLES.dOpt2GB}$ TB`,
    quadraticAdvantage1GB: `This ratio is ${EXAMPLES.quadraticAdvantage1GB} for $R = 1$ GB`,
    quadraticAdvantage8GB: `${EXAMPLES.quadraticAdvantage8GB} for $R = 8$ GB`,
    rOptOverR: `\\approx ${EXAMPLES.rOptOverR}R`,
    drumAlphaMin: `\\alpha''_{min} = ${EXAMPLES.drumAlphaMin}`,
    avgDiskSpeed: `equal to ${EXAMPLES.avgDiskSpeed} MB/s`,
    effectiveW: `W = ${EXAMPLES.effectiveW}$ MB/s`,
    sDisk: `S_{disk} = ${EXAMPLES.sDisk}$ pages/s`,
    sDiskBandwidth: `${EXAMPLES.sDiskBandwidth} mb/s`,
    pagesPerMonth: `${EXAMPLES.pagesPerMonth} billion pages per month`,
    mercatorSlowdown: `${EXAMPLES.mercatorSlowdown} times slower`,
    mercatorRate: `only ${EXAMPLES.mercatorRate} pages/s`,
    polybotSlowdown: `Polybot is ${EXAMPLES.polybotSlowdown} times slower`,
    polybotRate: `would be ${EXAMPLES.polybotRate} pages/s`,
    peakTauLS: `\\approx ${EXAMPLES.peakTauLS}$ million`,
    cacheBytes: `c = ${EXAMPLES.cacheBytes}$ MB`,
    mercatorASpeedupLow: `${EXAMPLES.mercatorASpeedupLow} – ${EXAMPLES.mercatorASpeedupHigh} times speed-up`,
    mercatorASpeedupHigh: `– ${EXAMPLES.mercatorASpeedupHigh} times speed-up`,
    quadraticGainLow: `\\in [${EXAMPLES.quadraticGainLow}, ${EXAMPLES.quadraticGainHigh}]`,
    quadraticGainHigh: `, ${EXAMPLES.quadraticGainHigh}]$`,
    naive100M: `${EXAMPLES.naive100M} MB/s for $N = 100$ million`,
    naive8B: `${EXAMPLES.naive8B} MB/s for $N = 8$ billion`,
    naive80B: `${EXAMPLES.naive80B} MB/s for $N = 80$ billion`,
    beastLimit: `\\leq ${EXAMPLES.beastLimit}$ MB/s`,
    beastLimitOverUnique: `roughly ${EXAMPLES.beastLimitOverUnique} times the speed needed to write all unique URLs`,
    beastJ8B: `$N = 8\\text{B}$ is ${EXAMPLES.beastJ8B} and`,
    beastJ80B: `only ${EXAMPLES.beastJ80B},`,
  };
  for (const [key, phrase] of Object.entries(phrases)) assert.ok(thesis.includes(phrase), `${key}: "${phrase}" not in the thesis`);
});
