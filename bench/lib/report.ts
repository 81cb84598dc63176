/**
 * Shared helpers of the empirical benches (alpha, cache, star, peers): machine description, the
 * committed JSON result file, and argument parsing. Results are compared as ratios within one run
 * because the machine is shared (see COMMON.md); every file carries the exact command.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const RESULTS_DIR = path.join(REPO_ROOT, 'bench/results');

export interface MachineInfo {
  cpu: string;
  cores: number;
  ramBytes: number;
  node: string;
  platform: string;
  kernel: string;
  date: string;
  loadavg: number[];
}

export function machineInfo(): MachineInfo {
  return {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    ramBytes: os.totalmem(),
    node: process.version,
    platform: `${os.platform()}-${os.arch()}`,
    kernel: os.release(),
    date: new Date().toISOString(),
    loadavg: os.loadavg().map((x) => Math.round(x * 100) / 100),
  };
}

export const SHARED_MACHINE_NOTE =
  'Shared machine: several engineers run builds/tests on the same 2 cores, so absolute speeds are low and noisy; ' +
  'compare ratios within one run.';

/**
 * The file bench/results/<name>.<ext>. `name` may be given as the file's path too
 * (`bench/results/x.json`, `./bench/results/sub/x`): a bench's `--out` names its result either way,
 * and a spelling must not fail a run at its end, after its measurements.
 */
export function resultFile(name: string, ext: 'json' | 'svg'): string {
  const bare = name.replace(/^(\.\/)?bench\/results\//, '').replace(new RegExp(`\\.${ext}$`), '');
  const file = path.resolve(RESULTS_DIR, `${bare}.${ext}`);
  if (path.isAbsolute(bare) || !file.startsWith(RESULTS_DIR + path.sep)) throw new Error(`result name ${name}: a name inside bench/results/ is due`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  return file;
}

/** Writes bench/results/<name>.json (pretty, trailing newline) and returns its path. */
export function writeResult(name: string, data: unknown): string {
  const file = resultFile(name, 'json');
  fs.writeFileSync(file, JSON.stringify(data, null, 2) + '\n');
  return file;
}

/** Writes bench/results/<name>.svg and returns its path. */
export function writeSvg(name: string, svg: string): string {
  const file = resultFile(name, 'svg');
  fs.writeFileSync(file, svg);
  return file;
}

/** `--name value` / `--flag` parsing for bench scripts (no dependency on commander's global state). */
export function args(argv = process.argv.slice(2)): { get(name: string): string | undefined; num(name: string, dflt: number): number; has(name: string): boolean } {
  const get = (name: string): string | undefined => {
    const i = argv.indexOf(`--${name}`);
    if (i >= 0 && i + 1 < argv.length && !argv[i + 1]!.startsWith('--')) return argv[i + 1];
    const eq = argv.find((a) => a.startsWith(`--${name}=`));
    return eq?.slice(name.length + 3);
  };
  return {
    get,
    has: (name) => argv.includes(`--${name}`),
    num: (name, dflt) => {
      const v = get(name);
      if (v === undefined) return dflt;
      const x = Number(v);
      if (!Number.isFinite(x)) throw new Error(`--${name} must be a number, got ${v}`);
      return x;
    },
  };
}

/** The exact command line, as `npm run bench:<x> -- …`. */
export function commandLine(script: string): string {
  const rest = process.argv.slice(2);
  return `npm run ${script}${rest.length ? ' -- ' + rest.join(' ') : ''}`;
}

/** Round to `d` significant digits for readable JSON. */
export function sig(x: number, d = 4): number {
  if (!Number.isFinite(x) || x === 0) return x;
  return Number(x.toPrecision(d));
}

/** A Markdown table from rows of cells. */
export function mdTable(head: string[], rows: Array<Array<string | number>>): string {
  const line = (cells: Array<string | number>) => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}
