/**
 * src/crawl/content — stage 3 of a page job (thesis Fig. 2: parser → ContentSeen): the parser's
 * output to ContentSeen's DRUM, or, outside dedup, to the archive stage; ContentSeen's merges
 * (content-stage.ts).
 */
export { ContentStage } from './content-stage.js';
