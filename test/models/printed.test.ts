/**
 * The transcribed thesis numbers (bench/models/printed.ts) are well formed, and they are the numbers
 * that the recorded model bench (bench/results/models.json, `npm run bench:models -- --json`)
 * compared with the models: a changed cell in printed.ts fails here until the bench is re-run and
 * its result committed. Values stay strings as printed, so each must parse as a printed number
 * whose precision (last printed digit) is known.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { CRAWL_SIZES, EXAMPLES, TABLE_II, TABLE_III, TABLE_V, TABLE_VI, TABLE_VII } from '../../bench/models/printed.js';
import { parsePrinted, printedUlp, reproduceAll } from '../../bench/models/reproduce.js';

const recorded = JSON.parse(readFileSync(new URL('../../bench/results/models.json', import.meta.url), 'utf8')) as {
  entries: { id: string; printed: string }[];
};

function assertPrintedNumber(s: string, label: string): void {
  const v = parsePrinted(s);
  assert.ok(Number.isFinite(v) && v > 0, `${label}: ${JSON.stringify(s)}`);
  assert.ok(printedUlp(s) > 0, `${label}: precision of ${JSON.stringify(s)}`);
}

test('Tables II, III, VI and VII: one printed number per crawl size in every column', () => {
  const columns: Record<string, readonly string[]> = {
    'II Mercator-B': TABLE_II.mercatorB, 'II Polybot': TABLE_II.polybot, 'II DRUM': TABLE_II.drum,
  };
  for (const [name, t] of [['III', TABLE_III], ['VI', TABLE_VI], ['VII', TABLE_VII]] as const) {
    for (const r of ['r4', 'r8'] as const) {
      columns[`${name} ${r} Mercator-B`] = t[r].mercatorB;
      columns[`${name} ${r} DRUM`] = t[r].drum;
    }
  }
  assert.equal(Object.keys(columns).length, 15);
  for (const [name, cells] of Object.entries(columns)) {
    assert.equal(cells.length, CRAWL_SIZES.length, name);
    cells.forEach((c, i) => assertPrintedNumber(c, `${name} ${CRAWL_SIZES[i]!.label}`));
  }
});

test('Table V and the worked examples are printed numbers', () => {
  assert.equal(TABLE_V.length, 6);
  for (const r of TABLE_V) for (const c of [r.mu, r.size, r.sCache]) assertPrintedNumber(c, `Table V ${r.method}`);
  for (const [k, v] of Object.entries(EXAMPLES)) if (k !== 'beastLimitOverUnique') assertPrintedNumber(v, k);
  assert.equal(EXAMPLES.beastLimitOverUnique, 'four'); // printed as a word; the bench compares it as 4
});

test('every printed number is the one the recorded model bench compared (bench/results/models.json)', () => {
  const now = new Map(reproduceAll().map((e) => [e.id, e.printed]));
  const then = new Map(recorded.entries.map((e) => [e.id, e.printed]));
  assert.deepEqual([...now.keys()].sort(), [...then.keys()].sort());
  for (const [id, printed] of now) assert.equal(printed, then.get(id), id);
});
