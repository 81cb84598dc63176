/**
 * src/state — the crawl's state on disk (thesis Fig. 2: every queue on disk; the resume after
 * anything): the checkpoint manifest, pending set and done log (checkpoint.ts), the state
 * directory's lock (state-lock.ts), the WARC recovery after a kill (recovery.ts), the admit log
 * and the dedup of pages already done at a resume (admit-log.ts, resume-dedup.ts).
 */
export { AdmitLog } from './admit-log.js';
export { DONE_FILE, DoneLog, MANIFEST_FILE, MANIFEST_VERSION, decodeDoneRecords, decodePending, emptyCounters, encodeDoneRecords, encodePending, manifestChecksum, readDoneLog, readManifest, readPending, resolveRecordedConfig, writeFileAtomic, writeManifest, writePending, type CheckpointManifest, type CrawlCounters } from './checkpoint.js';
export { recoverWarc, relocate } from './recovery.js';
export { ResumeDedup } from './resume-dedup.js';
export { StateLock } from './state-lock.js';
