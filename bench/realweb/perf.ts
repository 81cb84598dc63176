/**
 * What `perf record -g` of a crawl saw (bench:realweb --perf), by thread role and by kind of work:
 * the share of the process' samples in each role's threads (the roles file names the crawler's
 * own threads; the rest — V8's platform threads, libuv's pool — are 'runtime'), and within each
 * role the share in V8's optimizing compiler, in the garbage collector, in the kernel, and the
 * rest (JavaScript, builtins, Node's C++, zlib …). Read from `perf report --sort pid,sym`.
 */
import { execFileSync } from 'node:child_process';

export interface PerfKinds {
  /** % of all the process' samples */
  total: number;
  compiler: number;
  gc: number;
  kernel: number;
  other: number;
}

const COMPILER = /v8::internal::compiler::|turboshaft|[Mm]aglev|v8::internal::Zone::|OptimizedCompilationJob/;
const GC = /v8::internal::(?:\w+::)?(?:[A-Za-z]*Marking|[A-Za-z]*Sweep|Scaveng|Evacuat|MemoryChunk|SlotSet|Remembered|Heap::|GCTracer|MarkCompact|MinorMarkCompact|ConcurrentMarking)/;

/** Classifies one `perf report` line's symbol. */
export function kindOf(sym: string): 'compiler' | 'gc' | 'kernel' | 'other' {
  if (sym.startsWith('[k]')) return 'kernel';
  if (COMPILER.test(sym)) return 'compiler';
  if (GC.test(sym)) return 'gc';
  return 'other';
}

function report(file: string, sort: string): string[] | null {
  try {
    return execFileSync('perf', ['report', '-i', file, '--no-children', '-g', 'none', '--sort', sort, '--stdio', '-q'], {
      encoding: 'utf8', maxBuffer: 256 << 20, stdio: ['ignore', 'pipe', 'ignore'],
    }).split('\n');
  } catch {
    return null;
  }
}

/**
 * Per role, % of the process' samples by kind (null when perf is missing or read nothing). A
 * thread's share is `--sort pid`'s; its split by kind is in proportion to its `--sort pid,sym`
 * lines (whose percentages do not add up to the same total).
 */
export function perfByRole(file: string, roles: Map<number, string>): Record<string, PerfKinds> | null {
  const byThread = report(file, 'pid');
  const bySym = report(file, 'pid,sym');
  if (byThread === null || bySym === null) return null;
  const line = /^\s*([\d.]+)%\s+(\d+):\S+\s*(.*)$/;
  const kinds = new Map<number, { compiler: number; gc: number; kernel: number; other: number; sum: number }>();
  for (const l of bySym) {
    const m = line.exec(l);
    if (m === null) continue;
    const k = kinds.get(Number(m[2])) ?? { compiler: 0, gc: 0, kernel: 0, other: 0, sum: 0 };
    k[kindOf(m[3]!)] += Number(m[1]);
    k.sum += Number(m[1]);
    kinds.set(Number(m[2]), k);
  }
  const out: Record<string, PerfKinds> = {};
  for (const l of byThread) {
    const m = line.exec(l);
    if (m === null) continue;
    const pct = Number(m[1]);
    const tid = Number(m[2]);
    const o = (out[roles.get(tid) ?? 'runtime'] ??= { total: 0, compiler: 0, gc: 0, kernel: 0, other: 0 });
    o.total += pct;
    const k = kinds.get(tid);
    if (k !== undefined && k.sum > 0) for (const f of ['compiler', 'gc', 'kernel', 'other'] as const) o[f] += (pct * k[f]) / k.sum;
  }
  if (Object.keys(out).length === 0) return null;
  for (const k of Object.values(out)) for (const f of ['total', 'compiler', 'gc', 'kernel', 'other'] as const) k[f] = Math.round(k[f] * 100) / 100;
  return out;
}
