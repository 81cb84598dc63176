/** What the robots stage tests share: pumping a RobotsStage until a condition holds. */
import type { RobotsStage } from '../../src/crawl/ports/robots-stage.js';

/** Pumps `stage` every 10 ms until `cond()` holds; throws after `ms` (a bound on a hang, not a speed). */
export async function until(cond: () => boolean, stage: RobotsStage, ms = 120_000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error('timed out');
    stage.pump();
    await new Promise((r) => setTimeout(r, 10));
  }
}
