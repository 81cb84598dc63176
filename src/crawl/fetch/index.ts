/**
 * src/crawl/fetch — stage 1 of a page job (thesis Fig. 2: the crawling threads): a released page
 * fetched on this thread or ordered from a page worker, robots.txt fetches, and the Fetcher's
 * options from the config (fetch-stage.ts, ../ports/fetcher-options.ts).
 */
export { FetchStage, newFetcher, fetcherOptions } from './fetch-stage.js';
