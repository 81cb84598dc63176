/**
 * src/frontier/politeness — the politeness heaps (thesis VII.1): a host heap holds each host to τh
 * and an IP heap each server to τs (heap.ts, host-table.ts, politeness.ts); delays scale down with
 * STAR's budget and only lengthen with Crawl-delay and Retry-After (pacing.ts); the low-PLD pace
 * (pld-pace.ts); the robots and DNS gate before a host's first release (robots-gate.ts).
 */
export {
  Politeness,
  AddResult,
  type PolitenessOptions,
  type RobotsInfo,
  type RobotsRulesLike,
  type RobotsRequest,
  type FetchOutcome,
  type DropReason,
  type IpGate,
} from './politeness.js';
export { IdHeap } from './heap.js';
export { ipQueueKey } from './ip-key.js';
export { pldSlot } from './pld-pace.js';
