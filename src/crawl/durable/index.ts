/**
 * src/crawl/durable — stage 7 of a page job, after the thesis' Fig. 2 (whose crawl was not resumed):
 * the sync that makes written pages durable and records them in done.log (durable-stage.ts).
 */
export { DurableStage } from './durable-stage.js';
