/**
 * bench/soak's verdicts, from its per-second samples (sample.ts), the crawler's pause lists, the
 * signal/resume timeline, simweb's full request log (web-child.ts) and the crawl's WARC files with
 * their CDXJ indexes. Each verdict carries its figures; `ok` is the criterion (#31):
 *
 *   speed     pages/s over the last sixth of the run ≥ 0.9 × over [1/12, 1/4] (minutes 50–60 against
 *             5–15 of an hour); CPU per page in the same two windows within 10 %;
 *   rss       VmHWM of every crawler process ≤ --ram;
 *   stalls    no second in which no page was started or finished while the frontier had a URL due
 *             (`dueNow` at both ends), outside the windows from a signal to the next run's first
 *             request;
 *   fds       open descriptors flat: the late window's maximum ≤ 1.1 × the early window's + 16;
 *   checkpoints  periodic checkpoint duration not growing: the mean of the last three ≤ 1.5 × the
 *             mean of the first three;
 *   resume    the late resume (after the SIGTERM stop) makes its first request within 2 s;
 *   lost      every page simweb answered 200 before the last durable checkpoint of its run is in the
 *             WARC (CDXJ): for a run SIGKILLed, its last checkpoint that completed; for a run stopped
 *             by SIGTERM, the stop's own, unless the signal came before the crawler took it (while
 *             it opened its state: it then died as a kill would) (pages fetched after a killed run's last checkpoint come
 *             back through the frontier and are fetched again, later); and the records of the pages
 *             fetched in the two minutes before each signal have valid payload digests;
 *   twice     no page was requested twice unless its earlier request fell in an in-flight window:
 *             [kill − L, exit + 0.25 s] for the SIGKILL (L = max(10 s, 2 × the longest URLseen merge
 *             of the two minutes before it: the time a fetched page takes to become durable); the
 *             process runs until its exit is seen, and simweb reads what it sent a little later:
 *             DRAIN_S), and [signal − 1 s, exit + 0.25 s] for a SIGTERM.
 */
import { createReadStream, openSync, readSync, closeSync, readdirSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import path from 'node:path';
import readline from 'node:readline';
import { base32Encode } from '../../src/util/digest.js';
import type { Pause, Sample } from './sample.js';

export interface SoakEvent {
  kind: 'start' | 'sigkill' | 'sigterm' | 'exit' | 'resume';
  run: number;
  /** seconds since the soak started */
  t: number;
}

interface Window { from: number; to: number }

function inAny(t: number, ws: readonly Window[]): boolean {
  return ws.some((w) => t >= w.from && t <= w.to);
}

/** pages/s and CPU ms per page (total and per role) between the first and last sample of each run inside [from, to]. */
export function windowRates(samples: readonly Sample[], from: number, to: number): { pagesPerSec: number; cpuMsPerPage: number; roleMsPerPage: Record<string, number>; pages: number; seconds: number; load1: number } {
  let pages = 0, seconds = 0, cpu = 0, load = 0, nLoad = 0;
  const role: Record<string, number> = {};
  const byRun = new Map<number, Sample[]>();
  for (const s of samples) {
    if (!s.up || s.t < from || s.t > to) continue;
    (byRun.get(s.run) ?? byRun.set(s.run, []).get(s.run)!).push(s);
    load += s.load1;
    nLoad++;
  }
  for (const list of byRun.values()) {
    if (list.length < 2) continue;
    const a = list[0]!, b = list[list.length - 1]!;
    pages += b.pages - a.pages;
    seconds += b.t - a.t;
    cpu += b.cpuMs - a.cpuMs;
    for (const k of Object.keys(b.roleMs)) role[k] = (role[k] ?? 0) + b.roleMs[k]! - (a.roleMs[k] ?? 0);
  }
  const per = (x: number): number => (pages > 0 ? Math.round((x / pages) * 1000) / 1000 : NaN);
  return {
    pagesPerSec: seconds > 0 ? Math.round((pages / seconds) * 10) / 10 : 0,
    cpuMsPerPage: per(cpu),
    roleMsPerPage: Object.fromEntries(Object.entries(role).map(([k, v]) => [k, per(v)])),
    pages, seconds: Math.round(seconds), load1: nLoad > 0 ? Math.round((load / nLoad) * 10) / 10 : NaN,
  };
}

/** Seconds with no page started or finished while a URL was due, outside `excused`. */
export function stallSeconds(samples: readonly Sample[], excused: readonly Window[]): { t: number; dt: number }[] {
  const out: { t: number; dt: number }[] = [];
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1]!, b = samples[i]!;
    if (a.run !== b.run || !a.up || !b.up) continue;
    const dt = b.t - a.t;
    if (dt > 3) continue; // the sampler missed seconds: not judged
    if (b.pages !== a.pages || b.started !== a.started) continue;
    if (!(a.due && b.due)) continue;
    if (inAny(a.t, excused) || inAny(b.t, excused)) continue;
    out.push({ t: a.t, dt: Math.round(dt * 10) / 10 });
  }
  return out;
}

export interface RequestSummary {
  requests: number;
  pageRequests: number;
  /** per event (resume): seconds from the resume's start to its first request and first page request */
  firstAfter: { t: number; firstRequest: number | null; firstPage: number | null }[];
  /** page URLs requested twice outside the in-flight windows (count and a few) */
  twice: { count: number; excused: number; samples: string[] };
  /** page URLs answered 200 before `archivedBefore` missing from the WARC indexes */
  missing: { count: number; checked: number; samples: string[] };
  /** page URLs fetched in the two minutes before each signal: their WARC records' payload digests */
  digests: { checked: number; bad: number; samples: string[] };
}

interface CdxRef { file: string; offset: number; length: number; digest: string }

/** Every response record of the WARC indexes in `outDir` (URL → where its first capture is). */
function loadCdxj(outDir: string): Map<string, CdxRef> {
  const map = new Map<string, CdxRef>();
  for (const f of readdirSync(outDir).filter((x) => x.endsWith('.cdxj') || x.endsWith('.cdxj.open')).sort()) {
    for (const line of readFileSync(path.join(outDir, f), 'utf8').split('\n')) {
      if (line === '') continue;
      const j = JSON.parse(line.slice(line.indexOf(' ', line.indexOf(' ') + 1) + 1)) as Record<string, string>;
      if (j.mime === 'warc/revisit' || j.url === undefined || map.has(j.url)) continue;
      map.set(j.url, { file: j.filename!, offset: Number(j.offset), length: Number(j.length), digest: j.digest ?? '' });
    }
  }
  return map;
}

/** Reads one gzip member of a WARC file and checks its payload digest (sha1, base32) against the index's. */
function payloadDigestOk(outDir: string, r: CdxRef): boolean {
  const fd = openSync(path.join(outDir, r.file), 'r');
  try {
    const buf = Buffer.alloc(r.length);
    readSync(fd, buf, 0, r.length, r.offset);
    const rec = r.file.endsWith('.gz') ? gunzipSync(buf) : buf;
    const h = rec.indexOf('\r\n\r\n');
    const cl = /\r\nContent-Length: *(\d+)/i.exec(rec.subarray(0, h).toString('latin1'));
    if (h < 0 || cl === null) return false;
    const block = rec.subarray(h + 4, h + 4 + Number(cl[1]));
    const p = block.indexOf('\r\n\r\n');
    if (p < 0) return false;
    return base32Encode(createHash('sha1').update(block.subarray(p + 4)).digest()) === r.digest;
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads simweb's request log once. `base` is the soak's start (Unix ms); `events` its timeline;
 * `killWindowS` the L of each SIGKILL (by its t); `durableUntil` per run the t up to which its
 * fetched pages must be in the WARC (see `lost` above).
 */
/**
 * How long after a killed process's exit simweb may still log a request that process sent: what it
 * wrote before it died is delivered and read after. No resumed process can send one that soon — node
 * starts and the CLI loads before its first request, 315–385 ms of CPU (docs/performance.md, "Start-up
 * and real pages") — so a request logged before a resume's t + DRAIN_S belongs to the run before it:
 * it is in that run's in-flight window, and it is not the resume's first request.
 */
const DRAIN_S = 0.25;

export async function judgeRequests(
  logFile: string, base: number, port: number, outDir: string, events: readonly SoakEvent[], killWindowS: Map<number, number>,
  durableUntil: Map<number, number>,
): Promise<RequestSummary> {
  const resumes = events.filter((e) => e.kind === 'resume');
  const firstAfter = resumes.map((e) => ({ t: e.t, firstRequest: null as number | null, firstPage: null as number | null }));
  const windows: Window[] = [];
  for (const e of events) {
    // until the killed process is gone (the signal's t is taken before kill() and rounded to 0.1 s;
    // a request sent in between was in flight when the process died)
    if (e.kind === 'sigkill') {
      const exit = events.find((x) => x.kind === 'exit' && x.t >= e.t);
      windows.push({ from: e.t - (killWindowS.get(e.t) ?? 10), to: exit === undefined ? Infinity : exit.t + DRAIN_S });
    }
    if (e.kind === 'sigterm') {
      const exit = events.find((x) => x.kind === 'exit' && x.t >= e.t);
      windows.push({ from: e.t - 1, to: exit === undefined ? Infinity : exit.t + DRAIN_S });
    }
  }
  const signals = events.filter((e) => e.kind === 'sigkill' || e.kind === 'sigterm').map((e) => e.t);
  // The run a request belongs to: the last start/resume before it.
  const starts = events.filter((e) => e.kind === 'start' || e.kind === 'resume').sort((x, y) => x.t - y.t);
  const runAt = (t: number): number => {
    let r = starts[0]?.run ?? 1;
    for (const e of starts) if (e.t + (e.kind === 'resume' ? DRAIN_S : 0) <= t) r = e.run;
    return r;
  };
  const last = new Map<string, number>(); // page URL → t of its last request
  const ok200 = new Map<string, number>(); // page URL → t of its first 200
  let requests = 0, pageRequests = 0, twiceCount = 0, excused = 0;
  const twiceSamples: string[] = [];
  const rl = readline.createInterface({ input: createReadStream(logFile), crlfDelay: Infinity });
  for await (const line of rl) {
    const [startS, , statusS, host, p] = line.split('\t');
    if (p === undefined) continue;
    requests++;
    const t = (Number(startS) - base) / 1000;
    for (const f of firstAfter) {
      if (t < f.t + DRAIN_S) continue;
      const dt = Math.round((t - f.t) * 100) / 100;
      if (f.firstRequest === null || dt < f.firstRequest) f.firstRequest = dt;
      if (p.startsWith('/p/') && (f.firstPage === null || dt < f.firstPage)) f.firstPage = dt;
    }
    if (!p.startsWith('/p/')) continue;
    pageRequests++;
    const url = `http://${host}:${port}${p}`;
    const prev = last.get(url);
    if (prev !== undefined) {
      if (inAny(prev, windows)) excused++;
      else {
        twiceCount++;
        if (twiceSamples.length < 10) twiceSamples.push(`${url} at ${prev.toFixed(1)} s and ${t.toFixed(1)} s`);
      }
    }
    last.set(url, t);
    if (statusS === '200' && !ok200.has(url) && t < (durableUntil.get(runAt(t)) ?? -Infinity)) ok200.set(url, t);
  }
  const cdx = loadCdxj(outDir);
  let checked = 0, missingCount = 0;
  const missingSamples: string[] = [];
  const atRisk: string[] = [];
  for (const [url, t] of ok200) {
    checked++;
    if (!cdx.has(url)) {
      missingCount++;
      if (missingSamples.length < 10) missingSamples.push(`${url} (200 at ${t.toFixed(1)} s)`);
    } else if (signals.some((s) => t >= s - 120 && t < s) && atRisk.length < 3000) atRisk.push(url);
  }
  let bad = 0;
  const badSamples: string[] = [];
  for (const url of atRisk) {
    if (!payloadDigestOk(outDir, cdx.get(url)!)) {
      bad++;
      if (badSamples.length < 10) badSamples.push(url);
    }
  }
  return {
    requests, pageRequests, firstAfter,
    twice: { count: twiceCount, excused, samples: twiceSamples },
    missing: { count: missingCount, checked, samples: missingSamples },
    digests: { checked: atRisk.length, bad, samples: badSamples },
  };
}

/** The in-flight window L of a SIGKILL at t: max(10 s, 2 × the longest URLseen merge that ended in the two minutes before it). */
export function killWindow(pauses: readonly Pause[], t: number): number {
  let m = 0;
  for (const p of pauses) if (p.kind === 'urlseen' && p.t <= t && p.t >= t - 120) m = Math.max(m, p.ms);
  return Math.max(10, Math.round((2 * m) / 100) / 10);
}
