/**
 * src/crawl/core — what the stages of the pipeline (thesis Fig. 2) share: the crawler's parts and
 * state, the page job that travels the stages, the counters a checkpoint stores (crawler-core.ts).
 */
export { CrawlerCore, type CrawlerOptions, type PageJob } from './crawler-core.js';
