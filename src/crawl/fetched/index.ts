/**
 * src/crawl/fetched — stage 2 of a page job (thesis Fig. 2: crawling threads → parser): a fetch's
 * answer counted and reported to the frontier, a redirect to URLseen, the body to the parse pool
 * whose output goes to the content stage (fetched-stage.ts).
 */
export { FetchedStage } from './fetched-stage.js';
