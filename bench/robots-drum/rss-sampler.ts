/**
 * Memory samples of one process from /proc/<pid>/status (VmRSS: resident now, all threads; VmHWM:
 * the kernel's peak of VmRSS since the process started) and their summary for a bench's JSON: peak,
 * mean, samples over a limit and a timeline of the maximum per `bucketS` seconds.
 */
import * as fs from 'node:fs';

export interface RssSample { t: number; rss: number; hwm: number }

/** { rss, hwm } in bytes, or null when the process is gone. */
export function sampleMem(pid: number): { rss: number; hwm: number } | null {
  let s: string;
  try {
    s = fs.readFileSync(`/proc/${pid}/status`, 'latin1');
  } catch {
    return null;
  }
  const rss = /^VmRSS:\s+(\d+) kB/m.exec(s);
  const hwm = /^VmHWM:\s+(\d+) kB/m.exec(s);
  if (rss === null || hwm === null) return null; // a zombie has no Vm lines
  return { rss: Number(rss[1]) * 1024, hwm: Number(hwm[1]) * 1024 };
}

const MiB = 2 ** 20;
const r1 = (x: number): number => Math.round(x * 10) / 10;

export function summarizeRss(samples: readonly RssSample[], limitBytes: number, bucketS = 30): {
  samples: number; peakMiB: number; peakAtS: number; meanMiB: number; hwmMiB: number; samplesOverRam: number;
  /** [seconds, max VmRSS MiB within the bucket ending there] */
  timeline: [number, number][];
} {
  let peak = 0, peakAt = 0, sum = 0, hwm = 0, over = 0;
  const timeline: [number, number][] = [];
  for (const s of samples) {
    if (s.rss > peak) [peak, peakAt] = [s.rss, s.t];
    sum += s.rss;
    hwm = Math.max(hwm, s.hwm);
    if (s.rss > limitBytes) over++;
    const b = Math.ceil(s.t / bucketS) * bucketS;
    const last = timeline[timeline.length - 1];
    if (last !== undefined && last[0] === b) last[1] = Math.max(last[1], r1(s.rss / MiB));
    else timeline.push([b, r1(s.rss / MiB)]);
  }
  return {
    samples: samples.length, peakMiB: r1(peak / MiB), peakAtS: Math.round(peakAt), meanMiB: r1(samples.length === 0 ? 0 : sum / samples.length / MiB),
    hwmMiB: r1(hwm / MiB), samplesOverRam: over, timeline,
  };
}
