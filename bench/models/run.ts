/**
 * `npm run bench:models [-- --json [path]] [-- --quiet]`
 *
 * Regenerates Tables II, III, V, VI, VII and the worked examples of the IRLbot thesis from the
 * analytic models (bench/models/model.ts), printing printed | computed | relative error for every
 * entry, then the evidence behind each departure from the text. Exit code 1 if any entry that is
 * classified reproducible is off by more than 2 % (status "off"). `--json` writes everything to
 * bench/results/models.json (or the given path).
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { collectEvidence } from './evidence.js';
import { AS_WRITTEN, REPRODUCING } from './readings.js';
import { reproduceAll, summarize, TOLERANCE, type Entry, type Status } from './reproduce.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function parseArgs(argv: readonly string[]): { json: string | null; quiet: boolean } {
  let json: string | null = null;
  let quiet = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--json') {
      const next = argv[i + 1];
      json = next !== undefined && !next.startsWith('--') ? path.resolve(next) : path.join(repoRoot, 'bench/results/models.json');
      if (next !== undefined && !next.startsWith('--')) i++;
    } else if (a === '--quiet') quiet = true;
    else if (a === '--help' || a === '-h') {
      console.log('usage: npm run bench:models -- [--json [path]] [--quiet]');
      process.exit(0);
    } else {
      console.error(`unknown argument ${a}`);
      process.exit(2);
    }
  }
  return { json, quiet };
}

const STATUS_LABEL: Record<Status, string> = {
  'within-2%': 'ok',
  'printed-precision': 'ok (printed digits)',
  off: 'OFF',
  'not-reproducible': 'NOT REPRODUCIBLE',
  input: 'input',
};

function fmt(x: number | null): string {
  if (x === null) return '';
  if (Math.abs(x) >= 1000) return x.toLocaleString('en-US', { maximumFractionDigits: 1 });
  return x.toPrecision(6);
}

function pct(x: number | null): string {
  return x === null ? '' : `${x >= 0 ? '+' : ''}${(100 * x).toFixed(2)} %`;
}

const TITLES: Record<string, string> = {
  'Table II': 'Table II — α(n, R) for R = 1 GB, D = 4.3 TB (ch. IV §5)',
  'Table III': 'Table III — α(n, R) for D = D(n) (ch. IV §5)',
  'Table V': 'Table V — insertion rate μ(c) and S_cache from (21), E = 16M (ch. V §2)',
  'Table VI': 'Table VI — α(πn, R − c), D = D(n), π = 0.33, c = 320 MB (ch. V §3)',
  'Table VII': 'Table VII — max_c S_hybrid(c), pages/s, D = D(n) (ch. V §3)',
  Examples: 'Worked examples in the text (ch. IV, V, VII)',
};

function printTable(title: string, entries: readonly Entry[]): void {
  const rows = entries.map((e) => [e.row, e.col, e.printed, fmt(e.computed), fmt(e.asWritten), pct(e.relError), STATUS_LABEL[e.status], e.unit]);
  const head = ['row', 'column', 'printed', 'computed', 'as written', 'rel. error', 'status', 'unit'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: readonly string[]) =>
    r.map((c, i) => (i >= 2 && i <= 5 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  console.log(`\n${title}`);
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) console.log(line(r));
  for (const e of entries) if (e.status === 'not-reproducible') console.log(`  * ${e.id}: ${e.note}`);
}

const args = parseArgs(process.argv.slice(2));
const entries = reproduceAll();
const summary = summarize(entries);
const evidence = collectEvidence(entries);

if (!args.quiet) {
  console.log('IRLbot thesis analytic models — printed vs computed ("as written" = text taken literally, shown where it differs)');
  for (const table of ['Table II', 'Table III', 'Table V', 'Table VI', 'Table VII', 'Examples']) {
    printTable(TITLES[table]!, entries.filter((e) => e.table === table));
  }
  console.log('\nEvidence for the readings (docs/benchmarks.md explains each):');
  for (const ev of evidence) {
    console.log(`- ${ev.id}: ${ev.claim}${ev.printed === undefined ? '' : ` [printed ${ev.printed}]`}`);
    for (const a of ev.alternatives) console.log(`    ${a.reading.padEnd(52)} ${fmt(a.value).padStart(12)} ${pct(a.relError ?? null)}`);
  }
}

const line =
  `${summary.entries} entries, ${summary.within2} within 2 %, ${summary.notReproducible} not reproducible (documented); ` +
  `${summary.printedPrecision} off by > 2 % but equal at the printed digits, ${summary.off} off; ` +
  `max |error| among the within-2 % entries ${(100 * summary.maxAbsRelErrorWithin2).toFixed(2)} %; ` +
  `${summary.printExact} print digit for digit as in the thesis (rounded or truncated); ` +
  `${summary.inputs} measured inputs shown, not counted`;
console.log(`\n${line}`);

if (args.json !== null) {
  const cpus = os.cpus();
  const out = {
    bench: 'models',
    command: 'npm run bench:models -- --json',
    date: new Date().toISOString(),
    machine: { cpu: cpus[0]?.model ?? 'unknown', cores: cpus.length, node: process.version, platform: `${os.platform()} ${os.arch()}` },
    note:
      'Analytic reproduction, no timing: numbers do not depend on the machine. relError = computed/printed − 1 under the ' +
      '"reproducing" reading; "asWritten" is the text taken literally where that differs. Status: within-2%, ' +
      'printed-precision (> 2 % off, but rounds or truncates to the printed digits), not-reproducible (documented), off, input.',
    tolerance: TOLERANCE,
    summary: { ...summary, line },
    readings: { asWritten: AS_WRITTEN, reproducing: REPRODUCING },
    entries,
    evidence,
  };
  mkdirSync(path.dirname(args.json), { recursive: true });
  writeFileSync(args.json, `${JSON.stringify(out, null, 2)}\n`);
  console.log(`wrote ${path.relative(process.cwd(), args.json)}`);
}

process.exitCode = summary.off > 0 ? 1 : 0;
