/**
 * src/crawl/urlseen — stage 5 of a page job (thesis Fig. 2: ContentSeen → URLseen, V.2): links,
 * redirects, sitemap entries, seeds and a cluster's batches into URLseen's DRUM, PLD pairs to STAR,
 * and URLseen's merges (urlseen-stage.ts).
 */
export { UrlSeenStage } from './urlseen-stage.js';
