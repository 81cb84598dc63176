/**
 * bench:realweb's command line (run.ts): every option checked before anything runs — `--help`
 * prints the usage and the bench does nothing else; an unknown option or a bad value is refused
 * (exit 2) instead of starting a run of several minutes with the defaults.
 */

export const USAGE = `usage: npm run bench:realweb -- [options]

What a crawl of real sites (nginx serving the Python, PostgreSQL and Debian manuals) costs from
launch, next to simweb's steady CPU per page in the same run (docs/performance.md "Start-up and
real pages"). Run it under \`flock /tmp/heavy.lock\` on a shared box.

  --rounds <n>        runs of each tree (A B, then B A, …; default 2)
  --ab <ref>[,<ref>…] commits, each extracted and built, alternated (default: the checkout)
  --no-build          the checkout as built (no \`npm run build\` first)
  --sim-pages <n>     simweb pages per run (default 12000)
  --warm-pages <n>    simweb pages left out of its steady figure (default 4000)
  --seconds <n>       simweb time cap per run (default 120)
  --no-links          skip the parse step's cost per link on the large pages
  --no-simweb         crawl the manuals only (no steady figure, no ratio)
  --cpu-prof <dir>    V8 CPU profiles of every thread of each crawl (node --cpu-prof) in
                      <dir>/<tree>-<round>[-simweb]/ (their figures then include the profiler's cost)
  --perf <dir>        perf record -g of each crawl's process, every thread, in
                      <dir>/<tree>-<round>[-simweb].data (needs perf; perf report --sort pid)
  --out <name>        bench/results/<name>.json (default realweb)
  --help              this text
`;

export interface RealwebOptions {
  rounds: number;
  ab: string[] | null;
  build: boolean;
  simPages: number;
  warmPages: number;
  seconds: number;
  links: boolean;
  simweb: boolean;
  cpuProf: string | null;
  perf: string | null;
  out: string;
}

const FLAGS = new Set(['no-build', 'no-links', 'no-simweb', 'help']);
const VALUED = new Set(['rounds', 'ab', 'sim-pages', 'warm-pages', 'seconds', 'cpu-prof', 'perf', 'out']);

/** `argv` (after the script's name) as options, or 'help'; throws a message for a bad command line. */
export function parseRealwebArgs(argv: readonly string[]): RealwebOptions | 'help' {
  const vals = new Map<string, string>();
  const flags = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '-h') return 'help';
    if (!arg.startsWith('--')) throw new Error(`unexpected argument ${arg}`);
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    if (FLAGS.has(name) && eq < 0) {
      if (name === 'help') return 'help';
      flags.add(name);
    } else if (VALUED.has(name)) {
      const v = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
      if (v === undefined || v === '' || (eq < 0 && v.startsWith('--'))) throw new Error(`--${name} needs a value`);
      vals.set(name, v);
    } else {
      throw new Error(`unknown option ${arg}`);
    }
  }
  const count = (name: string, dflt: number, min: number): number => {
    const v = vals.get(name);
    if (v === undefined) return dflt;
    const x = Number(v);
    if (!Number.isInteger(x) || x < min) throw new Error(`--${name} must be an integer ≥ ${min}, got ${v}`);
    return x;
  };
  const ab = vals.get('ab')?.split(',') ?? null;
  if (ab !== null && ab.some((r) => r === '')) throw new Error(`--ab takes commits separated by commas: got ${vals.get('ab')}`);
  return {
    rounds: count('rounds', 2, 1),
    ab,
    build: !flags.has('no-build'),
    simPages: count('sim-pages', 12_000, 1),
    warmPages: count('warm-pages', 4_000, 0),
    seconds: count('seconds', 120, 1),
    links: !flags.has('no-links'),
    simweb: !flags.has('no-simweb'),
    cpuProf: vals.get('cpu-prof') ?? null,
    perf: vals.get('perf') ?? null,
    out: vals.get('out') ?? 'realweb',
  };
}
