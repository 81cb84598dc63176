/**
 * src/frontier — STAR budgets, BEAST disk queues, the robots gate, and host/IP politeness
 * (IRLbot thesis ch. VI and VII). Data flow:
 *
 *   URLseen unique ─► Star.assign (B, P) ─► Frontier.admit ─► BEAST Q1..Qj / QF (disk)
 *        PLD links ─► Star.addLinks (PLDedges → PLDindegree)          │ refill(): paced by RAM room
 *                                                                      ▼
 *        takeRobotsRequests ◄── QD ◄── host unknown ── robots gate ──► QR (disk, re-read on answers)
 *        → DNS → scheduleRobotsFetch → nextReady (kind=Robots, IP heap only) → robotsKnown/robotsFailed
 *                                                                      │ host known + allowed
 *                                                                      ▼
 *                                 RAM (≤ ramUrls): host heap τh × IP heap τs ─► nextReady ─► fetch
 *                                                                      ▲
 *                                                         fetchDone(u, outcome) (start-to-start)
 *
 * Public API (what src/crawl uses):
 *
 *   const star = await Star.open(new MemoryPldStore() | await DrumPldStore.open(dir), crawlBudget(), histogramFile?);
 *   await star.addLinks(pairs: Uint32Array /* [srcHi,srcLo,dstHi,dstLo]* *\/, count);
 *   await star.assign(urls: FrontierUrl[]);            // sets u.budget (B) and u.admitted (P)
 *   await star.rebudget(urls);  await star.commit();  await star.close();   // Beast option rebudget
 *
 *   const f = await Frontier.open(dir | null, opts: FrontierOptions, clock = Date.now);
 *   await f.admit(urls, { durable = true });           // → BEAST; durable ⇒ on disk when resolved
 *   await f.commitAdmits(mark?);                       // everything admitted so far (also durable:false) durable;
 *                                                      // fsyncs on the thread pool; call once per URLseen merge;
 *   f.admitMark                                        // the last mark durable: did a commitAdmits(mark) land?
 *   await f.readmit(urls);                             // URLs back from a crash → QR
 *   await f.refill();                                  // disk → RAM, paced by the crawl rate (refillHorizonMs) and RAM (call often)
 *   f.takeRobotsRequests(max): RobotsRequest[]         // {hostHi, hostLo, host, origin}, once per host
 *   f.scheduleRobotsFetch(hostHi, hostLo, ip)          // after DNS; robots item comes out of nextReady
 *   f.robotsKnown(hostHi, hostLo, { rules: {isAllowed(pathAndQuery)} | null, ip, crawlDelayMs?, expiresAt })
 *   f.robotsFailed(hostHi, hostLo, reasonCode)         // host's URLs dropped (reason) for failedHostTtlMs
 *   f.nextReady(now, max, out?): FrontierUrl[]         // host AND IP due; u.ip set; u.kind 0 page / 1 robots
 *   f.nextReadyInto(now, max, out): number             // same, allocation-free
 *   f.fetchDone(u, { hostError?, retry?, retryAfterMs?, crawlDelayMs?, drop? })
 *   f.nextWakeup(): number | null;  f.isEmpty(): boolean;  f.ramCount;  f.options
 *   f.setDelays({ hostDelayMs?, minHostDelayMs?, ipDelayMs?, minIpDelayMs?, maxConnectionsPerIp?, … })
 *                                                      // live: hosts/IPs already waiting are re-timed
 *   await f.commit();  await f.close();  f.stats(): FrontierStats;  f.io()
 *
 * FrontierUrl: { url, hops, hostHi, hostLo, pldHi, pldLo, budget (B), admitted (P), discoveredAt,
 * attempts } + runtime { ip, kind, host (robots items) }; encodeFrontierUrl / decodeFrontierUrl are
 * its compact binary codec (what BEAST and QR store).
 *
 * Names: `fetchDone` reports a fetch; `takeRobotsRequests` lists the hosts whose robots.txt is
 * needed; `robotsKnown` (+ `robotsFailed`) gives the answer; robots.txt fetches are
 * scheduled on the IP heap with `scheduleRobotsFetch` once DNS has answered.
 */
export { FrontierUrl, UrlKind, encodeFrontierUrl, encodeFrontierRecordBytes, emptyRecordBytes, decodeFrontierUrl, frontierUrlRamBytes, peekFrontierUrl, pathAndQueryOf, originOf, hostNameOf, extendHopPath, HOP_PATH_MAX, type FrontierUrlInit, type RecordBytes } from './record.js';
export {
  type BudgetFunction,
  type BudgetContext,
  type BudgetPreset,
  type DelayOptions,
  crawlBudget,
  flatBudget,
  proportionalBudget,
  popularOnlyBudget,
  budgetPreset,
  hostDelayFor,
  ipDelayFor,
  IndegreeHistogram,
} from './star/index.js';
export { pathSlot } from './star/index.js';
export { Star, MemoryPldStore, edgeKey, TRUST_THRESHOLD, type PldStore, type DegreeListener, type TrustOptions } from './star/index.js';
export { DrumPldStore, type DrumPldStoreOptions } from './star/index.js';
export { Beast, type BeastOptions, type BeastStats } from './beast/index.js';
export { MemoryQueueStore, MemoryUrlQueue, FsQueueStore, type QueueStore, type UrlQueue, type IoCount } from './queue.js';
export { openDiskQueueStore, type DiskStoreOptions } from './beast/index.js';
export { FileBeastStore, MemoryBeastStore, MemoryBeastQueue, LogQueue, type BeastStore, type BeastQueue, type QueueState } from './beast/index.js';
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
} from './politeness/index.js';
export { Frontier, FRONTIER_PRESETS, type CommitHooks, type FrontierOptions, type FrontierPreset, type FrontierStats, type Clock } from './frontier.js';
export { IdHeap } from './politeness/index.js';
export { U64Map } from '../util/u64-map.js';
