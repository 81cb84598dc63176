/**
 * A tiny dependency-free SVG line chart for the committed bench results (rendered by GitHub in
 * docs/benchmarks.md). Linear or log10 axes, one polyline per series, optional dashed series
 * (used for the analytic model curves beside measured ones), markers, legend.
 */

export interface Series {
  name: string;
  points: Array<[number, number]>;
  dashed?: boolean;
  color?: string;
  markers?: boolean;
  /** Points only (no line) for this series, e.g. per-PLD counts under binned means. */
  scatter?: boolean;
  /** Dot radius of a scatter series (default 2, translucent); larger radii are drawn opaque. */
  radius?: number;
}

export interface ChartOptions {
  title: string;
  xLabel: string;
  yLabel: string;
  series: Series[];
  logX?: boolean;
  logY?: boolean;
  width?: number;
  height?: number;
  yMin?: number;
  yMax?: number;
  /** Plain points (no line), e.g. a scatter of per-PLD counts. */
  scatter?: boolean;
}

const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#17becf'];

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function fmt(v: number): string {
  const a = Math.abs(v);
  if (a >= 1e9) return `${+(v / 1e9).toPrecision(3)}G`;
  if (a >= 1e6) return `${+(v / 1e6).toPrecision(3)}M`;
  if (a >= 1e4) return `${+(v / 1e3).toPrecision(3)}k`;
  if (a >= 1 || a === 0) return `${+v.toPrecision(3)}`;
  return `${+v.toPrecision(2)}`;
}

function ticks(lo: number, hi: number, log: boolean): number[] {
  if (log) {
    const out: number[] = [];
    for (let e = Math.floor(lo); e <= Math.ceil(hi); e++) if (e >= lo - 1e-9 && e <= hi + 1e-9) out.push(e);
    if (out.length >= 2) return out;
    return [lo, hi];
  }
  const span = hi - lo || 1;
  const raw = span / 5;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => span / s <= 6) ?? raw;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

export function lineChart(o: ChartOptions): string {
  const W = o.width ?? 720, H = o.height ?? 420;
  const ml = 70, mr = 20, mt = 40, mb = 55;
  const legendH = 18 * o.series.length;
  const pw = W - ml - mr, ph = H - mt - mb;
  const tx = (v: number) => (o.logX ? Math.log10(v) : v);
  const ty = (v: number) => (o.logY ? Math.log10(v) : v);
  const all = o.series.flatMap((s) => s.points).filter(([x, y]) => Number.isFinite(tx(x)) && Number.isFinite(ty(y)));
  let x0 = Math.min(...all.map((p) => tx(p[0]))), x1 = Math.max(...all.map((p) => tx(p[0])));
  let y0 = o.yMin !== undefined ? ty(o.yMin) : Math.min(...all.map((p) => ty(p[1])));
  let y1 = o.yMax !== undefined ? ty(o.yMax) : Math.max(...all.map((p) => ty(p[1])));
  if (!o.logY && o.yMin === undefined) y0 = Math.min(0, y0);
  if (o.logY) { y0 = Math.floor(y0); y1 = Math.ceil(y1); }
  if (o.logX) { x0 = Math.floor(x0); x1 = Math.ceil(x1); }
  if (x1 === x0) x1 = x0 + 1;
  if (y1 === y0) y1 = y0 + 1;
  if (!o.logY) y1 += (y1 - y0) * 0.05;
  const X = (v: number) => ml + ((tx(v) - x0) / (x1 - x0)) * pw;
  const Y = (v: number) => mt + ph - ((ty(v) - y0) / (y1 - y0)) * ph;
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H + legendH}" viewBox="0 0 ${W} ${H + legendH}" font-family="sans-serif" font-size="12">`);
  parts.push(`<rect width="100%" height="100%" fill="white"/>`);
  parts.push(`<text x="${W / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${esc(o.title)}</text>`);
  for (const t of ticks(y0, y1, !!o.logY)) {
    const v = o.logY ? 10 ** t : t;
    const y = Y(v);
    parts.push(`<line x1="${ml}" x2="${ml + pw}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}" stroke="#ddd"/>`);
    parts.push(`<text x="${ml - 6}" y="${(y + 4).toFixed(1)}" text-anchor="end">${fmt(v)}</text>`);
  }
  for (const t of ticks(x0, x1, !!o.logX)) {
    const v = o.logX ? 10 ** t : t;
    const x = X(v);
    parts.push(`<line x1="${x.toFixed(1)}" x2="${x.toFixed(1)}" y1="${mt}" y2="${mt + ph}" stroke="#eee"/>`);
    parts.push(`<text x="${x.toFixed(1)}" y="${mt + ph + 16}" text-anchor="middle">${fmt(v)}</text>`);
  }
  parts.push(`<rect x="${ml}" y="${mt}" width="${pw}" height="${ph}" fill="none" stroke="#333"/>`);
  parts.push(`<text x="${ml + pw / 2}" y="${mt + ph + 38}" text-anchor="middle">${esc(o.xLabel)}${o.logX ? ' (log)' : ''}</text>`);
  parts.push(`<text transform="translate(16 ${mt + ph / 2}) rotate(-90)" text-anchor="middle">${esc(o.yLabel)}${o.logY ? ' (log)' : ''}</text>`);
  o.series.forEach((s, i) => {
    const c = s.color ?? PALETTE[i % PALETTE.length]!;
    const pts = s.points.filter(([x, y]) => Number.isFinite(tx(x)) && Number.isFinite(ty(y)) && ty(y) >= y0 - 1e-9 && ty(y) <= y1 + 1e-9);
    const dots = o.scatter || s.scatter === true;
    if (!dots && pts.length > 1) {
      const d = pts.map(([x, y]) => `${X(x).toFixed(1)},${Y(y).toFixed(1)}`).join(' ');
      parts.push(`<polyline fill="none" stroke="${c}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''} points="${d}"/>`);
    }
    if (dots || (s.markers !== false && !s.dashed)) {
      const r = dots ? (s.radius ?? 2) : 3;
      const faint = dots && s.radius === undefined;
      for (const [x, y] of pts) parts.push(`<circle cx="${X(x).toFixed(1)}" cy="${Y(y).toFixed(1)}" r="${r}" fill="${c}"${faint ? ' fill-opacity="0.35"' : ''}${dots && !faint ? ' stroke="black" stroke-width="1"' : ''}/>`);
    }
    const ly = H + 4 + i * 18;
    parts.push(`<line x1="${ml}" x2="${ml + 28}" y1="${ly}" y2="${ly}" stroke="${c}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`);
    parts.push(`<text x="${ml + 36}" y="${ly + 4}">${esc(s.name)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}
