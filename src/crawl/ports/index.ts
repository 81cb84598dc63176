/**
 * src/crawl/ports — the pipeline's side of the rooms it drives (thesis Fig. 2): the frontier (STAR,
 * BEAST, politeness: frontier-port.ts) with its robots stage (robots-stage.ts, thesis VII.1), a
 * cluster crawl's partition (cluster-port.ts), the floors checked again right before a send
 * (floor-guard.ts) and the stop's codes and grace period (stop.ts).
 */
export {
  politenessOutcome, frontierRamUrls, withMargin, openFrontierPort, edgeFlushWaitMs,
  type FrontierPort, type FrontierStats, type FrontierCluster, type RobotsOutcome, type FrontierPortOptions,
} from './frontier-port.js';
export { openRobotsStage, robotsDrumRam, readRobotsTotals, RobotsStage, type RobotsStageFrontier, type RobotsStageStats, type RobotsTotals } from './robots-stage.js';
export { routeTable, type ClusterPort, type SharedParts } from './cluster-port.js';
export { FloorGuard, type GuardRequest } from './floor-guard.js';
export { ABORTED_OUTCOME, PARSE_ABORTED_CODE, STOP_GRACE_MS, graceOver } from './stop.js';
