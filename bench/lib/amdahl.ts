/**
 * Projected pages/s of one crawler process on N cores from its measured CPU per page per thread
 * role (bench/lib/thread-cpu.ts), by Amdahl's argument:
 *
 *   - the main thread is serial: it does m ms of CPU per page, so pages/s ≤ 1000 / m whatever N;
 *   - each DRUM thread and the WARC writer's thread ('archive') is serial too: pages/s ≤ 1000 / d_i;
 *   - the rest (parse workers, runtime threads) is parallel and divides over the cores the serial
 *     threads leave: at X pages/s they hold X·(m + Σd)/1000 cores, the parallel work needs
 *     X·(p + r)/1000 of the N − that left, so X ≤ 1000·N / (m + Σd + p + r), the whole CPU per page.
 *
 *   ceiling(N) = min(1000 / m, min_i 1000 / d_i, 1000·N / total)
 *
 * Assumptions (each makes it an upper bound): the per-page costs measured on the bench box hold
 * on N cores (no added contention for memory bandwidth, locks, or the kernel's network stack);
 * the parse pool and the runtime's threads grow with N; the web being crawled costs the crawler's
 * cores nothing (in the bench simweb shares them).
 */
import type { RoleCost } from './thread-cpu.js';

export interface CeilingRow {
  cores: number;
  pagesPerSec: number;
  /** what bounds it: 'main', another serial thread's role, or 'cores' (the whole CPU per page) */
  bound: string;
}

export interface Projection {
  model: string;
  /** ms per page of the serial main thread, each other serial thread (DRUM, archive), and the whole process */
  mainMsPerPage: number;
  serialMsPerPage: Record<string, number>;
  totalMsPerPage: number;
  /** bounds on their own: 1000 / main, 1000 / the busiest other serial thread */
  mainBound: number;
  serialBound: number;
  ceilings: CeilingRow[];
}

export const AMDAHL_MODEL =
  'ceiling(N) = min(1000/main, min over the other serial threads (DRUM, archive) of 1000/cost, 1000*N/total), ms CPU per page measured per thread role; ' +
  'the main, each DRUM and the archive thread are serial, parse or page workers and runtime threads (GC, libuv pool) divide over the cores left; ' +
  'per-page costs assumed to hold on N cores; the crawled web costs no crawler core';

export function projectCeiling(costs: RoleCost[], cores: number[] = [8, 16, 32, 64]): Projection {
  const main = costs.find((c) => c.role === 'main')?.msPerPage ?? 0;
  const serial = costs.filter((c) => c.role.startsWith('drum:') || c.role === 'archive');
  const total = costs.reduce((s, c) => s + c.msPerPage, 0);
  const mainBound = main > 0 ? 1000 / main : Infinity;
  let otherBound = Infinity;
  let serialRole = '';
  for (const d of serial) {
    if (d.msPerPage > 0 && 1000 / d.msPerPage < otherBound) {
      otherBound = 1000 / d.msPerPage;
      serialRole = d.role;
    }
  }
  const ceilings = cores.map((n) => {
    const coreBound = total > 0 ? (1000 * n) / total : Infinity;
    const x = Math.min(mainBound, otherBound, coreBound);
    const bound = x === mainBound ? 'main' : x === otherBound ? serialRole : 'cores';
    return { cores: n, pagesPerSec: Math.round(x), bound };
  });
  return {
    model: AMDAHL_MODEL,
    mainMsPerPage: main,
    serialMsPerPage: Object.fromEntries(serial.map((d) => [d.role, d.msPerPage])),
    totalMsPerPage: total,
    mainBound: Math.round(mainBound),
    serialBound: Math.round(otherBound),
    ceilings,
  };
}
