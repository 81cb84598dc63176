/**
 * bench/soak's SVG charts (bench/lib/svg.ts), over the soak's minutes, with the SIGKILL, SIGTERM
 * and resumes drawn as dashed vertical lines:
 *
 *   <name>-pages.svg    pages/s (10 s and 1 min means)
 *   <name>-cpu.svg      CPU ms per page per minute: the process, and each thread role
 *   <name>-rss.svg      VmRSS and VmHWM against --ram, the main thread's V8 heap
 *   <name>-pauses.svg   URLseen and ContentSeen merge durations, checkpoint durations, the event
 *                       loop's longest delay per second
 *   <name>-urlseen.svg  pages/s (1 min means) against URLseen's size
 */
import { lineChart, type Series } from '../lib/svg.js';
import type { SoakEvent } from './judge.js';
import type { Pause, Sample } from './sample.js';

/** Per-run means of `value` over windows of `w` seconds: [t (min), mean rate]. */
function rate(samples: readonly Sample[], w: number, value: (s: Sample) => number, per: (a: Sample, b: Sample) => number = (a, b) => b.t - a.t): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let a: Sample | null = null;
  for (const s of samples) {
    if (!s.up) continue;
    if (a === null || s.run !== a.run) {
      a = s;
      continue;
    }
    if (s.t - a.t >= w) {
      const d = per(a, s);
      if (d > 0) out.push([Math.round(((a.t + s.t) / 2 / 60) * 1000) / 1000, (value(s) - value(a)) / d]);
      a = s;
    }
  }
  return out;
}

function markers(events: readonly SoakEvent[], yMax: number): Series[] {
  const out: Series[] = [];
  const style: Record<string, [string, string]> = { sigkill: ['SIGKILL', '#d62728'], sigterm: ['SIGTERM', '#ff7f0e'], resume: ['resume', '#2ca02c'] };
  const named = new Set<string>();
  for (const e of events) {
    const st = style[e.kind];
    if (st === undefined) continue;
    const name = named.has(e.kind) ? `${st[0]} ` : st[0];
    named.add(e.kind);
    out.push({ name, points: [[e.t / 60, 0], [e.t / 60, yMax]], dashed: true, color: st[1] });
  }
  return out;
}

export function soakCharts(title: string, samples: readonly Sample[], pauses: readonly Pause[], events: readonly SoakEvent[], ramMiB: number): Record<string, string> {
  const p10 = rate(samples, 10, (s) => s.pages);
  const p60 = rate(samples, 60, (s) => s.pages);
  const maxRate = Math.max(1, ...p10.map((p) => p[1]));
  const pages = lineChart({
    title: `${title}: pages/s`, xLabel: 'minutes', yLabel: 'pages/s', yMin: 0,
    series: [
      { name: '10 s mean', points: p10, markers: false, color: '#9ecae1' },
      { name: '1 min mean', points: p60, color: '#1f77b4' },
      ...markers(events, maxRate),
    ],
  });
  const perPage = (a: Sample, b: Sample): number => b.pages - a.pages;
  const roles = new Set<string>();
  for (const s of samples) for (const k of Object.keys(s.roleMs)) roles.add(k);
  const cpuSeries: Series[] = [{ name: 'process', points: rate(samples, 60, (s) => s.cpuMs, perPage) }];
  for (const r of [...roles].sort()) cpuSeries.push({ name: r, points: rate(samples, 60, (s) => s.roleMs[r] ?? 0, perPage), markers: false });
  const maxCpu = Math.max(0.1, ...cpuSeries[0]!.points.map((p) => p[1]));
  const cpu = lineChart({
    title: `${title}: CPU per page (1 min means)`, xLabel: 'minutes', yLabel: 'ms per page', yMin: 0,
    series: [...cpuSeries, ...markers(events, maxCpu)],
  });
  const up = samples.filter((s) => s.up || s.rssMiB > 0);
  const rss = lineChart({
    title: `${title}: memory against --ram`, xLabel: 'minutes', yLabel: 'MiB', yMin: 0,
    series: [
      { name: 'VmRSS', points: up.map((s) => [s.t / 60, s.rssMiB]), markers: false },
      { name: 'VmHWM', points: up.map((s) => [s.t / 60, s.hwmMiB]), markers: false },
      { name: 'main V8 heap used', points: up.filter((s) => s.up).map((s) => [s.t / 60, s.heapMiB]), markers: false },
      { name: `--ram (${ramMiB} MiB)`, points: [[0, ramMiB], [Math.max(1, ...samples.map((s) => s.t)) / 60, ramMiB]], dashed: true, color: '#000000' },
      ...markers(events, ramMiB),
    ],
  });
  const pts = (k: Pause['kind']): Array<[number, number]> => pauses.filter((p) => p.kind === k).map((p) => [p.t / 60, p.ms / 1000]);
  const loop: Array<[number, number]> = samples.filter((s) => s.up && Number.isFinite(s.loopMaxMs)).map((s) => [s.t / 60, s.loopMaxMs / 1000]);
  const maxPause = Math.max(0.1, ...pauses.map((p) => p.ms / 1000), ...loop.map((p) => p[1]));
  const pausesSvg = lineChart({
    title: `${title}: merge and checkpoint durations, event-loop delay`, xLabel: 'minutes', yLabel: 'seconds', yMin: 0,
    series: [
      { name: 'URLseen merge', points: pts('urlseen'), scatter: true, radius: 3 },
      { name: 'ContentSeen merge', points: pts('contentseen'), scatter: true },
      { name: 'checkpoint', points: pts('checkpoint'), scatter: true, radius: 4 },
      ...(pauses.some((p) => p.kind === 'hold') ? [{ name: 'checkpoint: scheduler held', points: pts('hold'), scatter: true, radius: 2 }] : []),
      { name: 'event loop: longest delay in each second', points: loop, markers: false, color: '#7f7f7f' },
      ...markers(events, maxPause),
    ],
  });
  const bySeen: Array<[number, number]> = [];
  {
    let a: Sample | null = null;
    for (const s of samples) {
      if (!s.up) continue;
      if (a === null || s.run !== a.run) {
        a = s;
        continue;
      }
      if (s.t - a.t >= 60) {
        bySeen.push([s.seen, (s.pages - a.pages) / (s.t - a.t)]);
        a = s;
      }
    }
  }
  const urlseen = lineChart({
    title: `${title}: pages/s against URLseen's size (1 min means)`, xLabel: 'URLs in URLseen', yLabel: 'pages/s', yMin: 0,
    series: [{ name: 'pages/s', points: bySeen }],
  });
  return { pages, cpu, rss, pauses: pausesSvg, urlseen };
}
