/**
 * src/crawl — the crawler as one process: IRLbot's pipeline (thesis Fig. 2, ch. VII) wired from the
 * other modules. docs/configuration.md lists every option; docs/operations.md how to run, watch,
 * stop, resume and read the output.
 *
 *   pipeline.ts      Crawler: run, pause/resume/stop, snapshot; the scheduler loop, drain, close
 *   opening.ts       opening a crawl or resuming one: its parts started in order, its state read back
 *   merge-schedule.ts, checkpoint-stage.ts   when merges and syncs run; checkpoints
 *   fetch/ fetched/ content/ archive/ urlseen/ admit/ durable/   the stages of a page job, one way
 *                    (docs/architecture.md, "A page job's path"); core/ the state they share
 *   ports/           the pipeline's view of src/frontier (with the robots stage), a cluster
 *                    partition's, the floors checked again before a send, the stop
 *
 * API: `Crawler.open(config, opts)`, `Crawler.resume(stateDir, overrides, opts)` (both take the
 * state's lock: state-lock.ts), `crawler.run(): Promise<CrawlSummary>` (rejects with the error that
 * stopped a crawl; it resumes from its last checkpoint),
 * `pause()`, `resume()`, `stop(reason)`, `setRuntime(change)`, `snapshot()`, `checkpoint(reason)`;
 * events 'checkpoint' (manifest), 'status-server' (url, control token), 'error-event' (error).
 */
export {
  Crawler, type CrawlerOptions, type CrawlSummary,
} from './pipeline.js';
export {
  resolveCrawlConfig, parseCrawlArgs, loadCrawlConfig, applyRuntimeChange, configFromFileObject, defaultCrawlConfig,
  parseSize, parseDurationMs, parseSeedList, CRAWL_FLAGS, RUNTIME_KEYS, CRAWL_CONFIG_INVALID, DEFAULT_USER_AGENT,
  type CrawlConfig, type CrawlConfigInput, type RuntimeOptions, type StartupOptions, type CrawlScope, type WarcCompression as CrawlWarcCompression,
  type ProgressMode, type FlagSpec, type ParsedCrawlArgs,
} from '../config/config.js';
export {
  readManifest, writeManifest, readPending, writePending, encodePending, decodePending, emptyCounters,
  MANIFEST_FILE, PENDING_FILE, MANIFEST_VERSION, type CheckpointManifest, type CrawlCounters,
} from '../state/checkpoint.js';
export {
  renderPrometheus, formatPlainLine, formatTtyBlock, formatOutcomes, ProgressPrinter, RateMeter,
  type StatusSnapshot, type CrawlState,
} from '../monitor/stats.js';
export {
  startStatusServer, MAX_CONNECTIONS, CONTROL_TOKEN_FILE,
  type StatusController, type StatusServer, type StatusServerOptions,
} from '../monitor/status-server.js';
export { ParsePool, type ParseOutcome } from '../threads/page/parse-pool.js';
export { encodeLinks, LinkTable, splitParseOutput, type LinkEntry, type PageInfo, type EncodedGroupLike } from '../threads/links-codec.js';
export { DrumProxy, DrumThread, type DrumProxyStats, type DrumProxyHostOptions } from '../threads/drum/drum-proxy.js';
export { politenessOutcome, frontierRamUrls, withMargin, type FrontierPort, type FrontierStats as CrawlFrontierStats } from './ports/index.js';
