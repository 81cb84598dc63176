/**
 * RobotsCache and RobotsRequested (robots-stage.ts) as Prometheus metrics (through stats.ts's
 * renderPrometheus) and as the `drumcrawl stats` lines, with the robots answer journal's replays
 * (robots-journal.ts). All counters cover every run of the crawl.
 */
import type { RobotsTotals } from '../robots/index.js';

type MetricFn = (name: string, type: 'counter' | 'gauge', help: string, value: number, labels?: string) => void;

export function robotsCacheHitRate(t: RobotsTotals): number {
  return t.checks === 0 ? 0 : t.hits / t.checks;
}

export function renderRobotsDrums(t: RobotsTotals, metric: MetricFn): void {
  metric('robotscache_checks_total', 'counter', 'RobotsCache DRUM: authorities (scheme, host, port) checked.', t.checks);
  metric('robotscache_hits_total', 'counter', 'RobotsCache DRUM: authorities answered from an unexpired entry (no robots.txt request).', t.hits);
  metric('robotscache_hit_ratio', 'gauge', 'RobotsCache DRUM: hits / checks.', robotsCacheHitRate(t));
  metric('robotscache_expired_total', 'counter', 'RobotsCache DRUM: authorities whose entry had expired.', t.expired);
  metric('robotscache_keys', 'gauge', 'RobotsCache DRUM: authorities stored (as of the last merge).', t.cacheKeys);
  metric('robotscache_merges_total', 'counter', 'RobotsCache DRUM: bucket merges.', t.cacheMerges);
  metric('robotscache_bytes_total', 'counter', 'RobotsCache DRUM: bytes read + written.', t.cacheBytes);
  metric('robotsrequested_asks_total', 'counter', 'RobotsRequested DRUM: authorities asked for robots.txt.', t.asks);
  metric('robotsrequested_lost_asks_total', 'counter', 'RobotsRequested DRUM: authorities asked again because an earlier run\'s answer never reached RobotsCache.', t.lostAsks);
  metric('robotsrequested_keys', 'gauge', 'RobotsRequested DRUM: authorities recorded (as of the last merge).', t.requestedKeys);
  metric('robotsrequested_merges_total', 'counter', 'RobotsRequested DRUM: bucket merges.', t.requestedMerges);
  metric('robotsrequested_bytes_total', 'counter', 'RobotsRequested DRUM: bytes read + written.', t.requestedBytes);
  metric('robots_journal_replayed_total', 'counter', 'Robots answer journal: answers a killed run had received but not merged, replayed into RobotsCache at open.', t.journalReplayed);
}

/** Three lines for `drumcrawl stats`. */
export function formatRobotsDrums(t: RobotsTotals): string[] {
  const mb = (b: number): string => (b / 1e6).toFixed(1);
  return [
    `RobotsCache  ${t.cacheKeys} hosts; ${t.checks} checks, ${(robotsCacheHitRate(t) * 100).toFixed(1)} % hits, ${t.expired} expired; ${t.cacheMerges} merges, ${mb(t.cacheBytes)} MB read+written`,
    `RobotsReq.   ${t.requestedKeys} hosts; ${t.asks} asks (${t.lostAsks} after a lost answer); ${t.requestedMerges} merges, ${mb(t.requestedBytes)} MB read+written`,
    `Robots jnl.  ${t.journalReplayed} answers replayed after a kill`,
  ];
}
