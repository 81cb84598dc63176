/**
 * Projected pages/s of one crawler process on N cores from its measured CPU per page per thread
 * role (bench/lib/thread-cpu.ts), by Amdahl's argument:
 *
 *   - the main thread is serial: it does m ms of CPU per page, so pages/s ≤ 1000 / m whatever N;
 *   - each DRUM thread is serial too: pages/s ≤ 1000 / d_i;
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
  /** what bounds it: 'main', a DRUM role, or 'cores' (the whole CPU per page) */
  bound: string;
}

export interface Projection {
  model: string;
  /** ms per page of the serial main thread, each DRUM thread, and the whole process */
  mainMsPerPage: number;
  drumMsPerPage: Record<string, number>;
  totalMsPerPage: number;
  /** bounds on their own: 1000 / main, 1000 / the busiest DRUM thread */
  mainBound: number;
  drumBound: number;
  ceilings: CeilingRow[];
}

export const AMDAHL_MODEL =
  'ceiling(N) = min(1000/main, min over DRUM threads of 1000/drum, 1000*N/total), ms CPU per page measured per thread role; ' +
  'the main and each DRUM thread are serial, parse workers and runtime threads (GC, libuv pool) divide over the cores left; ' +
  'per-page costs assumed to hold on N cores; the crawled web costs no crawler core';

export function projectCeiling(costs: RoleCost[], cores: number[] = [8, 16, 32, 64]): Projection {
  const main = costs.find((c) => c.role === 'main')?.msPerPage ?? 0;
  const drums = costs.filter((c) => c.role.startsWith('drum:'));
  const total = costs.reduce((s, c) => s + c.msPerPage, 0);
  const mainBound = main > 0 ? 1000 / main : Infinity;
  let drumBound = Infinity;
  let drumRole = '';
  for (const d of drums) {
    if (d.msPerPage > 0 && 1000 / d.msPerPage < drumBound) {
      drumBound = 1000 / d.msPerPage;
      drumRole = d.role;
    }
  }
  const ceilings = cores.map((n) => {
    const coreBound = total > 0 ? (1000 * n) / total : Infinity;
    const x = Math.min(mainBound, drumBound, coreBound);
    const bound = x === mainBound ? 'main' : x === drumBound ? drumRole : 'cores';
    return { cores: n, pagesPerSec: Math.round(x), bound };
  });
  return {
    model: AMDAHL_MODEL,
    mainMsPerPage: main,
    drumMsPerPage: Object.fromEntries(drums.map((d) => [d.role, d.msPerPage])),
    totalMsPerPage: total,
    mainBound: Math.round(mainBound),
    drumBound: Math.round(drumBound),
    ceilings,
  };
}
