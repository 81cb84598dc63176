/**
 * src/monitor — watching a running crawl: the counters and summary (stats.ts), the progress line,
 * the status server with its routes, page, history and control (status-server.ts, status-routes.ts, status-page.ts,
 * status-history.ts), the Prometheus exposition (metrics-exposition.ts, robots-metrics.ts), pages
 * per pay-level domain (pld-tally.ts) and the build labels (build-info.ts).
 */
export { Exposition, namingProblem } from './metrics-exposition.js';
export { PldTally } from './pld-tally.js';
export { formatRobotsDrums, renderRobotsDrums } from './robots-metrics.js';
export { ProgressPrinter, RateMeter, formatPlainLine, renderPrometheus, type CrawlState, type CrawlSummary, type StatusSnapshot } from './stats.js';
export { CONTROL_TOKEN_FILE, MAX_CONNECTIONS, startStatusServer, type StatusController, type StatusServer } from './status-server.js';
