/**
 * Frontier options for simulations and loopback tests: every politeness knob scaled down (delays
 * of milliseconds, small RAM), set from the test side over the 'default' preset.
 */
import type { FrontierOptions } from '../../src/frontier/index.js';

export const FAST_POLITENESS = {
  hostDelayMs: 100,
  minHostDelayMs: 20,
  ipDelayMs: 10,
  minIpDelayMs: 2,
  b0: 10,
  ramUrls: 10_000,
  maxUrlsPerHost: 100,
  maxHosts: 40_000,
  maxConnectionsPerIp: 2,
  maxCrawlDelayMs: 2_000,
  maxBackoffMs: 10_000,
  maxHostErrors: 5,
  maxAttempts: 3,
  failedHostTtlMs: 60_000,
} as const;

/**
 * FAST_POLITENESS overridden by `o`. Unless `o` sets maxHosts, the host table holds at least
 * 3 × ramUrls hosts (the rule Frontier.open applies to a preset's maxHosts).
 */
export function fastOptions(o: FrontierOptions = {}): FrontierOptions {
  const ramUrls = o.ramUrls ?? FAST_POLITENESS.ramUrls;
  return { ...FAST_POLITENESS, maxHosts: Math.max(FAST_POLITENESS.maxHosts, 3 * ramUrls), ...o };
}
