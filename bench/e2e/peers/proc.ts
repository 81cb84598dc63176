/**
 * CPU and memory of a child process tree from /proc (Linux): utime + stime of the process and its
 * live descendants (threads are included in a process' own counters), plus cutime + cstime of
 * children it already reaped; resident memory peak = max over samples of the summed VmRSS, and
 * the kernel's own VmHWM of the root process. Sampled by the harness every ~100 ms.
 */
import * as fs from 'node:fs';

const CLK_TCK = 100; // sysconf(_SC_CLK_TCK) on Linux/x86-64 and arm64

interface StatLine { ppid: number; utime: number; stime: number; cutime: number; cstime: number }

function readStat(pid: number): StatLine | null {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    const rest = s.slice(s.lastIndexOf(')') + 2).split(' ');
    // rest[0] = state (field 3); ppid = field 4; utime.. = fields 14–17
    return { ppid: Number(rest[1]), utime: Number(rest[11]), stime: Number(rest[12]), cutime: Number(rest[13]), cstime: Number(rest[14]) };
  } catch {
    return null;
  }
}

function statusKb(pid: number, key: string): number {
  try {
    const s = fs.readFileSync(`/proc/${pid}/status`, 'latin1');
    const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(s);
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** The pid and all its live descendants. */
export function processTree(root: number): number[] {
  const kids = new Map<number, number[]>();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const st = readStat(Number(d));
    if (st === null) continue;
    const l = kids.get(st.ppid) ?? [];
    l.push(Number(d));
    kids.set(st.ppid, l);
  }
  const out: number[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const p = stack.pop()!;
    out.push(p);
    for (const c of kids.get(p) ?? []) stack.push(c);
  }
  return out;
}

export class TreeSampler {
  cpuSeconds = 0;
  peakRssBytes = 0;
  hwmBytes = 0;
  samples = 0;
  private readonly seen = new Map<number, number>(); // pid → last cpu ticks (a pid that exits keeps its last value)
  constructor(readonly root: number) {}

  sample(): void {
    const pids = processTree(this.root);
    let rss = 0;
    for (const p of pids) {
      const st = readStat(p);
      if (st === null) continue;
      this.seen.set(p, st.utime + st.stime + (p === this.root ? st.cutime + st.cstime : 0));
      rss += statusKb(p, 'VmRSS') * 1024;
    }
    let ticks = 0;
    for (const v of this.seen.values()) ticks += v;
    this.cpuSeconds = ticks / CLK_TCK;
    if (rss > this.peakRssBytes) this.peakRssBytes = rss;
    const hwm = statusKb(this.root, 'VmHWM') * 1024;
    if (hwm > this.hwmBytes) this.hwmBytes = hwm;
    this.samples++;
  }
}
