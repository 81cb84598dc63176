/**
 * The judge of the stop/resume user-flow suite (stop-resume.test.ts): from the server's request
 * log and what the state directory held at each stop, which requests a crawl stopped and resumed
 * many times may repeat, and whether each resume made progress.
 */
import type { SimwebReport } from './simweb-child.js';

/** One process of the crawl: from its start to its exit. */
export interface RunRecord {
  /** how the run was ended: 'sigint', 'sigkill', … ('end' for the run that finished the crawl) */
  stop: string;
  /** Date.now() at spawn and at exit */
  spawnedAt: number;
  exitedAt: number;
  /** when the run had recovered and opened its state (its "status server:" line), for resumes */
  readyAt: number | null;
  /** a SIGKILL's moment (Date.now() right before the signal) */
  killedAt: number | null;
  /** URLs in done.log right after a SIGKILL (durable since the last checkpoint) */
  doneAtKill: Set<string> | null;
  /** the start of the last checkpoint completed before a SIGKILL (ms) */
  checkpointStartAtKill: number | null;
}

/**
 * How long before a checkpoint began a page may have been dispatched and still not be covered by
 * it: a page whose request was on the wire or whose body was in the parse pool when the
 * checkpoint started (loopback fetches take milliseconds; parsing a page a few more).
 */
export const IN_FLIGHT_SLACK_MS = 1000;

function runOf(runs: readonly RunRecord[], t: number): number {
  for (let i = 0; i < runs.length; i++) if (t >= runs[i]!.spawnedAt && t <= runs[i]!.exitedAt) return i;
  return -1;
}

/**
 * The run that sent a request the server stamped at `t` and that arrived no earlier than `from`:
 * the first run alive at some moment of [from, t]. A stamp can be late (the server's event loop
 * stalled): a request a killed run wrote just before its kill can be stamped after the next run
 * was spawned, and belongs to the killed one all the same.
 */
function runOfWindow(runs: readonly RunRecord[], from: number, t: number): number {
  for (let i = 0; i < runs.length; i++) if (from <= runs[i]!.exitedAt && t >= runs[i]!.spawnedAt) return i;
  return -1;
}

/**
 * Every repeated request that is not allowed, as a message. A URL requested at a and again at b
 * (consecutive requests of it) is allowed only when
 *   - a and b fall in different runs (within one run the URLseen DRUM admits a URL once, and the
 *     suite's web has no failing host, so nothing is retried), and
 *   - the run of a ended by SIGKILL, a was not durable at the kill (not in done.log) and a started
 *     no earlier than IN_FLIGHT_SLACK_MS before the last checkpoint the run completed (everything
 *     finished before it is covered by it) — the in-flight window of the kill; or
 *   - the run of a ended by a graceful stop that aborted that fetch: `aborted` maps the URL to the
 *     times of its crawl-log CRAWL_FETCH_ABORTED lines, one of which falls in the run of a.
 */
export function repeatedRequests(r: Pick<SimwebReport, 'pageFetches' | 'pageStarts'> & Partial<Pick<SimwebReport, 'pageArrivals'>>, runs: readonly RunRecord[], aborted: ReadonlyMap<string, readonly number[]>): { bad: string[]; allowed: number; windowMs: number[] } {
  // Per URL its requests: [stamp, earliest arrival] (pageArrivals; without it, the stamp).
  const byUrl = new Map<string, [number, number][]>();
  r.pageFetches.forEach((u, i) => {
    const t = r.pageStarts[i]!;
    const req: [number, number] = [t, r.pageArrivals?.[i] ?? t];
    const l = byUrl.get(u);
    if (l === undefined) byUrl.set(u, [req]);
    else l.push(req);
  });
  const bad: string[] = [];
  const windowMs: number[] = [];
  let allowed = 0;
  for (const [u, reqs] of byUrl) {
    for (let i = 1; i < reqs.length; i++) {
      const [a, aFrom] = reqs[i - 1]!;
      const [b, bFrom] = reqs[i]!;
      const ra = runOfWindow(runs, aFrom, a);
      const rb = runOfWindow(runs, bFrom, b);
      const run = runs[ra];
      if (run === undefined || rb < 0) {
        bad.push(`${u}: requested at ${a} and ${b}, outside any run`);
        continue;
      }
      if (ra === rb) {
        bad.push(`${u}: requested twice within run ${ra + 1} (${run.stop}), ${(b - a).toFixed(0)} ms apart`);
        continue;
      }
      if (run.killedAt !== null) {
        if (run.doneAtKill!.has(u)) bad.push(`${u}: durable (in done.log) at the kill of run ${ra + 1}, requested again`);
        else if (run.checkpointStartAtKill !== null && a < run.checkpointStartAtKill - IN_FLIGHT_SLACK_MS) {
          bad.push(`${u}: requested ${(run.checkpointStartAtKill - a).toFixed(0)} ms before the last checkpoint of run ${ra + 1}, then again`);
        } else {
          allowed++;
          windowMs.push(run.killedAt - a);
        }
      } else if ((aborted.get(u) ?? []).some((t) => runOf(runs, t) === ra)) allowed++;
      else bad.push(`${u}: requested again after the graceful stop of run ${ra + 1} (${run.stop}) although it was not aborted`);
    }
  }
  return { bad, allowed, windowMs };
}

/** Per resumed run: ms from its "status server:" line to its first request (robots.txt included). */
export function resumeLatencies(r: SimwebReport, runs: readonly RunRecord[]): { run: number; ms: number | null }[] {
  const out: { run: number; ms: number | null }[] = [];
  runs.forEach((run, i) => {
    if (run.readyAt === null) return;
    const first = r.requestStarts.find((t) => t >= run.readyAt! && t <= run.exitedAt);
    out.push({ run: i + 1, ms: first === undefined ? null : first - run.readyAt });
  });
  return out;
}
