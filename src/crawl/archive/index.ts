/**
 * src/crawl/archive — stage 4 of a page job (thesis Fig. 2, after ContentSeen): ContentSeen's
 * answers become response or revisit records and crawl-log lines, and a page's links go on to
 * URLseen; pages outside dedup are archived as received (archive-stage.ts).
 */
export { ArchiveStage, baseDirectory } from './archive-stage.js';
