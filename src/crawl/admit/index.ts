/**
 * src/crawl/admit — stage 6 of a page job (thesis Fig. 2: URLseen → STAR → BEAST): URLseen's unique
 * URLs into the frontier (admit-stage.ts).
 */
export { AdmitStage } from './admit-stage.js';
