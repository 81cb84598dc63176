/**
 * src/threads/drum — the DRUM thread (thesis IV.3): URLseen, ContentSeen and STAR's PLD store run
 * in worker threads (drum-host.ts) behind DrumProxy (drum-proxy.ts), which batches check, update
 * and check+update tuples and gets results back in arrival order; drum-codec.ts holds the record
 * layouts of those batches and results (URL records as aux, content values, result chunks).
 */
export { BatchWriter, contentAux, decodeContentValue, decodeResults, discoverySuffix, encodeAux, encodeContentValue, encodeResultChunk, forEachResult, forEachTuple, le32, scanUniqueUrls, withSuffix, type UniqueUrls } from './drum-codec.js';
export { DrumProxy, DrumThread, PldStoreProxy, type DrumProxyStats } from './drum-proxy.js';
