/**
 * bench/star — STAR on a simweb with spam farms: pages crawled per PLD vs PLD in-degree with STAR's
 * budgets on and off (the thesis' Fig. 7(b), ch. VI).
 *
 *   npm run bench:star                 # the REAL crawl (bench/star/crawl.ts) → bench/results/star-pld.{json,svg}
 *   npm run bench:star -- --sim        # the virtual-clock simulation over src/frontier (bench/star/sim.ts)
 *                                      #   → bench/results/star-sim.{json,svg}
 */
import { args } from '../lib/report.js';

await import(args().has('sim') ? './sim.js' : './crawl.js');
