/**
 * The main thread's V8 heap under --ram. Every crawl structure on the main thread has a share of
 * --ram (ram-budget.ts: about 0.21 of the shareable part; the rest is off-heap or in worker threads
 * with their own resourceLimits), but V8 sizes an isolate's heap from the machine, not from
 * that budget: with no limit it lets garbage pile up between major collections and the committed
 * heap runs to two or three times the live data (measured at --ram 512M on 10^6 hosts: 328 MiB
 * committed for ~92 MiB live; bench/robots-drum/README.md). So bin/drumcrawl starts node with
 *
 *   --max-old-space-size = max(128, 9/32 of --ram in MiB)   (the main thread's shares, ~0.21 of
 *                                                            --ram less the fixed part, plus what the
 *                                                            fetch concurrency bounds: ≥ 64 MiB)
 *   --max-semi-space-size = --ram in MiB / 128, between 4 and 16
 *
 * so that the fixed part, the shares off this heap and this heap's limit together fit in --ram
 * (test/frontier/ram-plan.test.ts)
 *
 * computed by the same rule in the launcher's shell (bin/drumcrawl; test/cli/launcher.test.ts
 * holds the two to the same numbers). V8 flags are process-wide, and a worker created while they are
 * set gets them instead of its own resourceLimits (a parse worker capped at 68 MiB would get the
 * main thread's limit), so the CLI resets them before any worker starts: the main isolate keeps the
 * limits it was created with.
 */
import v8 from 'node:v8';

const MiB = 1024 * 1024;

export interface HeapFlags {
  oldSpaceMb: number;
  semiSpaceMb: number;
}

/** The main isolate's limits for a --ram budget (the launcher's rule). */
export function mainHeapFlags(ramBytes: number): HeapFlags {
  const mib = ramBytes / MiB;
  return {
    oldSpaceMb: Math.max(128, Math.floor((mib * 9) / 32)),
    semiSpaceMb: Math.min(16, Math.max(4, Math.floor(mib / 128))),
  };
}

/** Lets workers created from now on take their own resourceLimits (see the header). */
export function releaseWorkerHeapFlags(): void {
  v8.setFlagsFromString('--max-old-space-size=0');
  v8.setFlagsFromString('--max-semi-space-size=0');
}

/**
 * A warning when the main heap's limit does not follow --ram: far above it (node started without
 * the launcher: RSS is not held under --ram) or below it (the frontier's share may not fit).
 */
export function heapWarning(ramBytes: number, limitBytes: number = v8.getHeapStatistics().heap_size_limit): string | null {
  const want = mainHeapFlags(ramBytes).oldSpaceMb;
  // heap_size_limit is the old space plus the young generation (3 semi-spaces) and a little more.
  const oldMb = limitBytes / MiB - 3 * 16;
  if (oldMb > want * 1.5) {
    return `the main thread's heap may grow to ${Math.round(limitBytes / MiB)} MiB, beyond what --ram ${Math.round(ramBytes / MiB)}M allows it (${want} MiB), so RSS is not held under --ram: start the crawler through bin/drumcrawl, which sets --max-old-space-size from --ram`;
  }
  if (oldMb < want * 0.75) {
    return `the main thread's heap is limited to ${Math.round(limitBytes / MiB)} MiB, below what --ram ${Math.round(ramBytes / MiB)}M gives the frontier (${want} MiB): a larger --max-old-space-size, or a smaller --ram, avoids running out of heap`;
  }
  return null;
}

/** workers started by startWithInitialOldSpace whose isolate does not exist yet */
let initialOldPending = 0;

/**
 * Starts a worker (`start`) whose isolate gets `initialOldMb` as its first old-generation limit
 * (V8's --initial-old-space-size; node's resourceLimits has no such field). V8 reads the flag when
 * it creates an isolate, and the flag is process-wide: it is set here and cleared once every
 * worker started this way is online (its isolate exists) or gone. An isolate another caller
 * creates in that window gets it too, so the caller waits for 'online' before starting other
 * workers (PageWorkerPool.online). The worker's resourceLimits still cap its old generation;
 * callers keep `initialOldMb` well under that cap (pageWorkerInitialOldMb: at most half).
 */
export function startWithInitialOldSpace<W extends NodeJS.EventEmitter>(initialOldMb: number, start: () => W): W {
  v8.setFlagsFromString(`--initial-old-space-size=${Math.max(0, Math.floor(initialOldMb))}`);
  initialOldPending++;
  let w: W;
  try {
    w = start();
  } catch (e) {
    settle();
    throw e;
  }
  let settled = false;
  const once = (): void => {
    if (settled) return;
    settled = true;
    settle();
  };
  w.once('online', once);
  w.once('exit', once);
  return w;
}

function settle(): void {
  if (--initialOldPending === 0) v8.setFlagsFromString('--initial-old-space-size=0');
}
